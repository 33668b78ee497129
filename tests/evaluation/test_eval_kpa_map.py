"""KPAMapEvaluator against the official procedure, a hand computation of the F1 threshold, and the same model in
memory and on disk; its argument resampling against the official procedure on duplicated arguments."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from argsim.data.argkp import KPMData, kpm_data, load_argkp
from argsim.evaluation import KPAMapEvaluator
from argsim.metrics.kpa_map import evaluate_map

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"
# the hand-computed case of tests/kpm/test_kpm_map.py: strict mAP (1 + 0.5 + 0) / 3
HAND = {"a1": {"k1": 0.9, "k2": 0.1}, "a2": {"k1": 0.8, "k2": 0.3}, "a3": {"k2": 0.7}, "a4": {"k1": 0.6},
        "a5": {"k2": 0.2}, "b1": {"k3": 0.3}, "c1": {"k4": 0.9}, "c2": {"k4": 0.1}}
TOPIC = "We should abandon the use of school uniform"


@pytest.fixture(scope="module")
def gold() -> KPMData:
    return kpm_data(FIX / "arguments.csv", FIX / "key_points.csv", FIX / "labels.csv")


def test_hand_case_is_the_official_map_and_the_identity_draw_too(gold):
    ev = KPAMapEvaluator(gold, score=lambda _model: HAND)
    result = ev.evaluate(None)
    assert result["strict_map"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert result["relaxed_map"] == pytest.approx(evaluate_map(HAND, gold).relaxed)
    assert ev.n_units == len(gold.arguments)
    assert ev.resample_primary(np.arange(ev.n_units)[None])[0] == pytest.approx(result["strict_map"], abs=1e-12)


def test_f1_threshold_is_the_best_of_every_cut_by_hand(gold):
    ev = KPAMapEvaluator(gold, score=lambda _model: HAND)
    result = ev.evaluate(None)
    pairs = [(HAND[a][k], y) for (a, k), y in gold.labels.items() if k in HAND.get(a, {})]

    def f1(t: float) -> float:
        tp = sum(s >= t and y == 1 for s, y in pairs)
        fp = sum(s >= t and y == 0 for s, y in pairs)
        fn = sum(s < t and y == 1 for s, y in pairs)
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    best = max(sorted({s for s, _ in pairs}), key=f1)  # the lowest of equal maxima (max keeps the first)
    assert result["threshold"] == pytest.approx(best) and result["f1_at_threshold"] == pytest.approx(f1(best))


def test_a_draw_with_repeats_is_the_official_map_of_the_repeated_arguments(gold):
    """Resampled mAP = the official script on a gold file whose drawn arguments appear as often as drawn (copies
    under new ids, their labels and scores copied), in draw order."""
    ev = KPAMapEvaluator(gold, score=lambda _model: HAND)
    ev.evaluate(None)
    rng = np.random.default_rng(3)
    for draw in rng.integers(0, ev.n_units, size=(5, ev.n_units)):
        args, labels, preds = [], {}, {}
        for j, i in enumerate(draw):
            a = gold.arguments[i]
            copy = replace(a, arg_id=f"{a.arg_id}#{j}")
            args.append(copy)
            labels |= {(copy.arg_id, k): v for (aid, k), v in gold.labels.items() if aid == a.arg_id}
            if a.arg_id in HAND:
                preds[copy.arg_id] = HAND[a.arg_id]
        labels = labels or {(args[0].arg_id, gold.key_points[0].kp_id): 0}  # the official script needs labels
        official = evaluate_map(preds, KPMData("draw", args, gold.key_points, labels))
        assert ev.resample_primary(draw[None])[0] == pytest.approx(official.strict, abs=1e-12)


@pytest.fixture(scope="module")
def topic(data_dir) -> KPMData:
    dev = load_argkp("dev", data_dir).subset([TOPIC])
    args = dev.arguments[:40]
    ids = {a.arg_id for a in args}
    return KPMData("dev-slice", args, dev.key_points, {p: v for p, v in dev.labels.items() if p[0] in ids})


def test_name_folder_object_and_rank_keypoints_give_one_figure(topic, tmp_path):
    """minilm by name, by folder and as an in-memory SentenceTransformer (in train mode, left so) score the same;
    and the same as `rank keypoints` + the official mAP."""
    from sentence_transformers import SentenceTransformer

    from argsim.backend import model_path
    from argsim.config import RunConfig
    from argsim.kpm.rank import rank_keypoints

    config = RunConfig(cache_dir=tmp_path / "cache")
    ev = KPAMapEvaluator(topic, config=config)
    by_name = ev.evaluate("minilm")
    st = SentenceTransformer(str(model_path("minilm")), device="cpu")
    st.train()
    in_memory = ev.evaluate(st)
    assert st.training
    assert dict(in_memory) == pytest.approx(dict(by_name), abs=1e-5)
    assert dict(ev.evaluate(str(model_path("minilm")))) == pytest.approx(dict(by_name), abs=1e-5)
    official = rank_keypoints(topic, ["minilm"], config=config).maps["leaderboard"]
    assert by_name["strict_map"] == pytest.approx(official.strict, abs=1e-12)
    called = ev(st)  # the sentence-transformers evaluator view: the same metrics under the name's prefix
    assert called["dev_strict_map"] == pytest.approx(by_name["strict_map"], abs=1e-5) and st.training


def test_a_cross_encoder_object_is_scored_by_its_pair_scores(topic, tiny_bert):
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    ce = CrossEncoder(str(tiny_bert), num_labels=1, device="cpu")
    keys = [(a.arg_id, k.kp_id, a.text, k.text) for a in topic.arguments for k in topic.candidates(a)]
    scores = ce.predict([(x[2], x[3]) for x in keys])
    preds: dict = {}
    for (aid, kid, _, _), s in zip(keys, scores, strict=True):
        preds.setdefault(aid, {})[kid] = round(float(s), 6)
    got = KPAMapEvaluator(topic).evaluate(ce)
    assert got["strict_map"] == pytest.approx(evaluate_map(preds, topic).strict, abs=1e-9)


def test_from_dataset_defaults_to_dev_without_test_labels_and_takes_the_first_arguments(data_dir):
    ev = KPAMapEvaluator.from_dataset(limit=12)
    assert ev.gold.name.startswith("argkp-dev") and len(ev.gold.arguments) == 12 and ev.name == "dev"
    assert all(a in {x.arg_id for x in ev.gold.arguments} for a, _ in ev.gold.labels)
