"""faiss indexes over retrieval embeddings: exact inner product by default, HNSW / IVF / IVF-PQ for large collections.

At a million candidates and more (bench/bench_scale.py): `ivf` (inverted lists of full vectors, exact scores
inside the probed lists) or `ivfpq` (product-quantised codes, m sub-vectors of 8 bits: 48 bytes a vector for
m = 48 instead of 1,536) with an exact re-score of the returned candidates (`rerank_exact`). `recall_at_k`
measures either against the exact top-k of `exact_index`.
"""

from __future__ import annotations

import numpy as np

INDEX_KINDS = ("flat", "hnsw", "ivf", "ivfpq")


def _faiss():  # noqa: ANN202
    import faiss

    return faiss


def exact_index(vectors: np.ndarray):  # noqa: ANN201 (faiss.Index)
    """An exact inner-product index (faiss IndexFlatIP) holding `vectors`."""
    faiss = _faiss()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index


def build_index(vectors: np.ndarray, kind: str = "flat", nlist: int | None = None, nprobe: int = 16,
                hnsw_m: int = 32, ef_search: int = 128, seed: int = 13, pq_m: int = 48,
                train_size: int | None = None):  # noqa: ANN201
    """An inner-product index of `kind`: flat (exact), hnsw (graph), ivf (inverted lists, trained here) or
    ivfpq (inverted lists of product-quantised codes, `pq_m` bytes a vector; dim must be a multiple of pq_m).
    `train_size`: vectors sampled to train the coarse quantiser (default 64 per list)."""
    faiss = _faiss()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    if kind == "flat":
        return exact_index(vectors)
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = ef_search
        index.add(vectors)
        return index
    if kind in ("ivf", "ivfpq"):
        nlist = nlist or max(1, min(4096, int(np.sqrt(n))))
        quantizer = faiss.IndexFlatIP(dim)
        if kind == "ivf":
            index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        else:
            index = faiss.IndexIVFPQ(quantizer, dim, nlist, pq_m, 8, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(seed)
        sample = vectors[np.sort(rng.choice(n, size=min(n, train_size or 64 * nlist), replace=False))]
        index.train(sample)
        for start in range(0, n, 200_000):  # add in slices: no second full copy of a large matrix
            index.add(vectors[start:start + 200_000])
        index.nprobe = nprobe
        return index
    raise ValueError(f"unknown index kind '{kind}': choose one of {', '.join(INDEX_KINDS)}")


def search_excluding(index, queries: np.ndarray, k: int,  # noqa: ANN001
                     exclude: list[set[int]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores, ids) per query, never returning an id in the query's `exclude` set (e.g. itself).

    Searches k + max(|exclude|) neighbours so that k remain after filtering; rows are padded with -1 / -inf
    when the index holds fewer than k admissible candidates.
    """
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    extra = max((len(e) for e in exclude), default=0) if exclude else 0
    want = min(k + extra, index.ntotal)
    scores, ids = index.search(queries, want)
    out_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    out_i = np.full((len(queries), k), -1, dtype=np.int64)
    for q in range(len(queries)):
        bad = exclude[q] if exclude else ()
        keep = [j for j in range(want) if ids[q, j] >= 0 and int(ids[q, j]) not in bad][:k]
        out_s[q, :len(keep)] = scores[q, keep]
        out_i[q, :len(keep)] = ids[q, keep]
    return out_s, out_i


def rerank_exact(vectors: np.ndarray, queries: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Re-score each query's candidate ids by the exact inner product with the stored vectors and re-sort
    (ids -1, from lists with fewer candidates, stay last)."""
    safe = np.where(ids >= 0, ids, 0)
    scores = np.einsum("qd,qkd->qk", queries, vectors[safe])
    scores = np.where(ids >= 0, scores, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(scores, order, 1), np.take_along_axis(ids, order, 1)


def recall_at_k(approx_ids: np.ndarray, exact_ids: np.ndarray, k: int) -> float:
    """Mean share of each query's exact top-k found in its approximate top-k."""
    hits = [len(set(a[:k].tolist()) & set(e[:k].tolist())) / k for a, e in zip(approx_ids, exact_ids, strict=True)]
    return float(np.mean(hits)) if hits else 0.0
