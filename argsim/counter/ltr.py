"""Pointwise learning to rank (section 3.2, appendix B.1): logistic regression and XGBoost on the features.

`LTRModel` is a scikit-learn-style estimator (`fit`, `predict_proba`, `decision_function`, `predict`) around
a `StandardScaler` + `LogisticRegression(class_weight="balanced", C=50, max_iter=1000)` or
`StandardScaler` + `XGBClassifier` with the appendix's hyper-parameters, except n_jobs = 1 instead of 20: on the
shared 2-core machine two OpenMP threads made a 480-pair fit take 334 s instead of 1.1 s (threads spinning
under contention); the WMD workers already use the second core. `features="part"` uses x1..x8, `"full"`
all 20. Training pairs: every training-split point with its true counter (label 1) and up to `neg_per_point`
candidates sampled uniformly (seeded) from the point's pool in the chosen setting (label 0);
`neg_per_point=None` takes the whole pool.

Ranking: logistic regression is linear in the features after an affine scaler, so it ranks with the same exact
bound-and-prune search as Simple-SD (`argsim.counter.prune`); XGBoost needs every feature of every pair.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from argsim.counter.features import FeatureConfig, FeatureSpace, feature_count
from argsim.counter.prune import linear_scores
from argsim.counter.rankers import register_ranker
from argsim.counter.simplesd import ScoreDict
from argsim.data.counterargs import Argument, CounterCorpus, build_pools
from argsim.errors import ArgsimError

LTR_METHODS = ("logreg-part", "logreg-full", "xgboost-part", "xgboost-full")
MODELS_DIR = Path(__file__).resolve().parents[2] / "models" / "counter" / "ltr"
FEATURE_CACHE = Path(__file__).resolve().parents[2] / "runs" / "counter" / "features"
XGB_PARAMS = dict(max_depth=8, learning_rate=0.01, n_estimators=1000, min_child_weight=5, max_delta_step=0,
                  subsample=0.8, colsample_bytree=0.7, reg_alpha=0, reg_lambda=0.4, scale_pos_weight=0.8,
                  objective="binary:logistic", eval_metric="auc", gamma=0, n_jobs=1)
LOGREG_PARAMS = dict(class_weight="balanced", C=50, max_iter=1000)


class LTRModel:
    """Scaler + classifier on the first 8 ('part') or all 20 ('full') features."""

    def __init__(self, model: str = "logreg", features: str = "part", seed: int = 13) -> None:
        if model not in ("logreg", "xgboost"):
            raise ValueError("model must be 'logreg' or 'xgboost'")
        self.model, self.features, self.seed = model, features, seed
        self.n_features = feature_count(features)
        self.pipeline = None

    @property
    def name(self) -> str:
        return f"{self.model}-{self.features}"

    def _make(self):  # noqa: ANN202
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        if self.model == "logreg":
            from sklearn.linear_model import LogisticRegression

            return make_pipeline(StandardScaler(), LogisticRegression(random_state=self.seed, **LOGREG_PARAMS))
        from xgboost import XGBClassifier

        return make_pipeline(StandardScaler(), XGBClassifier(random_state=self.seed, **XGB_PARAMS))

    def _x(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.shape[1] < self.n_features:
            raise ValueError(f"{self.name} needs {self.n_features} features, got {x.shape[1]}")
        return x[:, : self.n_features]

    def fit(self, x: np.ndarray, y: np.ndarray) -> LTRModel:
        self.pipeline = self._make().fit(self._x(x), np.asarray(y, dtype=int))
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return self.pipeline.predict_proba(self._x(x))

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        """Ranking score: the logit for logistic regression, the positive-class probability for XGBoost."""
        if self.model == "logreg":
            return self.pipeline.decision_function(self._x(x))
        return self.predict_proba(x)[:, 1]

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.pipeline.predict(self._x(x))

    def linear_weights(self) -> np.ndarray:
        """Logistic regression as weights on the raw features: coef / scale (the offset does not change ranks)."""
        if self.model != "logreg":
            raise ValueError("only logistic regression is linear")
        scaler, clf = self.pipeline[0], self.pipeline[-1]
        return clf.coef_.ravel() / scaler.scale_

    def save(self, folder: str | Path, meta: dict | None = None) -> Path:
        import joblib

        from argsim.io import atomic_path, write_json

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(folder / "model.joblib") as tmp:
            joblib.dump(self.pipeline, tmp)
        write_json(folder / "ltr.json", {"model": self.model, "features": self.features, "seed": self.seed,
                                         "n_features": self.n_features} | (meta or {}))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> tuple[LTRModel, dict]:
        import joblib

        from argsim.io import read_json

        folder = Path(folder)
        if not (folder / "ltr.json").is_file():
            raise ArgsimError(f"{folder}: not a trained LTR model (no ltr.json); train one with `argsim train ltr`")
        meta = read_json(folder / "ltr.json")
        m = cls(meta["model"], meta["features"], meta.get("seed", 13))
        m.pipeline = joblib.load(folder / "model.joblib")
        return m, meta


# ---------------------------------------------------------------- features with an on-disk cache


def pool_features(points: list[Argument], pools: dict[str, list[Argument]], config: FeatureConfig,
                  n_features: int, cache_dir: str | Path | None = FEATURE_CACHE) -> dict[str, np.ndarray]:
    """Exact features of every pool pair, cached on disk by (points, pools, config, n_features).

    A 'full' request reuses a cached 'part' block (the expensive WMDs) and a 'part' request a cached full one.
    """

    def cache_path(n: int) -> Path | None:
        key = hashlib.sha1(json.dumps([config.word_vectors, config.bert_model, config.bert_pooling, config.bm25_idf,
                                       config.stopwords,
                                       n, [(p.id, [c.id for c in pools[p.id]]) for p in points]]).encode()
                           ).hexdigest()[:16]
        return Path(cache_dir) / f"{key}.npz" if cache_dir else None

    def load(path: Path | None) -> dict[str, np.ndarray] | None:
        if path is None or not path.exists():
            return None
        data = np.load(path)
        return {p.id: data[f"f{i}"] for i, p in enumerate(points)}

    cached = load(cache_path(n_features))
    if cached is not None:
        return cached
    other = load(cache_path(20 if n_features <= 8 else 8))
    if other is not None and n_features <= 8:
        return {pid: f[:, :n_features] for pid, f in other.items()}
    space = FeatureSpace(points, pools, config)
    if other is not None:  # full request, part block cached: add x9..x20
        rest = space.features(n_features, first=8)
        feats = {pid: np.concatenate([other[pid], rest[pid]], axis=1) for pid in other}
    else:
        feats = space.features(n_features)
    path = cache_path(n_features)
    if path is not None:
        from argsim.io import atomic_path

        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **{f"f{i}": feats[p.id] for i, p in enumerate(points)})
    return feats


@dataclass
class TrainingSet:
    x: np.ndarray
    y: np.ndarray
    sampling: dict = field(default_factory=dict)


def training_set(corpus: CounterCorpus, setting: str, n_features: int, config: FeatureConfig,
                 neg_per_point: int | None = 10, seed: int = 13, split: str = "training",
                 limit: int | None = None) -> TrainingSet:
    """Pointwise pairs of a counterargs-18 split: true counters (1) and sampled pool candidates (0)."""
    rng = np.random.default_rng(seed)
    pools = build_pools(corpus, split, setting)
    points = corpus.points(split)
    if limit is not None:
        points = [points[i] for i in sorted(rng.choice(len(points), size=min(limit, len(points)), replace=False))]
    gold = {p.id: corpus.true_counter(p).id for p in points}
    return training_set_from(points, pools, gold, n_features, config, neg_per_point, rng,
                             {"split": split, "setting": setting, "seed": seed, "limit": limit})


def training_set_from(points: list[Argument], pools: dict[str, list[Argument]], gold: dict[str, str | None],
                      n_features: int, config: FeatureConfig, neg_per_point: int | None,
                      rng: np.random.Generator, meta: dict) -> TrainingSet:
    """Pairs from any points/pools with known true counters (points without one are skipped)."""
    points = [p for p in points if gold.get(p.id) is not None]
    if not points:
        raise ArgsimError("no training point has a true counter")
    sampled = {}
    points = [p for p in points if any(c.id == gold[p.id] for c in pools[p.id])]
    for p in points:
        pos = [c for c in pools[p.id] if c.id == gold[p.id]]
        negs = [c for c in pools[p.id] if c.id != gold[p.id]]
        if neg_per_point is not None and len(negs) > neg_per_point:
            negs = [negs[i] for i in sorted(rng.choice(len(negs), size=neg_per_point, replace=False))]
        sampled[p.id] = pos[:1] + negs
    feats = pool_features(points, sampled, config, n_features)
    x = np.concatenate([feats[p.id] for p in points])
    y = np.concatenate([np.r_[np.ones(1, dtype=int),
                              np.zeros(len(sampled[p.id]) - 1, dtype=int)] for p in points])
    return TrainingSet(x=x, y=y, sampling=meta | {"neg_per_point": neg_per_point, "points": len(points),
                                                  "pairs": int(len(y)), "positives": int(y.sum())})


def train_ltr(corpus: CounterCorpus | None, setting: str, methods: tuple[str, ...] = LTR_METHODS,
              config: FeatureConfig | None = None, neg_per_point: int | None = 10, seed: int = 13,
              out_dir: str | Path = MODELS_DIR, limit: int | None = None,
              user_data: tuple | None = None) -> dict[str, Path]:
    """Fit the requested LTR methods for one setting on shared training features; save each under out_dir.

    `user_data=(points, pools, gold)` trains on a user's own arguments instead (models go to out_dir/<setting>).
    """
    config = config or FeatureConfig()
    n = max(feature_count(m.split("-")[1]) for m in methods)
    if user_data is not None:
        points, pools, gold = user_data
        data = training_set_from(points, pools, gold, n, config, neg_per_point, np.random.default_rng(seed),
                                 {"split": "user", "setting": setting, "seed": seed})
    else:
        data = training_set(corpus, setting, n, config, neg_per_point=neg_per_point, seed=seed, limit=limit)
    saved = {}
    for method in methods:
        kind, feats = method.split("-")
        model = LTRModel(kind, feats, seed=seed).fit(data.x, data.y)
        folder = Path(out_dir) / setting / method
        saved[method] = model.save(folder, meta={"features_config": asdict(config), "sampling": data.sampling,
                                                 "method": method})
    return saved


# ---------------------------------------------------------------- rankers


def _model_folder(method: str, setting: str | None, model: str | None) -> Path:
    if model:
        return Path(model)
    if not setting or setting == "user":
        raise ArgsimError(f"{method}: pass --model <folder of a model from `argsim train ltr`>")
    folder = MODELS_DIR / setting / method
    if not folder.is_dir():
        raise ArgsimError(f"{method}: no trained model at {folder}; run `argsim train ltr --setting {setting}` "
                          "or pass --model")
    return folder


def _ltr_ranker(method: str):  # noqa: ANN202
    def rank(points, pools, model: str | None = None, setting: str | None = None, prune: str = "top",  # noqa: ANN001, ANN202
             gold: dict | None = None, top_k: int = 10, workers: int = 2, **_):
        ltr, meta = LTRModel.load(_model_folder(method, setting, model))
        # models saved before the stop-word option kept every token
        config = FeatureConfig(**{"stopwords": "none"} | (meta.get("features_config") or {}) | {"workers": workers})
        if ltr.model == "logreg":
            space = FeatureSpace(points, pools, config)
            scores, stats = linear_scores(space, ltr.linear_weights(), gold=gold if prune == "rank" else None,
                                          mode={"rank": "rank", "none": "none"}.get(prune, "top"), top_k=top_k,
                                          description=method)
            return ScoreDict(scores, exact_rank=prune in ("rank", "none"), stats=stats.__dict__)
        feats = pool_features(points, pools, config, ltr.n_features)
        return {p.id: ltr.decision_function(feats[p.id]) for p in points}

    return rank


for _m in LTR_METHODS:
    register_ranker(_m, help=f"{_m.replace('-', ' on ')} features (trained by `argsim train ltr`; opt "
                             "model=<folder>, prune=top|rank|none for logreg)")(_ltr_ranker(_m))
