"""ONNX Runtime / OpenVINO for the transformers inside argsim's own models: the shipped LoRA adapters (merged into
the base), the cross-encoders that rank (key point matching, counter-argument reranking), MTS and the counter-
argument models' towers. Each path against PyTorch fp32 on real sentences, export reuse and cache separation."""

from __future__ import annotations

import csv
import functools

import numpy as np
import pytest

from argsim.backend import runtime

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

#: the recorded tolerances (docs/backends.md), as for the bi-encoders: fp32 backends every cosine >= 0.999;
#: int8 the mean cosine >= 0.98 and every one >= 0.95
FP32_MIN_COSINE, INT8_MEAN_COSINE, INT8_MIN_COSINE = 0.999, 0.98, 0.95
#: OpenVINO int8 calibrates on this many texts in the tests (NNCF on 300 takes a minute on two cores)
TEST_CALIBRATION = 64
VARIANTS = [("onnx", "none"), ("openvino", "none"), ("onnx", "int8"), ("openvino", "int8")]
#: OpenVINO int8 (NNCF calibration: the slowest build, 15-30 s each) is checked on MiniLM itself
#: (test_backend_runtime.py), on a cross-encoder's pair graph and on a counter model's calibration key (below): the
#: models whose transformer is a MiniLM graph (a merged adapter, the MTS backbone, the counter towers' base) go
#: through the same export and quantization code, so they run the other three variants
MINILM_GRAPH_VARIANTS = VARIANTS[:3]
#: the three OpenVINO int8 builds are `slow` (`make test-slow`): NNCF calibration is most of a cold test run
SLOW_OV_INT8 = [*MINILM_GRAPH_VARIANTS, pytest.param("openvino", "int8", marks=pytest.mark.slow)]


def _arguments(data_dir, split: str, n: int) -> list[str]:
    with open(data_dir / "argkp" / f"arguments_{split}.csv", encoding="utf-8") as fh:
        return [r["argument"] for r in csv.DictReader(fh)][:n]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def _check_vectors(reference: np.ndarray, vectors: np.ndarray, quantize: str) -> None:
    cos = _cosines(reference, vectors)
    assert vectors.shape == reference.shape
    if quantize == "none":
        assert cos.min() >= FP32_MIN_COSINE, cos.min()
    else:  # quantized: really another graph, within the int8 tolerance
        assert cos.mean() >= INT8_MEAN_COSINE and cos.min() >= INT8_MIN_COSINE and cos.min() < 0.99999, cos


# ------------------------------------------------------------------ shipped LoRA adapters


@pytest.mark.parametrize(("name", "backend", "quantize"), [
    *[("kpm", *v) for v in MINILM_GRAPH_VARIANTS], *[("thematic", *v) for v in MINILM_GRAPH_VARIANTS]])
def test_shipped_adapters_run_merged_in_the_backend(data_dir, name, backend, quantize):
    from argsim.backend import get_encoder
    from argsim.backend.models import ExportedEncoder

    texts = _arguments(data_dir, "dev", 32)
    reference = get_encoder(name, device="cpu").encode(texts, use_cache=False)
    calibration = _arguments(data_dir, "train", TEST_CALIBRATION) if quantize == "int8" else None
    enc = get_encoder(name, backend=backend, quantize=quantize, calibration=calibration)
    assert isinstance(enc, ExportedEncoder) and (enc.backend, enc.quantize) == (backend, quantize)
    _check_vectors(reference, enc.encode(texts, use_cache=False), quantize)


