"""The neural rankers of `argsim rank counterargs --method NAME` (registered on import; no heavy work here), their
options in their help (`model`: a trained folder or a shipped counter model's name, `k`: the rerank depth,
`retriever=bm25` for BM25); `run_ranker` passes `precision` (a cross-encoder stage's) and `config` (every stage's
transformer runtime)."""

from __future__ import annotations

from argsim.counter.core.registry import register_ranker
from argsim.errors import ArgsimError


def _need(value, name: str, method: str):
    if not value:
        raise ArgsimError(f"--method {method} needs a trained model: pass {name} (a folder written by "
                          "`argsim train bipolar`)")
    return value


def _two_stage(points, pools, first, second, k, precision: str = "auto", config=None) -> dict:
    from argsim.counter.neural.pipeline import load_stage, run_stages, scores_for_k

    first_stage, second_stage = load_stage(first, precision, config), load_stage(second, precision, config)
    return scores_for_k(run_stages(points, pools, first_stage, second_stage, kmax=int(k)), int(k))


@register_ranker("bipolar", help="Bipolar-encoder: retrieval head top-k, reranked by its classification head "
                                 "(--model DIR; default: the shipped counter-bipolar; opt k=30)")
def bipolar_ranker(points, pools, model=None, k=30, precision="auto", config=None, **_):
    from argsim.backend.names import shipped_models

    folder = model or ("counter-bipolar" if "counter-bipolar" in shipped_models() else _need(model, "--model DIR",
                                                                                            "bipolar"))
    return _two_stage(points, pools, folder, folder, k, precision, config)


@register_ranker("bi-encoder", help="Bi-encoder retrieval: dot product of the point and candidate towers (--model DIR; "
                                    "default: the shipped counter-bi-encoder)")
def bi_encoder_ranker(points, pools, model=None, precision="auto", config=None, **_):
    return _two_stage(points, pools, model or "counter-bi-encoder", None, 1, precision, config)


@register_ranker("unipolar-ret", help="Unipolar-ret retrieval: shared tower + retrieval head (--model DIR)")
def unipolar_ret_ranker(points, pools, model=None, precision="auto", config=None, **_):
    return _two_stage(points, pools, _need(model, "--model DIR", "unipolar-ret"), None, 1, precision, config)


register_ranker("unipolar", help="alias of unipolar-ret")(unipolar_ret_ranker)


@register_ranker("cross-encoder", help="Cross-encoder reranking the BM25 top-k (--model CROSS_DIR; opt k=30)")
def cross_encoder_ranker(points, pools, model=None, k=30, retriever="bm25", precision="auto", config=None, **_):
    return _two_stage(points, pools, retriever, _need(model, "--model DIR", "cross-encoder"), k, precision, config)


def _bm25_then(name: str, folder: str, reranker_name: str) -> None:
    """Register `name`: BM25's top k reranked by the model in `folder` (--model, or opt reranker)."""

    @register_ranker(name, help=f"BM25 top-k reranked by {reranker_name} (--model {folder}; opt k=30)")
    def ranker(points, pools, model=None, k=30, reranker=None, precision="auto", config=None, **_):
        return _two_stage(points, pools, "bm25", _need(reranker or model, f"--model {folder}", name), k, precision,
                          config)


def _model_then(name: str, first: str, second: str, what: str) -> None:
    """Register `name`: the retriever folder `first`'s top k (opt retriever, or --model) reranked by `second`."""

    @register_ranker(name, help=f"{what} (opt retriever={first} reranker={second} k=30)")
    def ranker(points, pools, model=None, k=30, retriever=None, reranker=None, precision="auto", config=None, **_):
        return _two_stage(points, pools, _need(retriever or model, f"--opt retriever={first}", name),
                          _need(reranker, f"--opt reranker={second}", name), k, precision, config)


_bm25_then("bm25+cross-encoder", "CROSS_DIR", "a cross-encoder")
_bm25_then("bm25+unipolar-cls", "CLS_DIR", "Unipolar-cls")
_model_then("bi-encoder+cross-encoder", "BI_DIR", "CROSS_DIR", "Bi-encoder top-k reranked by a cross-encoder")
_model_then("bipolar-nojoint", "RET_DIR", "CLS_DIR",
            "Bipolar w/o joint training: Unipolar-ret top-k reranked by Unipolar-cls")
