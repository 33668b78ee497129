"""`ArguAnaEvaluator`: open-collection counter-argument retrieval (BEIR / MTEB "ArguAna") on argsim's replica
(`argsim.data.arguana`), scored by MTEB's own retrieval code; how each kind of model ranks, and how the figures
relate to the MTEB leaderboard's: docs/arguana.md ("Scoring"). Per-unit outcomes: each query's nDCG@10.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from argsim.backend.resolve import PairScorer, pair_scorer, resolve_model
from argsim.counter.lexical.textrep import BM25Index, shared_term_matrices
from argsim.counter.neural.config import is_cross_folder
from argsim.data.arguana import ArguAnaData, load_arguana
from argsim.evaluation.base import TaskEvaluator
from argsim.extras import need
from argsim.metrics.record import Evaluation

#: MTEB's retrieval cut-offs (`AbsTaskRetrieval.k_values`); the run holds the top `max(K_VALUES)` of each query
K_VALUES = (1, 3, 5, 10, 20, 100, 1000)
#: the metrics an `Evaluation` reports, under MTEB's names; the first is the primary one
METRICS = ("ndcg_at_10", "mrr_at_10", "recall_at_100")
RERANK_DEPTH = 100  # a cross-encoder reranks this many BM25 results


def mteb_scores(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
                k_values: Sequence[int] = K_VALUES, ignore_identical_ids: bool = True) -> tuple[dict, dict]:
    """MTEB's retrieval scores of a run: (MTEB's score dict, pytrec_eval's per-query scores).

    The same steps as MTEB's `AbsTaskRetrieval` on a retrieval task: a query's own id is removed from its results
    (`ignore_identical_ids`), then `calculate_retrieval_scores` (pytrec_eval for nDCG / MAP / recall / precision,
    MTEB's own MRR) and `make_score_dict` (the names of MTEB's result files: `ndcg_at_10`, `mrr_at_10`, ...).

    Args:
        qrels: query id -> {document id: relevance}.
        run: query id -> {document id: score} (every query of `qrels` should have results; pytrec_eval leaves out
            queries without any).
        k_values: the cut-offs.
        ignore_identical_ids: drop a document whose id equals the query's (ArguAna: True).

    Returns:
        (scores, per_query): MTEB's flat score dict, and {query id: {"ndcg_cut_10": ..., "recall_100": ...}}.

    Example:
        >>> scores, per_query = mteb_scores({"q": {"d1": 1}}, {"q": {"q": 9.0, "d0": 2.0, "d1": 1.0}})
        >>> round(scores["ndcg_at_10"], 4), scores["mrr_at_10"]
        (0.6309, 0.5)
    """
    need("mteb", "MTEB's retrieval scoring")  # else one line naming the extra
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores, make_score_dict

    run = {q: {d: float(s) for d, s in docs.items() if not (ignore_identical_ids and d == q)}
           for q, docs in run.items() if q in qrels}
    qrels = {q: dict(rel) for q, rel in qrels.items()}
    all_scores, ndcg, _map, recall, precision, naucs, mrr, naucs_mrr, hit_rate = calculate_retrieval_scores(
        run, qrels, list(k_values))
    scores = make_score_dict(ndcg=ndcg, _map=_map, recall=recall, precision=precision, mrr=mrr, naucs=naucs,
                             naucs_mrr=naucs_mrr, hit_rate=hit_rate, task_scores={})
    return scores, all_scores


def top_k_run(query_ids: Sequence[str], doc_ids: Sequence[str], scores_of: Any, k: int = max(K_VALUES),
              block: int = 256) -> dict[str, dict[str, float]]:
    """The top `k` documents of every query: `scores_of(start, stop)` gives the (stop - start, n_docs) score block
    of those queries (computed block by block, so the full matrix is never held)."""
    import torch

    run: dict[str, dict[str, float]] = {}
    k = min(k, len(doc_ids))
    for start in range(0, len(query_ids), block):
        stop = min(start + block, len(query_ids))
        values, index = torch.topk(torch.as_tensor(np.asarray(scores_of(start, stop), dtype=np.float32)), k, dim=1)
        for row, qid in enumerate(query_ids[start:stop]):
            run[qid] = {doc_ids[j]: float(v) for j, v in zip(index[row].tolist(), values[row].tolist(), strict=True)}
    return run


def dense_run(encoder: Any, data: ArguAnaData, k: int = max(K_VALUES)) -> dict[str, dict[str, float]]:
    """Exact cosine top-`k` of an argsim `Encoder` over the whole corpus: queries through `for_role("query")`,
    documents through `for_role("document")` (a two-tower model's towers; a one-tower model as it is, or with its
    prompt for the role)."""
    q = encoder.for_role("query").encode(list(data.queries.values()), normalize=True)
    d = encoder.for_role("document").encode(list(data.corpus.values()), normalize=True)
    return top_k_run(list(data.queries), list(data.corpus), lambda a, b: q[a:b] @ d.T, k)


def bm25_matrix(data: ArguAnaData) -> np.ndarray:
    """argsim's BM25 (Lucene idf, k1 1.5, b 0.75, every token) of every corpus document for every query."""
    docs, queries = shared_term_matrices(list(data.corpus.values()), list(data.queries.values()))
    return BM25Index.fit(docs).scores(queries.counts)


