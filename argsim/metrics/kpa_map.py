"""The official KPA-2021 Track 1 metric (strict / relaxed mean average precision), reimplemented exactly.

Procedure of the organisers' evaluation script, `code/track_1_kp_matching.py` in the GitHub repository
IBM/KPA_2021_shared_task (commit 2f5e2d5; Friedman et al., "Overview of the 2021 Key Point Analysis Shared
Task", ArgMining 2021):

1. key point ids absent from the key-points file are dropped; each argument keeps its highest-scoring key
   point (first in JSON order on ties, as Python's `max` does; or a seeded random choice);
2. every argument of the gold file without a prediction becomes a dummy pair (score 0, label 0);
3. pairs absent from the labels file ("undecided") get label 0 (strict) or 1 (relaxed);
4. per (topic, stance) group: sort by score descending the way pandas' `sort_values` does (quicksort on the
   reversed array, reversed back), keep the first `int(0.5 * n)` rows, set dummy rows' score to 0.99 *after*
   the cut, AP = scikit-learn `average_precision_score`; formula `2021-09` multiplies it by
   positives-in-kept / kept (the organisers' last commit), `leaderboard` does not (all published results);
5. mAP = unweighted mean over groups. A group without any positive kept scores 0 (never NaN).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from argsim.errors import ArgsimError, InputError, check_choice, examples
from argsim.io import read_json, topic_key
from argsim.metrics.record import Evaluation

FORMULAS = ("leaderboard", "2021-09")
TIE_BREAKS = ("first", "random")
DUMMY_ID = "dummy_id"
DUMMY_KEPT_SCORE = 0.99
TOP_FRACTION = 0.5

Predictions = Mapping[str, Mapping[str, float]]


class GoldArgument(Protocol):
    """What the metric needs of an argument: its id and its (topic, stance) group."""

    arg_id: str
    topic: str
    stance: int


class Gold(Protocol):
    """The labelled split the metric scores against, as plain data (the ArgKP loader's `KPMData` is one):
    the arguments in file order, the valid key point ids, and the labels {(arg_id, key_point_id): 0 | 1}."""

    name: str
    arguments: Sequence[GoldArgument]
    kp_by_id: Mapping[str, Any]
    labels: Mapping[tuple[str, str], int]


@dataclass
class GroupScore:
    """One (topic, stance) group of the evaluation."""

    topic: str
    stance: int
    arguments: int
    kept: int
    dummies_kept: int
    undecided_kept: int
    positives_strict: int
    positives_relaxed: int
    ap_strict: float
    ap_relaxed: float


@dataclass
class MapResult:
    formula: str
    strict: float
    relaxed: float
    groups: list[GroupScore]
    arguments: int
    predicted: int
    dummies: int
    invalid_key_points: list[str] = field(default_factory=list)
    unknown_arguments: list[str] = field(default_factory=list)  # prediction ids that are no gold argument

    def evaluation(self, data: str | None = None) -> Evaluation:
        """The contract view: strict_mAP (primary) and relaxed_mAP over `arguments` arguments."""
        return Evaluation("kpa-map", {"strict_mAP": self.strict, "relaxed_mAP": self.relaxed}, "strict_mAP",
                          data=data, n=self.arguments, details={"formula": self.formula, "dummies": self.dummies})


def read_predictions(path: str | Path) -> dict[str, dict[str, float]]:
    """Read and validate a shared-task predictions JSON `{arg_id: {kp_id: score}}` (order preserved)."""
    from argsim.schemas import Predictions, validate

    out = validate(Predictions, read_json(path), path, what="predictions {arg_id: {key_point_id: score}}")
    out = {arg_id: {kp_id: float(score) for kp_id, score in kps.items()} for arg_id, kps in out.items()}
    if not any(out.values()):
        raise InputError(path, "no predictions: not one (argument, key point) score; an empty file would score "
                               "mAP 0 for every group")
    return out


def pandas_descending_order(scores: np.ndarray) -> np.ndarray:
    """Row order of `DataFrame.sort_values(col, ascending=False)` (pandas' nargsort with quicksort)."""
    idx = np.arange(len(scores))[::-1]
    rev = np.asarray(scores, dtype=np.float64)[::-1]
    return idx[rev.argsort(kind="quicksort")][::-1]


def best_key_points(predictions: Predictions, valid_kp_ids: set[str], tie_break: str = "first",
                    seed: int = 0) -> tuple[dict[str, tuple[str, float]], list[str]]:
    """Each argument's top key point among the valid ids; also the invalid ids seen (first-seen order);
    `tie_break`: one of TIE_BREAKS (checked by `evaluate_map`)."""
    rng = random.Random(seed)
    best: dict[str, tuple[str, float]] = {}
    invalid: dict[str, None] = {}
    for arg_id, kps in predictions.items():
        invalid.update(dict.fromkeys(k for k in kps if k not in valid_kp_ids))
        valid = {k: float(s) for k, s in kps.items() if k in valid_kp_ids}
        if valid:
            top = max(valid.values())
            tied = [k for k, v in valid.items() if v == top]
            best[arg_id] = (tied[0] if tie_break == "first" else rng.choice(tied), top)
    return best, list(invalid)


def group_average_precision(labels: np.ndarray, scores: np.ndarray, formula: str) -> float:
    """scikit-learn AP of one group's kept rows (x positives/kept for `2021-09`); 0 without positives."""
    from sklearn.metrics import average_precision_score

    if len(labels) == 0 or labels.sum() == 0:
        return 0.0
    ap = float(average_precision_score(labels, scores))
    if formula == "2021-09":
        ap *= float(labels.sum()) / len(labels)
    return ap


@dataclass
class ArgumentRows:
    """Per gold argument (file order): its (topic, stance) group, its best key point's score, strict and relaxed
    label, and whether it is a dummy row (no prediction): what the official procedure ranks."""

    groups: list[tuple[str, int]]  # (topic key, stance) of each group number
    group: np.ndarray
    score: np.ndarray
    strict: np.ndarray
    relaxed: np.ndarray
    dummy: np.ndarray

    @classmethod
    def build(cls, best: Mapping[str, tuple[str, float]], gold: Gold) -> ArgumentRows:
        """The rows of `gold` given each argument's best key point (`best_key_points`)."""
        keys: dict[tuple[str, int], int] = {}
        rows = []
        for a in gold.arguments:  # the gold file's order (pandas' left merge keeps it)
            g = keys.setdefault((topic_key(a.topic), a.stance), len(keys))
            kp_id, score = best.get(a.arg_id, (DUMMY_ID, 0.0))
            label = gold.labels.get((a.arg_id, kp_id)) if a.arg_id in best else 0  # None: undecided
            rows.append((g, score, 0 if label is None else label, 1 if label is None else label, kp_id == DUMMY_ID))
        g, s, st, rl, d = zip(*rows, strict=True) if rows else ((),) * 5
        return cls(list(keys), np.array(g, dtype=np.int64), np.array(s, dtype=np.float64),
                   np.array(st, dtype=np.int64), np.array(rl, dtype=np.int64), np.array(d, dtype=bool))

    def kept(self, idx: np.ndarray) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
        """Per group of the rows `idx` (first-seen order; a repeated row counts again): (group, its rows, the kept
        rows: the top half in pandas' sort order, their scores with dummy rows at 0.99 after the cut)."""
        for g in dict.fromkeys(self.group[idx].tolist()):
            rows = idx[self.group[idx] == g]
            kept = rows[pandas_descending_order(self.score[rows])[: int(TOP_FRACTION * len(rows))]]
            yield g, len(rows), kept, np.where(self.dummy[kept], DUMMY_KEPT_SCORE, self.score[kept])

    def mean_ap(self, idx: np.ndarray, relaxed: bool = False, formula: str = "leaderboard") -> float:
        """The mAP of the arguments `idx` (a bootstrap draw: repeats are separate rows, kept in draw order)."""
        labels = self.relaxed if relaxed else self.strict
        aps = [group_average_precision(labels[kept], scores, formula)
               for _, _, kept, scores in self.kept(np.asarray(idx, dtype=np.int64))]
        return float(np.mean(aps)) if aps else float("nan")


def evaluate_map(predictions: Predictions, gold: Gold, formula: str = "leaderboard",
                 tie_break: str = "first", seed: int = 0) -> MapResult:
    """Strict and relaxed mAP of `predictions` on the labelled split `gold`, exactly as the official script."""
    check_choice(formula, "formula", FORMULAS)
    check_choice(tie_break, "tie_break", TIE_BREAKS)
    if not gold.labels:
        raise ArgsimError(f"{gold.name}: no gold labels to evaluate against (give the labels file)")
    known = {a.arg_id for a in gold.arguments}
    unknown = [a for a in predictions if a not in known]
    if predictions and len(unknown) == len(predictions):
        raise ArgsimError(f"none of the {len(predictions)} argument ids of the predictions is an argument of "
                          f"{gold.name} (e.g. {examples(unknown)}): predictions and gold come from different data")
    best, invalid = best_key_points(predictions, set(gold.kp_by_id), tie_break, seed)
    rows = ArgumentRows.build(best, gold)
    scores: list[GroupScore] = []
    for g, n, kept, s in rows.kept(np.arange(len(rows.group))):
        strict, relaxed = rows.strict[kept], rows.relaxed[kept]
        scores.append(GroupScore(
            *rows.groups[g], arguments=n, kept=len(kept), dummies_kept=int(rows.dummy[kept].sum()),
            undecided_kept=int((strict != relaxed).sum()), positives_strict=int(strict.sum()),
            positives_relaxed=int(relaxed.sum()), ap_strict=group_average_precision(strict, s, formula),
            ap_relaxed=group_average_precision(relaxed, s, formula)))
    return MapResult(formula=formula, strict=float(np.mean([g.ap_strict for g in scores])),
                     relaxed=float(np.mean([g.ap_relaxed for g in scores])), groups=scores,
                     arguments=len(gold.arguments), predicted=sum(a.arg_id in best for a in gold.arguments),
                     dummies=sum(a.arg_id not in best for a in gold.arguments), invalid_key_points=invalid,
                     unknown_arguments=unknown)


def f1_threshold(predictions: Predictions, labels: Mapping[tuple[str, str], int]) -> tuple[float, float]:
    """The score threshold t maximising F1 of "score >= t is a match" over the labelled pairs that have a score,
    and that F1 (scikit-learn's precision-recall curve; the first of equal maxima, i.e. the lowest threshold).
    Unlabelled (undecided) pairs are left out; (NaN, NaN) when no labelled pair is a match.

    It is the decision threshold of a model's own score scale: a cosine and a probability need different ones,
    so key point coverage and matching take it from the model (`argsim.kpm.threshold`).

    Example:
        >>> f1_threshold({"a": {"k1": 0.9, "k2": 0.2}, "b": {"k1": 0.6}},
        ...              {("a", "k1"): 1, ("a", "k2"): 0, ("b", "k1"): 1})
        (0.6, 1.0)
    """
    from sklearn.metrics import precision_recall_curve

    pairs = [(predictions[a][k], y) for (a, k), y in labels.items() if k in predictions.get(a, {})]
    y = np.array([p[1] for p in pairs], dtype=np.int64)
    if not len(y) or not y.any():
        return float("nan"), float("nan")
    precision, recall, thresholds = precision_recall_curve(y, np.array([p[0] for p in pairs], dtype=np.float64))
    p, r = precision[:-1], recall[:-1]
    f1 = np.divide(2 * p * r, p + r, out=np.zeros_like(p), where=(p + r) > 0)
    best = int(np.argmax(f1))
    return round(float(thresholds[best]), 6), float(f1[best])
