"""`SICKEvaluator`: SICK semantic relatedness (Pearson r, Spearman rho, MSE) from frozen sentence vectors.

The set-up of Kiros et al., "Skip-Thought Vectors", NeurIPS 2015, section 3.2 (after Tai et al., ACL 2015):
features [|u - v|, u * v] of the two sentences' vectors, a multinomial logistic regression over the five integer
scores trained on the sparse target distribution of each gold score (y between floor and ceil: weights ceil-y and
y-floor, done with sample weights), prediction = the expected score; C chosen on the trial split, Pearson r
(primary), Spearman rho and MSE on the evaluated split (as `argsim eval sick` computes them). Marelli et al., "A SICK
cure for the evaluation of compositional distributional semantic models", LREC 2014, for the data.

The regression is fitted to convergence (L-BFGS to a gradient tolerance of 1e-6; MiniLM's features take about 420
iterations at C = 0.1): a looser stop leaves figures that move by several thousandths with the stopping point rather
than with the vectors, more than the differences between backends.

Resampling unit: the evaluated pair. `resample_primary` recomputes Pearson r on the drawn pairs' (prediction, gold)
values, the regression fitted once (the interval is the evaluation's, not the regression's training).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from argsim.data.catalog import dataset_dir
from argsim.data.sick import load_sick
from argsim.errors import ArgsimError
from argsim.evaluation.base import TaskEvaluator
from argsim.metrics.record import Evaluation

C_GRID = (0.1, 1.0)
TOL = 1e-6
MAX_ITER = 5000


class SICKEvaluator(TaskEvaluator):
    """SICK relatedness of an embedding model's frozen vectors.

    Args:
        train: the pairs the regression is fitted on (`argsim.data.sick.load_sick(folder, "train")`).
        trial: the pairs that choose C.
        test: the pairs scored.
        name: the metrics' prefix when called as a sentence-transformers evaluator (and the reported data).
        config: the run options of a model loaded by name (device, cache, quiet).
        batch_size: texts per forward pass of a model object.

    Returns (`evaluate`):
        An `Evaluation` with ``pearson`` (primary), ``spearman`` and ``mse``; the chosen C in `details`.

    Example:
        >>> from argsim.data.catalog import dataset_dir
        >>> from argsim.data.sick import load_sick
        >>> folder = dataset_dir("sick")
        >>> ev = SICKEvaluator(*(load_sick(folder, s)[:200] for s in ("train", "trial", "test")))
        >>> 0.5 < ev.evaluate("minilm")["pearson"] < 1.0
        True
    """

    task: ClassVar[str] = "sick-relatedness"

    def __init__(self, train: Sequence[Any], trial: Sequence[Any], test: Sequence[Any], name: str = "test",
                 config: Any = None, batch_size: int = 64) -> None:
        super().__init__(name, "pearson", config, batch_size)
        self.train, self.trial, self.test = list(train), list(trial), list(test)
        for split, pairs in (("train", self.train), ("trial", self.trial), ("test", self.test)):
            if len(pairs) < 2:
                raise ArgsimError(f"SICK {split}: at least two pairs are needed, not {len(pairs)}")
        self.gold = np.array([p.relatedness for p in self.test], dtype=np.float64)
        self.predictions: np.ndarray | None = None

    @classmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None) -> SICKEvaluator:
        """Fit on SICK train, choose C on trial, score `split` (None: test; or trial) of the official files, its
        first `limit` pairs."""
        split = split or "test"
        if split not in ("test", "trial"):
            raise ArgsimError(f"SICK split '{split}': evaluate on 'test' or 'trial' (train fits the regression)")
        folder = dataset_dir("sick", getattr(config, "data_dir", None))
        train, trial = load_sick(folder, "train"), load_sick(folder, "trial")
        scored = (trial if split == "trial" else load_sick(folder, "test"))[:limit]
        return cls(train, trial, scored, name=name or split, config=config)

    def evaluate(self, model: Any) -> Evaluation:
        from scipy.stats import spearmanr

        pred, c = sick_predictions(self._encoder(model).encode, self.train, self.trial, self.test)
        self.predictions = pred
        self.unit_values = np.arange(len(pred), dtype=np.float64)  # unit = pair (row index)
        metrics = {"pearson": _correlation(pred, self.gold), "spearman": _correlation(pred, self.gold, spearmanr),
                   "mse": float(np.mean((pred - self.gold) ** 2))}
        return Evaluation(self.task, metrics, "pearson", data=self.name, n=len(pred), details={"c": c})

    def resample_primary(self, draws: np.ndarray) -> np.ndarray:
        predictions = self._evaluated(self.predictions)
        return self._per_draw(draws, lambda d: _correlation(predictions[d], self.gold[d]))

    def get_config_dict(self) -> dict:
        return {"train": len(self.train), "trial": len(self.trial), "test": len(self.test)}


def _correlation(x: np.ndarray, y: np.ndarray, method: Any = None) -> float:
    """Pearson's r (or `method`, scipy's spearmanr) of x and y; NaN when either is constant."""
    from scipy.stats import pearsonr

    return float((method or pearsonr)(x, y)[0]) if np.ptp(x) > 0 and np.ptp(y) > 0 else float("nan")


def _soft_targets(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row indices, integer classes and weights expressing each score as a distribution over 1..5."""
    lo = np.floor(scores).astype(int)
    w_hi = scores - lo
    rows = np.tile(np.arange(len(scores)), 2)
    classes = np.concatenate([lo, np.minimum(lo + 1, 5)])
    weights = np.concatenate([1.0 - w_hi, w_hi])
    keep = weights > 1e-9
    return rows[keep], classes[keep], weights[keep]


def fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_evals: list[np.ndarray], c: float) -> list[np.ndarray]:
    """Fit the regression on (`x_train`, `y_train`) once and predict the expected score of each of `x_evals`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x_train)
    rows, classes, weights = _soft_targets(y_train)
    clf = LogisticRegression(C=c, max_iter=MAX_ITER, tol=TOL)
    clf.fit(scaler.transform(x_train)[rows], classes, sample_weight=weights)
    return [clf.predict_proba(scaler.transform(x)) @ clf.classes_.astype(float) for x in x_evals]


def sick_predictions(encode, train: list, trial: list, test: list) -> tuple[np.ndarray, float]:
    """The predicted relatedness of each `test` pair, training on `train` and picking C on `trial` (lists of
    SickPair; `encode(texts) -> array`), and the C chosen. Each C is fitted once and predicts both splits."""

    def feats(pairs: list) -> np.ndarray:  # |u - v| and u * v of the two sentences' vectors
        u, v = encode([p.sentence_a for p in pairs]), encode([p.sentence_b for p in pairs])
        return np.concatenate([np.abs(u - v), u * v], axis=1)

    xtr, xdv, xte = feats(train), feats(trial), feats(test)
    ytr, ydv = (np.array([p.relatedness for p in pairs]) for pairs in (train, trial))
    fits = {c: fit_predict(xtr, ytr, [xdv, xte], c) for c in C_GRID}
    best_c = max(C_GRID, key=lambda c: _correlation(fits[c][0], ydv))
    return fits[best_c][1], best_c