def bm25_run(data: ArguAnaData, k: int = max(K_VALUES)) -> dict[str, dict[str, float]]:
    """BM25's top `k` over the whole corpus."""
    scores = bm25_matrix(data)
    return top_k_run(list(data.queries), list(data.corpus), lambda a, b: scores[a:b], k)


def cross_run(scorer: Any, data: ArguAnaData, depth: int = RERANK_DEPTH) -> dict[str, dict[str, float]]:
    """A pair scorer's (`argsim.backend.resolve.PairScorer`: the log-probability of the cross-encoder's last
    label) scores of the BM25 top `depth` of each query (the query as the first text)."""
    first = bm25_run(data, depth)
    scores = iter(scorer.score([(data.queries[q], data.corpus[d]) for q, docs in first.items() for d in docs]))
    return {q: {d: float(next(scores)) for d in docs} for q, docs in first.items()}


class ArguAnaEvaluator(TaskEvaluator):
    """nDCG@10 (primary), MRR@10 and recall@100 of open-collection counter-argument retrieval (BEIR's ArguAna),
    computed by MTEB's retrieval scoring on argsim's replica.

    Args:
        data: the replica's split (`argsim.data.arguana.load_arguana`).
        name: the metrics' prefix when called as a sentence-transformers evaluator.
        config: the run's `RunConfig` (device, cache, data folder) for models given by name.

    After `evaluate`: `unit_values` holds each query's nDCG@10, `run` the ranking scored and `scores` MTEB's full
    score dict (for `argsim.evaluation.mteb_tasks.write_mteb_result`).

    Example:
        >>> ev = ArguAnaEvaluator.from_dataset("validation")                     # doctest: +SKIP
        >>> ev.evaluate("bm25").primary_metric                                    # doctest: +SKIP
        'ndcg_at_10'
    """

    task = "arguana"
    accepts_cross_encoder = True
    takes_roles = True

    def __init__(self, data: ArguAnaData, name: str | None = None, config: Any = None) -> None:
        super().__init__(name or data.split, METRICS[0], config)
        self.data = data
        self.run: dict[str, dict[str, float]] | None = None
        self.scores: dict[str, Any] | None = None

    @classmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None) -> ArguAnaEvaluator:
        """The evaluator on the replica's `split` ("test", the default, or "validation"), its first `limit` queries
        with the whole corpus."""
        data = load_arguana(split or "test", data_dir=getattr(config, "data_dir", None)).head(limit)
        return cls(data, name=name, config=config)

    def evaluate(self, model: Any) -> Evaluation:
        # "bm25" as it is, a cross-encoder folder (`argsim train bipolar --kind cross-encoder`) as a `PairScorer`,
        # anything else through `resolve_model` (an `Encoder`, or a `PairScorer` for a `CrossEncoder` object)
        folder = Path(model).expanduser() if isinstance(model, (str, Path)) else None
        cross = folder is not None and folder.is_dir() and is_cross_folder(folder)
        ranker = "bm25" if isinstance(model, str) and model == "bm25" else (
            pair_scorer(folder, self.config) if cross else resolve_model(model, self.config))
        if ranker == "bm25":
            self.run, how = bm25_run(self.data), "argsim BM25 (Lucene idf, k1 1.5, b 0.75), top 1000"
        elif isinstance(ranker, PairScorer):
            self.run = cross_run(ranker, self.data)
            how = f"cross-encoder reranking the BM25 top {RERANK_DEPTH} of each query (recall@100 is BM25's)"
        else:
            self.run = dense_run(ranker, self.data)
            two = ranker.for_role("query") is not ranker.for_role("document")
            how = f"exact cosine top 1000 ({'query / document sides' if two else 'one side for queries and documents'})"
        self.scores, per_query = mteb_scores(self.data.qrels, self.run)
        self.unit_values = np.array([per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in self.data.queries])
        return Evaluation(self.task, {m: self.scores[m] for m in METRICS}, METRICS[0], data=self.data.split,
                          n=len(self.data.queries),
                          details={"retrieval": how, "documents": len(self.data.corpus),
                                   "relevant_missing_from_corpus": len(self.data.missing_relevant),
                                   "scoring": "MTEB retrieval scoring (pytrec_eval), identical ids ignored"})
