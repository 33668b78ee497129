"""Ranking metrics for best-counter retrieval: accuracy@1 and mean reciprocal rank, with explicit tie handling.

Input format (both metrics): ``scores_by_point`` maps a point id to its scored candidates, either as a list
of ``(candidate_id, score)`` pairs or as a tuple ``(candidate_ids, scores)`` of aligned sequences/arrays;
``gold_by_point`` maps the point id to the id of its one correct candidate. Points whose gold is missing from
their candidates count as failures (rank = infinity).

Ties: ``ties="expected"`` (default) gives the expectation under random tie-breaking: the gold, tied with
t - 1 others at rank r, earns 1/t for accuracy@1 when r = 1 and the mean of 1/r .. 1/(r+t-1) for MRR.
``"pessimistic"`` ranks the gold after every tied candidate, ``"optimistic"`` before them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: the readings of a gold candidate tied with others (above)
TIES = ("expected", "pessimistic", "optimistic")

Scored = Sequence[tuple[str, float]] | tuple[Sequence[str], Sequence[float] | np.ndarray]


@dataclass(frozen=True)
class GoldRank:
    """Where the gold candidate landed: `better` candidates scored strictly higher, `tied` others equal."""

    better: int
    tied: int
    pool: int

    def accuracy_at_1(self, ties: str = "expected") -> float:
        if self.better > 0:
            return 0.0
        return {"optimistic": 1.0, "pessimistic": float(self.tied == 0)}.get(ties, 1.0 / (self.tied + 1))

    def reciprocal_rank(self, ties: str = "expected") -> float:
        first = self.better + 1
        if ties in ("optimistic", "pessimistic"):
            return 1.0 / (first if ties == "optimistic" else first + self.tied)
        return float(np.mean(1.0 / np.arange(first, first + self.tied + 1)))


MISSING = GoldRank(better=1 << 30, tied=0, pool=0)


def gold_rank(scored: Scored, gold: str) -> GoldRank:
    """How many candidates beat / tie the gold candidate (NaN scores count as -inf)."""
    if not (isinstance(scored, tuple) and len(scored) == 2 and not isinstance(scored[0], str)):
        scored = ([c for c, _ in scored], [s for _, s in scored])
    ids, scores = list(scored[0]), np.asarray(scored[1], dtype=np.float64)
    if gold not in ids:
        return MISSING
    g = ids.index(gold)
    scores = np.where(np.isnan(scores), -np.inf, scores)
    s = scores[g]
    return GoldRank(better=int((scores > s).sum()), tied=int((scores == s).sum()) - 1, pool=len(ids))


def gold_ranks(scores_by_point: Mapping[str, Scored], gold_by_point: Mapping[str, str]) -> dict[str, GoldRank]:
    return {pid: gold_rank(scored, gold_by_point[pid]) if pid in gold_by_point else MISSING
            for pid, scored in scores_by_point.items()}


def accuracy_at_1(scores_by_point: Mapping[str, Scored], gold_by_point: Mapping[str, str],
                  ties: str = "expected") -> float:
    """Share of points whose gold candidate scores highest (see the module docstring for ties)."""
    return accuracy_from_ranks(gold_ranks(scores_by_point, gold_by_point).values(), ties)


def mrr(scores_by_point: Mapping[str, Scored], gold_by_point: Mapping[str, str], ties: str = "expected") -> float:
    """Mean reciprocal rank of the gold candidate."""
    return mrr_from_ranks(gold_ranks(scores_by_point, gold_by_point).values(), ties)


def accuracy_from_ranks(ranks, ties: str = "expected") -> float:
    ranks = list(ranks)
    return float(np.mean([r.accuracy_at_1(ties) for r in ranks])) if ranks else float("nan")


def mrr_from_ranks(ranks, ties: str = "expected") -> float:
    ranks = list(ranks)
    return float(np.mean([0.0 if r is MISSING else r.reciprocal_rank(ties) for r in ranks])) if ranks else float("nan")
