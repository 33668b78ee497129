"""LoRA adapters over the installed MiniLM: a short run learns (the gap between matching and non-matching cosines
on its training pairs widens), the folder holds only the adapter, it loads back through `get_encoder` giving the
trained model's own vectors, the official-mAP evaluator keeps the best weights, an adapter over another base is
refused with one line, and `--init` continues an adapter. Tests of mechanics alone (resume, the thematic trainer)
run on a tiny random BERT; the runs over MiniLM use a few dozen pairs."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from argsim.backend import get_encoder
from argsim.data.argkp import load_argkp
from argsim.errors import ModelError


@pytest.fixture(scope="module")
def small(data_dir):
    """64 labelled pairs of an ArgKP train topic (16 matching, 16 arguments, 10 key points: one epoch of 8 steps of
    8) and 30 arguments of a dev topic, both stances, to evaluate on: a run and its evaluations stay quick."""
    from argsim.data.argkp import KPMData

    train, dev = load_argkp("train", data_dir), load_argkp("dev", data_dir)
    train = train.subset(train.topics[:1])
    train.labels = dict(list(train.labels.items())[:64])
    held = dev.subset(dev.topics[:1])
    args = held.arguments[::8]
    ids = {a.arg_id for a in args}
    held = KPMData("argkp-dev-sample", args, held.key_points, {p: v for p, v in held.labels.items() if p[0] in ids})
    return train, held


def _gap(model, data) -> float:
    """Mean cosine of the labelled matching pairs minus that of the non-matching ones (each text encoded once)."""
    pairs = list(data.labels.items())
    texts = sorted({data.arg_by_id[p[0]].text for p, _ in pairs} | {data.kp_by_id[p[1]].text for p, _ in pairs})
    vec = dict(zip(texts, model.encode(texts, normalize_embeddings=True), strict=True))
    cos = np.array([vec[data.arg_by_id[p[0]].text] @ vec[data.kp_by_id[p[1]].text] for p, _ in pairs])
    y = np.array([v for _, v in pairs])
    return float(cos[y == 1].mean() - cos[y == 0].mean())


@pytest.fixture(scope="module")
def trained(small, tmp_path_factory):
    from argsim.backend import load_sentence_transformer
    from argsim.trainers.kpm_sbert import SbertConfig, train_sbert

    train, held = small
    out = tmp_path_factory.mktemp("lora") / "kpm"
    cfg = SbertConfig(loss="contrastive", lora_rank=8, lora_alpha=16, lora_dropout=0.0, lr=2e-3, lr_end=1e-3,
                      batch_size=8, epochs=1, max_steps=8, eval_every=4)
    base_gap = _gap(load_sentence_transformer("minilm", device="cpu"), train)
    info = train_sbert(train, out, cfg, device="cpu", quiet=True, eval_data=held)
    return out, info, base_gap


def test_lora_run_learns_and_saves_only_the_adapter(trained, small):
    from argsim.backend.adapters import base_sha256, sha256_file
    from argsim.backend.names import read_card

    out, info, base_gap = trained
    train, _ = small
    names = {p.name for p in out.iterdir()}
    assert {"adapter_model.safetensors", "adapter_config.json", "card.json", "argsim_encoder.json"} <= names
    assert "model.safetensors" not in names and "modules.json" not in names
    # rank 8 over q/k/v/attention-output/two feed-forward layers of 6 layers: 8 * (3*768 + 768 + 1920 + 1920) * 6
    assert info["trainable_parameters"] == 8 * (3 * 768 + 768 + 1920 + 1920) * 6
    assert (out / "adapter_model.safetensors").stat().st_size < 2 * 4 * info["trainable_parameters"]
    card = read_card(out)
    assert card["base"] == "minilm" and card["base_sha256"] == base_sha256("minilm")
    assert card["adapter_sha256"] == sha256_file(out / "adapter_model.safetensors")
    enc = get_encoder(str(out), device="cpu")
    assert _gap(enc.model, train) > base_gap + 0.02  # it learned to separate its training pairs (+0.14; lr 0: +0)
    # the evaluator ran (steps 4 and 8) and the kept weights are the best evaluated ones
    assert info["best"]["step"] in (4, 8) and 0 < info["best"]["value"] <= 1


def test_adapter_encoder_matches_the_trained_weights(trained):
    from argsim.backend.adapters import apply_adapter

    out, _, _ = trained
    texts = ["School uniforms stop bullying.", "Uniforms limit self-expression."]
    unmerged = apply_adapter(out, device="cpu", trainable=True)
    unmerged.eval()
    want = unmerged.encode(texts, normalize_embeddings=True)
    got = get_encoder(str(out), device="cpu")
    np.testing.assert_allclose(got.encode(texts, use_cache=False, normalize=True), want, atol=1e-5)
    assert got.identity.startswith("lora:")


def test_wrong_base_is_refused_in_one_line(trained, tmp_path):
    out, _, _ = trained
    copy = tmp_path / "other-base"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("checkpoints"))
    card = json.loads((copy / "card.json").read_text())
    card["base_sha256"] = "0" * 64
    (copy / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelError) as err:
        get_encoder(str(copy), device="cpu")
    assert "\n" not in str(err.value) and "not the one this model was trained on" in str(err.value)


def test_init_continues_an_adapter(trained, small, tmp_path):
    from argsim.trainers.kpm_sbert import SbertConfig, train_sbert

    out, _, _ = trained
    train, _ = small
    cfg = SbertConfig(loss="contrastive", init=str(out), lr=1e-3, max_steps=1, epochs=1)
    info = train_sbert(train, tmp_path / "more", cfg, device="cpu", quiet=True)
    card = json.loads((tmp_path / "more" / "card.json").read_text())
    assert info["config"]["lora_rank"] == 8 and card["rank"] == 8 and card["base"] == "minilm"
    assert card["adapter_sha256"] != json.loads((out / "card.json").read_text())["adapter_sha256"]


def test_lora_run_stopped_and_resumed_equals_the_uninterrupted_run(small, tiny_bert, tmp_path):
    """A --max-steps stop writes a checkpoint (the adapter, the optimizer, the random states) and --resume
    continues it: the adapter tensors equal those of the uninterrupted run with the same seed. The mechanics do
    not depend on the base, so a tiny random BERT (a folder base) stands in for MiniLM."""
    from safetensors.torch import load_file

    from argsim.trainers.kpm_sbert import SbertConfig, train_sbert
    from argsim.training import Budget

    tiny, _ = small  # 64 pairs: 4 steps of 16
    kw = {"model": str(tiny_bert), "loss": "contrastive", "lora_rank": 4, "lora_alpha": 8, "lora_dropout": 0.0,
          "lr": 1e-3, "lr_end": 0.0, "batch_size": 16, "epochs": 1}
    train_sbert(tiny, tmp_path / "a", SbertConfig(**kw), device="cpu", quiet=True)
    stopped = train_sbert(tiny, tmp_path / "r", SbertConfig(**kw), device="cpu", quiet=True,
                          budget=Budget(max_steps=2))
    assert stopped["steps"] == 2 and stopped["stopped_by"] == "max_steps"
    done = train_sbert(tiny, tmp_path / "r", SbertConfig(**kw), device="cpu", quiet=True, budget=Budget(resume=True))
    assert done["steps"] == 4
    a, r = (load_file(str(tmp_path / f / "adapter_model.safetensors")) for f in ("a", "r"))
    assert a.keys() == r.keys() and all(np.allclose(a[k], r[k], atol=1e-6) for k in a)


def test_thematic_lora_learns_and_saves_only_the_adapter(tiny_bert, tmp_path):
    """`train thematic --lora-rank N`: the triplet margin d(a, n) - d(a, p) on its training triplets grows, the
    folder holds only the adapter, and it loads through the backend. The base is a tiny random BERT given as a
    folder (the KPM tests above cover an adapter over MiniLM named by the registry); at lr 0 the margin stays put."""
    from argsim.backend import load_sentence_transformer
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer
    from tests.conftest import tiny_triplets

    trips = tiny_triplets(32)

    def margin(model) -> float:
        a, p, n = (model.encode([t[f] for t in trips], normalize_embeddings=True)
                   for f in ("anchor", "positive", "negative"))
        return float(np.mean(np.linalg.norm(a - n, axis=1) - np.linalg.norm(a - p, axis=1)))

    before = margin(load_sentence_transformer(str(tiny_bert), device="cpu"))
    stats = finetune_sentence_transformer(trips, tmp_path / "t", ThematicTrainConfig(
        model=str(tiny_bert), batch_size=8, lr=3e-2, margin=1.0, epochs=2, max_seq_length=32, lora_rank=8,
        lora_alpha=16), quiet=True)
    assert stats["steps"] == 8 and stats["lora_rank"] == 8
    names = {p.name for p in (tmp_path / "t").iterdir()}
    assert "adapter_model.safetensors" in names and "model.safetensors" not in names
    assert margin(get_encoder(str(tmp_path / "t"), device="cpu").model) > before + 0.1  # +0.5 here


@pytest.fixture(scope="module")
def thematic_adapter(tiny_bert, tmp_path_factory):
    """A thematic LoRA adapter (rank 4) trained a few steps over the tiny random BERT: its B matrices are no
    longer zero, so a run that started from a fresh adapter instead of it would save other tensors."""
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer
    from tests.conftest import tiny_triplets

    out = tmp_path_factory.mktemp("thematic-init") / "first"
    finetune_sentence_transformer(tiny_triplets(16), out, ThematicTrainConfig(
        model=str(tiny_bert), batch_size=8, lr=3e-2, margin=1.0, max_seq_length=32, lora_rank=4, lora_alpha=8),
        quiet=True)
    return out


def _adapter_tensors(folder) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def test_thematic_init_starts_from_the_adapter(thematic_adapter, tiny_bert, tmp_path):
    """`train thematic --init FOLDER`: at lr 0 one step saves exactly the init adapter's tensors (the run started
    from them, with its rank and alpha, not from a fresh adapter); at lr > 0 they move, and the output is again an
    adapter folder over the same base that loads by path."""
    from argsim.backend.names import read_card
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer
    from argsim.training import Budget
    from tests.conftest import tiny_triplets

    first = _adapter_tensors(thematic_adapter)
    assert any(float(v.abs().max()) > 0 for k, v in first.items() if "lora_B" in k)  # B trained away from zero
    trips = tiny_triplets(16)
    same = finetune_sentence_transformer(trips, tmp_path / "same", ThematicTrainConfig(
        model="minilm", batch_size=8, lr=0.0, margin=1.0, max_seq_length=32, lora_rank=None, lora_alpha=99.0,
        init=str(thematic_adapter)), quiet=True, budget=Budget(max_steps=1))
    assert same["steps"] == 1 and same["lora_rank"] == 4 and same["base"] == str(tiny_bert)
    saved = _adapter_tensors(tmp_path / "same")
    assert saved.keys() == first.keys() and all(np.array_equal(saved[k], first[k]) for k in first)
    card = read_card(tmp_path / "same")
    assert card["base"] == str(tiny_bert) and card["rank"] == 4 and card["alpha"] == 8 and card["init"]

    finetune_sentence_transformer(trips, tmp_path / "more", ThematicTrainConfig(
        model="minilm", batch_size=8, lr=3e-2, margin=1.0, max_seq_length=32, lora_rank=4,
        init=str(thematic_adapter)), quiet=True, budget=Budget(max_steps=2))  # the warm-up's first step has lr 0
    moved = _adapter_tensors(tmp_path / "more")
    assert moved.keys() == first.keys() and any(not np.array_equal(moved[k], first[k]) for k in first)
    texts = ["The committee met on Tuesday.", "Rainfall was heavy in spring."]
    vecs = get_encoder(str(tmp_path / "more"), device="cpu").encode(texts, use_cache=False)
    assert vecs.shape == (2, 32) and np.isfinite(vecs).all()


def test_init_refusals_are_one_line(thematic_adapter, tiny_bert, tmp_path):
    """Options that cannot continue an adapter are refused in one line before any training: another rank, a
    folder that is not an adapter, the BiLSTM, fine-tuning every weight (--lora-rank 0)."""
    from argsim.errors import ArgsimError
    from argsim.thematic.config import ThematicTrainConfig
    from argsim.trainers.kpm_sbert import SbertConfig, train_sbert
    from argsim.trainers.thematic_minilm import finetune_sentence_transformer
    from tests.conftest import tiny_triplets

    trips = tiny_triplets(8)
    cases = [
        (lambda: finetune_sentence_transformer(trips, tmp_path / "a", ThematicTrainConfig(
            lora_rank=8, init=str(thematic_adapter)), quiet=True), "rank 4"),
        (lambda: finetune_sentence_transformer(trips, tmp_path / "b", ThematicTrainConfig(init=str(tiny_bert)),
                                               quiet=True), "not a LoRA adapter"),
        (lambda: train_sbert(None, tmp_path / "c", SbertConfig(init=str(thematic_adapter), lora_rank=16),
                             device="cpu", quiet=True), "rank 4"),
        (lambda: ThematicTrainConfig(arch="bilstm", init="thematic").checked(has_dev=False), "--arch bilstm"),
        (lambda: ThematicTrainConfig(init="thematic", lora_rank=0).checked(has_dev=False), "--lora-rank 0"),
    ]
    for call, words in cases:
        with pytest.raises(ArgsimError) as err:
            call()
        assert "\n" not in str(err.value) and words in str(err.value)
    assert not any((tmp_path / d).exists() for d in "abc")


def test_thematic_init_shipped_adapter_keeps_its_shape():
    """`--init thematic` names the shipped adapter: the config leaves the rank to it, and the loaded model carries
    the shipped rank and alpha over MiniLM."""
    from argsim.backend.adapters import continue_adapter
    from argsim.backend.names import read_card, shipped_models
    from argsim.thematic.config import ThematicTrainConfig

    assert ThematicTrainConfig(init="thematic").checked(has_dev=False).lora_rank is None
    card = read_card(shipped_models()["thematic"])
    model, base, rank, alpha = continue_adapter("thematic", device="cpu")
    assert (base, rank, alpha) == (card["base"], card["rank"], card["alpha"]) == ("minilm", 16, 32.0)
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == card["trainable_parameters"]
