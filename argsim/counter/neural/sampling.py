"""Negative sampling: random, hard (nearest to the positive, via faiss) and increasing-hard (appendix B.2)."""

from __future__ import annotations

import numpy as np

from argsim.config import SEED
from argsim.counter.neural.config import hard_probability
from argsim.counter.neural.index import exact_index


class NegativeSampler:
    """Draws one negative per (point, counter) pair from a collection of candidate indices (`pairs` (n, 2) and
    `collection` index one table of texts): never the pair's point or its counter, nor an identical copy of it."""

    def __init__(self, pairs: np.ndarray, collection: np.ndarray, strategy: str = "increasing",
                 rate: float = 0.02, hard_pool: int = 1, seed: int = SEED) -> None:
        self.pairs = np.asarray(pairs, dtype=np.int64)
        self.collection = np.unique(np.asarray(collection, dtype=np.int64))
        if len(self.collection) < 3:
            raise ValueError("negative sampling needs at least three candidate texts")
        self.strategy, self.rate, self.hard_pool = strategy, rate, max(1, hard_pool)
        self.rng = np.random.default_rng(seed)

    def probability(self, epoch: int) -> float:
        """Share of hard negatives in `epoch` (1-based)."""
        return {"random": 0.0, "hard": 1.0}.get(self.strategy, hard_probability(epoch, self.rate))

    def random(self, rows: np.ndarray) -> np.ndarray:
        points, counters = self.pairs[rows, 0], self.pairs[rows, 1]
        neg = self.collection[self.rng.integers(0, len(self.collection), len(rows))]
        while (bad := (neg == points) | (neg == counters)).any():
            neg[bad] = self.collection[self.rng.integers(0, len(self.collection), int(bad.sum()))]
        return neg

    def hard(self, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """Negatives among the `hard_pool` collection texts nearest to each positive (inner product of `vectors`,
        one row per text of the table)."""
        points, counters = self.pairs[rows, 0], self.pairs[rows, 1]
        index = exact_index(vectors[self.collection])
        _, nbr = index.search(np.ascontiguousarray(vectors[counters], dtype=np.float32), self.hard_pool + 2)
        out = np.empty(len(rows), dtype=np.int64)
        for i, cand in enumerate(nbr):
            cand = self.collection[cand[cand >= 0]]
            cand = cand[(cand != points[i]) & (cand != counters[i])][: self.hard_pool]
            out[i] = cand[self.rng.integers(0, len(cand))] if len(cand) else -1
        if (missing := out < 0).any():
            out[missing] = self.random(rows[missing])
        return out

    def sample(self, epoch: int, vectors: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """One negative per pair for `epoch`; returns (negatives, share of hard negatives drawn)."""
        n = len(self.pairs)
        p = self.probability(epoch)
        negatives = self.random(np.arange(n))
        if p <= 0 or vectors is None:
            return negatives, 0.0
        hard_rows = np.flatnonzero(self.rng.random(n) < p)
        if len(hard_rows):
            negatives[hard_rows] = self.hard(hard_rows, vectors)
        return negatives, len(hard_rows) / n
