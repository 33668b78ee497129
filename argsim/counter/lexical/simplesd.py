"""Simple-SD (Wachsmuth et al. 2018): f(x) = sum_i alpha_i x_i over the first 8 features (Manhattan and WMD).

The paper gives alpha4 = alpha8 = 0.9, alpha1 = alpha2 = -0.1, the rest 0. How these indices map onto the
features is ambiguous; the readings (`READINGS`; weights and validation figures: docs/counterargs-ltr.md) are
`literal` (Table 1's order; with two parts min + max = sum, so no dissimilarity term is left), `interleaved`
(aggregation-major order), `max-min` (the method's idea, "similar to one part, dissimilar to the other":
0.9 max - 0.1 min for both metrics) and `sum-min` (0.9 sum - 0.1 min). `--tune` searches the 8 weights by coordinate
ascent on a validation setting (see `tune_weights`).
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import numpy as np

from argsim.config import SEED
from argsim.counter.core.registry import RANKER_FAMILIES, ScoreDict, register_ranker
from argsim.counter.core.run import dataset_points
from argsim.counter.lexical.feature_cache import FEATURE_CACHE, pool_features
from argsim.counter.lexical.features import FEATURE_NAMES, N_PART, FeatureConfig, FeatureSpace
from argsim.counter.lexical.prune import MODES, linear_scores
from argsim.counter.lexical.stopwords import DEFAULT_STOPWORDS
from argsim.engine.base import Engine, LocalEngine
from argsim.errors import ArgsimError, check_choice
from argsim.metrics.ranking import accuracy_at_1
from argsim.metrics.record import Evaluation


def _weights(**named: float) -> np.ndarray:
    w = np.zeros(N_PART)
    for name, value in named.items():
        w[FEATURE_NAMES.index(name.replace("_", "-"))] = value
    return w


READINGS: dict[str, np.ndarray] = {
    "literal": _weights(manhattan_min=-0.1, manhattan_max=-0.1, manhattan_sum=0.9, wmd_sum=0.9),
    "interleaved": _weights(manhattan_min=-0.1, wmd_min=-0.1, wmd_max=0.9, wmd_sum=0.9),
    "max-min": _weights(manhattan_max=0.9, manhattan_min=-0.1, wmd_max=0.9, wmd_min=-0.1),
    "sum-min": _weights(manhattan_sum=0.9, manhattan_min=-0.1, wmd_sum=0.9, wmd_min=-0.1),
}
DEFAULT_READING = "literal"  # best of the readings on validation sdoc and sda (docs/counterargs-ltr.md)


def resolve_weights(reading: str | None = None, weights: list[float] | str | None = None) -> np.ndarray:
    """Explicit weights (8 numbers or a JSON file from `--tune`), else a named reading."""
    if weights is not None:
        if isinstance(weights, str):
            from argsim.io import read_json_as
            from argsim.schemas import SimpleSDWeights

            weights = read_json_as(SimpleSDWeights, weights, what="a JSON object with 'weights' (8 numbers), as "
                                                                  "--tune writes")["weights"]
        try:
            w = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgsimError(f"Simple-SD weights must be 8 numbers (x1..x8), not {weights!r}") from None
        if w.shape != (N_PART,):
            raise ArgsimError(f"Simple-SD needs 8 weights (x1..x8), got {w.size}")
        if not np.isfinite(w).all():
            raise ArgsimError(f"Simple-SD weights must be finite numbers, not {weights!r}")
        return w
    name = reading or DEFAULT_READING
    if name not in READINGS:
        raise ArgsimError(f"unknown Simple-SD reading '{name}': choose one of {', '.join(READINGS)}")
    return READINGS[name]


def _space(points, pools, word_vectors: str, engine: Engine | None, stopwords: str) -> FeatureSpace:
    """The feature space of the first 8 features (Manhattan + WMD) with the rankers' options, on `engine`."""
    return FeatureSpace(points, pools, FeatureConfig(word_vectors=word_vectors, stopwords=stopwords),
                        executor=engine or LocalEngine())


@register_ranker("simple-sd", help="Simple-SD: weighted Manhattan + WMD similarities of conclusion and premise "
                                   "(opts: reading=literal|interleaved|max-min|sum-min, weights=8 numbers or a "
                                   "tuned JSON, word_vectors=glove50|w2v-training|<static model folder>, "
                                   "stopwords=gensim|none, prune=top|rank|none; --engine ray spreads the pools over "
                                   "Ray)")
def simple_sd_ranker(points, pools, reading: str | None = None, weights=None, word_vectors: str = "glove50",
                     prune: str = "top", engine: Engine | None = None, gold: dict | None = None, top_k: int = 10,
                     stopwords: str = DEFAULT_STOPWORDS, **_):
    check_choice(prune, "simple-sd prune mode", MODES)  # before any feature is computed, as the LTR rankers do
    w = resolve_weights(reading, weights)
    space = _space(points, pools, word_vectors, engine, stopwords)
    scores, stats = linear_scores(space, w, gold=gold if prune == "rank" else None, mode=prune, top_k=top_k,
                                  description="Simple-SD")
    return ScoreDict(scores, exact_rank=prune in ("rank", "none"), stats=stats.__dict__)


