"""CPU inference runtimes of transformer encoders: ONNX Runtime and OpenVINO, fp32 or int8; thread defaults
(`--backend`, `--quantize`; docs/backends.md: what each one runs, how exports are cached and keyed, what each costs).

**onnx** traces the model's whole embedding pipeline (`base_export`: TorchScript exporter, opset 17, dynamic batch
and length); its int8 is `quantize_dynamic`. Reading chosen: MatMul weights only, per output channel, because
quantizing every operator (embedding Gathers included) or per tensor lowered the mean cosine to fp32 of MiniLM on
ArgKP arguments from 0.993 to 0.96. **openvino** converts the same graph and compiles it with
`INFERENCE_PRECISION_HINT` f32 (bf16 with `--precision bf16`; without the hint it silently computes in bf16 on CPUs
with AVX512_BF16 or AMX); its int8 is NNCF static quantization calibrated on `CALIBRATION_SIZE` texts
(`calibration_choice`), whose digest keys the model and its vectors. Builds write into a temporary folder and
rename it, so a crash leaves no half model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from argsim.backend.fingerprint import fingerprint
from argsim.backend.pooling import pool
from argsim.backend.safety import HF_LOAD, check_model_folder
from argsim.config import BACKENDS, QUANTIZATIONS
from argsim.errors import BackendError, ModelError, warn
from argsim.io import atomic_folder, read_text_file, split_lines
from argsim.measure import usable_cores
from argsim.version import package_versions

#: how many distinct texts calibrate an OpenVINO int8 model (NNCF's default subset size)
CALIBRATION_SIZE = 300
EXPORT_FORMAT = "1"  # bump when the exported graph changes (its folders are then rebuilt)
#: what each backend needs installed (`pip install 'argsim[cpu]'`)
BACKEND_PACKAGES = {"onnx": ("onnxruntime", "onnx"), "openvino": ("openvino", "onnx")}
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cap_threads(threads: int | None) -> int | None:
    """`threads` capped at `usable_cores()`, with one warning when it was more (more threads than cores only take
    turns, and an absurd count makes thread pools crash the process); None stays None.

    Args:
        threads: the thread count asked for (`--threads`).

    Returns:
        The count used.

    Example:
        >>> cap_threads(1)
        1
    """
    if threads is None:
        return None
    cores = usable_cores()
    if threads > cores:
        warn(f"--threads {threads} is more than the {cores} core(s) this process may use (CPU affinity, cgroup "
             f"quota): {cores} are used")
        return cores
    return threads


def check_backend(backend: str, quantize: str = "none", device: str = "auto", precision: str = "auto") -> None:
    """Refuse (BackendError, one line) a combination that cannot run, or a backend not installed, before any model
    is loaded.

    Example:
        >>> check_backend("onnx", "int8", "cpu")
    """
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend '{backend}': choose one of {', '.join(BACKENDS)}")
    if quantize not in QUANTIZATIONS:
        raise BackendError(f"unknown quantization '{quantize}': choose one of {', '.join(QUANTIZATIONS)}")
    if backend == "torch":
        if quantize != "none":
            raise BackendError(f"--quantize {quantize} needs --backend onnx or openvino (torch runs unquantized)")
        return
    device = (device or "auto").lower()
    if device not in ("auto", "cpu"):
        raise BackendError(f"--backend {backend} runs on the CPU only, not on device '{device}': use --device cpu "
                           "or --backend torch")
    precision = (precision or "auto").lower()
    allowed = ("auto", "fp32", "bf16") if backend == "openvino" else ("auto", "fp32")
    if precision not in allowed:
        raise BackendError(f"--backend {backend} computes in {' or '.join(p for p in allowed if p != 'auto')}, "
                           f"not {precision}")
    if quantize != "none" and precision == "bf16":
        raise BackendError("--quantize int8 runs its unquantized operators in fp32: drop --precision bf16")
    if missing := [p for p in BACKEND_PACKAGES[backend] if _version(p) == "none"]:
        raise BackendError(f"--backend {backend} needs {', '.join(missing)}: pip install 'argsim[cpu]'")


def _version(package: str) -> str:
    return package_versions([package]).get(package, "none")


def calibration_choice(texts: Sequence[str], size: int = CALIBRATION_SIZE) -> tuple[list[str], str]:
    """The calibration texts picked from `texts` (the first `size` distinct non-empty ones in SHA-1 order) and
    their digest (16 hex digits).

    Example:
        >>> calibration_choice(["b", "a", "a"])[0]
        ['a', 'b']
    """
    distinct = {t for t in texts if t.strip()}
    chosen = sorted(distinct, key=lambda t: hashlib.sha1(t.encode("utf-8")).digest())[:size]
    digest = hashlib.sha256("\n".join(chosen).encode("utf-8")).hexdigest()[:16]
    return chosen, digest


def read_calibration(path: Path) -> list[str]:
    """The texts of a calibration file: UTF-8 (a BOM dropped), one text per line ending in LF or CRLF
    (`io.split_lines`: a form feed or U+2028 inside a text does not split it), blank lines skipped; an unreadable
    file is one line naming it and the bad byte's line (`io.read_text_file`)."""
    if not (texts := [line.strip() for line in split_lines(read_text_file(path)) if line.strip()]):
        raise BackendError(f"{path}: the calibration file holds no text")
    return texts


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """No output from a library call: its progress bars (stdout / stderr) and its root-logger warnings."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        root.setLevel(level)


def _atomic_build(target: Path, build) -> Path:
    """Build `target` (a folder) by `build(tmp)` in an `atomic_folder`; kept if it exists."""
    if not target.is_dir():
        try:
            with atomic_folder(target) as tmp:
                build(tmp)
        except OSError:  # another process built it meanwhile
            if not target.is_dir():
                raise
    return target


def _pipeline(model, tokenizer, call, limit: int, dim: int, lowercase: bool = False, **extra) -> tuple:
    """(an eval-mode module mapping the tokenizer's `MODEL_INPUTS` to `call(features)`, tokenizer, names, meta: the
    token `limit`, `dim`, `lowercase` and `extra`)"""
    import torch

    names = [n for n in MODEL_INPUTS if n in tokenizer("probe")]

    class Pipeline(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return call(dict(zip(names, inputs, strict=True)))

    meta = {"max_seq_length": int(limit), "dim": int(dim), "lowercase": bool(lowercase), **extra}
    return Pipeline().eval(), tokenizer, names, meta


def sentence_pipeline(st, folder: Path | str = "") -> tuple:
    """The export pipeline of a sentence-transformers model in memory (its own modules: transformer, pooling, Dense,
    Normalize): `(module, tokenizer, input names, meta)`; its output is `sentence_embedding`.

    Example:
        >>> module, tokenizer, names, meta = sentence_pipeline(SentenceTransformer("..."))  # doctest: +SKIP
    """
    first = st[0]
    tokenizer = getattr(first, "tokenizer", None)
    if tokenizer is None:
        raise ModelError(f"{folder}: its first module {type(first).__name__} is not a transformer; "
                         "it runs with --backend torch only")
    return _pipeline(st, tokenizer, lambda feats: st(feats)["sentence_embedding"], st.max_seq_length or 512,
                     st.get_sentence_embedding_dimension(), getattr(first, "do_lower_case", False))


def pooled_pipeline(model, tokenizer, pooling: str) -> tuple:
    """The export pipeline of a transformers model in memory with argsim's pooling (`mean`, `cls`, `cls-last4`;
    `argsim.backend.pooling.pool`): `(module, tokenizer, input names, meta)`."""
    def call(feats: dict) -> Any:
        return pool(model(**feats, output_hidden_states=pooling == "cls-last4"), feats["attention_mask"], pooling)

    return _pipeline(model, tokenizer, call, getattr(model.config, "max_position_embeddings", 512),
                     model.config.hidden_size * (4 if pooling == "cls-last4" else 1))


def logits_pipeline(model) -> tuple:
    """The export pipeline of a sentence-transformers CrossEncoder in memory: a text pair's token ids in, its own
    forward's logits (batch, labels) out; its activation (one of `ACTIVATIONS`) is recorded in the meta, its max
    length (at most its positions) is the pair's token limit. Returns `(module, tokenizer, input names, meta)`."""
    activation = type(model.activation_fn).__name__.lower()
    if activation not in ACTIVATIONS:
        raise ModelError(f"a cross-encoder whose activation is {activation} runs with --backend torch only")
    config = getattr(model, "config", None)
    limit = int(getattr(config, "max_position_embeddings", 512) or 512)
    labels = int(getattr(model, "num_labels", None) or getattr(config, "num_labels", 1) or 1)
    return _pipeline(model, model.tokenizer, lambda feats: model(feats)["scores"],
                     min(model.max_length or limit, limit), labels, activation=activation)


