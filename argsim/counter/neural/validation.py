"""Validation accuracy@1/K (section 6.3) of a model being trained: its retrieval head ranks one shared collection
of text indices, its classification head reranks the top K; the hits are `core.evaluation.at1_over_k_hits`, the
same @1/K as Table 3's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
