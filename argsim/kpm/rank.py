"""One key point matching run: score every argument against its topic's and stance's key points with one model
or an ensemble, pick each argument's best key point, count the key points' coverage, and (with gold labels) the
official mAP under both formulas. `argsim rank keypoints` and `argsim.KeyPointMatcher` both call `rank_keypoints`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from argsim.backend.names import default_model
from argsim.config import RunConfig
from argsim.data.argkp import KPMData
from argsim.io import write_csv, write_json
from argsim.kpm.scoring import BestMatch, Coverage, Predictions, best_matches, coverage
from argsim.metrics.kpa_map import FORMULAS, MapResult, evaluate_map


@dataclass
class KeypointRanking:
    """The outputs of `rank_keypoints`: the scores, each argument's best key point, the coverage table and,
    with gold labels, the mAP under each formula (`maps["leaderboard"]`, `maps["2021-09"]`)."""

    data: KPMData
    models: list[str]
    weights: list[float] | None
    combine: str
    threshold: float
    predictions: Predictions
    matches: list[BestMatch]
    coverage: list[Coverage]
    seconds: float
    maps: dict[str, MapResult] = field(default_factory=dict)
    #: where the threshold comes from: "given", "recorded" (the model's card or training record), a default
    threshold_source: str = "given"

    def summary(self) -> dict:
        """The run's summary (`metrics.json`): models, data, counts, seconds and the mAPs."""
        out = {"models": self.models, "weights": self.weights or None,
               "combine": self.combine if len(self.models) > 1 else None, "data": self.data.name,
               "arguments": len(self.data.arguments), "key_points": len(self.data.key_points),
               "scored_arguments": len(self.predictions), "matched_arguments": sum(m.matched for m in self.matches),
               "threshold": self.threshold, "threshold_source": self.threshold_source, "seconds": self.seconds}
        if self.maps:
            out["map"] = {f: {"strict": r.strict, "relaxed": r.relaxed} for f, r in self.maps.items()}
        return out


def rank_keypoints(data: KPMData, models: Sequence[Any] | None = None, weights: Sequence[float] | None = None,
                   combine: str = "zscore", config: RunConfig | None = None, arg_template: str = "{text}",
                   kp_template: str = "{text}", threshold: float | None = None,
                   out: str | Path | None = None) -> KeypointRanking:
    """Score `data` with `models` (one, or an ensemble combined by `combine` with `weights`; names, folders or
    model objects), then the best matches, whether each fits (score >= `threshold`; None: the model's own,
    `argsim.kpm.threshold`), the coverage and, when `data` has labels, the mAP under both formulas.

    The embedding runs on the engine of `config` (local or Ray; see `argsim.kpm.scoring`). With `out`, writes
    `predictions.json` (the input of `argsim eval map`), `best_keypoints.csv`, `coverage.csv` and `metrics.json`
    there (atomically)."""
    from argsim.engine import engine_from_config
    from argsim.kpm.ensemble import check_threshold, check_weights, score_models
    from argsim.measure import timed

    config = config or RunConfig()
    models = list(models or []) or [default_model("kpm")]  # the shipped key point matcher when the package carries it
    check_weights(models, weights)
    check_threshold(threshold, models, combine)
    with timed() as t:
        preds, parts = score_models(data, models, weights, combine, config, arg_template, kp_template,
                                    engine_from_config(config))
    source = "given"
    if threshold is None:
        from argsim.kpm.threshold import ensemble_threshold

        threshold, source = ensemble_threshold(models, parts, weights, combine)
    matches = best_matches(data, preds, threshold)
    result = KeypointRanking(data, [model_label(m) for m in models], list(weights) if weights else None, combine,
                             threshold, preds, matches, coverage(data, matches, threshold), t["seconds"],
                             threshold_source=source)
    if data.has_labels:
        result.maps = {f: evaluate_map(preds, data, formula=f) for f in FORMULAS}
    if out is not None:
        write_json(Path(out) / "predictions.json", result.predictions)
        write_csv(Path(out) / "best_keypoints.csv", [asdict(m) for m in result.matches])
        write_csv(Path(out) / "coverage.csv", [asdict(c) for c in result.coverage])
        write_json(Path(out) / "metrics.json", result.summary())
    return result


def model_label(model: Any) -> str:
    """How a model is named in a ranking's summary: its name or folder, else its class (a model object)."""
    return str(model) if isinstance(model, (str, Path)) else str(getattr(model, "name", None) or type(model).__name__)