#: the activations of a cross-encoder that may be exported (`logits_pipeline`)
ACTIVATIONS = ("identity", "sigmoid", "softmax")


def folder_pipeline(folder: Path, pooling: str | None) -> tuple:
    """The export pipeline of a model folder: its own sentence-transformers modules (`pooling` None), else a
    transformers model with argsim's pooling."""
    check_model_folder(folder)
    if pooling is None:
        from sentence_transformers import SentenceTransformer

        return sentence_pipeline(SentenceTransformer(str(folder), device="cpu", **HF_LOAD).eval(), folder)
    from transformers import AutoModel, AutoTokenizer

    return pooled_pipeline(AutoModel.from_pretrained(str(folder), use_safetensors=True, **HF_LOAD).eval(),
                           AutoTokenizer.from_pretrained(str(folder), **HF_LOAD), pooling)


def _export_onnx(build, pooling: str | None, out: Path) -> None:
    """Trace the pipeline `build()` gives into `out/model.onnx`, save its tokenizer and `argsim_export.json`."""
    import torch

    with warnings.catch_warnings(action="ignore"), torch.inference_mode():  # the exporter's deprecation notes
        module, tokenizer, names, meta = build()
        sample = tokenizer(["an argument to trace the graph with", "a shorter one"], padding=True,
                           return_tensors="pt")
        args = tuple(sample[n] for n in names)
        output = "logits" if pooling == "logits" else "embedding"
        axes = {n: {0: "batch", 1: "tokens"} for n in names} | {output: {0: "batch"}}
        torch.onnx.export(module, args, str(out / "model.onnx"), input_names=names, output_names=[output],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    tokenizer.save_pretrained(str(out))
    (out / "argsim_export.json").write_text(json.dumps({**meta, "inputs": names, "pooling": pooling or "model",
                                                        "format": EXPORT_FORMAT}), encoding="utf-8")


def base_export(folder: Path, pooling: str | None, cache_root: Path, adapter: Path | None = None, build=None,
                max_length: int | None = None) -> Path:
    """The fp32 ONNX export of `folder` with `pooling` (None: the folder's own modules; 'logits': a sequence
    classifier's logits), built once under `cache_root`. `adapter`: a LoRA adapter folder merged into the weights
    (its fingerprint keys the export too); `build()`: the pipeline of a model in memory (default: `folder_pipeline`);
    `max_length`: the token limit `build` bakes into the export's meta (it keys the export too).

    Example:
        >>> base_export(model_path("minilm"), None, default_cache_dir())  # doctest: +SKIP
    """
    source = fingerprint(folder)
    key = {"source": source, "pooling": pooling or "model", "format": EXPORT_FORMAT,
           **{p: _version(p) for p in ("torch", "transformers", "sentence-transformers", "onnx")}}
    if adapter is not None:
        key["adapter"] = fingerprint(adapter)
    if max_length is not None:
        key["max_length"] = int(max_length)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    builder = build or (lambda: folder_pipeline(Path(folder), pooling))
    return _atomic_build(Path(cache_root) / "exported" / f"{source}-{digest}",
                         lambda tmp: _export_onnx(builder, pooling, tmp))


def runtime_model(base: Path, backend: str, quantize: str, calibration: Sequence[dict] | None = None,
                  calibration_digest: str = "") -> Path:
    """The model file `backend` runs for the export `base`, built once: `model.onnx` (onnx fp32), an int8 ONNX
    file, or an OpenVINO IR (`model.xml`), fp32 or int8 calibrated on `calibration` (tokenized feature dicts)."""
    if backend == "onnx" and quantize == "none":
        return base / "model.onnx"
    if backend == "onnx":
        tag = f"onnx-int8-ort{_version('onnxruntime')}"

        def build(tmp: Path) -> None:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            with warnings.catch_warnings(action="ignore"), _silenced():
                quantize_dynamic(str(base / "model.onnx"), str(tmp / "model.onnx"), weight_type=QuantType.QInt8,
                                 per_channel=True, op_types_to_quantize=["MatMul"])

        return _atomic_build(base / tag, build) / "model.onnx"
    tag = f"openvino-{quantize if quantize != 'none' else 'fp32'}-ov{_version('openvino')}"
    if quantize != "none":
        tag += f"-nncf{_version('nncf')}-cal{calibration_digest}"

    def build_ov(tmp: Path) -> None:
        import openvino as ov

        model = ov.convert_model(str(base / "model.onnx"))
        if quantize != "none":
            import nncf

            nncf.set_log_level(logging.ERROR)
            with _silenced():  # NNCF draws its own progress bars
                model = nncf.quantize(model, nncf.Dataset(list(calibration)), model_type=nncf.ModelType.TRANSFORMER,
                                      subset_size=len(calibration))
        ov.save_model(model, str(tmp / "model.xml"), compress_to_fp16=False)

    return _atomic_build(base / tag, build_ov) / "model.xml"


def _runner(path: Path, backend: str, threads: int, precision: str) -> Callable[[dict], np.ndarray]:
    """`runner(features) -> (batch, dim) float32`: an ONNX Runtime CPU session, or an OpenVINO CPU compiled model
    (latency hint, one stream)."""
    if backend == "onnx":
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return lambda features: session.run(None, {n: features[n] for n in names})[0]
    import openvino as ov

    config = {"INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32",
              "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}
    compiled = ov.Core().compile_model(str(path), "CPU", config)
    request = compiled.create_infer_request()
    names = [i.get_any_name() for i in compiled.inputs]

    def run(features: dict) -> np.ndarray:
        request.infer({n: features[n] for n in names})
        return np.array(request.get_output_tensor(0).data, dtype=np.float32, copy=True)

    return run


class ExportedModel:
    """An export (`base_export`) run by ONNX Runtime or OpenVINO, fp32 or int8: texts (or text pairs) in, the
    graph's output (pooled embeddings, or a classifier's logits) out, tokenized as sentence-transformers does.
    OpenVINO int8 is built when `prepare` gets its calibration inputs.

    Args:
        base: the export folder (`base_export`).
        backend: onnx | openvino.
        quantize: none | int8.
        threads: intra-op threads.
        precision: fp32 | bf16 (OpenVINO's inference precision hint).

    Example:
        >>> model = ExportedModel(base_export(folder, "logits", cache), "onnx", "int8", 2)  # doctest: +SKIP
        >>> model.prepare([]); model.run(["a claim"], ["its counter"], max_length=128)  # doctest: +SKIP
    """

    def __init__(self, base: Path, backend: str, quantize: str, threads: int, precision: str = "fp32") -> None:
        from transformers import AutoTokenizer

        self.base, self.backend, self.quantize, self.threads = Path(base), backend, quantize, threads
        self.precision = precision
        self.meta = json.loads((self.base / "argsim_export.json").read_text(encoding="utf-8"))  # inputs, dim, ...
        self.max_seq_length = self.meta["max_seq_length"]  # the limit baked in, named as a CrossEncoder's
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.base), **HF_LOAD)
        self.calibration_digest = ""
        self._runner: Callable[[dict], np.ndarray] | None = None

    @property
    def needs_calibration(self) -> bool:
        """OpenVINO int8 not built yet: `prepare` needs calibration texts."""
        return self._runner is None and self.backend == "openvino" and self.quantize != "none"

    @property
    def runtime(self) -> str:
        """What keys vectors apart from PyTorch's: the backend, its quantization and the calibration digest."""
        if self.quantize == "none":
            return self.backend
        tag = f"{self.backend}:{self.quantize}"
        return f"{tag}:cal={self.calibration_digest}" if self.backend == "openvino" else tag

    def features(self, first: Sequence[str], second: Sequence[str] | None = None,
                 max_length: int | None = None) -> dict[str, np.ndarray]:
        """The graph's inputs for texts (or text pairs): padded to the longest, `longest_first` truncation."""
        case = str.lower if self.meta.get("lowercase") else str
        first = [case(t) for t in first]
        second = None if second is None else [case(t) for t in second]
        limit = min(max_length or self.max_seq_length, self.max_seq_length)
        feats = self.tokenizer(first, second, padding=True, truncation="longest_first", max_length=limit,
                               return_tensors="np")
        return {n: feats[n] for n in self.meta["inputs"]}

    def prepare(self, first: Sequence[str] = (), second: Sequence[str] | None = None,
                max_length: int | None = None) -> ExportedModel:
        """Build (once) and load the runtime model; OpenVINO int8 calibrates on up to `CALIBRATION_SIZE` of the
        texts (pairs) given, chosen by `calibration_choice`. Returns self."""
        if self._runner is not None:
            return self
        items = None
        if self.needs_calibration:
            sep = "\x1f"
            joined = list(first) if second is None else [f"{a}{sep}{b}" for a, b in zip(first, second, strict=True)]
            self.calibration, self.calibration_digest = calibration_choice(joined)
            if not self.calibration:
                raise BackendError("OpenVINO int8 needs calibration texts: pass --calibration FILE")
            pairs = [c.split(sep, 1) if second is not None else (c, None) for c in self.calibration]
            items = [self.features([a], [b] if b is not None else None, max_length) for a, b in pairs]
        path = runtime_model(self.base, self.backend, self.quantize, items, self.calibration_digest)
        self._runner = _runner(path, self.backend, self.threads, self.precision)
        return self

    def run(self, first: Sequence[str], second: Sequence[str] | None = None, max_length: int | None = None,
            batch_size: int = 64) -> np.ndarray:
        """The graph's output for `first` (and `second`, pairs) in batches, in the given order (callers sort by
        length). OpenVINO int8 not yet built calibrates on these texts."""
        if self._runner is None:
            self.prepare(first, second, max_length)
        first = list(first)
        outs = [self._runner(self.features(first[s:s + batch_size],
                                           None if second is None else list(second[s:s + batch_size]), max_length))
                for s in range(0, len(first), batch_size)]
        if not outs:
            return np.zeros((0, int(self.meta["dim"])), dtype=np.float32)
        return np.concatenate(outs, axis=0).astype(np.float32, copy=False)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """A cross-encoder export's logits (len(pairs), labels), computed in length-sorted batches, in input order."""
        pairs = list(pairs)
        if not pairs:
            return np.zeros((0, int(self.meta["dim"])), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0]) + len(pairs[i][1])))
        got = self.run([pairs[i][0] for i in order], [pairs[i][1] for i in order], batch_size=batch_size)
        return got[np.argsort(order)]  # back in input order