def test_two_adapters_over_one_base_never_share_an_export_or_a_vector(shared_exports):
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    config = RunConfig(cache_dir=shared_exports, backend="onnx")
    kpm, thematic = get_encoder("kpm", config=config), get_encoder("thematic", config=config)
    base = get_encoder("minilm", config=config)
    assert len({kpm.base, thematic.base, base.base}) == 3  # one export each, though the base is one
    assert len({kpm.cache_key, thematic.cache_key, base.cache_key}) == 3
    torch_kpm = get_encoder("kpm", device="cpu", config=RunConfig(cache_dir=shared_exports))
    assert torch_kpm.identity == kpm.identity and torch_kpm.cache_key != kpm.cache_key
    text = "Social media does more harm than good"
    sentinel = np.full((1, 384), 7.0, dtype=np.float32)
    torch_kpm.cache().put_many([text], sentinel)
    thematic.cache().put_many([text], sentinel)
    assert np.array_equal(torch_kpm.encode([text]), sentinel)
    got = kpm.encode([text])  # neither torch's nor the other adapter's vector
    assert not np.allclose(got, sentinel) and abs(float(np.linalg.norm(got)) - 1.0) < 1e-3


def test_the_adapter_export_is_built_once(monkeypatch):
    from argsim.backend import get_encoder, registry

    first = get_encoder("kpm", backend="onnx", quantize="int8").encode(["a claim"], use_cache=False)

    def refuse(*_args, **_kwargs):
        raise AssertionError("exported again")

    import onnxruntime.quantization as ortq
    import torch

    from argsim.backend import adapters

    monkeypatch.setattr(runtime, "_export_onnx", refuse)
    monkeypatch.setattr(torch.onnx, "export", refuse)
    monkeypatch.setattr(ortq, "quantize_dynamic", refuse)
    monkeypatch.setattr(adapters, "apply_adapter", refuse)  # no torch weights loaded either
    for key in [k for k in registry._LOADED if k[6] != "torch"]:
        monkeypatch.delitem(registry._LOADED, key)
    again = get_encoder("kpm", backend="onnx", quantize="int8")
    assert np.allclose(again.encode(["a claim"], use_cache=False), first, atol=1e-6)


# ------------------------------------------------------------------ cross-encoders that rank

#: cross-encoder scores against PyTorch fp32 (docs/backends.md): fp32 backends every score within 1e-5; int8 the
#: Spearman correlation of the scores >= 0.9 (the test's classifier head is untrained: its scores spread little,
#: so int8's rounding moves ranks more than a trained head's would)
CROSS_FP32_ATOL, CROSS_INT8_SPEARMAN = 1e-5, 0.9


def _save_cross(folder, num_labels: int) -> None:
    """A MiniLM cross-encoder with a seeded classification head, saved as argsim's trainers save one."""
    import json

    import torch

    from argsim.kpm.scoring import CROSS_INFO
    from argsim.trainers.kpm_cross import load_cross_encoder

    torch.manual_seed(13)
    model = load_cross_encoder("minilm", "cpu", 96, num_labels=num_labels)
    model.save(str(folder))
    if num_labels == 1:
        (folder / CROSS_INFO).write_text(json.dumps({"context": "none", "sep": "[SEP]", "max_length": 96}))
    else:
        from argsim.counter.neural.config import CROSS_MARKER

        (folder / CROSS_MARKER).write_text(json.dumps({"kind": "cross-encoder", "base_model": "minilm",
                                                        "max_length": 96}))


