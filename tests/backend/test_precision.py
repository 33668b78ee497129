"""Inference honours `--precision` (argsim.backend.device.inference_precision): a bf16 encoder really computes in
bf16 on the CPU, its vectors are close to fp32 but cached under their own key, impossible or unknown precisions
are one line and exit 2 before any work, and inference rows record the precision used."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from argsim.backend import get_encoder
from argsim.backend.device import inference_precision
from argsim.config import RunConfig
from argsim.errors import ArgsimError

TEXTS = ["Social media should be regulated.", "We should ban whaling.", "Homeschooling harms social skills."]


def _dtype(module: torch.nn.Module) -> torch.dtype:
    return next(module.parameters()).dtype


def test_inference_precision_reading():
    assert inference_precision("auto", "mps") == "fp32"  # auto on the CPU: the next test
    assert inference_precision("auto", "cuda") == "fp16"  # half precision on GPU; bf16 only when asked
    assert inference_precision("bf16", "cpu") == "bf16" and inference_precision("fp32", "cpu") == "fp32"
    for precision, device in (("fp16", "cpu"), ("bf16", "mps"), ("fp8", "cpu")):
        with pytest.raises(ArgsimError):
            inference_precision(precision, device)


@pytest.mark.parametrize(("flags", "decided", "expected"), [
    (["avx2", "avx512f", "avx512_vnni"], True, "fp32"),  # bf16 emulated: never the default
    (["avx2", "avx512f", "avx512_bf16"], True, "bf16"),
    (["avx2", "avx512f", "amx_bf16", "amx_int8"], True, "bf16"),
    (["avx2", "avx512f", "avx512_bf16"], False, "fp32"),  # the rule did not pass bf16
])
def test_auto_precision_on_the_cpu_follows_native_bf16_and_the_decision(monkeypatch, flags, decided, expected):
    from argsim import measure
    from argsim.backend import device

    monkeypatch.setattr(measure, "cpu_info", lambda: {"flags": flags})
    monkeypatch.setattr(device, "CPU_AUTO_BF16", decided)
    assert device.cpu_bf16_native() == any(f in ("avx512_bf16", "amx_bf16") for f in flags)
    assert inference_precision("auto", "cpu") == expected
    assert inference_precision("auto", "cuda") == "fp16" and inference_precision("auto", "mps") == "fp32"
    assert inference_precision("fp32", "cpu") == "fp32"  # one option away
    assert inference_precision("auto", "cpu", "onnx") == inference_precision("auto", "cpu", "openvino") == "fp32"


@pytest.mark.parametrize("pooling", [None, "mean"])  # sentence-transformers folder / plain transformer path
def test_bf16_inference_runs_in_bf16_close_to_fp32_under_its_own_cache_key(minilm, tmp_path, pooling):
    run = RunConfig(device="cpu", cache_dir=tmp_path, quiet=True)
    full = get_encoder("minilm", pooling=pooling, config=replace(run, precision="fp32"))
    half = get_encoder("minilm", pooling=pooling, config=replace(run, precision="bf16"))
    assert (full.precision, half.precision) == ("fp32", "bf16")
    assert _dtype(full.model) == torch.float32 and _dtype(half.model) == torch.bfloat16
    assert full.cache_key == full.identity and half.cache_key == f"{full.identity}:bf16"
    v32 = full.encode(TEXTS)  # cached first: a bf16 request must not be answered from it
    v16 = half.encode(TEXTS)
    assert v16.dtype == np.float32 and v16.shape == v32.shape
    cos = (v16 * v32).sum(1) / np.linalg.norm(v16, axis=1) / np.linalg.norm(v32, axis=1)
    assert cos.min() > 0.99, cos
    assert np.abs(v16 - v32).max() > 1e-4  # really computed in bf16, not read from the fp32 cache
    np.testing.assert_array_equal(full.encode(TEXTS), v32)  # and each precision reads back its own rows
    np.testing.assert_array_equal(half.encode(TEXTS), v16)


@pytest.mark.parametrize("precision,message", [("fp16", "needs a CUDA GPU"), ("fp8", "'fp8' is not one of")])
def test_bad_precision_is_one_line_and_exit_2_before_any_work(tmp_path, precision, message):
    from argsim.cli.app import app

    (tmp_path / "t.txt").write_text("one text\n", encoding="utf-8")
    out = tmp_path / "v.npy"
    result = CliRunner().invoke(app, ["--device", "cpu", "--precision", precision, "embed", str(tmp_path / "t.txt"),
                                      "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_inference_rows_record_the_precision_used(monkeypatch):
    from argsim import measure
    from argsim.backend import device
    from argsim.results import run_environment

    monkeypatch.setattr(device, "CPU_AUTO_BF16", True)

    for flags, auto in ((["avx2", "avx512f"], "fp32"), (["avx512f", "avx512_bf16"], "bf16")):
        monkeypatch.setattr(measure, "cpu_info", lambda flags=flags: {"flags": flags})
        assert run_environment(RunConfig(device="cpu"))["precision"] == auto
    env = run_environment(RunConfig(device="cpu", precision="bf16"))
    assert (env["device"], env["precision"]) == ("cpu", "bf16")


def test_counter_models_compute_in_fp32_where_auto_would_be_bf16(monkeypatch):
    """A counter-argument model computes in fp32 and keys its cache so: its frozen base too, also on a CPU where
    `--precision auto` is bf16 (otherwise bf16 base vectors would be cached under the fp32 key)."""
    from argsim import measure
    from argsim.backend import device
    from argsim.backend.registry import get_encoder

    texts = ["Uniforms stop bullying.", "Taxes fund schools."]
    fp32 = get_encoder("counter-bi-encoder", config=RunConfig(use_cache=False)).for_role("document").encode(texts)
    monkeypatch.setattr(measure, "cpu_info", lambda: {"flags": ["avx512f", "avx512_bf16"]})
    monkeypatch.setattr(device, "CPU_AUTO_BF16", True)
    encoder = get_encoder("counter-bi-encoder", config=RunConfig(use_cache=False)).for_role("document")
    assert encoder.precision == "fp32"
    np.testing.assert_allclose(encoder.encode(texts), fp32, atol=1e-6)  # a bf16 base differs by ~1e-3
