"""Accuracy@1/K (section 6.3): accuracy@1 after (re)ranking the K candidates that the first stage retrieved."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from argsim.counter.neural.model import CounterModel


@torch.no_grad()
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
        gold = golds[s:s + chunk, None]
        if model.cls is None:
            first_hit = cand[:, 0] == gold[:, 0]
            for k in ks:
                hits[k] += int(first_hit.sum())
            continue
        u = torch.from_numpy(base[q])[:, None, :]
        v = torch.from_numpy(base[cand])
        p = model.cls.score(u, v).numpy()                          # (b, kmax)
        for k in ks:
            kk = min(k, kmax)
            best = np.argmax(p[:, :kk], axis=1)
            hits[k] += int((cand[np.arange(len(q)), best] == gold[:, 0]).sum())
    n = max(len(queries), 1)
    return {k: hits[k] / n for k in ks}
