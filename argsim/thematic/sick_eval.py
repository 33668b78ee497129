"""SICK relatedness with frozen sentence vectors (Kiros et al. 2015 / Tai et al. 2015 set-up).

Features [|u - v|, u * v]; a multinomial logistic regression over the five integer scores trained on the
sparse target distribution of each gold score (y between floor and ceil: weights ceil-y and y-floor, done with
sample weights), prediction = expected score. C is chosen on the trial split; `argsim.evaluation.SICKEvaluator`
reports Pearson r, Spearman rho and MSE on the test split. The regression is fitted to convergence (L-BFGS to a
gradient tolerance of 1e-6; MiniLM's features take about 420 iterations at C = 0.1): a looser stop leaves figures
that move by several thousandths with the stopping point rather than with the vectors, more than the differences
between backends.
"""

from __future__ import annotations

import numpy as np

C_GRID = (0.1, 1.0)
TOL = 1e-6
MAX_ITER = 5000


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
    from scipy.stats import pearsonr

    def feats(pairs: list) -> np.ndarray:  # |u - v| and u * v of the two sentences' vectors
        u, v = encode([p.sentence_a for p in pairs]), encode([p.sentence_b for p in pairs])
        return np.concatenate([np.abs(u - v), u * v], axis=1)

    xtr, xdv, xte = feats(train), feats(trial), feats(test)
    ytr, ydv = (np.array([p.relatedness for p in pairs]) for pairs in (train, trial))
    fits = {c: fit_predict(xtr, ytr, [xdv, xte], c) for c in C_GRID}
    best_c = max(C_GRID, key=lambda c: pearsonr(fits[c][0], ydv)[0])
    return fits[best_c][1], best_c

