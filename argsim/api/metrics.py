"""The metrics of the papers (`kpa_map`, `accuracy_at_1`, `triplet_accuracy`, `rouge1`) on plain data: thin wrappers
over `argsim.metrics` that add the conversions from lists, dicts and DataFrames."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from argsim.config import RunConfig
from argsim.errors import ArgsimError, InputError, check_choice, check_count, examples, warn
from argsim.io import as_texts
from argsim.metrics.kpa_map import MapResult, evaluate_map, read_predictions
from argsim.metrics.rouge import rouge1_corpus
from argsim.metrics.triplets import TRIPLET_FIELDS


def _frame_rows(frame: Any, name: str, columns: tuple[str, ...]) -> Iterator[tuple]:
    """The rows of a frame's `columns` as tuples; a missing column is one InputError naming it and those found."""
    if missing := [c for c in columns if c not in frame.columns]:
        raise InputError(name, f"missing column(s) {', '.join(missing)}; found {', '.join(map(str, frame.columns))}",
                         column=missing[0])
    return frame[list(columns)].itertuples(index=False, name=None)


def _predictions(predictions: Any) -> dict[str, dict[str, float]]:
    """{arg_id: {key_point_id: score}} from that dict, a JSON file of it, or a frame (arg_id, key_point_id, score)."""
    if isinstance(predictions, (str, Path)):
        return read_predictions(predictions)
    from argsim.schemas import Predictions, validate

    if hasattr(predictions, "columns"):
        out: dict[str, dict[str, Any]] = {}
        for arg, kp, score in _frame_rows(predictions, "predictions", ("arg_id", "key_point_id", "score")):
            out.setdefault(str(arg), {})[str(kp)] = score
        predictions = out
    if isinstance(predictions, Mapping):  # ids may be numbers in memory; they are text in a file
        predictions = {str(a): {str(k): v for k, v in kps.items()} if isinstance(kps, Mapping) else kps
                       for a, kps in predictions.items()}
    # the schema `eval map` reads its file with: an object of objects of numbers, each problem one line
    checked = validate(Predictions, predictions, "predictions", what="predictions {arg_id: {key_point_id: score}}")
    return {str(a): {str(k): float(s) for k, s in kps.items()} for a, kps in checked.items()}


def map_result(predictions: Any, gold: Any, formula: str = "leaderboard", tie_break: str = "first", seed: int = 0,
               data_dir: str | Path | None = None) -> MapResult:
    """The full result of the official metric (per-group table, dummies, ignored ids); see `kpa_map`."""
    from argsim.api.kpm import split_data
    if not (isinstance(gold, str) or hasattr(gold, "columns") or hasattr(gold, "labels")):
        raise ArgsimError(f"gold: give a split name, a DataFrame of labelled pairs or a loaded split, not "
                          f"{type(gold).__name__}")
    preds = _predictions(predictions)
    if not any(preds.values()):  # as `eval map` on an empty file: not a silent 0 for every group
        raise ArgsimError("no predictions: not one (argument, key point) score; an empty set would score mAP 0 for "
                          "every group")
    return evaluate_map(preds, split_data(gold, data_dir), formula=formula, tie_break=tie_break, seed=seed)


