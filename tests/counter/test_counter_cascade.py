"""Box bounds of XGBoost ensembles against XGBoost's own predictor, and the exact XGBoost cascade against scoring
every pair (counterargs-18 test, epa pools cut to a few hundred candidates)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import pickle

import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

from argsim.counter.ltr.tree_bounds import (
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
    upper = margin_upper_bound(trees, lo, hi)
    inside = lo[:, None, :] + rng.random((40, 200, 6)) * (hi - lo)[:, None, :]
    pred = _predict(booster, inside.reshape(-1, 6)).reshape(40, 200)
    assert np.all(pred <= upper[:, None] + 1e-5)
    assert np.all(upper > pred.max(axis=1) - 1e-5) and np.any(upper > pred.max(axis=1) + 0.1)  # valid, not tight
    # a box bound from the corners only is not a bound: the random points inside find its misses
    corners = np.maximum(margins(trees, lo), margins(trees, hi))
    assert np.any(pred.max(axis=1) > corners + 1e-3)
    # trees with more than 64 leaves span several bit words
    deep = xgb.XGBClassifier(n_estimators=4, max_depth=9, min_child_weight=0, learning_rate=0.5, n_jobs=1,
                             random_state=0).fit(np.concatenate([x, x + 0.01]), rng.integers(0, 2, size=800))
    deep = deep.get_booster()
    trees = parse_xgboost(deep)
    assert trees.masks.multiword
    np.testing.assert_allclose(margins(trees, x), _predict(deep, x), rtol=0, atol=1e-5)
    pred = _predict(deep, inside.reshape(-1, 6)).reshape(40, 200)
    assert np.all(pred <= margin_upper_bound(trees, lo, hi)[:, None] + 1e-5)


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


@pytest.fixture(scope="module")
def epa_cut(counterargs_corpus):
    """A tiny XGBoost-part model trained on 24 test points (true counter + 9 sampled candidates each), and 3 other
    test points ranked against their epa pool cut to 80 of its shorter candidates (true counter included); short
    points, to keep every-pair WMD cheap."""
    from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
    from argsim.counter.ltr.model import LTRModel
    from argsim.data.counterargs import build_pools

    corpus = counterargs_corpus
    pools = build_pools(corpus, "test", "epa")
    rng = np.random.default_rng(5)
    everyone = sorted(corpus.points("test"), key=lambda p: len(p.text))[:600]

    def cut(p, size):
        gold = corpus.true_counter(p).id
        others = [c for c in pools[p.id] if c.id != gold and len(c.text) < 600]
        pick = sorted(rng.choice(len(others), size=size - 1, replace=False))
        return [c for c in pools[p.id] if c.id == gold] + [others[i] for i in pick]

    train = everyone[7::25][:24]
    train_pools = {p.id: cut(p, 10) for p in train}
    x = np.concatenate([m for m in FeatureSpace(train, train_pools, FeatureConfig()).features(8).values()])
    y = np.concatenate([[1] + [0] * 9 for _ in train])
    ltr = LTRModel("xgboost", "part").fit(x, y)
    points = everyone[100::200][:3]
    ranked = {p.id: cut(p, 80) for p in points}
    return ltr, points, ranked, {p.id: corpus.true_counter(p).id for p in points}


def test_cascade_equals_scoring_every_pair(epa_cut):
    from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
    from argsim.counter.lexical.prune import pruned_scores
    from argsim.counter.ltr.cascade import TreeScore, tree_scores
    from argsim.metrics.ranking import accuracy_at_1, mrr

    ltr, points, pools, gold = epa_cut
    space = FeatureSpace(points, pools, FeatureConfig())
    brute = {pid: ltr.decision_function(x) for pid, x in space.features(8).items()}
    ids = {p.id: [c.id for c in pools[p.id]] for p in points}
    top, st_top = tree_scores(space, ltr, mode="top", top_k=1, description=None)
    model, cheap = pickle.loads(pickle.dumps(TreeScore(ltr))), space.features(8, wmd=False)  # as shipped to workers
    rank, st_rank = pruned_scores(space, model, cheap, gold=gold, mode="rank", description=None)
    for name, run in (("top", top), ("rank", rank)):
        assert accuracy_at_1({k: (ids[k], v) for k, v in run.items()}, gold) == \
            accuracy_at_1({k: (ids[k], v) for k, v in brute.items()}, gold), name
        for pid, exact in brute.items():
            assert np.all(run[pid] >= exact), name  # pruned candidates keep an upper bound
            solved = run[pid] == exact
            assert run[pid][solved].max() == exact.max()  # the best candidates are solved, with XGBoost's numbers
            assert np.all(run[pid][~solved] < exact.max()), name
    assert mrr({k: (ids[k], v) for k, v in rank.items()}, gold) == mrr({k: (ids[k], v) for k, v in brute.items()},
                                                                         gold)
    for pid, exact in brute.items():  # rank: every candidate at least as good as the true counter is exact
        g = ids[pid].index(gold[pid])
        assert np.array_equal(rank[pid][exact >= exact[g]], exact[exact >= exact[g]])
    assert st_top.pairs == 240 and 0 < st_top.solved_pr < st_top.pairs / 2  # it prunes
    assert st_rank.solved_pr < st_rank.pairs

    # a bound that ignores the WMD interval (the box's lower corner) is not a bound: the same checks catch it
    class Corner(TreeScore):
        def upper(self, data, rows, s_cl_lo, s_cl_hi, s_pr_lo, s_pr_hi):
            return super().upper(data, rows, s_cl_lo, s_cl_lo, s_pr_lo, s_pr_lo)

    broken_model = copy.copy(model)  # the same parsed trees and tables
    broken_model.__class__ = Corner
    broken, _ = pruned_scores(space, broken_model, cheap, mode="top", top_k=1, description=None)
    assert any(np.any(broken[pid] < exact - 1e-6) for pid, exact in brute.items())

