"""Model folders are data, never programs: the one check every loader runs before anything is imported or loaded.

`check_model_folder(folder)` refuses (ModelError, one line; docs/errors.md) a folder that would run code when loaded:
pickle files; JSON asking for remote code (`REMOTE_CODE_KEYS`); weights saved as pickles without a safetensors file
beside them (argsim's own head files, read with `weights_only=True` by `load_torch_weights`, are allowed in argsim's
own folders); a `modules.json` naming a class outside sentence-transformers / argsim (each module sub-folder it
names is checked the same way); an `argsim_encoder.json` naming a loader outside argsim's registry. `HF_LOAD` holds
the keyword arguments of every transformers / sentence-transformers load: with `trust_remote_code=False`
transformers never asks on the terminal whether to run a folder's code (it raises), so stdin is never read.
"""

from __future__ import annotations

import json
import pickle
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from argsim.backend.names import ENCODER_MANIFEST, manifest_loader_name
from argsim.errors import ModelError

#: keyword arguments of every transformers / sentence-transformers `from_pretrained` / constructor call
HF_LOAD: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
#: files that unpickle (run code) when loaded: never loaded from a model folder
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
#: weights files torch writes as pickles (a zip holding a pickle, or a bare pickle)
PICKLED_WEIGHT_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")
#: trainer state files saved beside a model that no loader reads
NOT_LOADED = frozenset({"training_args.bin", "optimizer.pt", "optimizer.bin", "scheduler.pt", "scheduler.bin",
                        "rng_state.pth", "scaler.pt"})
#: head files argsim's own loaders read with `torch.load(weights_only=True)` (no code can run)
ARGSIM_WEIGHT_FILES = frozenset({"model.pt", "heads.pt", "mts_head.pt"})
#: module classes a sentence-transformers `modules.json` may name (anything else would be imported and run)
TRUSTED_MODULE_PREFIXES = ("sentence_transformers.", "argsim.")
#: keys in a model folder's JSON that make transformers import code from the folder
REMOTE_CODE_KEYS = ("auto_map", "trust_remote_code", "custom_pipelines")
_MAX_JSON_BYTES = 4 * 1024 * 1024  # larger JSON files are vocabularies / tokenizers: scanned as text


def _remote_code_key(obj: Any, depth: int = 0) -> str | None:
    """The first key in `obj` (nested dicts/lists, 32 levels) that asks for remote code, else None."""
    if depth > 32:
        return "nesting deeper than 32 levels"
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:  # a list's keys are its indices: never a remote-code key
        if key in REMOTE_CODE_KEYS and value not in (False, None, {}, [], ""):
            return key
        if found := _remote_code_key(value, depth + 1):
            return found
    return None


