"""The official Track 1 mAP against hand-computed cases and an independent pandas rendering of the script."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from argsim.data.argkp import kpm_data, load_argkp
from argsim.metrics.kpa_map import best_key_points, evaluate_map, pandas_descending_order, read_predictions

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"


@pytest.fixture(scope="module")
def gold():
    return kpm_data(FIX / "arguments.csv", FIX / "key_points.csv", FIX / "labels.csv")


# Group (Uniforms,+1), 6 arguments, keeps int(3): a1 0.9 (match), a2 0.8 (no match), a3 0.7 (undecided);
#   strict labels 1,0,0 -> AP 1; relaxed 1,0,1 -> AP (1 + 2/3)/2 = 5/6.
# Group (Uniforms,-1), 4 arguments, 3 without prediction: keeps b1 (0.3, match) and one dummy, whose score
#   becomes 0.99 after the cut -> dummy ranked first -> AP 1/2 (strict and relaxed: a dummy is never relaxed).
# Group (Whaling,+1), 2 arguments, no match: keeps one -> AP 0, not NaN.
HAND = {"a1": {"k1": 0.9, "k2": 0.1}, "a2": {"k1": 0.8, "k2": 0.3}, "a3": {"k2": 0.7}, "a4": {"k1": 0.6},
        "a5": {"k2": 0.2}, "b1": {"k3": 0.3}, "c1": {"k4": 0.9}, "c2": {"k4": 0.1}}


def test_leaderboard_formula_hand_computed(gold):
    r = evaluate_map(HAND, gold)
    groups = {(g.topic, g.stance): g for g in r.groups}
    g1, g2, g3 = groups[("Uniforms", 1)], groups[("Uniforms", -1)], groups[("Whaling", 1)]
    assert (g1.kept, g1.undecided_kept, g1.dummies_kept) == (3, 1, 0)
    assert g1.ap_strict == pytest.approx(1.0) and g1.ap_relaxed == pytest.approx(5 / 6)
    assert (g2.kept, g2.dummies_kept) == (2, 1)
    assert g2.ap_strict == pytest.approx(0.5) and g2.ap_relaxed == pytest.approx(0.5)
    assert g3.kept == 1 and g3.ap_strict == 0.0 and g3.ap_relaxed == 0.0
    assert r.strict == pytest.approx((1 + 0.5 + 0) / 3)
    assert r.relaxed == pytest.approx((5 / 6 + 0.5 + 0) / 3)
    assert (r.dummies, r.predicted) == (4, 8)


def test_2021_09_formula_scales_by_positives_over_kept(gold):
    r = evaluate_map(HAND, gold, formula="2021-09")
    assert r.strict == pytest.approx((1 * 1 / 3 + 0.5 * 1 / 2 + 0) / 3)
    assert r.relaxed == pytest.approx((5 / 6 * 2 / 3 + 0.5 * 1 / 2 + 0) / 3)


def test_dummy_score_is_raised_only_after_the_cut(gold):
    # b1 scores 0 too: the kept pair is b1 or a dummy by pandas' order; a dummy given 0.99 BEFORE the cut
    # would push b1 out of the kept half entirely.
    preds = dict(HAND, b1={"k3": 0.0}, b2={"k3": 0.0})
    g = {(x.topic, x.stance): x for x in evaluate_map(preds, gold).groups}[("Uniforms", -1)]
    assert g.kept == 2 and g.dummies_kept <= 1


def test_ties_first_in_json_order_or_seeded_random(gold):
    tied = {"a1": {"k2": 0.5, "k1": 0.5}}
    best, _ = best_key_points(tied, set(gold.kp_by_id))
    assert best["a1"] == ("k2", 0.5)
    best, _ = best_key_points({"a1": {"k1": 0.5, "k2": 0.5}}, set(gold.kp_by_id))
    assert best["a1"] == ("k1", 0.5)
    picks = {best_key_points(tied, set(gold.kp_by_id), "random", seed)[0]["a1"][0] for seed in range(20)}
    assert picks == {"k1", "k2"}
    again = [best_key_points(tied, set(gold.kp_by_id), "random", 3)[0]["a1"][0] for _ in range(3)]
    assert len(set(again)) == 1


def test_unknown_key_points_are_ignored_and_reported(gold):
    preds = dict(HAND, a1={"kp_x": 0.99, "k1": 0.9}, c1={"kp_y": 0.9})
    r = evaluate_map(preds, gold)
    assert r.invalid_key_points == ["kp_x", "kp_y"]
    assert r.dummies == 5  # c1 had only an unknown key point


def test_read_predictions_rejects_bad_scores(tmp_path):
    from argsim.errors import InputError

    p = tmp_path / "p.json"
    p.write_text(json.dumps({"a1": {"k1": "high"}}))
    with pytest.raises(InputError, match="a1.k1.: expected a number, found text"):
        read_predictions(p)
    p.write_text(json.dumps({"a1": {"k2": 0.5, "k1": 0.5}}))
    assert list(read_predictions(p)["a1"]) == ["k2", "k1"]


def test_descending_order_matches_pandas_on_ties():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    for n in (5, 17, 40, 200):
        scores = rng.integers(0, 6, n) / 5.0
        expected = pd.DataFrame({"score": scores}).sort_values("score", ascending=False).index.to_numpy()
        assert np.array_equal(pandas_descending_order(scores), expected)


def _official_pandas(preds: dict, gold_dir, split: str, formula: str) -> tuple[float, float]:
    """An independent pandas rendering of track_1_kp_matching.py as SOURCE.md describes it."""
    import pandas as pd
    from sklearn.metrics import average_precision_score

    arg_df = pd.read_csv(gold_dir / f"arguments_{split}.csv")
    kp_df = pd.read_csv(gold_dir / f"key_points_{split}.csv")
    labels_df = pd.read_csv(gold_dir / f"labels_{split}.csv")
    valid = set(kp_df["key_point_id"])
    rows = []
    for arg_id, kps in preds.items():
        kps = {k: v for k, v in kps.items() if k in valid}
        if kps:
            best = max(kps.items(), key=lambda x: x[1])
            rows.append((arg_id, best[0], best[1]))
    p = pd.DataFrame(rows, columns=["arg_id", "key_point_id", "score"])
    df = pd.merge(arg_df[["arg_id", "topic", "stance"]], p, how="left", on="arg_id")
    df["key_point_id"] = df["key_point_id"].fillna("dummy_id")
    df["score"] = df["score"].fillna(0)
    df = pd.merge(df, labels_df, how="left", on=["arg_id", "key_point_id"])
    df.loc[df["key_point_id"] == "dummy_id", "label"] = 0
    df["label_strict"], df["label_relaxed"] = df["label"].fillna(0), df["label"].fillna(1)
    out = []
    for col in ("label_strict", "label_relaxed"):
        aps = []
        for _, g in df.groupby(["topic", "stance"]):
            top = g.sort_values("score", ascending=False).head(int(len(g) * 0.5)).copy()
            top.loc[top["key_point_id"] == "dummy_id", "score"] = 0.99
            ap = average_precision_score(top[col], top["score"]) if top[col].sum() else 0.0
            aps.append(ap * (top[col].sum() / len(top) if formula == "2021-09" else 1))
        out.append(float(np.mean(aps)))
    return out[0], out[1]


@pytest.mark.parametrize("formula", ["leaderboard", "2021-09"])
def test_matches_the_official_procedure_on_real_dev(data_dir, formula):
    pytest.importorskip("pandas")
    dev = load_argkp("dev", data_dir)
    rng = random.Random(7)
    preds = {}
    for arg in dev.arguments:
        if rng.random() < 0.1:
            continue  # dummies
        cands = dev.candidates(arg) + ([dev.key_points[0]] if rng.random() < 0.2 else [])  # cross-topic kps
        preds[arg.arg_id] = {k.kp_id: round(rng.random(), 1) for k in cands}  # coarse scores: many ties
    preds["not_an_argument"] = {dev.key_points[0].kp_id: 1.0}
    r = evaluate_map(preds, dev, formula=formula)
    strict, relaxed = _official_pandas(preds, data_dir / "argkp", "dev", formula)
    assert r.strict == pytest.approx(strict, abs=1e-12)
    assert r.relaxed == pytest.approx(relaxed, abs=1e-12)
    assert len(r.groups) == 8
