"""Exact XGBoost ranking over full pools without solving every WMD (section 3.2 / appendix B.1 models, unchanged).

The score sigmoid(m(StandardScaler(x))), m the trees' margin, is bounded over the box the similarity bounds give
(`argsim.counter.ltr.tree_bounds`; docs/counterargs-ltr.md, Speed) by prune.py's search with `TreeScore` as its
`PoolScore`; solved candidates get the model's own scores, the others keep their bound.

Readings and choices:
- The trees are not monotone in the WMD features (the trained models are used as they are), so the lower
  similarity bounds (from the WMD upper bounds, as for negative linear weights) always matter.
- Bounds in margin space are turned into bounds of the ranking score (XGBoost's float32 probability): the margin
  bound plus `rounding_slack` (XGBoost sums its leaves in float32), through the float64 sigmoid, times
  (1 + 1e-6) against the float32 sigmoid's rounding; the threshold comparisons are then safe.
- Only `binary:logistic` / `reg:logistic` models (what `argsim train ltr` fits) are accepted.
- Batches of 16: one bound evaluation costs about as much for 16 candidates as for one, and a threshold that moves
  after every candidate saves little once a few exact scores are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from argsim.counter.lexical.features import FeatureSpace, aggregate, inverse_distance
from argsim.counter.lexical.prune import PoolScore, PruneStats, pruned_scores
from argsim.counter.ltr.model import LTRModel
from argsim.counter.ltr.tree_bounds import TreeEnsemble, margin_upper_bound, margins, parse_xgboost

WMD_BLOCK = slice(4, 8)  # x5..x8
LOGISTIC = ("binary:logistic", "reg:logistic")


@dataclass
class TreeScore(PoolScore):
    """An XGBoost `LTRModel`'s ranking score with the WMD block bounded; `data` = the point's (pool, n_features)
    feature matrix with every non-WMD feature exact (the WMD block is filled in here)."""

    ltr: LTRModel
    batch: int = 16
    trees: TreeEnsemble = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.ltr.model != "xgboost":
            raise ValueError("TreeScore needs an XGBoost model")
        scaler, clf = self.ltr.pipeline[0], self.ltr.pipeline[-1]
        self.mean, self.scale = np.asarray(scaler.mean_, np.float64), np.asarray(scaler.scale_, np.float64)
        self.trees = parse_xgboost(clf.get_booster())
        if self.trees.objective not in LOGISTIC:
            raise ValueError(f"unsupported XGBoost objective {self.trees.objective}: only {', '.join(LOGISTIC)}")
        self.slack = self.trees.rounding_slack()
        self.trees.masks.prepare(interval=range(WMD_BLOCK.start, WMD_BLOCK.stop))  # shipped built

    def _inputs(self, x: np.ndarray) -> np.ndarray:
        """What XGBoost sees: StandardScaler's (x - mean) / scale in float64, stored as float32 by the DMatrix."""
        return ((x - self.mean) / self.scale).astype(np.float32)

    def upper(self, data: np.ndarray, rows: np.ndarray, s_cl_lo: np.ndarray, s_cl_hi: np.ndarray,
              s_pr_lo: np.ndarray, s_pr_hi: np.ndarray) -> np.ndarray:
        lo, hi = self._filled(data, rows, s_cl_lo, s_pr_lo), self._filled(data, rows, s_cl_hi, s_pr_hi)
        margin = margin_upper_bound(self.trees, self._inputs(lo), self._inputs(hi)) + self.slack  # XGBoost's float32
        with np.errstate(over="ignore"):
            return 1.0 / (1.0 + np.exp(-margin)) * (1 + 1e-6)

    def _filled(self, data: np.ndarray, rows: np.ndarray, s_cl: np.ndarray, s_pr: np.ndarray) -> np.ndarray:
        x = data[rows]  # a copy
        x[:, WMD_BLOCK] = aggregate(s_cl, s_pr)
        return x

    def exact(self, data: np.ndarray, rows: np.ndarray, d_cl: np.ndarray, d_pr: np.ndarray) -> np.ndarray:
        """A lower bound of XGBoost's score from the trees' own exact margin (one XGBoost call costs ~30 ms, so it
        is made once per point, in `final`)."""
        z = self._inputs(self._filled(data, rows, inverse_distance(d_cl), inverse_distance(d_pr)))
        return 1.0 / (1.0 + np.exp(-(margins(self.trees, z) - self.slack))) * (1 - 1e-6)

    def final(self, data: np.ndarray, rows: np.ndarray, d_cl: np.ndarray, d_pr: np.ndarray) -> np.ndarray:
        return self.ltr.decision_function(self._filled(data, rows, inverse_distance(d_cl), inverse_distance(d_pr)))


def tree_scores(space: FeatureSpace, ltr: LTRModel, gold: dict[str, str | None] | None = None,
                mode: str = "top", top_k: int = 10, description: str | None = "ranking"
                ) -> tuple[dict[str, np.ndarray], PruneStats]:
    """XGBoost ranking scores of every pool by the bound-and-prune search (see the module docstring)."""
    model = TreeScore(ltr)
    data = space.features(ltr.n_features, wmd=False)  # the WMD block bounded by the search
    if ltr.n_features <= WMD_BLOCK.start or not np.isin(model.trees.feature[model.trees.left >= 0],
                                                         np.arange(WMD_BLOCK.start, WMD_BLOCK.stop)).any():
        return {pid: ltr.decision_function(x) for pid, x in data.items()}, \
            PruneStats(pairs=sum(len(x) for x in data.values()))
    return pruned_scores(space, model, data, gold=gold, mode=mode, top_k=top_k, description=description)