def kpa_map(predictions: Any, gold: Any, formula: str = "leaderboard", tie_break: str = "first", seed: int = 0,
            data_dir: str | Path | None = None) -> dict[str, float]:
    """The official KPA-2021 Track 1 metric (Friedman et al. 2021): strict and relaxed mean average precision.

    Each argument keeps its best key point; per (topic, stance) the top half by score is kept and its average
    precision taken, unlabelled pairs counting as non-matches (strict) or matches (relaxed); arguments without a
    prediction count as misses. Reimplemented exactly (see `argsim.metrics.kpa_map`).

    Args:
        predictions: ``{arg_id: {key_point_id: score}}``, a JSON file of it (as `argsim rank keypoints`
            writes), or a DataFrame with columns ``arg_id, key_point_id, score``.
        gold: The labelled split: an ArgKP split name (``"dev"``), a DataFrame of labelled pairs as
            ``load_dataset("argkp", split=...)`` returns, or a loaded `KPMData`.
        formula: ``"leaderboard"`` (every published result) or ``"2021-09"`` (the organisers' later fix).
        tie_break: An argument's best key point on tied scores: ``"first"`` (the official code) or ``"random"``.
        seed: The seed of ``tie_break="random"``.
        data_dir: The dataset root when `gold` is a split name (None: ``$ARGSIM_DATA``).

    Returns:
        ``{"strict_map": float, "relaxed_map": float}``.

    Example:
        >>> import pandas as pd
        >>> import argsim
        >>> gold = pd.DataFrame({"arg_id": ["a1", "a2"], "key_point_id": ["k1", "k1"], "topic": ["t", "t"],
        ...                      "stance": [1, 1], "argument": ["x", "y"], "key_point": ["K", "K"],
        ...                      "label": [1, 0]})
        >>> argsim.kpa_map({"a1": {"k1": 0.9}, "a2": {"k1": 0.2}}, gold)
        {'strict_map': 1.0, 'relaxed_map': 1.0}
    """
    r = map_result(predictions, gold, formula, tie_break, seed, data_dir)
    return {"strict_map": r.strict, "relaxed_map": r.relaxed}


def accuracy_at_1(scores: Any, gold: Mapping[str, str], ties: str = "expected") -> float:
    """accuracy@1 of best-counter retrieval (Wachsmuth et al. 2018): the share of queries whose true counter
    scores highest; ties with it earn the expected credit 1/t (or see `ties`).

    Args:
        scores: A DataFrame with columns ``query, candidate, score`` (as `CounterRetriever.retrieve` returns;
            every candidate, or the top k: a true counter outside them counts as a miss), or
            ``{query: [(candidate, score), ...]}`` or ``{query: {candidate: score}}``.
        gold: ``{query: its true counter}``; queries without a gold entry count as misses.
        ties: ``"expected"`` (1/t credit), ``"pessimistic"`` or ``"optimistic"``.

    Returns:
        accuracy@1 in [0, 1].

    Example:
        >>> import argsim
        >>> scores = {"q1": [("c1", 0.9), ("c2", 0.1)], "q2": [("c1", 0.5), ("c2", 0.5)]}
        >>> argsim.accuracy_at_1(scores, {"q1": "c1", "q2": "c2"})
        0.75
    """
    from argsim.metrics.ranking import TIES
    from argsim.metrics.ranking import accuracy_at_1 as acc

    check_choice(ties, "ties", TIES)
    if hasattr(scores, "columns"):
        grouped: dict[str, list[tuple[str, float]]] = {}
        for query, candidate, score in _frame_rows(scores, "scores", ("query", "candidate", "score")):
            grouped.setdefault(str(query), []).append((str(candidate), float(score)))
        scores = grouped
    if not isinstance(scores, Mapping):
        raise ArgsimError(f"scores: expected a DataFrame or {{query: [(candidate, score), ...]}}, found "
                          f"{type(scores).__name__}")
    if not scores:
        raise ArgsimError("no queries to score: accuracy@1 of nothing is undefined")
    scores = {q: list(ranked.items()) if isinstance(ranked, Mapping) else ranked for q, ranked in scores.items()}
    for q, ranked in scores.items():
        pairs = isinstance(ranked, list | tuple) and all(
            isinstance(p, list | tuple) and len(p) == 2 and isinstance(p[1], int | float | np.number)
            and not isinstance(p[1], bool) for p in ranked)
        if not pairs:
            raise InputError("scores", f"expected (candidate, score) pairs with numeric scores, found {ranked!r}",
                             field=str(q))
    if bad := [q for q, ranked in scores.items() if any(not math.isfinite(float(s)) for _, s in ranked)]:
        raise ArgsimError(f"{len(bad)} quer(ies) with a score that is not a finite number, e.g. {bad[0]}")
    if missing := [q for q in scores if q not in gold]:
        warn(f"{len(missing)} of {len(scores)} queries have no gold counter (e.g. {examples(missing)}): each counts "
             "as a miss")
    return acc(scores, gold, ties=ties)


