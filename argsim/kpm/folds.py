"""Model and ensemble selection on topic folds of train+dev (MTS section 5's topic k-fold), not on dev alone (its 4
topics would be fitted): every candidate is scored on the k folds of `argsim.kpm.mts.batches.topic_folds` (fold 1 =
the official train/dev split) and ranked by the mean strict mAP over the folds (relaxed breaks ties).

A trained model is only fair on topics it never saw: give it as a pattern with `{fold}` (e.g.
`models/kpm-cross-folds/fold{fold}`), one model per fold trained on the ArgKP splits `write_fold_splits` writes
(`--split fold<i>-train`); a plain trained folder is in-sample on folds 2..k (`in_sample_models` names those so
the command can warn). Zero-shot models are fair everywhere.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError
from argsim.io import write_csv
from argsim.kpm.ensemble import Predictions, combine_predictions
from argsim.kpm.mts.batches import topic_folds
from argsim.metrics.kpa_map import evaluate_map
from argsim.training.record import TRAIN_INFO

FOLD_FIELD = "{fold}"


def fold_model(spec: str, fold: int) -> str:
    """The model of fold `fold`: `spec` with `{fold}` replaced (a spec without it is the same model on every fold)."""
    return spec.replace(FOLD_FIELD, str(fold))


def in_sample_models(specs: Sequence[str]) -> list[str]:
    """Trained folders and shipped models given without `{fold}`: trained on the official train topics, in-sample
    on folds 2..k."""
    from argsim.backend.names import shipped_models

    records = ("train_config.json", TRAIN_INFO, "argsim_training.json")
    shipped = shipped_models()
    return [s for s in specs if FOLD_FIELD not in s and (s in shipped or any((Path(s) / r).is_file()
                                                                             for r in records))]


def write_fold_splits(train: KPMData, dev: KPMData, k: int, folder: str | Path) -> list[str]:
    """Write folds 2..k as ArgKP splits under `folder/argkp/` (fold 1 is the official train/dev split) and the
    official splits' own files next to them; returns the split names written."""
    root = Path(folder) / "argkp"
    splits = [(f"fold{i}-{part}", data) for i, (tr, te) in enumerate(topic_folds(train, dev, k), start=1)
              for part, data in (("train", tr), ("dev", te))]
    for name, data in [("train", train), ("dev", dev), *splits]:  # train/dev: the dataset layout needs them
        write_csv(root / f"arguments_{name}.csv",
                  [{"arg_id": a.arg_id, "argument": a.text, "topic": a.topic, "stance": a.stance}
                   for a in data.arguments])
        write_csv(root / f"key_points_{name}.csv",
                  [{"key_point_id": p.kp_id, "key_point": p.text, "topic": p.topic, "stance": p.stance}
                   for p in data.key_points])
        write_csv(root / f"labels_{name}.csv",
                  [{"arg_id": a, "key_point_id": kp, "label": y} for (a, kp), y in data.labels.items()])
    return [name for name, _ in splits]


def weight_grid(n: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Every weight vector of `n` models on a grid of `step` that sums to 1 (n=2, 0.1: 11 vectors)."""
    if n < 1 or not 0 < step <= 1:
        raise ArgsimError(f"a weight grid needs at least one model and 0 < step <= 1 (got {n}, {step})")
    ticks = round(1 / step)
    if abs(ticks * step - 1) > 1e-9:
        raise ArgsimError(f"--weight-step {step} does not divide 1")
    return [tuple(c / ticks for c in combo) for combo in itertools.product(range(ticks + 1), repeat=n)
            if sum(combo) == ticks]


@dataclass
class Candidate:
    weights: tuple[float, ...]
    strict: list[float]  # per fold
    relaxed: list[float]
    combine: str = "zscore"

    @property
    def mean_strict(self) -> float:
        return float(np.mean(self.strict))

    @property
    def mean_relaxed(self) -> float:
        return float(np.mean(self.relaxed))


def rank_candidates(per_fold: Sequence[Sequence[Predictions]], golds: Sequence[KPMData],
                    grid: Sequence[Sequence[float]], combine: str | Sequence[str] = "zscore",
                    formula: str = "leaderboard", probability_parts: Sequence[int] = ()) -> list[Candidate]:
    """Score each weight vector of `grid` on every fold (`per_fold[i]`: each model's predictions on fold i's
    held-out topics `golds[i]`); best first (mean strict mAP over the folds, then mean relaxed).
    `combine`: one method or several (every weight vector is then scored with each); `probability_parts`: the
    models whose scores are probabilities (see `combine_predictions`)."""
    out = []
    for method, w in itertools.product([combine] if isinstance(combine, str) else combine, grid):
        maps = [evaluate_map(parts[0] if len(parts) == 1 else combine_predictions(parts, w, method, probability_parts),
                             gold, formula=formula) for parts, gold in zip(per_fold, golds, strict=True)]
        out.append(Candidate(tuple(w), [r.strict for r in maps], [r.relaxed for r in maps], method))
    return sorted(out, key=lambda c: (-c.mean_strict, -c.mean_relaxed))


def score_folds(models: Sequence[str], train: KPMData, dev: KPMData, k: int, config=None,
                folds: Sequence[int] | None = None, kp_template: str = "{text}",
                arg_template: str = "{text}") -> tuple[list[list[Predictions]], list[KPMData]]:
    """Each model's predictions on each fold's held-out topics (fold i scored with `fold_model(spec, i)`)."""
    from argsim.kpm.ensemble import score_model

    splits = topic_folds(train, dev, k)
    chosen = list(folds) if folds else list(range(1, len(splits) + 1))
    if bad := [f for f in chosen if not 1 <= f <= len(splits)]:
        raise ArgsimError(f"--fold {bad[0]}: there are {len(splits)} folds")
    golds = [splits[i - 1][1] for i in chosen]
    return [[score_model(held, fold_model(m, i), config, arg_template, kp_template) for m in models]
            for i, held in zip(chosen, golds, strict=True)], golds


def selection_specs(ranked: Sequence[Candidate], models: Sequence[str], golds: Sequence[KPMData],
                    k: int) -> list[tuple[dict[str, float], dict]]:
    """(figures, row labels) of a fold selection for `argsim.results.rows_from_specs`: the best candidate of each
    combine method and each model alone (its one-hot weights), mean strict / relaxed mAP over the folds, per-fold
    figures in `extra`."""
    picked: dict[tuple, Candidate] = {}
    for c in ranked:  # best first
        alone = [i for i, w in enumerate(c.weights) if w > 0]
        key = ("alone", alone[0]) if len(alone) == 1 else ("best", c.combine)
        picked.setdefault(key, c)
    split = f"topic folds {', '.join(g.name for g in golds)} of {k}"
    specs = []
    for (kind, which), c in picked.items():
        model, setting = (models[which], "model alone") if kind == "alone" else \
            (" + ".join(models), f"best {which} weights {', '.join(f'{w:g}' for w in c.weights)} on the folds")
        specs.append(({"strict_mAP": c.mean_strict, "relaxed_mAP": c.mean_relaxed},
                      {"method": "fold-selection", "model": model, "split": split, "setting": setting,
                       "extra": {"strict_per_fold": c.strict, "relaxed_per_fold": c.relaxed}}))
    return specs
