"""faiss indexes over retrieval embeddings: exact inner product for small collections, inverted lists for large
ones (the kinds: `build_index`; `ivfpqfs` scans 4-bit codes with faiss's SIMD "fast scan" kernels, Andre et al.,
"Quicker ADC", IEEE TPAMI 2019). `auto` is at 1M candidates the fastest configuration that kept recall@30 >= 0.9
against exact search (docs/scale.md, Retrieval).
"""

from __future__ import annotations

import numpy as np

from argsim.config import SEED
from argsim.errors import ArgsimError
from argsim.extras import need

INDEX_KINDS = ("auto", "flat", "hnsw", "ivf", "ivfpq", "ivfsq8", "ivfpqfs")
#: `auto` searches exactly up to this many candidates (a flat scan of 1M x 384 floats took 178 ms a query, so
#: about 9 ms at 50,000)
AUTO_FLAT_MAX = 50_000
#: the share of its lists `auto`'s IVF index probes (1 / 32: 128 of 4,096 at 1M)
AUTO_PROBE_SHARE = 32
#: candidates re-scored exactly per result wanted, by kind (`build_index(refine=None)`)
DEFAULT_REFINE = {"ivfsq8": 4, "ivfpqfs": 10}


def exact_index(vectors: np.ndarray):
    """An exact inner-product index (faiss IndexFlatIP) holding `vectors`."""
    faiss = need("faiss", "a faiss index")
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index


def auto_kind(n: int) -> tuple[str, int | None, int | None]:
    """(kind, nlist, nprobe) that `auto` picks for `n` candidates: `flat` up to `AUTO_FLAT_MAX`, else `ivf` with
    nlist = 4 sqrt(n) rounded to a power of two and nprobe = nlist / `AUTO_PROBE_SHARE`.

    Example:
        >>> auto_kind(1_000), auto_kind(1_000_000)
        (('flat', None, None), ('ivf', 4096, 128))
    """
    if n <= AUTO_FLAT_MAX:
        return "flat", None, None
    nlist = 2 ** round(np.log2(4 * np.sqrt(n)))
    return "ivf", nlist, max(1, nlist // AUTO_PROBE_SHARE)


#: the fewest vectors a product-quantised index trains on: one centroid each of its 2^bits codes per sub-space
MIN_TRAIN = {"ivfpq": 2 ** 8, "ivfpqfs": 2 ** 4}


def check_index(kind: str, n: int) -> None:
    """ArgsimError (one line) when an index of `kind` cannot be built over `n` candidates (a product quantiser
    learns 2^bits centroids from them: faiss would stop with an error deep in its clustering); checked before the
    candidates are embedded.

    Example:
        >>> check_index("ivfpqfs", 1000)
    """
    least = MIN_TRAIN.get(kind, 1)
    if n < least:
        raise ArgsimError(f"--index {kind} needs at least {least:,} candidates to train its codes, and there are "
                          f"{n:,}: use --index flat or auto")


def build_index(vectors: np.ndarray, kind: str = "flat", nlist: int | None = None, nprobe: int = 16,
                hnsw_m: int = 32, ef_search: int = 128, seed: int = SEED, pq_m: int = 48,
                train_size: int | None = None, refine: int | None = None):
    """An inner-product faiss index of `kind` holding `vectors`.

    Args:
        vectors: (n, dim) float vectors (unit length for cosine).
        kind: `flat` (exact), `hnsw` (graph), `ivf` (inverted lists, trained here), `ivfpq` (product-quantised
            codes, `pq_m` bytes a vector; dim a multiple of pq_m), `ivfsq8` (8-bit scalar codes), `ivfpqfs` (4-bit
            fast-scan PQ codes, dim / 4 sub-vectors; dim a multiple of 8) - these two re-score their top k x
            `refine` exactly - or `auto` (`auto_kind` chooses the kind, nlist and nprobe, ignoring those given).
        nlist: inverted lists (default: sqrt(n) for ivf / ivfpq, 4 sqrt(n) for ivfsq8 / ivfpqfs, at most 4,096 /
            16,384).
        nprobe: lists searched per query (IVF kinds).
        train_size: vectors sampled to train the coarse quantiser (default 64 per list).
        refine: ivfsq8 / ivfpqfs: candidates re-scored exactly per result wanted (0: none, the codes' scores
            stand; None: `DEFAULT_REFINE` of the kind - 4-bit codes need a deeper re-score than 8-bit ones).

    Returns:
        A faiss index; `index.search(queries, k)` gives (scores, ids).

    Example:
        >>> x = np.eye(4, dtype=np.float32)
        >>> build_index(x, "flat").search(x[:1], 1)[1].tolist()
        [[0]]
    """
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if kind == "auto":
        kind, nlist, auto_nprobe = auto_kind(len(vectors))
        nprobe = auto_nprobe or nprobe
    check_index(kind, len(vectors))
    if kind not in INDEX_KINDS[1:]:
        raise ValueError(f"unknown index kind '{kind}': choose one of {', '.join(INDEX_KINDS)}")
    if kind == "flat":
        return exact_index(vectors)
    faiss = need("faiss", "a faiss index")
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(vectors.shape[1], hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = ef_search
        index.add(vectors)
        return index
    n, dim = vectors.shape  # the inverted-list kinds: the coarse quantiser trained on a seeded sample
    coded = kind in DEFAULT_REFINE  # 8-bit / 4-bit codes: more, smaller lists
    nlist = min(nlist or max(1, min(16384 if coded else 4096, int((4 if coded else 1) * np.sqrt(n)))), n)
    quantizer, ip = faiss.IndexFlatIP(dim), faiss.METRIC_INNER_PRODUCT
    index = {"ivf": lambda: faiss.IndexIVFFlat(quantizer, dim, nlist, ip),
             "ivfpq": lambda: faiss.IndexIVFPQ(quantizer, dim, nlist, pq_m, 8, ip),
             "ivfsq8": lambda: faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit, ip),
             "ivfpqfs": lambda: faiss.IndexIVFPQFastScan(quantizer, dim, nlist, dim // 4, 4, ip)}[kind]()
    rng = np.random.default_rng(seed)
    index.train(vectors[np.sort(rng.choice(n, size=min(n, train_size or 64 * nlist), replace=False))])
    index.nprobe = nprobe
    refine = DEFAULT_REFINE.get(kind, 0) if refine is None else refine
    if coded and refine > 0:
        index = faiss.IndexRefineFlat(index)  # keeps the float vectors; re-scores k x k_factor candidates
        index.k_factor = float(refine)
    for start in range(0, n, 200_000):  # add in slices: no second full copy of a large matrix
        index.add(vectors[start:start + 200_000])
    return index


def search_excluding(index, queries: np.ndarray, k: int,
                     exclude: list[set[int]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores, ids) per query, never an id in the query's `exclude` set (e.g. itself); rows padded with -1 /
    -inf when fewer than k are admissible, a k above the index's size being its size."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    k = max(1, min(k, index.ntotal))  # no more results than candidates: a huge k allocates nothing
    extra = max((len(e) for e in exclude), default=0) if exclude else 0
    want = min(k + extra, index.ntotal)
    scores, ids = index.search(queries, want)
    out_s, out_i = np.full((len(queries), k), -np.inf, dtype=np.float32), np.full((len(queries), k), -1, dtype=np.int64)
    for q in range(len(queries)):
        bad = exclude[q] if exclude else ()
        keep = [j for j in range(want) if ids[q, j] >= 0 and int(ids[q, j]) not in bad][:k]
        out_s[q, :len(keep)], out_i[q, :len(keep)] = scores[q, keep], ids[q, keep]
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