@pytest.fixture(scope="module")
def kpm_cross(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kpm-cross")
    _save_cross(folder, 1)
    return folder


@pytest.fixture(scope="module")
def counter_cross(tmp_path_factory):
    folder = tmp_path_factory.mktemp("counter-cross")
    _save_cross(folder, 2)
    return folder


def _pairs(data_dir, n: int = 96) -> list[tuple[str, str]]:
    args = _arguments(data_dir, "dev", 24)
    with open(data_dir / "argkp" / "key_points_dev.csv", encoding="utf-8") as fh:
        kps = [r["key_point"] for r in csv.DictReader(fh)][:4]
    return [(a, k) for a in args for k in kps][:n]


@functools.cache
def _torch_probabilities(folder, data_dir) -> np.ndarray:
    """PyTorch fp32's probabilities of `_pairs` by the cross-encoder `folder`: each variant's reference, once."""
    from argsim.backend.resolve import pair_scorer
    from argsim.config import RunConfig

    return pair_scorer(folder, RunConfig(device="cpu")).probability(_pairs(data_dir))


def _check_scores(reference: np.ndarray, scores: np.ndarray, quantize: str) -> None:
    from scipy.stats import spearmanr

    assert scores.shape == reference.shape
    if quantize == "none":
        assert np.abs(scores - reference).max() <= CROSS_FP32_ATOL, np.abs(scores - reference).max()
    else:
        rho = spearmanr(scores, reference)[0]
        assert rho >= CROSS_INT8_SPEARMAN and np.abs(scores - reference).max() > 0, rho


@pytest.mark.parametrize(("backend", "quantize"), SLOW_OV_INT8)
def test_kpm_cross_encoder_scores_in_the_backend(data_dir, kpm_cross, backend, quantize):
    from argsim.backend.resolve import pair_scorer
    from argsim.config import RunConfig

    pairs = _pairs(data_dir)
    reference = _torch_probabilities(kpm_cross, data_dir)
    scorer = pair_scorer(kpm_cross, RunConfig(backend=backend, quantize=quantize))
    assert (scorer.backend, scorer.quantize) == (backend, quantize)
    scores = scorer.probability(pairs)
    assert ((scores > 0) & (scores < 1)).all()  # the sigmoid, outside the graph
    _check_scores(reference, scores, quantize)


# OpenVINO int8 of a MiniLM cross-encoder (NNCF calibrated on the first pairs scored) is checked on the key point
# cross-encoder above: the same graph but for the head's width, quantized by the same code
@pytest.mark.parametrize(("backend", "quantize"), MINILM_GRAPH_VARIANTS)
def test_counter_cross_encoder_scores_in_the_backend(data_dir, counter_cross, backend, quantize):
    from argsim.backend.resolve import pair_scorer
    from argsim.config import RunConfig

    pairs = _pairs(data_dir)
    reference = _torch_probabilities(counter_cross, data_dir)
    scorer = pair_scorer(counter_cross, RunConfig(backend=backend, quantize=quantize))
    assert (scorer.backend, scorer.quantize) == (backend, quantize)
    _check_scores(reference, scorer.probability(pairs), quantize)


@pytest.mark.slow
def test_an_exported_cross_encoder_keeps_each_token_limit_asked(data_dir, kpm_cross, tmp_path):
    """Two token limits of one cross-encoder under ONNX Runtime are two exports and two cache keys: the second limit
    is not answered by the export built for the first (the export once baked in the first limit asked)."""
    from argsim.backend.resolve import pair_scorer
    from argsim.config import RunConfig

    pairs, config = _pairs(data_dir, 12), RunConfig(backend="onnx", cache_dir=tmp_path, quiet=True)
    short, full = (pair_scorer(kpm_cross, config, max_length=n) for n in (16, None))
    reference = pair_scorer(kpm_cross, RunConfig(device="cpu", cache_dir=tmp_path), max_length=16).probability(pairs)
    assert short.pairs.cache_key != full.pairs.cache_key
    np.testing.assert_allclose(short.probability(pairs), reference, atol=CROSS_FP32_ATOL)
    assert np.abs(short.probability(pairs) - full.probability(pairs)).max() > 1e-3

def test_a_cross_encoder_ranks_through_the_run_options(kpm_workspace, kpm_cross, counter_cross, tmp_path,
                                                        monkeypatch):
    """`--backend` reaches the cross-encoders from the run's options: key point matching (`score_model`) and the
    counter-argument rankers (`load_stage`); the second load of each exports nothing."""
    from argsim.backend import registry
    from argsim.backend.resolve import PairScorer
    from argsim.config import RunConfig
    from argsim.counter.neural.pipeline import load_stage
    from argsim.data.argkp import kpm_data
    from argsim.kpm import ensemble

    data = kpm_data("arguments.csv", "key_points.csv", "labels.csv")
    config = RunConfig(backend="onnx", quiet=True)  # exports: the tests' cache folder
    reference = ensemble.score_model(data, str(kpm_cross), config=RunConfig(device="cpu", quiet=True))
    got = ensemble.score_model(data, str(kpm_cross), config=config)
    assert got.keys() == reference.keys()
    assert max(abs(got[a][k] - reference[a][k]) for a in got for k in got[a]) <= CROSS_FP32_ATOL
    stage = load_stage(str(counter_cross), config=config)
    assert isinstance(stage, PairScorer) and stage.backend == "onnx"

    def refuse(*_args, **_kwargs):
        raise AssertionError("exported again")

    import torch

    monkeypatch.setattr(runtime, "_export_onnx", refuse)
    monkeypatch.setattr(torch.onnx, "export", refuse)
    registry._LOADED.clear()  # the one model cache: the cross-encoder loads again, through the backend
    assert ensemble.score_model(data, str(kpm_cross), config=config) == got
    assert load_stage(str(counter_cross), config=config).backend == "onnx"


def test_cross_encoder_calibration_file_must_hold_pairs(counter_cross, shared_exports):
    from argsim.backend.resolve import pair_scorer
    from argsim.config import RunConfig
    from argsim.errors import BackendError

    cal = shared_exports / "cal.txt"
    cal.write_text("a text without its pair\n", encoding="utf-8")
    config = RunConfig(backend="openvino", quantize="int8", cache_dir=shared_exports, calibration=cal)
    with pytest.raises(BackendError, match="first text<TAB>second text"):
        pair_scorer(counter_cross, config)


# ------------------------------------------------------------------ MTS and the counter-argument models


@pytest.fixture(scope="module")
def mts_folder(tmp_path_factory):
    """An MTS network over MiniLM (cls-last4, seeded stance and projection layers), saved as training saves one."""
    import torch

    from argsim.kpm.mts.config import MTSConfig
    from argsim.kpm.mts.encoder import write_manifest
    from argsim.kpm.mts.network import build_net

    folder = tmp_path_factory.mktemp("mts")
    torch.manual_seed(13)
    build_net(MTSConfig(model="minilm", pooling="cls-last4")).save(folder)
    write_manifest(folder, "kpm-mts")
    return folder


def _statements(data_dir, n: int = 32) -> tuple[list[str], list[str], list[int]]:
    with open(data_dir / "argkp" / "arguments_dev.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:n]
    return [r["argument"] for r in rows], [r["topic"] for r in rows], [int(r["stance"]) for r in rows]


@pytest.mark.parametrize(("backend", "quantize"), MINILM_GRAPH_VARIANTS)
def test_mts_backbone_runs_in_the_backend_and_its_heads_in_torch(data_dir, mts_folder, backend, quantize):
    from argsim.backend import get_encoder
    from argsim.kpm.mts.encoder import MTSEncoder

    texts, topics, stances = _statements(data_dir)
    reference = get_encoder(str(mts_folder), device="cpu")
    reference.configure(use_cache=False, quiet=True)
    calibration = _arguments(data_dir, "train", TEST_CALIBRATION) if quantize == "int8" else None
    enc = get_encoder(str(mts_folder), backend=backend, quantize=quantize, calibration=calibration)
    enc.configure(use_cache=False, quiet=True)
    assert isinstance(enc, MTSEncoder) and enc.backend == backend and enc.net.exported is not None
    _check_vectors(reference.encode_statements(texts, topics, stances), enc.encode_statements(texts, topics, stances),
                   quantize)


def test_mts_second_load_exports_nothing_and_reads_no_backbone_weights(mts_folder, monkeypatch):
    from argsim.backend import get_encoder, registry

    enc = get_encoder(str(mts_folder), backend="onnx", quantize="int8").configure(use_cache=False, quiet=True)
    first = enc.encode_statements(["a claim"], ["t"], [1])

    def refuse(*_args, **_kwargs):
        raise AssertionError("exported or loaded again")

    import torch
    from transformers import AutoModel

    monkeypatch.setattr(runtime, "_export_onnx", refuse)
    monkeypatch.setattr(torch.onnx, "export", refuse)
    monkeypatch.setattr(AutoModel, "from_pretrained", refuse)
    for key in [k for k in registry._LOADED if k[6] != "torch"]:
        monkeypatch.delitem(registry._LOADED, key)
    again = get_encoder(str(mts_folder), backend="onnx", quantize="int8").configure(use_cache=False, quiet=True)
    assert again is not enc and again.net.backbone is None
    assert np.allclose(again.encode_statements(["a claim"], ["t"], [1]), first, atol=1e-6)


def test_mts_vectors_are_cached_apart_per_backend(mts_folder, tmp_path):
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    torch_enc = get_encoder(str(mts_folder), config=RunConfig(device="cpu", cache_dir=tmp_path))
    onnx_enc = get_encoder(str(mts_folder), config=RunConfig(backend="onnx", quantize="int8", cache_dir=tmp_path))
    assert torch_enc.identity == onnx_enc.identity and torch_enc.cache_key != onnx_enc.cache_key


@pytest.mark.parametrize(("backend", "quantize"), MINILM_GRAPH_VARIANTS)
def test_shipped_counter_bi_encoder_runs_its_base_in_the_backend(data_dir, backend, quantize):
    """The shipped counter-bi-encoder: the frozen MiniLM in the backend, the retrieval heads in torch."""
    from argsim.backend import get_encoder

    texts = _arguments(data_dir, "dev", 32)
    reference = get_encoder("counter-bi-encoder", device="cpu").for_role("document").encode(texts, use_cache=False)
    # two towers: the document (candidate) one
    enc = get_encoder("counter-bi-encoder", backend=backend, quantize=quantize).for_role("document")
    assert (enc.backend, enc.quantize) == (backend, quantize)
    assert enc.model.embed_texts(["probe"]).shape == (1, 384)  # its base encoder is the backend's
    _check_vectors(reference, enc.encode(texts, use_cache=False), quantize)
    assert get_encoder("counter-bi-encoder", device="cpu").for_role("document").cache_key != enc.cache_key


@pytest.fixture(scope="module")
def lora_counter_model(tmp_path_factory):
    """A Bipolar model whose shared tower is a LoRA adapter over MiniLM (seeded, non-zero update), saved."""
    import torch

    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.model import CounterModel
    from argsim.counter.neural.store import save_model

    torch.manual_seed(13)
    model = CounterModel(NeuralConfig(kind="bipolar", base_model="minilm", train_encoder=True, lora_rank=4,
                                      max_seq_length=64))
    with torch.no_grad():
        for name, p in model.point_tower.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    folder = tmp_path_factory.mktemp("bipolar-lora")
    save_model(model, folder)
    return folder


@pytest.mark.parametrize(("backend", "quantize"), [("onnx", "none"), ("openvino", "none"), ("onnx", "int8")])
def test_lora_towers_run_merged_in_the_backend(data_dir, lora_counter_model, tmp_path, backend, quantize):
    """Bipolar with LoRA towers: the merged tower in the backend, its export keyed by the adapter, heads in torch;
    the rankers' stage (`load_stage`) gets the runtime from the run's options."""
    from argsim.config import RunConfig
    from argsim.counter.neural.pipeline import load_stage

    texts = _arguments(data_dir, "dev", 32)
    torch_model = load_stage(str(lora_counter_model))
    reference = torch_model.embed_texts(texts, side="point", config=RunConfig(cache_dir=tmp_path, use_cache=False))
    config = RunConfig(backend=backend, quantize=quantize, use_cache=False)  # exports: the tests' cache folder
    model = load_stage(str(lora_counter_model), config=config)
    enc = model.tower_encoder("point")
    assert (enc.backend, enc.quantize) == (backend, quantize) and enc.exported is not None
    _check_vectors(reference, model.embed_texts(texts, side="point"), quantize)
    from argsim.backend.folders import model_path

    plain = runtime.base_export(model_path("minilm"), "mean", config.resolved_cache_dir())  # the base alone
    assert enc.exported.base != plain and enc.exported.base.parent == plain.parent


def test_an_mts_fold_ensemble_runs_its_members_in_the_backend(data_dir, mts_folder, tmp_path):
    from argsim.backend import get_encoder
    from argsim.kpm.mts.encoder import write_ensemble

    (tmp_path / "ens").mkdir()
    (tmp_path / "ens" / "fold0").symlink_to(mts_folder, target_is_directory=True)
    write_ensemble(tmp_path / "ens", ["fold0"])
    texts, topics, stances = _statements(data_dir, 8)
    reference = get_encoder(str(mts_folder), device="cpu").encode_statements(texts, topics, stances)
    enc = get_encoder(str(tmp_path / "ens"), backend="onnx")
    assert enc.backend == "onnx" and all(m.backend == "onnx" for m in enc.members) and enc.runtime == "onnx"
    _check_vectors(reference, enc.encode_statements(texts, topics, stances), "none")


def test_embed_with_a_shipped_adapter_names_the_backend_and_warns_nothing(tmp_path):
    from typer.testing import CliRunner

    from argsim.cli.app import app

    texts = tmp_path / "t.txt"
    texts.write_text("Uniforms stop bullying.\nUniforms limit expression.\n")
    res = CliRunner().invoke(app, ["--backend", "onnx", "--quantize", "int8", "--no-cache", "embed", str(texts),
                                   "--model", "kpm", "--out", str(tmp_path / "a.npy")])
    assert res.exit_code == 0 and "(onnx int8)" in res.output and "warning" not in res.output, res.output
    assert np.load(tmp_path / "a.npy").shape == (2, 384)


def test_rank_keypoints_with_a_cross_encoder_in_the_backend(kpm_workspace, kpm_cross):
    """`rank keypoints --model CROSS_DIR` under `--backend onnx` scores in ONNX Runtime; an OpenVINO int8
    calibration file without pairs is one line and exit 2."""
    from typer.testing import CliRunner

    from argsim.cli.app import app

    files = ["--arguments", "arguments.csv", "--key-points", "key_points.csv"]
    runner = CliRunner()
    res = runner.invoke(app, ["--quiet", "--backend", "onnx", "rank", "keypoints", "--model", str(kpm_cross), *files,
                              "--out", "rank-onnx"])
    assert res.exit_code == 0 and (kpm_workspace / "rank-onnx" / "predictions.json").is_file(), res.output
    (kpm_workspace / "cal.txt").write_text("a text without its pair\n", encoding="utf-8")
    res = runner.invoke(app, ["--quiet", "--backend", "openvino", "--quantize", "int8", "--calibration", "cal.txt",
                              "rank", "keypoints", "--model", str(kpm_cross), *files, "--out", "rank-ov"])
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "TAB" in lines[0], res.output


@pytest.mark.slow
def test_counter_model_openvino_int8_keys_its_vectors_by_the_calibration(shared_exports):
    """Without calibration texts the frozen base calibrates on the first texts encoded; their digest keys the
    model's vectors (another set of texts: another cache)."""
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    enc = get_encoder("counter-bi-encoder", config=RunConfig(cache_dir=shared_exports, backend="openvino",
                                                             quantize="int8")).for_role("document")
    texts = ["Homeschooling should be banned", "We should ban fast food", "Cannabis should be legal"]
    enc.encode(texts)
    _, digest = runtime.calibration_choice(texts)
    assert enc.cache_key.endswith(f"openvino:int8:cal={digest}") and len(enc.cache()) == 3


def test_a_thematic_concatenation_runs_its_transformer_parts_in_the_backend(data_dir, tmp_path):
    import json

    from argsim.backend import get_encoder, model_path
    from argsim.backend.names import shipped_models, write_manifest

    folder = tmp_path / "concat"
    (folder / "parts").mkdir(parents=True)
    (folder / "parts" / "base").symlink_to(model_path("minilm"), target_is_directory=True)
    (folder / "parts" / "kpm").symlink_to(shipped_models()["kpm"], target_is_directory=True)
    (folder / "config.json").write_text(json.dumps({"parts": ["base", "kpm"]}), encoding="utf-8")
    write_manifest(folder, "concat")
    texts = _arguments(data_dir, "dev", 8)
    reference = get_encoder(str(folder), device="cpu").encode(texts, use_cache=False)
    enc = get_encoder(str(folder), backend="onnx")
    assert enc.backend == "onnx" and enc.runtime == "onnx+onnx" and reference.shape == (8, 768)
    _check_vectors(reference, enc.encode(texts, use_cache=False), "none")
