"""Box bounds of XGBoost ensembles against XGBoost's own predictor, and the exact XGBoost cascade against scoring
every pair (counterargs-18 test, epa pools cut to a few hundred candidates)."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

from argsim.counter.ltr.tree_bounds import (  # noqa: E402
    margin_lower_bound,
    margin_upper_bound,
    margins,
    parse_xgboost,
)


def _predict(booster, x: np.ndarray) -> np.ndarray:
    return booster.predict(xgb.DMatrix(np.asarray(x, dtype=np.float32)), output_margin=True)


@pytest.fixture(scope="module")
def small_booster():
    """60 trees of depth <= 4 on 6 features, with splits on every feature."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 6))
    y = (x[:, 0] + np.sin(2 * x[:, 1]) - x[:, 2] * x[:, 3] + 0.3 * rng.normal(size=400) > 0).astype(int)
    clf = xgb.XGBClassifier(n_estimators=60, max_depth=4, learning_rate=0.3, n_jobs=1, random_state=0)
    return clf.fit(x, y).get_booster(), x


def test_point_bound_is_xgboost_margin_and_thresholds_split_to_the_right(small_booster):
    booster, x = small_booster
    trees = parse_xgboost(booster)
    assert trees.n_trees == 60 and trees.n_features == 6
    np.testing.assert_allclose(margins(trees, x), _predict(booster, x), rtol=0, atol=1e-5)
    # points exactly on the cuts: x == cut goes right in XGBoost; a bound that sent them left is caught here
    inner = trees.left >= 0
    rng = np.random.default_rng(1)
    on_cuts = np.repeat(x[:50], 1, axis=0).astype(np.float32)
    picks = rng.choice(np.flatnonzero(inner), size=(50, 6))
    for f in range(6):
        cuts = trees.threshold[picks[:, f]][trees.feature[picks[:, f]] == f]
        if len(cuts):
            on_cuts[: len(cuts), f] = cuts
    truth = _predict(booster, on_cuts)
    np.testing.assert_allclose(margins(trees, on_cuts), truth, rtol=0, atol=1e-5)
    flipped = dataclasses.replace(trees, threshold=np.nextafter(trees.threshold, np.float32(np.inf)))
    assert np.abs(margins(flipped, on_cuts) - truth).max() > 1e-3  # x <= cut going left is a different model
    # the JSON text and a saved file's bytes parse to the same ensemble
    again = parse_xgboost(booster.save_raw("json").decode())
    np.testing.assert_array_equal(again.threshold, trees.threshold)
    assert again.base_margin == trees.base_margin
    with pytest.raises(ValueError, match="NaN"):
        margin_upper_bound(trees, np.full((1, 6), np.nan), np.zeros((1, 6)))


def test_box_bounds_contain_every_prediction_inside(small_booster):
    booster, x = small_booster
    trees = parse_xgboost(booster)
    rng = np.random.default_rng(2)
    centre = x[:40]
    width = rng.uniform(0, 1.5, size=centre.shape) * (rng.random(centre.shape) < 0.5)  # some features exact
    lo, hi = centre - width, centre + width
    upper, lower = margin_upper_bound(trees, lo, hi), margin_lower_bound(trees, lo, hi)
    inside = lo[:, None, :] + rng.random((40, 200, 6)) * (hi - lo)[:, None, :]
    pred = _predict(booster, inside.reshape(-1, 6)).reshape(40, 200)
    assert np.all(pred <= upper[:, None] + 1e-5) and np.all(pred >= lower[:, None] - 1e-5)
    assert np.all(upper > pred.max(axis=1) - 1e-5) and np.any(upper > pred.max(axis=1) + 0.1)  # valid, not tight
    # a box bound from the corners only is not a bound: the random points inside find its misses
    corners = np.maximum(margins(trees, lo), margins(trees, hi))
    assert np.any(pred.max(axis=1) > corners + 1e-3)


