"""The shipped political SBERT (`minutes`): a sparse delta over the installed GiNZA table that loads offline by
name, reproduces the figure its card recorded on a fixed slice of the minutes test triplets, computes what its
stored numbers say (an independent numpy reading of the artifact), and refuses a wrong or missing base in one
line; packing a trained model stores exactly its changes, and `models publish minutes` gates on the dev figure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.backend import get_encoder
from argsim.backend.adapters import sha256_file
from argsim.backend.names import shipped_models
from argsim.cli.app import app
from argsim.errors import ArgsimError, ModelError
from argsim.minutes import shipped as ms


@pytest.fixture(scope="module")
def folder() -> Path:
    return shipped_models()["minutes"]


@pytest.fixture(scope="module")
def card(folder) -> dict:
    return ms.read_card(folder)


def test_minutes_ships_small_over_ginza_with_its_card(folder, card):
    assert card["base"] == "ginza" and card["base_files"] == ms.base_hashes()
    assert card["base_sha256"] == card["base_files"]["vocab/vectors"]
    assert card["artifact"] == "delta" and card["weights"] == ms.DELTA_FILE
    assert card["weights_sha256"] == sha256_file(folder / ms.DELTA_FILE)
    assert sum(p.stat().st_size for p in folder.iterdir()) < 10 * 2**20  # the table alone is 24 MB
    assert card["command"].startswith("argsim ") and "train minutes-sbert" in card["command"]
    assert card["figures"]["eval_dev_cosine_accuracy"] >= 0.97 and card["training_seconds"] > 0
    assert card["own_words"] == len(json.loads((folder / ms.WORDS_FILE).read_text(encoding="utf-8"))) > 0
    assert 0 < card["rows_stored"] <= card["rows_changed"] <= card["rows_total"]
    assert "PoliInfo" in card["data_licence"] and card["slice"]["triplets"] == len(card["slice"]["lines"]) == 300


def test_minutes_loads_by_name_and_reproduces_its_slice_figure(data_dir, card):
    rows = ms.slice_triplets(card["slice"]["lines"], data_dir)
    assert ms.slice_sha256(rows) == card["slice"]["texts_sha256"]  # the same 300 test triplets
    enc = get_encoder("minutes", device="cpu")
    assert enc.name == "minutes" and enc.identity.startswith(f"minutes-delta:{card['base_sha256'][:16]}:")
    accuracy = ms.slice_accuracy(enc, rows)
    assert accuracy == pytest.approx(card["slice"]["accuracy"], abs=1e-9)
    # the trained model, not GiNZA's document vectors, on the same slice
    assert ms.slice_accuracy(get_encoder("ginza"), rows) < accuracy - 0.02


def test_the_shipped_vectors_are_what_the_artifact_stores(folder):
    """Reference: GiNZA's own table, the stored deltas added by hand (numpy), the mean of a text's token rows, the
    stored dense layer; against `get_encoder("minutes")`."""
    import spacy
    from safetensors.numpy import load_file

    from argsim.minutes.sbert import segment

    words = json.loads((folder / ms.WORDS_FILE).read_text(encoding="utf-8"))
    t = load_file(str(folder / ms.DELTA_FILE))
    nlp = spacy.load("ja_ginza")
    table = np.asarray(nlp.vocab.vectors.data, dtype=np.float32)
    start = {f"r{i}": table[i] for i in range(len(table))}
    for w in words:
        row = int(nlp.vocab.vectors.find(key=nlp.vocab.strings[w]))
        start[f"w:{w}"] = table[row] if row >= 0 else np.zeros(300, np.float32)
    vocab = ["PADDING_TOKEN", *(f"r{i}" for i in range(len(table))), *(f"w:{w}" for w in words)]
    delta = t["delta.values"].astype(np.float32)
    if "delta.scale" in t:  # int8: one scale per row
        delta = delta * t["delta.scale"][:, None]
    changed = {vocab[i]: d for i, d in zip(t["delta.index"], delta, strict=True)}
    texts = ["都は帰宅困難者対策を進めてまいります。", "保育所の整備を加速すべきです。",
             "予算案に反対の立場から討論を行います。"]
    want = []
    for line in segment(texts, frozenset(words)):
        vecs = [start[tok] + changed.get(tok, 0.0) for tok in line.split()]
        want.append(t["dense.weight"] @ np.mean(vecs, axis=0) + t["dense.bias"])
    got = get_encoder("minutes", device="cpu").encode(texts, use_cache=False)
    np.testing.assert_allclose(got, np.array(want), atol=1e-4)


def test_a_wrong_or_missing_base_is_refused_in_one_line(folder, tmp_path, monkeypatch):
    other = tmp_path / "other-base"
    shutil.copytree(folder, other)
    card = json.loads((other / "card.json").read_text(encoding="utf-8"))
    card["base_files"]["vocab/vectors"] = "0" * 64
    (other / "card.json").write_text(json.dumps(card), encoding="utf-8")
    texts = tmp_path / "t.txt"
    texts.write_text("保育所の整備を加速すべきです。\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["--no-cache", "embed", str(texts), "--model", str(other), "--out",
                                   str(tmp_path / "v.npy")])
    assert res.exit_code == 2, res.output
    message = res.output.strip()
    assert len(message.splitlines()) == 1 and "is not the one this model was trained on" in message, message
    assert not (tmp_path / "v.npy").exists()
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ja_ginza" else real(name, *a))
    with pytest.raises(ModelError, match="its base model 'ginza' is not installed"):
        ms.build_model(folder)


def _perturbed_model(out: Path) -> Path:
    """A ginza-backbone model with a few own words whose rows, some base rows and the dense layer were moved (as
    training moves them), saved as `train minutes-sbert` saves it."""
    import torch

    from argsim.minutes import sbert

    words = ["帰宅困難者", "保育所", "ぴえんぱおん"]
    model = sbert.build_ginza_model(words=words)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        w = model[0].emb_layer.weight
        rows = torch.tensor([5, 17, 4242, 19999 + 1, w.shape[0] - 3, w.shape[0] - 1])
        w[rows] += 0.2 * torch.randn(len(rows), w.shape[1], generator=g) * torch.linspace(0.1, 1, len(rows))[:, None]
        model[2].linear.weight.add_(0.01 * torch.randn(300, 300, generator=g))
        model[2].linear.bias.add_(0.01 * torch.randn(300, generator=g))
    model.save(str(out))
    sbert.mark_segmented(out, words=len(words))
    return out


def test_packing_stores_exactly_the_changed_rows_and_loads_back(tmp_path):
    from argsim.minutes.sbert import load_encoder

    trained = _perturbed_model(tmp_path / "trained")
    texts = ["都は帰宅困難者対策を進めてまいります。", "保育所の整備を加速すべきです。", "ぴえんぱおん対策を進めます。"]
    want = load_encoder(trained).encode(texts, use_cache=False)
    card = ms.pack(trained, tmp_path / "fp32", precision="fp32")
    assert card["rows_changed"] == card["rows_stored"] == 6 and card["own_words"] == 3
    np.testing.assert_array_equal(ms.load_encoder(tmp_path / "fp32").encode(texts, use_cache=False), want)
    ms.pack(trained, tmp_path / "int8", precision="int8")
    np.testing.assert_allclose(ms.load_encoder(tmp_path / "int8").encode(texts, use_cache=False), want, atol=2e-3)
    pruned = ms.pack(trained, tmp_path / "top2", precision="fp32", delta_rows=2)
    from safetensors.numpy import load_file

    kept = load_file(str(tmp_path / "top2" / ms.DELTA_FILE))["delta.index"]
    assert pruned["rows_stored"] == 2 and sorted(kept) == [20001, 20003]  # the two largest moves: two own words
    with pytest.raises(ModelError, match="not a ginza-backbone minutes model"):
        ms.pack(tmp_path / "fp32", tmp_path / "x")


def test_publish_minutes_gate_packs_and_measures_the_slice_on_what_ships(card, data_dir, tmp_path, monkeypatch):
    from argsim.config import RunConfig
    from argsim.modelbuild.publish import MINUTES_TEST, publish

    lines = ms.corpus(data_dir)
    rows = [{"anchor": lines[a].text, "positive": lines[a + 1].text, "negative": lines[j].text,
             "meeting": lines[a].meeting, "negative_meeting": lines[j].meeting} for a, j in card["slice"]["lines"][:5]]
    test = tmp_path / MINUTES_TEST
    test.parent.mkdir(parents=True)
    test.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    trained = _perturbed_model(tmp_path / "trained")
    record = {"command": "argsim train minutes-sbert --out x", "seed": 13, "steps": 3, "seconds": 9.0,
              "metrics": {"eval_dev_cosine_accuracy": card["figures"]["eval_dev_cosine_accuracy"] - 0.01}}
    (trained / "train_config.json").write_text(json.dumps(record))
    dest = tmp_path / "shipped"
    shutil.copytree(shipped_models()["minutes"], dest / "minutes")
    with pytest.raises(ArgsimError, match="below the shipped 'minutes'"):
        publish("minutes", trained, dest=dest)
    assert ms.read_card(dest / "minutes") == card  # nothing was written
    record["metrics"]["eval_dev_cosine_accuracy"] = card["figures"]["eval_dev_cosine_accuracy"]  # equal passes
    (trained / "train_config.json").write_text(json.dumps(record))
    new = publish("minutes", trained, RunConfig(data_dir=data_dir), dest=dest)
    assert ms.read_card(dest / "minutes") == new and new["rows_stored"] == 6 and new["own_words"] == 3
    assert new["slice"]["lines"] == card["slice"]["lines"][:5] and new["slice"]["triplets"] == 5
    assert sorted(p.name for p in (dest / "minutes").iterdir()) == sorted(
        ["argsim_encoder.json", "card.json", ms.DELTA_FILE, ms.WORDS_FILE])
    rebuilt = ms.slice_triplets(new["slice"]["lines"], data_dir)
    enc = ms.load_encoder(dest / "minutes")
    assert new["slice"]["accuracy"] == pytest.approx(ms.slice_accuracy(enc, rebuilt), abs=1e-9)
