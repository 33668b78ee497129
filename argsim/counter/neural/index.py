"""faiss indexes over retrieval embeddings: exact inner product by default, HNSW / IVF for large collections."""

from __future__ import annotations

import numpy as np

INDEX_KINDS = ("flat", "hnsw", "ivf")


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
                hnsw_m: int = 32, ef_search: int = 128, seed: int = 13):  # noqa: ANN201
    """An inner-product index of `kind`: flat (exact), hnsw (graph) or ivf (inverted lists, trained here)."""
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
    if kind == "ivf":
        nlist = nlist or max(1, min(4096, int(np.sqrt(n))))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(seed)
        sample = vectors[rng.choice(n, size=min(n, 64 * nlist), replace=False)]
        index.train(sample)
        index.add(vectors)
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
