"""A key point matcher's decision threshold: the score from which an argument matches a key point (the rule:
docs/kpm.md, 'Matching and coverage'). The F1-best one (`argsim.metrics.kpa_map.f1_threshold`) is recorded in a
shipped matcher's card (`card.json`: ``"threshold": {"value", "f1", "data"}``) or a trained folder's
`argsim_train.json` (`argsim.kpm.evaluate.evaluate_trained`); without one: `PROBABILITY_THRESHOLD` for a
cross-encoder, else `COSINE_THRESHOLD`; an ensemble's: `ensemble_threshold`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argsim.training.record import TRAIN_INFO

#: the threshold of a probability (a cross-encoder without a recorded one): the classifier's decision boundary
PROBABILITY_THRESHOLD = 0.5
#: the threshold of a cosine (a bi-encoder without a recorded one): the F1-maximising threshold of zero-shot MiniLM
#: on ArgKP-2021 dev (3,458 labelled pairs; F1 0.395 there), as `KPAMapEvaluator.from_dataset("dev")` reports it
COSINE_THRESHOLD = 0.7226
#: the files a model folder may record its threshold in, in the order they are read
RECORDS = ("card.json", TRAIN_INFO)


def recorded_threshold(model: Any) -> float | None:
    """The threshold recorded with a model given by name or folder (its card, else its training record); None
    for model objects and models without one.

    Example:
        >>> recorded_threshold("minilm") is None
        True
    """
    if not isinstance(model, (str, Path)):
        return None
    from argsim.backend.names import shipped_folder
    from argsim.kpm.scoring import json_key

    folder = shipped_folder(str(model)) or Path(model).expanduser()
    for name in RECORDS:
        value = json_key(folder / name, "threshold")
        if isinstance(value, dict):
            value = value.get("value")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def model_threshold(model: Any) -> tuple[float, str]:
    """The threshold of one model and where it comes from (``"recorded"``, ``"probability default"`` or
    ``"cosine default"``; see the module docstring).

    Example:
        >>> model_threshold("minilm")
        (0.7226, 'cosine default')
    """
    from argsim.kpm.scoring import is_cross_encoder

    if (recorded := recorded_threshold(model)) is not None:
        return recorded, "recorded"
    return (PROBABILITY_THRESHOLD, "probability default") if is_cross_encoder(model) else \
        (COSINE_THRESHOLD, "cosine default")


def ensemble_threshold(models: Sequence[Any], parts: Sequence[dict[str, dict[str, float]]],
                       weights: Sequence[float] | None = None, combine: str = "zscore") -> tuple[float, str]:
    """The threshold of an ensemble: each member's threshold mapped as `combine_predictions` maps its scores
    (a probability member's to its logit under ``zlogit``; standardised by that member's own mean and standard
    deviation over the pairs it scored under ``zscore`` / ``zlogit``) and combined with the same weights.

    Args:
        models: the members (names, folders or objects), in the order of `parts`.
        parts: each member's predictions on the data at hand.
        weights: the ensemble weights (None: equal).
        combine: ``"zscore"``, ``"zlogit"`` or ``"mean"``.

    Returns:
        (threshold, where it comes from).

    Example:
        >>> parts = [{"a": {"k": 0.2}, "b": {"k": 0.8}}, {"a": {"k": 0.4}, "b": {"k": 0.6}}]
        >>> ensemble_threshold(["minilm", "minilm"], parts, combine="mean")
        (0.7226, 'combined from the members')
    """
    from argsim.kpm.ensemble import check_weights, clipped_logit, logits, mean_scale, probability_models

    if len(models) == 1:
        return model_threshold(models[0])
    w = check_weights([str(i) for i in range(len(models))], weights)
    thresholds = [model_threshold(m)[0] for m in models]
    if combine == "mean":
        return round(sum(wi * t for wi, t in zip(w, thresholds, strict=True)) / sum(w), 6), "combined from the members"
    probability = set(probability_models(models)) if combine == "zlogit" else set()
    total = 0.0
    for i, (wi, t, part) in enumerate(zip(w, thresholds, parts, strict=True)):
        if i in probability:
            part, t = logits(part), float(clipped_logit(t))
        mean, scale = mean_scale(part)
        total += wi * (t - mean) * scale
    return round(total, 6), "combined from the members"