def triplet_accuracy(anchor: Any, positive: Any, negative: Any, model: str | None = None,
                     distance: str = "cosine", ties: str = "correct", config: RunConfig | None = None) -> float:
    """Triplet accuracy: the share of (anchor, positive, negative) triplets whose positive is closer to the
    anchor than the negative (Ein Dor et al. 2018; Shirafuji et al., Table 4).

    Args:
        anchor, positive, negative: Aligned lists of sentences (embedded with `model`), or arrays of shape
            (n, dim) of their embeddings.
        model: The encoder for sentences (None: minilm); ignored for arrays.
        distance: ``"cosine"``, ``"l1"`` or ``"euclidean"``.
        ties: An exactly tied triplet is ``"correct"`` (the minutes paper's rule) or ``"wrong"``.
        config: The run options of the encoder.

    Returns:
        The accuracy in [0, 1].

    Example:
        >>> import numpy as np
        >>> import argsim
        >>> a = np.array([[1.0, 0.0], [0.0, 1.0]])
        >>> argsim.triplet_accuracy(a, a + 0.1, -a)
        1.0
        >>> argsim.triplet_accuracy(["The cat sat on the mat."], ["A kitten lay on the rug."],
        ...                         ["Stocks fell sharply today."])
        1.0
    """
    from argsim.metrics.triplets import DISTANCES, TIES, triplet_scores

    check_choice(distance, "distance", DISTANCES)
    check_choice(ties, "ties", TIES)
    names, parts = TRIPLET_FIELDS, [anchor, positive, negative]
    if not all(isinstance(p, np.ndarray) for p in parts):
        from argsim.api.encode import encode

        texts = [as_texts(p, name) for p, name in zip(parts, names, strict=True)]
        if not len(texts[0]) == len(texts[1]) == len(texts[2]):
            raise ArgsimError("anchor, positive and negative must have the same length")
        parts = [encode(t, model=model or "minilm", config=config) for t in texts]
    if not parts[0].ndim == 2 or not parts[0].shape == parts[1].shape == parts[2].shape:
        raise ArgsimError(f"anchor, positive and negative must be arrays of one (n, dim) shape, not "
                          f"{', '.join(str(p.shape) for p in parts)}")
    if not len(parts[0]):
        raise ArgsimError("no triplets to score: triplet accuracy of nothing is undefined")
    if bad := [name for p, name in zip(parts, names, strict=True) if not np.isfinite(p).all()]:
        raise ArgsimError(f"{', '.join(bad)}: the vectors hold NaN or infinite values")
    return triplet_scores(*parts, distance=distance, ties=ties).accuracy


def rouge1(summaries: str | Sequence[str], references: str | Sequence[str], unit: str = "content",
           limits: int | Sequence[int | None] | None = None, config: RunConfig | None = None) -> dict[str, float]:
    """ROUGE-1 recall, precision and F of summaries against references, macro-averaged; a summary longer than
    its character limit scores 0 (the PoliInfo-2 scoring, Kimura et al. 2020).

    Args:
        summaries: One summary or a list.
        references: The gold summary or summaries, aligned.
        unit: ``"content"`` (content-word lemmas, GiNZA/Sudachi: the official measure), ``"surface"`` (every
            token) or ``"char"`` (characters, no tokenizer).
        limits: Character budget(s) (None: no limit).
        config: The run options (GiNZA's device) for the token units.

    Returns:
        ``{"recall": float, "precision": float, "f": float, "n": int, "over_limit": int}``.

    Example:
        >>> import argsim
        >>> r = argsim.rouge1("消費税を上げる", "消費税を引き上げる", unit="char")
        >>> round(r["recall"], 4), round(r["precision"], 4)
        (0.7778, 1.0)
    """
    from argsim.minutes.evaluate import rouge_nlp

    cands, refs = as_texts(summaries, "summaries"), as_texts(references, "references")
    lims = [limits] * len(cands) if limits is None or isinstance(limits, int | str) else list(limits)
    lims = [None if lim is None else check_count(lim, "limits (characters)") for lim in lims]
    if not cands:
        raise ArgsimError("no summaries to score: ROUGE-1 of nothing is undefined")
    lims = None if all(lim is None for lim in lims) else lims
    try:
        report = rouge1_corpus(cands, refs, lims, unit=unit, nlp=rouge_nlp([unit], config=config))
    except ValueError as exc:
        raise ArgsimError(str(exc)) from None
    return {"recall": report.recall, "precision": report.precision, "f": report.f, "n": report.n,
            "over_limit": report.over_limit}