def _check_one(folder: Path) -> list[str]:
    """Check the files of `folder` itself; return the module sub-folders a `modules.json` names."""
    if not folder.is_dir():
        raise ModelError(f"{folder}: model folder not found")
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file())
    except OSError as exc:
        raise ModelError(f"{folder}: cannot read the model folder ({exc.strerror})") from None
    names = {p.name for p in files}
    if pickles := [p for p in files if p.suffix.lower() in PICKLE_SUFFIXES]:
        raise ModelError(f"{pickles[0]}: pickle files are not loaded (they can run code); save models as "
                         "safetensors / JSON")
    has_safetensors = any(n.endswith(".safetensors") or n.endswith(".safetensors.index.json") for n in names)
    own = ENCODER_MANIFEST in names  # one of argsim's own folders
    pickled = [p for p in files if p.suffix.lower() in PICKLED_WEIGHT_SUFFIXES and p.name not in NOT_LOADED
               and not (own and p.name in ARGSIM_WEIGHT_FILES)]
    if pickled and not has_safetensors:
        raise ModelError(f"{pickled[0]}: weights saved as a pickle are not loaded (loading could run code); "
                         "save the model as safetensors (save_pretrained(..., safe_serialization=True))")
    for p in [f for f in files if f.suffix.lower() == ".json"]:
        try:
            if p.stat().st_size > _MAX_JSON_BYTES:
                text = p.read_text(encoding="utf-8", errors="replace")
                hit = next((k for k in REMOTE_CODE_KEYS if f'"{k}"' in text), None)
            else:
                hit = _remote_code_key(json.loads(p.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ModelError(f"{p}: unreadable model file ({type(exc).__name__}); nothing was loaded") from None
        if hit:
            raise ModelError(f"{p}: asks for code from the model folder ({hit!r}); model folders are data, never "
                             "programs: nothing was loaded or run")
    subfolders: list[str] = []
    if "modules.json" in names:
        modules = folder / "modules.json"
        try:
            entries = json.loads(modules.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ModelError(f"{modules}: unreadable ({type(exc).__name__})") from None
        for entry in entries if isinstance(entries, list) else [None]:
            kind = entry.get("type") if isinstance(entry, dict) else None
            if not isinstance(kind, str) or not kind.startswith(TRUSTED_MODULE_PREFIXES):
                raise ModelError(f"{modules}: module type {kind!r} is not a sentence-transformers or argsim "
                                 "class; it would be imported and run, so the folder is not loaded")
            sub = entry.get("path")
            if isinstance(sub, str) and sub:
                subfolders.append(sub)
    return subfolders


def check_model_folder(folder: str | Path) -> None:
    """Refuse (ModelError, one line) a model folder that would run code when loaded; see the module docstring.

    Checks `folder`, the module sub-folders its `modules.json` names, and the transformers sub-folders argsim's
    own models keep (`backbone/`, `point_encoder/`, `candidate_encoder/`). Reads only file names and JSON.

    Args:
        folder: the model folder.

    Example:
        >>> check_model_folder("models/kpm-mts")  # doctest: +SKIP
    """
    todo = [Path(folder)]
    seen: set[Path] = set()
    while todo:
        current = todo.pop()
        key = current.resolve()
        if key in seen:
            continue
        seen.add(key)
        subs = _check_one(current)
        if (current / ENCODER_MANIFEST).is_file():
            manifest_loader_name(current)
            subs += [s for s in ("backbone", "point_encoder", "candidate_encoder") if (current / s).is_dir()]
        todo += [current / sub for sub in subs if (current / sub).is_dir()]


def load_torch_weights(path: str | Path) -> Any:
    """`torch.load(path, weights_only=True)` on the CPU: tensors only, no code; any failure is one ModelError line.

    Args:
        path: a state-dict file argsim wrote (`model.pt`, `heads.pt`, `mts_head.pt`).

    Returns:
        What the file holds (a state dict).

    Example:
        >>> state = load_torch_weights("models/thematic/model.pt")  # doctest: +SKIP
    """
    import torch

    try:
        with warnings.catch_warnings():  # torch warns about the pickle protocol of a file it then refuses
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ModelError(f"{path}: file not found") from None
    except pickle.UnpicklingError:
        raise ModelError(f"{path}: holds more than tensors (unpickling it could run code); refused, nothing "
                         "ran") from None
    except (RuntimeError, EOFError, OSError, ValueError, AttributeError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"{path}: not a weights file argsim wrote ({first[:160]})") from None


@contextmanager
def model_files(folder: str | Path, what: str = "model") -> Iterator[None]:
    """Read a model folder's own files inside this block: a file of the wrong shape or value (a list where an
    object is expected, text where a number is, a missing key, nesting without end) ends in one ModelError line
    naming the folder, not a traceback. argsim's own loaders (LTR, MTS, BiLSTM, counter models, ensembles) use it.

    Args:
        folder: the folder being loaded.
        what: what it should be (for the message), e.g. 'LTR model'.

    Example:
        >>> with model_files("models/ltr", "LTR model"):  # doctest: +SKIP
        ...     meta = read_json("models/ltr/ltr.json")["model"]
    """
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, OSError,
            RuntimeError) as exc:  # RuntimeError: torch's load_state_dict on weights of the wrong shape
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
        raise ModelError(f"{folder}: not a valid {what} folder ({type(exc).__name__}"
                         f"{': ' + first if first else ''})") from None
