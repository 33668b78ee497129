"""Score key points with any model (bi-encoder, MTS, cross-encoder folder) and combine several models' scores.

`combine_predictions` is the pure core: per model, `zscore` standardises the scores over all the pairs that model scored
((s - mean) / population std; a constant model contributes 0), then sums them with the weights; `zlogit` is `zscore`
with each probability-valued model (a cross-encoder, `probability_parts`) first mapped back to its logit
log(p / (1 - p)); `mean` is the weighted mean of the raw scores (equal weights: the plain mean of the fold ensembles).
Readings: the z-score is taken over every scored (argument, key point) pair of the data at hand, not per topic
or per argument (a per-argument standardisation would erase the between-argument differences that the mAP's
top-half cut ranks on); weights are used as given (a weighted sum), so only their ratio matters to rankings.
A pair missing from some model is combined over the models that scored it.
Why `zlogit` (docs/kpm.md, 'Ensembles'): a BCE cross-encoder's probabilities are bimodal (ArgKP dev, 3 epochs of
MiniLM: median 0.04, 90th percentile 0.96). Probabilities are stored to 6 decimals, so they are clipped to
[1e-6, 1 - 1e-6] before the logit (|logit| <= 13.8).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from argsim.config import RunConfig
from argsim.data.argkp import KPMData
from argsim.engine import Engine
from argsim.errors import ArgsimError, check_choice

Predictions = dict[str, dict[str, float]]
COMBINES = ("zscore", "zlogit", "mean")
LOGIT_CLIP = 1e-6


def check_weights(models: Sequence[str], weights: Sequence[float] | None) -> list[float]:
    """Equal weights when none are given; otherwise one finite non-negative weight per model, not all zero."""
    if not weights:
        return [1.0 / len(models)] * len(models)
    if len(weights) != len(models):
        raise ArgsimError(f"--weight given {len(weights)} time(s) for {len(models)} --model(s): give one per model")
    if not all(isinstance(w, numbers.Real) and not isinstance(w, bool) for w in weights):
        raise ArgsimError(f"--weight values must be numbers, not {list(weights)}")
    if not all(math.isfinite(w) for w in weights) or any(w < 0 for w in weights) or not any(w > 0 for w in weights):
        raise ArgsimError(f"--weight values must be non-negative and not all zero, not {list(weights)}")
    return [float(w) for w in weights]


def check_threshold(threshold: float | None, models: Sequence[Any], combine: str) -> None:
    """ArgsimError (one line) for a threshold no score can reach: one model's scores and a weighted mean of several
    are cosines or probabilities, at most 1 (z-scored ensembles are unbounded). A threshold below every score is
    allowed: it asks for every argument's best key point (`KeyPointMatcher(threshold=float("-inf"))`). An unknown
    `combine` is refused here too, for one model as for several (as the command line's `--combine`)."""
    check_choice(combine, "--combine", COMBINES)
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, numbers.Real)
                                  or math.isnan(threshold)):
        raise ArgsimError(f"--threshold {threshold!r}: give a number (or None: the model's recorded threshold)")
    if threshold is None or (len(models) > 1 and combine != "mean"):
        return
    if threshold > 1.0:
        scores = "the model's scores are" if len(models) == 1 else "the weighted mean of the models' scores is"
        raise ArgsimError(f"--threshold {threshold:g}: {scores} cosines or probabilities, at most 1, so no argument "
                          "could match")


def mean_scale(preds: Predictions) -> tuple[float, float]:
    """(mean, 1 / population std) of one model's scores over all its scored pairs (scale 0: constant or none)."""
    values = np.asarray([s for kps in preds.values() for s in kps.values()], dtype=np.float64)
    std = float(values.std()) if values.size else 0.0
    return (float(values.mean()) if values.size else 0.0), (1.0 / std if std > 0 else 0.0)


def standardise(preds: Predictions) -> Predictions:
    """z-scores of one model's scores over all its scored pairs (population std; constant scores -> 0)."""
    mean, scale = mean_scale(preds)
    return {a: {k: (s - mean) * scale for k, s in kps.items()} for a, kps in preds.items()}


