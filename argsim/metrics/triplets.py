"""Triplet evaluation: accuracy (share of triplets whose positive is closer than the negative) and mean diff.

For cosine the diff is cos(a, p) - cos(a, n) (the minutes paper's Table 4); for the L1/L2 distances it is
d(a, n) - d(a, p) (Thematic Distance Comparison). A triplet is correct when diff >= 0 (`ties="correct"`,
the minutes paper's rule) or diff > 0 (`ties="wrong"`); the number of exact ties is reported either way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from argsim.evaluation import Evaluation
from argsim.vectors import l2_normalize

DISTANCES = ("cosine", "l1", "euclidean")


@dataclass(frozen=True)
class TripletScores:
    accuracy: float
    mean_diff: float
    n: int
    ties: int

    def evaluation(self, data: str | None = None) -> Evaluation:
        """The contract view: accuracy (primary) and mean_diff; ties as a detail."""
        return Evaluation("triplets", {"accuracy": self.accuracy, "mean_diff": self.mean_diff}, "accuracy",
                          data=data, n=self.n, details={"ties": self.ties})


def triplet_diffs(anchor: np.ndarray, positive: np.ndarray, negative: np.ndarray,
                  distance: str = "cosine") -> np.ndarray:
    """Per-triplet margin: positive similarity minus negative similarity (larger is better)."""
    a, p, n = (np.asarray(x, dtype=np.float64) for x in (anchor, positive, negative))
    if not (a.shape == p.shape == n.shape) or a.ndim != 2:
        raise ValueError("anchor, positive and negative must be arrays of the same (n, dim) shape")
    if distance == "cosine":
        a, p, n = l2_normalize(a), l2_normalize(p), l2_normalize(n)
        return (a * p).sum(1) - (a * n).sum(1)
    if distance == "l1":
        return np.abs(a - n).sum(1) - np.abs(a - p).sum(1)
    if distance == "euclidean":
        return np.linalg.norm(a - n, axis=1) - np.linalg.norm(a - p, axis=1)
    raise ValueError(f"unknown distance '{distance}': choose one of {', '.join(DISTANCES)}")


def triplet_scores(anchor: np.ndarray, positive: np.ndarray, negative: np.ndarray,
                   distance: str = "cosine", ties: str = "correct") -> TripletScores:
    """Accuracy and mean diff over triplets of embeddings."""
    diffs = triplet_diffs(anchor, positive, negative, distance)
    if diffs.size == 0:
        raise ValueError("no triplets to score")
    correct = diffs >= 0 if ties == "correct" else diffs > 0
    return TripletScores(accuracy=float(correct.mean()), mean_diff=float(diffs.mean()), n=int(diffs.size),
                         ties=int((diffs == 0).sum()))
