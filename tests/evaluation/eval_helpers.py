"""A deterministic in-memory encoder for the evaluator tests: fixed vectors per text, no cache."""

from __future__ import annotations

import hashlib

import numpy as np

from argsim.backend.encoder import Encoder


class TableEncoder(Encoder):
    """Vectors from a table (text -> vector); texts not in it get a seeded random unit vector of the same size."""

    def __init__(self, table: dict[str, list[float]] | None = None, dim: int = 4) -> None:
        super().__init__()
        self.table = {t: np.asarray(v, dtype=np.float32) for t, v in (table or {}).items()}
        self.dim_ = len(next(iter(self.table.values()))) if self.table else dim
        self.name = "table"
        self.identity = "table:" + hashlib.sha1(repr(sorted(self.table)).encode()).hexdigest()
        self.configure(use_cache=False, quiet=True)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            if t in self.table:
                out.append(self.table[t])
            else:
                seed = int(hashlib.sha1(t.encode()).hexdigest()[:8], 16)
                out.append(np.random.default_rng(seed).normal(size=self.dim_).astype(np.float32))
        return np.stack(out)