def single_feature_ranker(feature: str):
    """A ranker scoring by one of the 20 features (x_i alone), with the same exact pruned search."""
    if feature not in FEATURE_NAMES:
        raise ArgsimError(f"unknown feature '{feature}': choose one of {', '.join(FEATURE_NAMES)}")
    w = np.zeros(4 * (FEATURE_NAMES.index(feature) // 4 + 1))  # up to the end of the feature's metric
    w[FEATURE_NAMES.index(feature)] = 1.0

    def rank(points, pools, word_vectors: str = "glove50", engine: Engine | None = None, top_k: int = 10,
             stopwords: str = DEFAULT_STOPWORDS, **_):
        space = _space(points, pools, word_vectors, engine, stopwords)
        scores, stats = linear_scores(space, w, mode="top", top_k=top_k, description=feature)
        return ScoreDict(scores, exact_rank=False, stats=stats.__dict__)

    return rank


RANKER_FAMILIES["feature"] = single_feature_ranker


def tune_weights(features: dict[str, np.ndarray], ids: dict[str, list[str]], gold: dict[str, str],
                 start: np.ndarray, grid: tuple[float, ...] = (-1, -0.5, -0.2, -0.1, 0, 0.1, 0.2, 0.5, 0.9, 1),
                 rounds: int = 2) -> tuple[np.ndarray, float, list[dict]]:
    """Coordinate ascent over the 8 weights (each over `grid`), maximising accuracy@1; keeps the first best."""
    def accuracy(w: np.ndarray) -> float:
        return accuracy_at_1({pid: (ids[pid], f @ w) for pid, f in features.items()}, gold)

    w = np.asarray(start, dtype=np.float64).copy()
    best = accuracy(w)
    trace = [{"round": 0, "weights": w.tolist(), "accuracy": best}]
    for r in range(1, rounds + 1):
        improved = False
        for i in range(len(w)):
            for value in grid:
                trial = w.copy()
                trial[i] = value
                if value != w[i] and np.any(trial) and (acc := accuracy(trial)) > best + 1e-12:
                    best, w, improved = acc, trial, True
        trace.append({"round": r, "weights": w.tolist(), "accuracy": best})
        if not improved:
            break
    return w, best, trace


def compare_readings(points, pools, gold: dict[str, str], word_vectors: str = "glove50", engine: Engine | None = None,
                     stopwords: str = DEFAULT_STOPWORDS) -> dict[str, float]:
    """Exact accuracy@1 of each weight reading on the given pools (pruned search, one shared feature space)."""
    space = _space(points, pools, word_vectors, engine, stopwords)
    out = {}
    for name, w in READINGS.items():
        scores, _ = linear_scores(space, w, mode="top", top_k=1, description=f"Simple-SD {name}")
        out[name] = accuracy_at_1({p.id: ([c.id for c in pools[p.id]], scores[p.id]) for p in points}, gold)
    return out


def study_readings(split: str, settings: list[str], limit: int | None = None, tune: bool = False,
                   tune_setting: str | None = None, word_vectors: str = "glove50",
                   stopwords: str = DEFAULT_STOPWORDS, engine: Engine | None = None, seed: int = SEED,
                   data_dir: str | Path | None = None, cache_dir: str | Path | None = FEATURE_CACHE) -> dict:
    """`argsim train simple-sd`: accuracy@1 of every reading on each setting of a split (a seeded sample of
    `limit` points per setting) and, with `tune`, `tune_weights` on `tune_setting` (default: sda if among the
    settings, else the first) starting from its best reading, on features cached in `cache_dir` (None: no
    cache). Returns the report written as JSON: `readings` (setting -> reading -> accuracy, plus points and
    seconds) and, when tuned, `tuned` and `weights`."""
    if tune_setting and not tune:
        raise ArgsimError(f"--tune-setting {tune_setting} picks the setting that --tune searches on: add --tune")
    report: dict = {"split": split, "word_vectors": word_vectors, "stopwords": stopwords, "limit": limit,
                    "seed": seed, "readings": {}}
    compare = partial(compare_readings, word_vectors=word_vectors, engine=engine, stopwords=stopwords)
    for s in settings:
        points, pools, gold = dataset_points(split, s, sample=limit, seed=seed, data_dir=data_dir)
        t0 = time.perf_counter()
        accs = compare(points, pools, gold)
        report["readings"][s] = accs | {"points": len(points), "seconds": time.perf_counter() - t0}
    if tune:
        s = tune_setting or ("sda" if "sda" in settings else settings[0])
        points, pools, gold = dataset_points(split, s, sample=limit, seed=seed, data_dir=data_dir)
        feats = pool_features(points, pools, FeatureConfig(word_vectors=word_vectors, stopwords=stopwords), N_PART,
                              cache_dir=cache_dir, engine=engine)
        ids = {p.id: [c.id for c in pools[p.id]] for p in points}
        accs = report["readings"].get(s) or compare(points, pools, gold)
        best_reading = max(READINGS, key=lambda n: accs[n])
        w, acc, trace = tune_weights(feats, ids, gold, READINGS[best_reading])
        report["tuned"] = {"setting": s, "start": best_reading, "weights": w.tolist(), "accuracy": acc,
                           "trace": trace, "features": list(FEATURE_NAMES[:N_PART])}
        report["weights"] = w.tolist()
    return report


def study_row_specs(report: dict) -> list[tuple]:
    """The result rows of a `study_readings` report as (Evaluation, labels) pairs for `argsim.results.rows_from_specs`
    (rows are made above the methods): one per (setting, reading), and the tuned weights' accuracy."""
    split, model = report["split"], report["word_vectors"]
    specs = [(Evaluation.single("counter-ranking", "accuracy@1", round(accs[n], 4), data=split, n=accs["points"]),
              {"method": f"simple-sd[{n}]", "model": model, "setting": s, "seconds": accs["seconds"],
               "extra": {"points": accs["points"]}}) for s, accs in report["readings"].items() for n in READINGS]
    if "tuned" in report:
        t = report["tuned"]
        ev = Evaluation.single("counter-ranking", "accuracy@1", round(t["accuracy"], 4), data=split)
        specs.append((ev, {"method": "simple-sd[tuned]", "model": model, "setting": t["setting"],
                           "extra": {"weights": t["weights"]}}))
    return specs
