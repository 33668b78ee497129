"""ONNX Runtime / OpenVINO for the transformers inside argsim's own models: the shipped LoRA adapters (merged into
the base), the cross-encoders that rank (key point matching, counter-argument reranking), MTS and the counter-
argument models' towers. Each path against PyTorch fp32 on real sentences, export reuse and cache separation."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from argsim.backend import runtime

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

#: the recorded tolerances (docs/backends.md), as for the bi-encoders: fp32 backends every cosine >= 0.999;
#: int8 the mean cosine >= 0.98 and every one >= 0.95
FP32_MIN_COSINE, INT8_MEAN_COSINE, INT8_MIN_COSINE = 0.999, 0.98, 0.95
#: OpenVINO int8 calibrates on this many texts in the tests (NNCF on 300 takes a minute on two cores)
TEST_CALIBRATION = 128
VARIANTS = [("onnx", "none"), ("openvino", "none"), ("onnx", "int8"), ("openvino", "int8")]


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


@pytest.mark.parametrize("name", ["kpm", "thematic"])
@pytest.mark.parametrize(("backend", "quantize"), VARIANTS)
def test_shipped_adapters_run_merged_in_the_backend(data_dir, name, backend, quantize):
    from argsim.backend import get_encoder
    from argsim.backend.models import ExportedEncoder

    texts = _arguments(data_dir, "dev", 32)
    reference = get_encoder(name, device="cpu").encode(texts, use_cache=False)
    calibration = _arguments(data_dir, "train", TEST_CALIBRATION) if quantize == "int8" else None
    enc = get_encoder(name, backend=backend, quantize=quantize, calibration=calibration)
    assert isinstance(enc, ExportedEncoder) and (enc.backend, enc.quantize) == (backend, quantize)
    _check_vectors(reference, enc.encode(texts, use_cache=False), quantize)


def test_two_adapters_over_one_base_never_share_an_export_or_a_vector(tmp_path):
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    config = RunConfig(cache_dir=tmp_path, backend="onnx")
    kpm, thematic = get_encoder("kpm", config=config), get_encoder("thematic", config=config)
    base = get_encoder("minilm", config=config)
    assert len({kpm.base, thematic.base, base.base}) == 3  # one export each, though the base is one
    assert len({kpm.cache_key, thematic.cache_key, base.cache_key}) == 3
    torch_kpm = get_encoder("kpm", device="cpu", config=RunConfig(cache_dir=tmp_path))
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
