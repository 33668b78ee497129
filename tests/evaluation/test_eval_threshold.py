"""Decision thresholds belong to the model: read from its card or training record, defaults by score scale,
ensembles combine their members', and `rank keypoints` matches and counts coverage at it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from argsim.data.argkp import kpm_data
from argsim.kpm.threshold import (
    COSINE_THRESHOLD,
    PROBABILITY_THRESHOLD,
    ensemble_threshold,
    model_threshold,
    recorded_threshold,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"


def test_the_shipped_matcher_records_its_threshold_and_others_fall_back_by_scale(tmp_path):
    from argsim.backend.names import read_card, shipped_models

    if "kpm" in shipped_models():
        card = read_card(shipped_models()["kpm"])
        assert model_threshold("kpm") == (card["threshold"]["value"], "recorded")
        assert 0 < card["threshold"]["value"] < 1 and 0 < card["threshold"]["f1"] <= 1
    assert model_threshold("minilm") == (COSINE_THRESHOLD, "cosine default")
    cross = tmp_path / "cross"
    cross.mkdir()
    (cross / "config_sentence_transformers.json").write_text(json.dumps({"model_type": "CrossEncoder"}))
    assert model_threshold(str(cross)) == (PROBABILITY_THRESHOLD, "probability default")
    (cross / "argsim_train.json").write_text(json.dumps({"threshold": {"value": 0.37, "f1": 0.6, "data": "d"}}))
    assert recorded_threshold(str(cross)) == 0.37 and model_threshold(str(cross)) == (0.37, "recorded")


def test_an_ensembles_threshold_is_its_members_combined_as_their_scores(tmp_path):
    a = {"x": {"k": 0.2}, "y": {"k": 0.8}, "z": {"k": 0.5}}
    b = {"x": {"k": 0.1}, "y": {"k": 0.3}, "z": {"k": 0.2}}
    value, _ = ensemble_threshold(["minilm", "minilm"], [a, b], [3.0, 1.0], "mean")
    assert value == pytest.approx(COSINE_THRESHOLD)
    value, _ = ensemble_threshold(["minilm", "minilm"], [a, b], [3.0, 1.0], "zscore")
    za = (COSINE_THRESHOLD - np.mean([0.2, 0.8, 0.5])) / np.std([0.2, 0.8, 0.5])
    zb = (COSINE_THRESHOLD - np.mean([0.1, 0.3, 0.2])) / np.std([0.1, 0.3, 0.2])
    assert value == pytest.approx(3.0 * za + 1.0 * zb, abs=1e-5)  # weights as given, as combine_predictions


def test_rank_keypoints_matches_and_covers_at_the_models_threshold(monkeypatch):
    """An argument below the threshold matches no key point and counts towards no coverage; the threshold is the
    model's own unless given."""
    import argsim.kpm.ensemble as ensemble
    from argsim.kpm.rank import rank_keypoints

    data = kpm_data(FIX / "arguments.csv", FIX / "key_points.csv")
    scores = {a.arg_id: {k.kp_id: s for k, s in zip(data.candidates(a), (0.55 + 0.04 * i, 0.3), strict=False)}
              for i, a in enumerate(data.arguments)}
    monkeypatch.setattr(ensemble, "score_model", lambda *args, **kwargs: scores)
    own = rank_keypoints(data, ["minilm"])
    assert (own.threshold, own.threshold_source) == (COSINE_THRESHOLD, "cosine default")
    for ranking in (own, rank_keypoints(data, ["minilm"], threshold=0.85)):
        best = {a: max(s.values()) for a, s in scores.items() if s}
        fits = {a for a, s in best.items() if s >= ranking.threshold}
        assert {m.arg_id for m in ranking.matches if m.matched} == fits
        assert sum(c.matched for c in ranking.coverage) == len(fits)
    assert ranking.summary()["matched_arguments"] < own.summary()["matched_arguments"]


def test_training_records_the_threshold_of_its_evaluation_split(tmp_path, monkeypatch):
    """`evaluate_trained` writes the F1-best threshold on the evaluation split into argsim_train.json, where
    `model_threshold` reads it back."""
    import argsim.kpm.ensemble as ensemble
    import argsim.kpm.evaluate as kpm_evaluate
    from argsim.metrics.kpa_map import f1_threshold

    gold = kpm_data(FIX / "arguments.csv", FIX / "key_points.csv", FIX / "labels.csv")
    preds = {"a1": {"k1": 0.9, "k2": 0.1}, "a2": {"k1": 0.8, "k2": 0.3}, "a3": {"k2": 0.7}, "a4": {"k1": 0.6},
             "b1": {"k3": 0.3}, "c1": {"k4": 0.9}, "c2": {"k4": 0.1}}
    monkeypatch.setattr(ensemble, "score_model", lambda *args, **kwargs: preds)
    info = kpm_evaluate.evaluate_trained(tmp_path, gold, {}, None)
    value, f1 = f1_threshold(preds, gold.labels)
    assert info["threshold"] == {"value": value, "f1": f1, "data": gold.name}
    assert model_threshold(str(tmp_path)) == (value, "recorded")