def exported_model(folder: Path, pooling: str | None, spec: dict, precision: str = "fp32",
                   adapter: Path | None = None, build=None, max_length: int | None = None) -> ExportedModel:
    """`ExportedModel` of `base_export(folder, pooling, ...)` under a run's runtime `spec`
    (`argsim.backend.registry.runtime_spec`); loaded at once unless OpenVINO int8 waits for its calibration texts
    (a cross-encoder's: lines 'first text<TAB>second text'), cut to `max_length` tokens."""
    base = base_export(Path(folder), pooling, Path(spec["cache_root"]), adapter=adapter, build=build,
                       max_length=max_length if pooling == "logits" else None)  # a cross-encoder's limit is baked in
    model = ExportedModel(base, spec["backend"], spec["quantize"], int(spec["threads"]), precision)
    if not model.needs_calibration:
        model.prepare()
    elif spec.get("calibration") and pooling == "logits":  # a calibration file of pairs: first<TAB>second
        pairs = [line.split("\t", 1) for line in spec["calibration"]]
        if not all(len(p) == 2 for p in pairs):
            raise BackendError("a cross-encoder calibrates on text pairs: each --calibration line must be "
                               "'first text<TAB>second text'")
        model.prepare([a for a, _ in pairs], [b for _, b in pairs], max_length)
    elif spec.get("calibration"):
        model.prepare(spec["calibration"], max_length=max_length)
    return model

