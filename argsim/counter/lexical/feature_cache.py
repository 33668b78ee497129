"""The 20 features of every pool pair (`argsim.counter.lexical.features`) with an on-disk cache, shared by the
LTR training (`argsim.counter.ltr.training`), XGBoost ranking and Simple-SD weight tuning."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from argsim.backend.words import word_vectors_identity
from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
from argsim.data.counterargs import Argument
from argsim.engine.base import Engine, LocalEngine
from argsim.io import atomic_path
from argsim.paths import under_workdir

FEATURE_CACHE = Path("runs/counter/features")  # relative: placed in the work folder (argsim.paths) when used


def pool_features(points: list[Argument], pools: dict[str, list[Argument]], config: FeatureConfig,
                  n_features: int, cache_dir: str | Path | None = FEATURE_CACHE,
                  engine: Engine | None = None) -> dict[str, np.ndarray]:
    """Exact features of every pool pair (WMDs on `engine`), cached on disk by (points, pools, config, n_features);
    a 'full' request reuses a cached 'part' block (the expensive WMDs), a 'part' request a cached full one."""

    # the word vectors in the key: a named source by its name, a file or static model folder by its content
    # fingerprint (a folder rewritten under the same path gets new features)
    name = config.word_vectors
    vectors = name if name in ("glove50", "w2v-training") or not Path(name).expanduser().exists() \
        else word_vectors_identity(name)

    def cache_path(n: int) -> Path | None:
        key = hashlib.sha1(json.dumps([vectors, config.bert_model, config.bert_pooling,
                                       config.bm25_idf, config.stopwords,
                                       n, [(p.id, [c.id for c in pools[p.id]]) for p in points]]).encode()
                           ).hexdigest()[:16]
        return under_workdir(cache_dir) / f"{key}.npz" if cache_dir else None

    def load(path: Path | None) -> dict[str, np.ndarray] | None:
        if path is None or not path.exists():
            return None
        data = np.load(path)
        return {p.id: data[f"f{i}"] for i, p in enumerate(points)}

    path = cache_path(n_features)
    if (cached := load(path)) is not None:
        return cached
    other = load(cache_path(20 if n_features <= 8 else 8))
    if other is not None and n_features <= 8:
        return {pid: f[:, :n_features] for pid, f in other.items()}
    space = FeatureSpace(points, pools, config, executor=engine or LocalEngine())
    if other is not None:  # full request, part block cached: add x9..x20
        rest = space.features(n_features, first=8)
        feats = {pid: np.concatenate([other[pid], rest[pid]], axis=1) for pid in other}
    else:
        feats = space.features(n_features)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **{f"f{i}": feats[p.id] for i, p in enumerate(points)})
    return feats

