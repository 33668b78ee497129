"""Pointwise learning to rank (section 3.2, appendix B.1): logistic regression and XGBoost on the features.

`LTRModel` is a scikit-learn-style estimator (`fit`, `predict_proba`, `decision_function`, `predict`) around
a `StandardScaler` + `LogisticRegression(class_weight="balanced", C=50, max_iter=1000)` or
`StandardScaler` + `XGBClassifier` with the appendix's hyper-parameters, except n_jobs = 1 instead of 20: on the
shared 2-core machine two OpenMP threads made a 480-pair fit take 334 s instead of 1.1 s (threads spinning
under contention); the WMD workers already use the second core. `features="part"` uses x1..x8, `"full"`
all 20 (`argsim.counter.lexical.features`). Training pairs: `argsim.counter.ltr.training`; rankers:
`argsim.counter.ltr.rankers`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argsim.counter.lexical.features import feature_count
from argsim.errors import ArgsimError

LTR_METHODS = ("logreg-part", "logreg-full", "xgboost-part", "xgboost-full")
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
