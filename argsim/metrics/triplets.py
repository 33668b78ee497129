"""Triplet evaluation: accuracy (share of triplets whose positive is closer than the negative) and mean diff.

For cosine the diff is cos(a, p) - cos(a, n) (the minutes paper's Table 4); for the L1/L2 distances it is
d(a, n) - d(a, p) (Thematic Distance Comparison). A triplet is correct when diff >= 0 (`ties="correct"`,
the minutes paper's rule) or diff > 0 (`ties="wrong"`); the number of exact ties is reported either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from argsim.metrics.record import Evaluation
from argsim.vectors import l2_normalize

DISTANCES = ("cosine", "l1", "euclidean")
#: how a triplet whose two distances are equal counts
TIES = ("correct", "wrong")


@dataclass(frozen=True)
class TripletScores:
    accuracy: float
    mean_diff: float
    n: int
    ties: int
    correct: np.ndarray | None = field(default=None, repr=False, compare=False)  # each triplet's outcome

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
                         ties=int((diffs == 0).sum()), correct=correct)


TRIPLET_FIELDS = ("anchor", "positive", "negative")


def encoded_triplet_scores(encoder, rows, distance: str = "cosine", ties: str = "correct",
                           **encode_options) -> TripletScores:
    """`triplet_scores` of (anchor, positive, negative) records embedded by `encoder`: one `encode` call over
    all their texts, so a sentence that is an anchor here and a negative there is embedded once (the backend
    de-duplicates within a call and caches across calls).

    Args:
        encoder: anything with `encode(texts, **encode_options) -> array` (an argsim `Encoder`, or a
            sentence-transformers model with e.g. `convert_to_numpy=True, show_progress_bar=False`).
        rows: records with the fields anchor, positive and negative.
        distance: ``"cosine"``, ``"l1"`` or ``"euclidean"``.
        ties: an exactly tied triplet is ``"correct"`` or ``"wrong"``.
        **encode_options: passed to `encode` (e.g. ``use_cache=False``).

    Returns:
        The TripletScores (accuracy, mean diff, n, ties).

    Example:
        >>> class Letters:
        ...     def encode(self, texts):
        ...         return np.array([[1.0, 0.0] if t.startswith("a") else [0.0, 1.0] for t in texts])
        >>> encoded_triplet_scores(Letters(), [{"anchor": "ant", "positive": "ape", "negative": "bee"}]).accuracy
        1.0
    """
    rows = list(rows)
    n = len(rows)
    vectors = np.asarray(encoder.encode([str(r[f]) for f in TRIPLET_FIELDS for r in rows], **encode_options))
    return triplet_scores(vectors[:n], vectors[n:2 * n], vectors[2 * n:], distance=distance, ties=ties)
