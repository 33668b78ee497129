"""Scoring trained key point matching models: a saved folder on an ArgKP split, topic folds on their held-out
topics (MTS section 5: mean +- std over the folds), and the feature size an identity-initialised MTS head needs.

The official metric is `argsim.metrics.kpa_map.evaluate_map`; this module only loads, scores and records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.config import RunConfig
from argsim.data.argkp import KPMData, load_argkp
from argsim.errors import ArgsimError
from argsim.io import read_json_as, write_json
from argsim.metrics.kpa_map import FORMULAS, MapResult, evaluate_map, f1_threshold
from argsim.training.record import TRAIN_INFO


def map_of_folder(folder: Path, gold: KPMData, config: RunConfig | None = None,
                  formula: str = "leaderboard") -> MapResult:
    """The mAP under `formula` of the saved model in `folder` (any encoder or a cross-encoder) on `gold`."""
    from argsim.kpm.ensemble import score_model

    return evaluate_map(score_model(gold, str(folder), config), gold, formula=formula)


def training_inputs(data: KPMData, eval_split: str | None, config: RunConfig | None = None) -> KPMData | None:
    """Everything a training run needs, checked before the model loads: labelled pairs with at least one match,
    and the evaluation split (loaded now, so a missing one fails before the first step, not after the budget).
    Returns the evaluation split (None without one)."""
    if not data.has_labels:
        raise ArgsimError(f"{data.name}: training needs gold labels (give --labels)")
    if data.positives() == 0:
        raise ArgsimError(f"{data.name}: the labels hold no matching pair (label 1) to train on")
    if not eval_split:
        return None
    try:
        return load_argkp(eval_split, config.data_dir if config else None)
    except ArgsimError as exc:
        raise ArgsimError(f"evaluation after training on ArgKP '{eval_split}': {exc} (pass --eval-split '' to "
                          "skip it)") from None


def evaluate_trained(folder: Path, gold: KPMData | None, info: dict, config: RunConfig | None = None) -> dict:
    """Score the evaluation split `gold` (see `training_inputs`) with the freshly trained `folder` under both formulas;
    the mAPs are added to the training info (`info["eval"][formula] = {split, data, strict, relaxed}`), and so is the
    model's decision threshold, the one maximising F1 on the split's labelled pairs
    (`info["threshold"] = {value, f1, data}`, read by `argsim.kpm.threshold`), written back to `argsim_train.json` and
    into the model's record, and the predictions to `predictions_<split>.json`. Without a split, or off the main
    process: `info` unchanged."""
    from argsim.kpm.ensemble import score_model
    from argsim.training import is_main_process
    from argsim.training.record import add_metrics

    if gold is None or not is_main_process():
        return info
    split = gold.name.removeprefix("argkp-")
    preds = score_model(gold, str(folder), config)
    write_json(folder / f"predictions_{split}.json", preds)
    maps = {formula: evaluate_map(preds, gold, formula=formula) for formula in FORMULAS}
    info["eval"] = {f: {"split": split, "data": gold.name, "strict": r.strict, "relaxed": r.relaxed}
                    for f, r in maps.items()}
    value, f1 = f1_threshold(preds, gold.labels)
    if value == value:  # the model's decision threshold (argsim.kpm.threshold), when the split has a match
        info["threshold"] = {"value": value, "f1": f1, "data": gold.name}
    write_json(folder / TRAIN_INFO, info)
    ev = info["eval"]["leaderboard"]
    add_metrics(folder, {f"{split}_strict_map": ev["strict"], f"{split}_relaxed_map": ev["relaxed"]})
    return info


@dataclass
class FoldScore:
    fold: int
    held_out_topics: int
    seconds_per_epoch: float
    strict: float
    relaxed: float


def evaluate_folds(out: Path, infos: list[dict], held: dict[int, KPMData],
                   config: RunConfig | None = None) -> list[FoldScore]:
    """Score each trained fold model `out/fold_<i>` on its held-out topics `held[i]`; the leaderboard mAPs are
    written into the fold's `argsim_train.json`."""
    scores = []
    for info in infos:
        i = info["fold"]
        folder = out / f"fold_{i}"
        r = map_of_folder(folder, held[i], config)
        info["eval"] = {"leaderboard": {"split": held[i].name, "strict": r.strict, "relaxed": r.relaxed}}
        write_json(folder / TRAIN_INFO, info)
        scores.append(FoldScore(i, len(held[i].topics), info["seconds_per_epoch"], r.strict, r.relaxed))
    return scores


def fold_summary(scores: list[FoldScore]) -> dict[str, tuple[float, float]]:
    """Mean and (population) standard deviation of the strict and relaxed mAP over the folds, as the paper."""
    return {m: (float(np.mean([getattr(s, m) for s in scores])), float(np.std([getattr(s, m) for s in scores])))
            for m in ("strict", "relaxed")}


def feature_size(model: str, pooling: str) -> int:
    """The size of a model's pooled features: hidden size (config.json), x 4 for `cls-last4`."""
    from argsim.backend import model_path
    from argsim.schemas import TransformerConfig

    hidden = read_json_as(TransformerConfig, model_path(model) / "config.json")["hidden_size"]
    return hidden * (4 if pooling == "cls-last4" else 1)