def _grid_max(booster, trees, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The exact maximum of the model over each box (rows of lo, hi): it is constant between cuts, so every cell
    is represented by lo or by a cut inside (lo, hi] on each feature. One XGBoost call for all boxes."""
    grids = []
    for a, b in zip(np.float32(lo), np.float32(hi), strict=True):
        axes = []
        for f in range(len(a)):
            cuts = trees.threshold[(trees.left >= 0) & (trees.feature == f)]
            axes.append(np.unique(np.concatenate([[a[f]], cuts[(cuts > a[f]) & (cuts <= b[f])]])))
        grids.append(np.array(list(itertools.product(*axes)), dtype=np.float32))
    pred = _predict(booster, np.concatenate(grids))
    ends = np.cumsum([len(g) for g in grids])
    return np.array([part.max() for part in np.split(pred, ends[:-1])])


def _random_boxes(rng: np.random.Generator, n: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    a, b = rng.normal(size=(2, n, 6)) * scale
    return np.minimum(a, b), np.maximum(a, b)


def _hand_built(booster_like, trees: list[dict]):
    """A booster with the given trees (each {'split': [(feature, cut) per inner node], 'leaves': [...]}, complete
    depth-2 trees) in the JSON model of `booster_like`."""
    model = json.loads(booster_like.save_raw("json"))
    gb = model["learner"]["gradient_booster"]["model"]
    template = gb["trees"][0]
    out = []
    for k, tree in enumerate(trees):
        (f0, c0), (f1, c1), (f2, c2) = tree["split"]
        leaves = tree["leaves"]
        t = dict(template)
        t.update(id=k, left_children=[1, 3, 5, -1, -1, -1, -1], right_children=[2, 4, 6, -1, -1, -1, -1],
                 parents=[2147483647, 0, 0, 1, 1, 2, 2], split_indices=[f0, f1, f2, 0, 0, 0, 0],
                 split_conditions=[c0, c1, c2, *leaves], default_left=[0] * 7, split_type=[0] * 7,
                 base_weights=[0.0, 0.0, 0.0, *leaves], loss_changes=[1.0] * 3 + [0.0] * 4, sum_hessian=[1.0] * 7,
                 categories=[], categories_nodes=[], categories_segments=[], categories_sizes=[])
        t["tree_param"] = dict(template["tree_param"], num_nodes="7")
        out.append(t)
    gb["trees"] = out
    gb["tree_info"] = [0] * len(out)
    gb["iteration_indptr"] = list(range(len(out) + 1))
    gb["gbtree_model_param"] = dict(gb["gbtree_model_param"], num_trees=str(len(out)))
    booster = xgb.Booster(model_file=bytearray(json.dumps(model).encode()))
    booster.set_param({"nthread": 1})  # OpenMP threads spin on a busy machine
    return booster


def test_bound_equals_the_true_maximum_on_hand_built_trees(small_booster):
    like = small_booster[0]
    # trees on disjoint features: per-tree maxima are reached together, so the bound is the true maximum
    disjoint = _hand_built(like, [
        {"split": [(0, 0.0), (1, -0.5), (1, 0.7)], "leaves": [0.3, -0.2, 0.5, -0.4]},
        {"split": [(2, 0.25), (3, 0.1), (2, 1.0)], "leaves": [-0.1, 0.6, 0.2, -0.3]},
        {"split": [(4, -1.0), (5, 0.0), (5, 0.5)], "leaves": [0.05, -0.7, 0.4, 0.1]},
    ])
    # trees that share a feature with opposite preferences: the bound is above the true maximum
    shared = _hand_built(like, [
        {"split": [(0, 0.0), (1, 0.0), (1, 0.0)], "leaves": [1.0, 0.0, 0.0, 0.0]},
        {"split": [(0, 0.0), (1, 0.0), (1, 0.0)], "leaves": [0.0, 0.0, 0.0, 1.0]},
    ])
    rng = np.random.default_rng(3)
    for booster in (disjoint, shared):  # XGBoost reads the hand-built trees as parse_xgboost does
        points = rng.normal(size=(50, 6)).astype(np.float32)
        np.testing.assert_allclose(margins(parse_xgboost(booster), points), _predict(booster, points), atol=1e-6)
    trees = parse_xgboost(disjoint)
    lo, hi = _random_boxes(rng, 30, 1.2)
    np.testing.assert_allclose(margin_upper_bound(trees, lo, hi), _grid_max(disjoint, trees, lo, hi), atol=1e-6)
    trees = parse_xgboost(shared)
    lo, hi = np.full((1, 6), -1.0), np.full((1, 6), 1.0)
    assert _grid_max(shared, trees, lo, hi)[0] == pytest.approx(trees.base_margin + 1.0, abs=1e-6)
    assert margin_upper_bound(trees, lo, hi)[0] == pytest.approx(trees.base_margin + 2.0, abs=1e-6)
    # one tree alone (any shape of preferences): the bound is its exact maximum
    single = _hand_built(like, [{"split": [(0, 0.0), (1, 0.3), (0, 0.8)], "leaves": [0.2, 1.0, -0.5, 0.4]}])
    lo, hi = _random_boxes(rng, 30)
    np.testing.assert_allclose(margin_upper_bound(parse_xgboost(single), lo, hi),
                               _grid_max(single, parse_xgboost(single), lo, hi), atol=1e-6)
