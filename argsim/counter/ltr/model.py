"""Pointwise learning to rank (section 3.2, appendix B.1): logistic regression and XGBoost on the features.

`LTRModel` is a scikit-learn-style estimator (`fit`, `predict_proba`, `decision_function`, `predict`) around a
`StandardScaler` + `LogisticRegression` or `XGBClassifier` with the appendix's hyper-parameters, except n_jobs = 1
instead of 20 (on two cores, OpenMP threads spinning made a fit 300 times slower: docs/counterargs-ltr.md);
parallel work belongs to the engine (`--engine ray`). `features="part"` uses x1..x8, `"full"` all 20
(`argsim.counter.lexical.features`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argsim.config import SEED
from argsim.errors import ArgsimError
from argsim.extras import need

LTR_METHODS = ("logreg-part", "logreg-full", "xgboost-part", "xgboost-full")
XGB_PARAMS = dict(max_depth=8, learning_rate=0.01, n_estimators=1000, min_child_weight=5, max_delta_step=0,
                  subsample=0.8, colsample_bytree=0.7, reg_alpha=0, reg_lambda=0.4, scale_pos_weight=0.8,
                  objective="binary:logistic", eval_metric="auc", gamma=0, n_jobs=1)
LOGREG_PARAMS = dict(class_weight="balanced", C=50, max_iter=1000)
MODEL_FORMAT = "argsim-ltr-1"  # model.json: scaler (+ logistic regression) as numbers; xgboost.json: XGBoost's own
#: model.json's parts: their fitted attributes (scikit-learn's names less the trailing _) as JSON numbers, by dtype
FITTED = {"scaler": {"mean": float, "scale": float, "var": float, "n_samples_seen": int},
          "logreg": {"coef": float, "intercept": float, "classes": None}}


def _xgb_classifier(**params):
    return need("xgboost", "the XGBoost learning-to-rank models").XGBClassifier(**params)


class LTRModel:
    """Scaler + classifier on the first 8 ('part') or all 20 ('full') features."""

    def __init__(self, model: str = "logreg", features: str = "part", seed: int = SEED) -> None:
        if model not in ("logreg", "xgboost"):
            raise ValueError("model must be 'logreg' or 'xgboost'")
        self.model, self.features, self.seed = model, features, seed
        from argsim.counter.lexical.features import feature_count  # gensim (WMD): only when a model is built

        self.n_features = feature_count(features)
        self.pipeline = None

    @property
    def name(self) -> str:
        return f"{self.model}-{self.features}"

    def _x(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.shape[1] < self.n_features:
            raise ValueError(f"{self.name} needs {self.n_features} features, got {x.shape[1]}")
        return x[:, : self.n_features]

    def fit(self, x: np.ndarray, y: np.ndarray) -> LTRModel:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        clf = (LogisticRegression(random_state=self.seed, **LOGREG_PARAMS) if self.model == "logreg"
               else _xgb_classifier(random_state=self.seed, **XGB_PARAMS))
        self.pipeline = make_pipeline(StandardScaler(), clf).fit(self._x(x), np.asarray(y, dtype=int))
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return self.pipeline.predict_proba(self._x(x))

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        """Ranking score: the logit for logistic regression, the positive-class probability for XGBoost."""
        return self.pipeline.decision_function(self._x(x)) if self.model == "logreg" else self.predict_proba(x)[:, 1]

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.pipeline.predict(self._x(x))

    def linear_weights(self) -> np.ndarray:
        """Logistic regression as weights on the raw features: coef / scale (the offset does not change ranks)."""
        if self.model != "logreg":
            raise ValueError("only logistic regression is linear")
        return self.pipeline[-1].coef_.ravel() / self.pipeline[0].scale_

    def save(self, folder: str | Path, meta: dict | None = None) -> Path:
        """Save as data, never a pickle: the scaler (and logistic regression) as JSON numbers in `model.json`,
        XGBoost's trees in its own JSON format (`xgboost.json`); `ltr.json` holds the metadata."""
        from argsim.io import atomic_path, write_json

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        scaler, clf = self.pipeline[0], self.pipeline[-1]
        parts = {"scaler": scaler} | ({"logreg": clf} if self.model == "logreg" else {})
        params = {"format": MODEL_FORMAT} | {
            part: {k: np.asarray(getattr(obj, f"{k}_"), dtype=t).tolist() for k, t in FITTED[part].items()}
            for part, obj in parts.items()}
        if self.model == "xgboost":
            with atomic_path(folder / "xgboost.json") as tmp:  # the temporary name keeps .json: xgboost's format
                clf.save_model(str(tmp))
        write_json(folder / "model.json", params)
        (folder / "model.joblib").unlink(missing_ok=True)  # an old pickle beside the new model would only mislead
        write_json(folder / "ltr.json", {"model": self.model, "features": self.features, "seed": self.seed,
                                         "n_features": self.n_features} | (meta or {}))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> tuple[LTRModel, dict]:
        """Load a folder saved by `save`; a folder holding only a pickle (`model.joblib`, older argsim) is refused:
        unpickling runs code, so retrain it with `argsim train ltr`."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        from argsim.backend.safety import model_files
        from argsim.io import read_json, read_json_as
        from argsim.schemas import LTRMeta

        folder = Path(folder)
        if not (folder / "ltr.json").is_file():
            raise ArgsimError(f"{folder}: not a trained LTR model (no ltr.json); train one with `argsim train ltr`")
        if not (folder / "model.json").is_file():
            hint = " (it holds a pickle, model.joblib, which is never loaded: it could run code)" \
                if (folder / "model.joblib").exists() else ""
            raise ArgsimError(f"{folder}: no model.json{hint}; retrain it with `argsim train ltr`")
        with model_files(folder, "LTR model"):
            meta = read_json_as(LTRMeta, folder / "ltr.json", what="an LTR model's metadata {model, features}")
            m = cls(meta["model"], meta["features"], meta.get("seed", 13))
            params = read_json(folder / "model.json")
            if not isinstance(params, dict):
                raise TypeError("model.json must hold an object")
        try:
            scaler = StandardScaler()
            clf = LogisticRegression(**LOGREG_PARAMS) if m.model == "logreg" else _xgb_classifier()
            parts = {"scaler": scaler} | ({"logreg": clf} if m.model == "logreg" else {})  # as `save` writes them
            for part, obj in parts.items():
                for k, t in FITTED[part].items():
                    setattr(obj, f"{k}_", np.asarray(params[part][k], dtype=t))
            scaler.n_features_in_ = len(scaler.mean_)
            if m.model == "logreg":
                clf.n_features_in_ = clf.coef_.shape[1]
            else:
                clf.load_model(str(folder / "xgboost.json"))
        except (KeyError, TypeError, ValueError, IndexError, OSError) as exc:
            raise ArgsimError(f"{folder}: unreadable LTR model ({exc})") from None
        m.pipeline = make_pipeline(scaler, clf)
        return m, meta
