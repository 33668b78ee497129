"""Validation accuracy@1/K (section 6.3) of a model being trained: its retrieval head ranks one shared collection
of text indices, its classification head reranks the top K; the hits are `core.evaluation.at1_over_k_hits`, the
same @1/K as Table 3's. `AtOneOverKEvaluator` is the same figure as a sentence-transformers-style evaluator (a
callable on a model returning a dict with a primary metric): the metric the counter trainer keeps its best epoch
by."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from sentence_transformers.base.evaluation import BaseEvaluator

from argsim.counter.core.evaluation import at1_over_k_hits
from argsim.counter.neural.model import CounterModel


def at1_over_k(model: CounterModel, base: np.ndarray, queries: np.ndarray, golds: np.ndarray,
               collection: np.ndarray, ks: Sequence[int] = (10, 30, 50), chunk: int = 128) -> dict[int, float]:
    """@1/K of `model` for index-based queries against one shared collection (the epa-style setting).

    `base` holds the base embeddings of the whole text table; a query is never its own candidate (its index is
    masked). Models without a classification head give the same figure for every K (the retrieval's acc@1).
    """
    model.eval()
    queries, golds, collection = (np.asarray(a, dtype=np.int64) for a in (queries, golds, collection))
    ret_c = model.retrieval_numpy(base[collection], "candidate")
    ret_q = model.retrieval_numpy(base[queries], "point")
    kmax = min(max(ks), len(collection) - 1)
    hits = {k: 0 for k in ks}
    for s in range(0, len(queries), chunk):
        q = queries[s:s + chunk]
        scores = ret_q[s:s + chunk] @ ret_c.T
        scores[collection[None, :] == q[:, None]] = -np.inf
        top = np.argpartition(-scores, kmax - 1, axis=1)[:, :kmax]
        top_scores = np.take_along_axis(scores, top, axis=1)
        top = np.take_along_axis(top, np.argsort(-top_scores, axis=1, kind="stable"), axis=1)
        cand = collection[top]                                     # (b, kmax) text indices
        second = (model.cls_scores_numpy(base[q][:, None, :], base[cand]) if model.cls is not None
                  else [None] * len(q))                            # (b, kmax) P(best counter)
        batch = at1_over_k_hits(zip(cand, second, strict=True), golds[s:s + chunk], ks)
        for k in ks:
            hits[k] += int(batch[k].sum())
    n = max(len(queries), 1)
    return {k: hits[k] / n for k in ks}


@contextmanager
def heads_on_cpu(model: CounterModel) -> Iterator[None]:
    """Run the (small) heads on the CPU for NumPy scoring, then put them back (a no-op on the CPU)."""
    heads = [h for h in {id(h): h for h in (model.ret_point, model.ret_cand, model.cls) if h is not None}.values()]
    devices = [next(h.parameters()).device for h in heads]
    for h in heads:
        h.to("cpu")
    try:
        yield
    finally:
        for h, d in zip(heads, devices, strict=True):
            h.to(d)


class AtOneOverKEvaluator(BaseEvaluator):
    """Validation accuracy@1/K (section 6.3) of a `CounterModel`, in the sentence-transformers evaluator style.

    Every validation pair's point is a query against the whole validation collection (itself masked); the
    retrieval head ranks, the classification head (where the model has one) reranks the top K; a hit is the
    point's own counter ranked first (`at1_over_k`). Models without a classification head score their
    retrieval accuracy@1 for every K.

    Args:
        data: the `PairData` whose `val_pairs` and `val_collection` are scored.
        k: K, the reranked depth (the trainer's `k_val`).
        name: the metrics' prefix.
        base: the base embeddings of `data.texts` when training does not change them (a frozen encoder: the
            trainer already holds them); None: the model computes them at each call.

    Returns (when called on a model, optionally with the base embeddings of `data.texts` for this call):
    `{"<name>_at1_over_<k>": float}`; `primary_metric` is that key. NaN without validation pairs.

    Example:
        >>> ev = AtOneOverKEvaluator(data, k=10)  # doctest: +SKIP
        >>> ev(model)  # doctest: +SKIP
        {'val_at1_over_10': 0.41}
    """

    def __init__(self, data, k: int = 10, name: str = "val", base: np.ndarray | None = None) -> None:
        super().__init__()
        self.data, self.k, self.name, self.base = data, k, name, base
        self.primary_metric = f"{name}_at1_over_{k}"

    def __call__(self, model: CounterModel, output_path: str | None = None, epoch: int = -1, steps: int = -1,
                 base: np.ndarray | None = None) -> dict[str, float]:
        data = self.data
        if not len(data.val_pairs):
            return {self.primary_metric: float("nan")}
        was_training = model.training
        if base is None:
            base = self.base
        if base is None:
            base = self.embed_needed(model)
        with heads_on_cpu(model):
            acc = at1_over_k(model, base, data.val_pairs[:, 0], data.val_pairs[:, 1], data.val_collection,
                             ks=(self.k,))[self.k]
        model.train(was_training)
        return {self.primary_metric: acc}

    def embed_needed(self, model: CounterModel) -> np.ndarray:
        """Base embeddings of the texts validation reads (its points, counters and candidates; the other rows of
        the table, the training texts, stay zero): a tower under training re-embeds only these every epoch."""
        data = self.data
        needed = np.unique(np.concatenate([data.val_pairs[:, 0], data.val_pairs[:, 1], data.val_collection]))
        vectors = model.embed_texts([data.texts[i] for i in needed], side="candidate",
                                    progress=f"{self.name}: embedding the texts")
        base = np.zeros((len(data.texts), vectors.shape[1]), dtype=vectors.dtype)
        base[needed] = vectors
        return base

    def get_config_dict(self) -> dict:
        return {"k": self.k, "pairs": len(self.data.val_pairs), "collection": len(self.data.val_collection)}
