"""The selection's evaluator of `argsim train counter-retriever`: nDCG@10 of counter-argument retrieval in an open
collection (the ArguAna replica's validation split, `argsim.data.arguana`), the query's own id ignored as MTEB's
`ignore_identical_ids`. A light sentence-transformers evaluator for the trainer's checkpoints; reported figures come
from `argsim.evaluation.arguana` (MTEB's code)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from sentence_transformers.base.evaluation import SentenceEvaluator

if TYPE_CHECKING:
    from argsim.data.arguana import ArguAnaData


class OpenCollectionEvaluator(SentenceEvaluator):
    """nDCG@10 over `data` (queries through `encode_query`, documents through `encode_document`, so a model's
    query/document prompts apply; cosine similarity). Each query has one relevant document of relevance 1, so
    nDCG@10 = 1 / log2(1 + rank) when its rank is at most 10, else 0 (also when it is not in the corpus); ties
    rank the relevant document last.

    Example:
        >>> OpenCollectionEvaluator(build_arguana(load_counterargs(), "validation"))(model)  # doctest: +SKIP
        {'validation_ndcg@10': 0.51}
    """

    def __init__(self, data: ArguAnaData, name: str = "validation", batch_size: int = 64) -> None:
        super().__init__()
        self.data, self.name, self.batch_size = data, name, batch_size
        self.primary_metric = "ndcg@10"

    def ranks(self, model) -> np.ndarray:  # noqa: ANN001
        """The 1-based rank of each query's relevant document (0 where it is not in the corpus)."""
        qids, dids = list(self.data.queries), list(self.data.corpus)
        kw = {"batch_size": self.batch_size, "convert_to_numpy": True, "normalize_embeddings": True,
              "show_progress_bar": False}
        q = model.encode_query([self.data.queries[i] for i in qids], **kw)
        d = model.encode_document([self.data.corpus[i] for i in dids], **kw)
        col = {i: j for j, i in enumerate(dids)}
        scores = q @ d.T
        for r, qid in enumerate(qids):
            if qid in col:
                scores[r, col[qid]] = -np.inf
        out = np.zeros(len(qids), dtype=np.int64)
        for r, qid in enumerate(qids):
            rel = next(iter(self.data.qrels[qid]))
            if rel in col:
                out[r] = int((scores[r] >= scores[r, col[rel]]).sum())
        return out

    def __call__(self, model, output_path: str | None = None, epoch: int = -1,  # noqa: ANN001
                 steps: int = -1) -> dict[str, float]:
        ndcg = [1 / math.log2(1 + r) if 0 < r <= 10 else 0.0 for r in self.ranks(model)]
        return self.prefix_name_to_metrics({"ndcg@10": float(np.mean(ndcg))}, self.name)
