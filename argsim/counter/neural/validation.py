"""Validation accuracy@1/K (section 6.3) of a model being trained, Table 3's @1/K (`core.evaluation.at1_over_k_hits`)
over one shared collection of text indices; `argsim.evaluation.CounterArgumentEvaluator.from_pairs` scores it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from argsim.counter.core.evaluation import at1_over_k_hits
from argsim.counter.neural.model import CounterModel


def at1_over_k(model: CounterModel, base: np.ndarray, queries: np.ndarray, golds: np.ndarray,
               collection: np.ndarray, ks: Sequence[int] = (10, 30, 50), chunk: int = 128) -> dict[int, np.ndarray]:
    """@1/K hits of `model` (per K, one bool per query) for index-based queries against one shared collection (the
    epa-style setting); `base`: the base embeddings of the whole text table. A query is never its own candidate;
    without a classification head every K gives the retrieval's acc@1."""
    model.eval()
    queries, golds, collection = (np.asarray(a, dtype=np.int64) for a in (queries, golds, collection))
    ret_c, ret_q = model.retrieval_numpy(base[collection], "candidate"), model.retrieval_numpy(base[queries], "point")
    kmax = min(max(ks), len(collection) - 1)
    batches = []  # per chunk of queries: K -> hits
    for s in range(0, len(queries), chunk):
        q = queries[s:s + chunk]
        scores = ret_q[s:s + chunk] @ ret_c.T
        scores[collection[None, :] == q[:, None]] = -np.inf
        top = np.argpartition(-scores, kmax - 1, axis=1)[:, :kmax]
        cand = collection[np.take_along_axis(top, np.argsort(-np.take_along_axis(scores, top, 1), 1, "stable"), 1)]
        second = (model.cls_scores_numpy(base[q][:, None, :], base[cand]) if model.cls is not None
                  else [None] * len(q))                            # (b, kmax) P(best counter)
        batches.append(at1_over_k_hits(zip(cand, second, strict=True), golds[s:s + chunk], ks))
    return {k: np.concatenate([np.zeros(0, dtype=bool), *(b[k] for b in batches)]) for k in ks}


@contextmanager
def heads_on_cpu(model: CounterModel) -> Iterator[None]:
    """Run the (small) heads on the CPU for NumPy scoring, then put them back (a no-op on the CPU)."""
    heads = list({id(h): h for h in (model.ret_point, model.ret_cand, model.cls) if h is not None}.values())
    devices = [next(h.parameters()).device for h in heads]
    for h in heads:
        h.to("cpu")
    try:
        yield
    finally:
        for h, d in zip(heads, devices, strict=True):
            h.to(d)


def embed_needed(model: CounterModel, data, progress: str = "val") -> np.ndarray:
    """Base embeddings of the texts validation reads (its points, counters and candidates; the other rows of the
    table, the training texts, stay zero): a tower under training re-embeds only these every epoch."""
    needed = np.unique(np.concatenate([data.val_pairs[:, 0], data.val_pairs[:, 1], data.val_collection]))
    vectors = model.embed_texts([data.texts[i] for i in needed], side="candidate",
                                progress=f"{progress}: embedding the texts")
    base = np.zeros((len(data.texts), vectors.shape[1]), dtype=vectors.dtype)
    base[needed] = vectors
    return base
