"""Exact Word Mover's Distance for many text pairs: bags and vectors built once, cheap lower bounds, POT EMD.

The distance is gensim's `KeyedVectors.wmdistance` (gensim 4, `norm=True`): tokens not in the vocabulary are dropped;
each text is a normalised bag of words (count / number of known tokens); the ground cost is the Euclidean distance
between L2-normalised word vectors; the value is the exact earth mover's distance solved by POT's network simplex
(`ot.emd2`). Special cases, as in gensim: a text with no known word gives `inf`; two texts made of the same single word
give 0. (gensim also returns `inf` when every ground cost is 0, a guard against the solver stalling; that only happens
for identical single-word texts, which give 0 here.)

The word-centroid distance and the relaxed WMD of Kusner et al. (2015) bound pairs from below for the pruned rankers
(`argsim.counter.lexical.prune`; docs/counterargs-ltr.md, Speed), their query-independent part once per `PoolView`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from argsim.backend.static_words import cover_words
from argsim.counter.lexical.stopwords import content_tokens
from argsim.extras import need

_SAFETY = 1e-6  # lower bounds are shrunk by this relative margin so float rounding can never prune wrongly


class WMDEngine:
    """Bags of words and unit word vectors of a fixed list of texts; distances are asked for by text index."""

    def __init__(self, keyed_vectors, texts: Sequence[str], stopwords: str = "none") -> None:
        tokens = [content_tokens(text, stopwords) for text in texts]
        cover_words(keyed_vectors, (t for toks in tokens for t in toks))  # static models compose sub-word words
        index = keyed_vectors.key_to_index
        local: dict[int, int] = {}
        self.words: list[np.ndarray] = []
        self.weights: list[np.ndarray] = []
        for toks in tokens:
            ids = [index[t] for t in toks if t in index]  # none known: empty words and weights
            uniq, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
            self.words.append(np.fromiter((local.setdefault(int(u), len(local)) for u in uniq), dtype=np.int64,
                                          count=len(uniq)))
            self.weights.append(counts / float(len(ids)))
        kv_ids = np.fromiter(local.keys(), dtype=np.int64, count=len(local))
        raw = keyed_vectors.vectors[kv_ids] if len(kv_ids) else np.zeros((0, keyed_vectors.vector_size), np.float32)
        # gensim's get_vector(norm=True): float32 vector / its float32 norm
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        self.vectors = (raw / np.where(norms > 0, norms, 1)).astype(np.float64)
        self.sq_norms = (self.vectors * self.vectors).sum(1)
        lengths = np.array([len(w) for w in self.words], dtype=np.int64)
        self.empty = lengths == 0
        self.centroids = np.zeros((len(texts), self.vectors.shape[1]))
        for t in np.flatnonzero(lengths):
            self.centroids[t] = self.weights[t] @ self.vectors[self.words[t]]
        self.bags = sp.csr_matrix((np.concatenate([np.zeros(0), *self.weights]),
                                   (np.repeat(np.arange(len(texts)), lengths),
                                    np.concatenate([np.zeros(0, int), *self.words]))),
                                  shape=(len(texts), len(self.vectors)))

    def cost_matrix(self, i: int, j: int) -> np.ndarray:
        return cdist(self.vectors[self.words[i]], self.vectors[self.words[j]])

    def distance(self, i: int, j: int) -> float:
        """Exact WMD between texts i and j (gensim semantics, see the module docstring)."""
        return float("inf") if self.empty[i] or self.empty[j] else self.solve(i, j, self.cost_matrix(i, j))

    def distances(self, pairs: np.ndarray, engine=None, min_pairs: int = 2000) -> np.ndarray:
        """Exact WMD of each (i, j) row of `pairs`, on `engine` (an `argsim.engine` engine; None: this process)
        in chunks of pairs when there are at least `min_pairs`."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if engine is None or engine.workers <= 1 or len(pairs) < max(min_pairs, 1):
            return _distances_chunk(self, pairs)
        chunks = np.array_split(pairs, max(engine.workers * 8, len(pairs) // 5000))
        return np.concatenate(engine.map(_distances_chunk, chunks, self, description="exact WMD", block=1))

    def pool_view(self, js: np.ndarray) -> PoolView:
        """What the bounds need of the candidates `js` (sorted, distinct) regardless of the query."""
        js = np.asarray(js, dtype=np.int64)
        bags = self.bags[js]
        used, col = np.unique(bags.indices, return_inverse=True)
        return PoolView(js=js, bags=bags, col=col.ravel(), used_vectors=self.vectors[used],
                        used_sq=self.sq_norms[used], lengths=np.diff(bags.indptr))

    def centroid_bounds(self, i: int, js: np.ndarray) -> np.ndarray:
        """WCD = |centroid_i - centroid_j| <= WMD(i, j), for many j at once (inf where a text is empty)."""
        return self._finish(np.linalg.norm(self.centroids[js] - self.centroids[i][None, :], axis=1), i, js)

    def relaxed_bounds(self, i: int, js: np.ndarray, view: PoolView | None = None) -> np.ndarray:
        """max(WCD, candidate-side RWMD) for many j: sum_w b_w * min_{v in text i} cost(w, v) <= WMD(i, j); the
        query-independent work from `view` (a `PoolView` whose `js` contain these js) when given."""
        js = np.asarray(js, dtype=np.int64)
        if self.empty[i]:
            return np.full(len(js), np.inf)
        view = view if view is not None else self.pool_view(js)
        q = self.vectors[self.words[i]]
        # only the words that occur in the view's candidates; per word: cost to the closest word of text i
        # min_v |w - v|^2 = |w|^2 + min_v (|v|^2 - 2 w.v): one product, the root taken after the minimum
        part = view.used_vectors @ (-2.0 * q.T) + self.sq_norms[self.words[i]][None, :]
        nearest = np.sqrt(np.maximum(view.used_sq + part.min(axis=1), 0.0))
        rwmd = view.row_sums(nearest[view.col])[view.rows(js)]
        return np.maximum(self._finish(rwmd, i, js), self.centroid_bounds(i, js))

    def full_relaxed_bounds(self, i: int, js: np.ndarray, chunk_nnz: int = 40000,
                            view: PoolView | None = None) -> np.ndarray:
        """The full RWMD, max of both relaxed halves, for many j at once (Kusner et al.: WCD <= RWMD <= WMD): query
        side sum_v a_v min_{w in j} cost(v, w) (per-candidate minima by `np.minimum.reduceat`), candidate side
        sum_w b_w min_{v in i} cost(v, w), on the exact solver's `cdist` costs. `view`: as in `relaxed_bounds`."""
        js = np.asarray(js, dtype=np.int64)
        if self.empty[i] or len(js) == 0:
            return np.full(len(js), np.inf)
        view = view if view is not None else self.pool_view(js)
        a, q = self.weights[i], self.vectors[self.words[i]]
        bags, col, lengths = view.bags, view.col, view.lengths
        dist = cdist(q, view.used_vectors)  # (|i|, |used|)
        side_c = view.row_sums(dist.min(axis=0)[col])
        side_q = np.full(len(view.js), np.inf)
        start, indptr, n = 0, bags.indptr, len(view.js)
        while start < n:  # chunks of candidates whose total word count stays within chunk_nnz (at least one each)
            stop = min(max(int(np.searchsorted(indptr, indptr[start] + chunk_nnz, side="right")) - 1, start + 1), n)
            lo, hi = indptr[start], indptr[stop]
            nonempty = start + np.flatnonzero(lengths[start:stop] > 0)
            if len(nonempty) and hi > lo:
                side_q[nonempty] = a @ np.minimum.reduceat(dist[:, col[lo:hi]], indptr[nonempty] - lo, axis=1)
            start = stop
        return self._finish(np.maximum(side_q, side_c)[view.rows(js)], i, js)

    def upper_bounds(self, i: int, js: np.ndarray) -> np.ndarray:
        """WMD(i, j) <= sqrt(2 - 2 <centroid_i, centroid_j>) for many j at once (inf where a text is empty), by the
        independent plan a b^T and Jensen (docs/counterargs-ltr.md, Speed): the similarity's lower bound when a
        weight is negative."""
        js = np.asarray(js, dtype=np.int64)
        ub = np.sqrt(np.maximum(2.0 - 2.0 * (self.centroids[js] @ self.centroids[i]), 0.0))
        return np.where(self.empty[js] | self.empty[i], np.inf, ub * (1 + _SAFETY) + _SAFETY)

    def pair_upper(self, i: int, j: int, m: np.ndarray | None) -> float:
        """The independent plan's cost a^T M b >= WMD(i, j), from the pair's cost matrix (inf if one is empty)."""
        return float("inf") if m is None else float(self.weights[i] @ m @ self.weights[j]) * (1 + _SAFETY) + _SAFETY

    def pair_bound(self, i: int, j: int) -> tuple[float, np.ndarray | None]:
        """(full RWMD lower bound, the cost matrix to reuse for the exact solve) for one pair."""
        if self.empty[i] or self.empty[j]:
            return float("inf"), None
        m = self.cost_matrix(i, j)
        lb = max(float(self.weights[i] @ m.min(axis=1)), float(self.weights[j] @ m.min(axis=0)))
        return lb * (1 - _SAFETY) - _SAFETY, m

    def solve(self, i: int, j: int, m: np.ndarray) -> float:
        """Exact WMD given the pair's cost matrix from `pair_bound`: POT's public `ot.emd2` (the call gensim's
        `wmdistance` makes); why not POT's faster private `emd_c`: docs/counterargs-ltr.md, Speed."""
        wi, wj = self.words[i], self.words[j]
        if (len(wi) == 1 and len(wj) == 1 and wi[0] == wj[0]) or m.max() <= 0.0:
            return 0.0
        ot = need("ot", "word mover's distance")
        return float(ot.emd2(self.weights[i], self.weights[j], m, check_marginals=False))

    def _finish(self, lb: np.ndarray, i: int, js: np.ndarray) -> np.ndarray:
        lb = np.maximum(np.asarray(lb, dtype=np.float64) * (1 - _SAFETY) - _SAFETY, 0.0)
        return np.where(self.empty[js] | self.empty[i], np.inf, lb)


def _distances_chunk(engine: WMDEngine, chunk: np.ndarray) -> np.ndarray:
    return np.array([engine.distance(int(i), int(j)) for i, j in chunk], dtype=np.float64)


@dataclass
class PoolView:
    """The query-independent part of the bounds for candidates `js` (engine text ids, sorted, distinct)."""

    js: np.ndarray
    bags: sp.csr_matrix  # the candidates' bags of words (rows aligned with js)
    col: np.ndarray  # position among the candidates' distinct words of each stored entry of `bags`
    used_vectors: np.ndarray  # the vectors of those distinct words
    used_sq: np.ndarray
    lengths: np.ndarray  # words per candidate

    def rows(self, js: np.ndarray) -> np.ndarray:
        """Positions of `js` (a subset of the view's candidates) in the view."""
        pos = np.searchsorted(self.js, js)
        if len(js) and (pos.max() >= len(self.js) or np.any(self.js[pos] != js)):
            raise ValueError("candidates outside the pool view")
        return pos

    def row_sums(self, per_entry: np.ndarray) -> np.ndarray:
        """sum over each candidate's words of bag weight * per_entry (per_entry aligned with bags.data)."""
        return np.add.reduceat(np.append(self.bags.data * per_entry, 0.0),
                               np.minimum(self.bags.indptr[:-1], len(per_entry)))[: len(self.js)] * (self.lengths > 0)


def pool_blocks(pools: list[np.ndarray], slack: float = 1.25) -> list[tuple[np.ndarray, list[int]]]:
    """Group pools (arrays of engine text ids) in order into blocks whose union is at most `slack` times the
    largest pool in it: (sorted union, pool indices). All of epa is one block; sdoc, one per debate."""
    blocks: list[tuple[np.ndarray, list[int]]] = []
    union, members, largest = np.zeros(0, dtype=np.int64), [], 0
    for k, pool in enumerate(pools):
        pool = np.unique(np.asarray(pool, dtype=np.int64))
        merged = np.union1d(union, pool)
        if members and len(merged) > slack * max(largest, len(pool)):
            blocks.append((union, members))
            merged, members, largest = pool, [], 0
        union, largest = merged, max(largest, len(pool))
        members.append(k)
    if members:
        blocks.append((union, members))
    return blocks


