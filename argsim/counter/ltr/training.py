"""Training the pointwise LTR models (section 3.2, appendix B.1).

Training pairs: every training-split point with its true counter (label 1) and up to `neg_per_point` candidates
sampled uniformly (seeded) from its pool in the chosen setting (label 0; None: the whole pool).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from argsim.config import SEED, RunConfig
from argsim.counter.lexical.feature_cache import pool_features
from argsim.counter.lexical.features import FeatureConfig, feature_count
from argsim.counter.ltr.model import LTR_METHODS, LTRModel
from argsim.counter.neural.data import random_subset
from argsim.data.counterargs import CounterCorpus, build_pools, load_counterargs
from argsim.engine.base import Engine
from argsim.errors import ArgsimError
from argsim.paths import under_workdir

MODELS_DIR = Path("models/counter/ltr")  # relative: placed in the work folder (argsim.paths) when used


def train_ltr(corpus: CounterCorpus | None, setting: str, methods: tuple[str, ...] = LTR_METHODS,
              config: FeatureConfig | None = None, neg_per_point: int | None = 10, seed: int = SEED,
              out_dir: str | Path = MODELS_DIR, limit: int | None = None,
              user_data: tuple | None = None, engine: Engine | None = None) -> dict[str, Path]:
    """Fit the requested LTR methods for one setting on shared training features (points without a true counter
    skipped); save each under out_dir; `user_data=(points, pools, gold)` trains on a user's own arguments instead."""
    config = config or FeatureConfig()
    n = max(feature_count(m.split("-")[1]) for m in methods)
    rng = np.random.default_rng(seed)
    if user_data is not None:
        points, pools, gold = user_data
        meta = {"split": "user", "setting": setting, "seed": seed}
    else:  # every training-split point (a seeded sample of `limit`) in the setting's pools
        pools, points = build_pools(corpus, "training", setting), corpus.points("training")
        if limit is not None:
            points = [points[i] for i in sorted(rng.choice(len(points), size=min(limit, len(points)), replace=False))]
        gold = {p.id: corpus.true_counter(p).id for p in points}
        meta = {"split": "training", "setting": setting, "seed": seed, "limit": limit}
    points = [p for p in points if gold.get(p.id) is not None]
    if not points:
        raise ArgsimError("no training point has a true counter")
    sampled = {}
    points = [p for p in points if any(c.id == gold[p.id] for c in pools[p.id])]
    for p in points:
        negs = random_subset([c for c in pools[p.id] if c.id != gold[p.id]], neg_per_point, rng)
        sampled[p.id] = [next(c for c in pools[p.id] if c.id == gold[p.id]), *negs]  # the true counter first
    features = pool_features(points, sampled, config, n, engine=engine)
    x = np.concatenate([features[p.id] for p in points])
    y = np.concatenate([np.r_[np.ones(1, dtype=int), np.zeros(len(sampled[p.id]) - 1, dtype=int)] for p in points])
    sampling = meta | {"neg_per_point": neg_per_point, "points": len(points), "pairs": int(len(y)),
                       "positives": int(y.sum())}
    saved = {}
    for method in methods:
        kind, feats = method.split("-")
        meta = {"features_config": asdict(config), "sampling": sampling, "method": method}
        saved[method] = LTRModel(kind, feats, seed=seed).fit(x, y).save(under_workdir(out_dir) / setting / method, meta)
    return saved


def train_ltr_settings(settings: Sequence[str], methods: tuple[str, ...], config: FeatureConfig, run: RunConfig,
                       neg_per_point: int | None = 10, out_dir: str | Path = MODELS_DIR, limit: int | None = None,
                       input_file: Path | None = None) -> list[dict]:
    """`argsim train ltr`: `train_ltr` for each setting on counterargs-18 (with `input_file`, once on the user's
    arguments as the setting 'user'), seeded by the run's seed, bulk work on its engine. Returns per saved model
    its setting, method, training pairs and positives, folder and the seconds of its setting."""
    from argsim.counter.core.userdata import load_user_arguments
    from argsim.engine import engine_from_config
    from argsim.io import read_json
    from argsim.measure import timed

    user_data = load_user_arguments(input_file, candidates="all") if input_file is not None else None
    corpus = None if user_data is not None else load_counterargs(run.data_dir)
    saved = []
    for setting in ["user"] if user_data is not None else settings:
        with timed() as t:
            models = train_ltr(corpus, setting, methods, config, neg_per_point=neg_per_point, seed=run.seed,
                               out_dir=out_dir, limit=limit, user_data=user_data, engine=engine_from_config(run))
        saved += [{"setting": setting, "method": m, "sampling": read_json(folder / "ltr.json")["sampling"],
                   "folder": folder, "seconds": t["seconds"]} for m, folder in models.items()]
    return saved
