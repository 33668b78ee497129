"""Pools as index arrays into one 'universe' of unique candidates, so each text is represented once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from argsim.data.counterargs import Argument


@dataclass
class PoolIndex:
    """`universe`: every distinct candidate (id order); `columns[pid]`: its pool as indices into it."""

    points: list[Argument]
    universe: list[Argument]
    columns: dict[str, np.ndarray]

    @classmethod
    def build(cls, points: list[Argument], pools: dict[str, list[Argument]]) -> PoolIndex:
        first = {c.id: c for p in reversed(points) for c in reversed(pools[p.id])}  # each id's first occurrence
        universe = [first[k] for k in sorted(first)]
        pos = {a.id: i for i, a in enumerate(universe)}
        columns = {p.id: np.fromiter((pos[c.id] for c in pools[p.id]), dtype=np.int64, count=len(pools[p.id]))
                   for p in points}
        return cls(points=points, universe=universe, columns=columns)

    def gather(self, dense: np.ndarray) -> dict[str, np.ndarray]:
        """Rows of a (n_points, n_universe) matrix -> per-point arrays aligned with the pools."""
        return {p.id: dense[i, self.columns[p.id]] for i, p in enumerate(self.points)}

