"""ONNX Runtime / OpenVINO backends: vectors against PyTorch fp32 on real sentences, cache separation, export reuse,
refused combinations, thread defaults."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest

from argsim.backend import runtime
from argsim.errors import ArgsimError, BackendError

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

#: the recorded tolerance (docs/backends.md): every vector's cosine to PyTorch fp32 >= 0.999 for the fp32
#: backends; for int8 the mean cosine >= 0.98 and every vector's >= 0.95
FP32_MIN_COSINE, INT8_MEAN_COSINE, INT8_MIN_COSINE = 0.999, 0.98, 0.95
#: the texts of the OpenVINO int8 export that the export-reuse tests build once between them (NNCF: 15 s a build)
FIRST_TEXTS = ["Homeschooling should be banned", "We should ban fast food", "Cannabis should be legal"]


def _arguments(data_dir, split: str, n: int) -> list[str]:
    with open(data_dir / "argkp" / f"arguments_{split}.csv", encoding="utf-8") as fh:
        return [r["argument"] for r in csv.DictReader(fh)][:n]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize(("backend", "quantize", "floor"), [
    ("onnx", "none", FP32_MIN_COSINE), ("openvino", "none", FP32_MIN_COSINE),
    ("onnx", "int8", INT8_MIN_COSINE), pytest.param("openvino", "int8", INT8_MIN_COSINE, marks=pytest.mark.slow)])
def test_vectors_match_torch_fp32_on_real_arguments(data_dir, minilm, backend, quantize, floor):
    from argsim.backend import get_encoder

    texts = _arguments(data_dir, "dev", 48)
    reference = minilm.encode(texts, use_cache=False)
    calibration = _arguments(data_dir, "train", runtime.CALIBRATION_SIZE) if quantize == "int8" else None
    enc = get_encoder("minilm", backend=backend, quantize=quantize, calibration=calibration)
    assert (enc.backend, enc.quantize, enc.device) == (backend, quantize, "cpu")
    vectors = enc.encode(texts, use_cache=False)
    cos = _cosines(reference, vectors)
    assert vectors.shape == reference.shape and cos.min() >= floor, cos.min()
    if quantize == "int8":  # quantized: really another graph, not the fp32 one again
        assert cos.mean() >= INT8_MEAN_COSINE and cos.min() < 0.99999, cos.mean()
    # the sentence-transformers folder's own Normalize module is part of the exported graph
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_explicit_pooling_runs_the_same_pooling(minilm):
    """A transformers folder with argsim's pooling (cls-last4 concatenates four layers' [CLS]) is exported too."""
    from argsim.backend import get_encoder

    texts = ["We should abolish capital punishment", "School uniforms stop bullying, so they should stay"]
    ref = get_encoder("minilm", pooling="cls-last4", device="cpu").encode(texts, use_cache=False)
    out = get_encoder("minilm", pooling="cls-last4", backend="onnx").encode(texts, use_cache=False)
    assert out.shape == (2, 4 * 384) and _cosines(ref, out).min() >= FP32_MIN_COSINE


def test_cache_never_serves_another_backends_vector(tmp_path):
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    config = RunConfig(cache_dir=tmp_path)
    torch_enc = get_encoder("minilm", device="cpu", config=config)
    onnx_enc = get_encoder("minilm", config=replace(config, backend="onnx", quantize="int8"))
    assert torch_enc.cache_key != onnx_enc.cache_key and torch_enc.identity == onnx_enc.identity
    text = "Social media does more harm than good"
    sentinel = np.full((1, 384), 7.0, dtype=np.float32)
    torch_enc.cache().put_many([text], sentinel)  # a vector only the torch cache holds
    assert np.array_equal(torch_enc.encode([text]), sentinel)
    got = onnx_enc.encode([text])
    assert not np.allclose(got, sentinel) and abs(float(np.linalg.norm(got)) - 1.0) < 1e-3


def test_second_run_exports_nothing(monkeypatch):
    """Everything built once is reused from the export folder: a fresh process-level load exports nothing (the
    OpenVINO int8 export is the one calibrated on `FIRST_TEXTS`, as in the next test: whichever runs first builds
    it)."""
    from argsim.backend import get_encoder, registry

    calibration = FIRST_TEXTS
    variants = [("onnx", "none"), ("onnx", "int8"), ("openvino", "none"), ("openvino", "int8")]
    first = {v: get_encoder("minilm", backend=v[0], quantize=v[1], calibration=calibration).encode(["a claim"],
                                                                                                   use_cache=False)
             for v in variants}

    def refuse(*_args, **_kwargs):
        raise AssertionError("exported again")

    import nncf
    import onnxruntime.quantization as ortq
    import torch

    monkeypatch.setattr(runtime, "_export_onnx", refuse)
    monkeypatch.setattr(torch.onnx, "export", refuse)
    monkeypatch.setattr(ortq, "quantize_dynamic", refuse)
    monkeypatch.setattr(nncf, "quantize", refuse)
    for key in [k for k in registry._LOADED if k[6] != "torch"]:
        monkeypatch.delitem(registry._LOADED, key)
    for v in variants:
        again = get_encoder("minilm", backend=v[0], quantize=v[1], calibration=calibration)
        assert np.allclose(again.encode(["a claim"], use_cache=False), first[v], atol=1e-6)


def test_openvino_int8_without_calibration_uses_the_first_texts(shared_exports):
    """Calibrated on the first encode's texts; its digest keys the vectors (another set: another cache) and names
    the quantized export, built beside the fp32 ONNX export it quantizes (the tests' export folder: NNCF's 15 s
    once)."""
    from argsim.backend import get_encoder, model_path
    from argsim.config import RunConfig

    enc = get_encoder("minilm", config=RunConfig(cache_dir=shared_exports, backend="openvino", quantize="int8"))
    texts = FIRST_TEXTS
    enc.encode(texts)
    _, digest = runtime.calibration_choice(texts)
    assert enc.cache_key.endswith(f"openvino:int8:cal={digest}") and enc.recipe["calibration"]
    assert len(enc.cache()) == 3
    base = runtime.base_export(model_path("minilm"), None, shared_exports)
    assert (base / f"openvino-int8-ov{runtime._version('openvino')}-nncf{runtime._version('nncf')}-cal{digest}"
            / "model.xml").is_file()


@pytest.mark.parametrize(("backend", "quantize", "device", "precision", "words"), [
    ("openvino", "none", "cuda", "auto", "CPU only"),
    ("torch", "int8", "auto", "auto", "needs --backend onnx or openvino"),
    ("onnx", "none", "cpu", "bf16", "computes in fp32"),
    ("openvino", "int8", "cpu", "bf16", "drop --precision bf16"),
    ("tensorrt", "none", "cpu", "auto", "unknown backend"),
])
def test_bad_combinations_are_refused(backend, quantize, device, precision, words):
    with pytest.raises(BackendError, match=words):
        runtime.check_backend(backend, quantize, device, precision)


@pytest.mark.parametrize("options", [["--backend", "openvino", "--device", "cuda"],
                                     ["--quantize", "int8", "--backend", "torch"]])
def test_cli_refuses_bad_combinations_in_one_line(options, tmp_path):
    from typer.testing import CliRunner

    from argsim.cli.app import app

    text = tmp_path / "t.txt"
    text.write_text("a claim\n", encoding="utf-8")
    result = CliRunner().invoke(app, [*options, "embed", str(text), "--out", str(tmp_path / "v.npy")])
    assert result.exit_code == 2 and not (tmp_path / "v.npy").exists()
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--backend" in lines[0] and "Traceback" not in result.output


def test_usable_cores_reads_the_cgroup_quota(tmp_path):
    import os

    from argsim.measure import usable_cores

    affinity = len(os.sched_getaffinity(0))
    assert usable_cores(tmp_path) == affinity  # no cpu.max: the affinity
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert usable_cores(tmp_path) == affinity
    (tmp_path / "cpu.max").write_text("50000 100000\n")  # half a core: one thread
    assert usable_cores(tmp_path) == 1
    (tmp_path / "cpu.max").write_text("150000 100000\n")  # 1.5 cores: two threads (rounded up), if allowed
    assert usable_cores(tmp_path) == min(affinity, 2)


def test_a_cross_encoders_runtime_caps_threads_as_the_command_line_does(capsys):
    """The Python API's cross-encoders under onnx/openvino run on at most the usable cores, with the one warning
    the command line gives (the CLI caps the option itself; `get_encoder` caps for bi-encoders)."""
    from argsim.backend.registry import runtime_spec
    from argsim.config import RunConfig
    from argsim.measure import usable_cores

    spec = runtime_spec(RunConfig(backend="onnx", threads=1_000_000))
    assert spec["threads"] == usable_cores()
    assert "--threads 1000000 is more than" in capsys.readouterr().err
    assert runtime_spec(RunConfig(backend="onnx", threads=1))["threads"] == 1


def test_calibration_choice_is_independent_of_order_and_duplicates():
    a, da = runtime.calibration_choice(["x", "y", "z", "y", " "], size=2)
    b, db = runtime.calibration_choice(["z", "y", "x"], size=2)
    assert a == b and da == db and len(a) == 2 and " " not in a


def test_the_backend_is_named_in_embed_and_never_silently_ignored(tmp_path):
    """`embed` names the runtime that made the vectors; a --backend that cannot apply to the model (static
    vectors) is a one-line warning, not silence."""
    from typer.testing import CliRunner

    from argsim.cli.app import app

    texts = tmp_path / "t.txt"
    texts.write_text("Uniforms stop bullying.\nUniforms limit expression.\n")
    runner = CliRunner()
    res = runner.invoke(app, ["--backend", "onnx", "--quantize", "int8", "--no-cache", "embed", str(texts),
                              "--out", str(tmp_path / "a.npy")])
    assert res.exit_code == 0 and "(onnx int8)" in res.output
    res = runner.invoke(app, ["--backend", "onnx", "--no-cache", "embed", str(texts), "--model", "glove50",
                              "--out", str(tmp_path / "b.npy")])
    assert res.exit_code == 0
    assert "warning: --backend onnx applies to transformer encoders only: 'glove50' runs as it is" in res.output


def test_a_built_folder_gets_the_umask_mode_not_mkdtemps_private_one(tmp_path):
    """Export caches and `distill --out` folders are built beside the target and renamed: the folder must not
    stay 0700 (mkdtemp's mode), or no one else can read the model."""
    import os

    old = os.umask(0o022)
    try:
        built = runtime._atomic_build(tmp_path / "cache" / "model", lambda tmp: (tmp / "model.onnx").write_text("x"))
    finally:
        os.umask(old)
    assert built.stat().st_mode & 0o777 == 0o755 and (built / "model.onnx").read_text() == "x"
    assert [p.name for p in built.parent.iterdir()] == ["model"]  # nothing left beside it


def test_calibration_texts_split_at_line_ends_only(tmp_path):
    """A calibration file is read as argsim reads every text file: a BOM dropped, LF / CRLF ends, a form feed or
    U+2028 inside a text kept; bad UTF-8 is one line naming the file."""
    path = tmp_path / "cal.txt"
    path.write_bytes("\ufeffone\fpart\r\n\ntwo\u2028parts\n".encode())
    assert runtime.read_calibration(path) == ["one\fpart", "two\u2028parts"]
    path.write_bytes(b"ok\n\xff\n")
    with pytest.raises(ArgsimError, match="cal.txt"):
        runtime.read_calibration(path)