def clipped_logit(p: Any) -> Any:
    """log(p / (1 - p)) of probabilities (a number or an array), p clipped to [LOGIT_CLIP, 1 - LOGIT_CLIP]."""
    from scipy.special import logit

    return logit(np.clip(p, LOGIT_CLIP, 1 - LOGIT_CLIP))


def logits(preds: Predictions) -> Predictions:
    """`clipped_logit` of every score of one probability-valued model."""
    return {a: {k: float(clipped_logit(s)) for k, s in kps.items()} for a, kps in preds.items()}


def combine_predictions(parts: Sequence[Predictions], weights: Sequence[float] | None = None,
                        method: str = "zscore", probability_parts: Sequence[int] = ()) -> Predictions:
    """Weighted combination of several models' predictions (see the module docstring); `probability_parts`: the
    indices of the parts whose scores are probabilities (`zlogit` maps those to logits)."""
    check_choice(method, "--combine", COMBINES)
    if not parts:
        raise ArgsimError("no predictions to combine")
    w = check_weights([str(i) for i in range(len(parts))], weights)
    if method == "zlogit":
        probability = set(probability_parts)
        parts = [logits(p) if i in probability else p for i, p in enumerate(parts)]
    if method in ("zscore", "zlogit"):
        parts = [standardise(p) for p in parts]
    out: Predictions = {}
    for arg_id in dict.fromkeys(a for p in parts for a in p):
        row = out.setdefault(arg_id, {})
        for k in dict.fromkeys(k for p in parts for k in p.get(arg_id, {})):
            got = [(wi, p[arg_id][k]) for wi, p in zip(w, parts, strict=True) if k in p.get(arg_id, {})]
            total = sum(wi * s for wi, s in got)
            if method == "mean":
                total = total / norm if (norm := sum(wi for wi, _ in got)) else 0.0
            row[k] = round(float(total), 6)
    return out


def score_model(data: KPMData, model: str | Any, config=None, arg_template: str = "{text}",
                kp_template: str = "{text}", engine: Engine | None = None) -> Predictions:
    """`{arg_id: {kp_id: score}}` of one model: a cross-encoder folder or object (its probability) or any backend
    encoder (cosine; MTS takes topic and stance itself, plain encoders the templates), or a model object that
    `argsim.backend.resolve.resolve_model` takes (a `CrossEncoder` scores (argument, key point) text pairs); the
    embedding runs on `engine` (None: this process). A cross-encoder scores in this process on every engine: each
    pair is one forward pass of the pair (nothing to cache or share), and on a CPU machine its torch threads already
    use every core."""
    from argsim.kpm.scoring import cross_predictions, is_cross_encoder, score_key_points

    if is_cross_encoder(model):  # a folder (loaded once per process, get_cross_encoder) or a CrossEncoder object
        return cross_predictions(data, model, config or RunConfig())
    from argsim.backend.resolve import resolve_model  # a name, a folder, an Encoder or a SentenceTransformer

    return score_key_points(data, resolve_model(model, config), arg_template, kp_template, engine)


def score_models(data: KPMData, models: Sequence[str], weights: Sequence[float] | None = None,
                 combine: str = "zscore", config=None, arg_template: str = "{text}",
                 kp_template: str = "{text}", engine: Engine | None = None) -> tuple[Predictions, list[Predictions]]:
    """The combined predictions of `models` on `data` and each model's own (bi-encoders embedded on `engine`)."""
    parts = [score_model(data, m, config, arg_template, kp_template, engine) for m in models]
    if len(parts) == 1:
        return parts[0], parts
    return combine_predictions(parts, weights, combine, probability_models(models)), parts


def probability_models(models: Sequence[str]) -> list[int]:
    """Indices of the models whose scores are probabilities (cross-encoder folders)."""
    from argsim.kpm.scoring import is_cross_encoder

    return [i for i, m in enumerate(models) if is_cross_encoder(m)]
