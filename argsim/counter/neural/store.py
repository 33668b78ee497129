"""Saving and loading trained models (the folder: docs/counterargs-neural.md): config.json (the `NeuralConfig` and
the base width `dim`), heads.safetensors (older folders: `heads.pt`, read with `torch.load(weights_only=True)`),
card.json (a frozen registry base and its weights' SHA-256; `artifact: heads` makes the folder shippable),
argsim_encoder.json (`get_encoder(folder)`: the retrieval embeddings) and the fine-tuned towers, or with
`--lora-rank` only their LoRA adapters (`point_encoder/`, `candidate_encoder/`), applied to the installed base when
loading. A shipped model loads by its name wherever a folder is taken: `load_model("counter-bi-encoder")`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from argsim.backend.adapters import base_sha256, check_base
from argsim.backend.encoder import Encoder, check_role
from argsim.backend.fingerprint import fingerprint
from argsim.backend.names import CARD, MODELS, manifest_loader_name, read_card, shipped_folder, write_manifest
from argsim.backend.safety import check_model_folder, load_torch_weights, model_files
from argsim.config import RunConfig
from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.towers import TransformerTower, frozen_encoder
from argsim.errors import ModelError
from argsim.io import atomic_path, read_json_as, sha256_file, write_json
from argsim.schemas import History
from argsim.training.curve import OWN_HISTORY, pyplot, save_png

HEADS = "heads.safetensors"
#: the heads file of folders written before safetensors (still read, never written)
LEGACY_HEADS = "heads.pt"
LOADER = "counter-neural"  # a name in argsim.backend.names.ENCODER_LOADERS
#: a two-tower model's tower per role (`argsim.backend.encoder.Encoder.roles`): the point tower encodes queries
TOWER_ROLES = {"query": "point", "document": "candidate"}


def save_model(model: CounterModel, folder: str | Path, info: dict | None = None) -> Path:
    """Write the model folder (see the module docstring); each file atomically.

    Args:
        model: the trained model.
        folder: the folder to write (created).
        info: what config.json records beside the configuration (epoch, validation figure, data).

    Returns:
        `folder`.

    Example:
        >>> save_model(model, "models/counter_neural/bi-encoder")  # doctest: +SKIP
    """
    from safetensors.torch import save_file

    folder, cfg = Path(folder), model.config
    folder.mkdir(parents=True, exist_ok=True)
    for name, tower in (("point_encoder", model.point_tower), ("candidate_encoder", model.cand_tower)):
        if tower is None or (name == "candidate_encoder" and tower is model.point_tower):
            continue
        if cfg.lora:  # only the adapter: the base is the installed one
            tower.save_lora(folder / name)
        else:
            tower.model.save_pretrained(folder / name)
            tower.tokenizer.save_pretrained(folder / name)
    # cloned: a shared head (Unipolar's one retrieval head under two names) is two tensors in the file
    heads = {k: v.detach().cpu().clone().contiguous() for k, v in model.state_dict().items()
             if not k.startswith(("point_tower.", "cand_tower."))}
    with atomic_path(folder / HEADS) as tmp:
        save_file(heads, str(tmp), metadata={"format": "pt"})
    (folder / LEGACY_HEADS).unlink(missing_ok=True)  # an older run's heads would not match these
    write_json(folder / "config.json", {**cfg.as_dict(), "dim": model.dim, "info": info or {}})
    # a card only for heads (`artifact: heads`, or `lora+heads` with LoRA adapters of the towers) over a frozen
    # registry base: the base's weights' SHA-256 to check (a fine-tuned base's towers are in the folder)
    if (cfg.train_encoder and not cfg.lora) or cfg.base_model not in MODELS \
            or MODELS[cfg.base_model].kind != "sentence-transformers":
        (folder / CARD).unlink(missing_ok=True)
    else:
        write_json(folder / CARD, {
            "base": cfg.base_model, "base_sha256": base_sha256(cfg.base_model),
            "artifact": "lora+heads" if cfg.lora else "heads", "weights": HEADS, "kind": cfg.kind,
            "pooling": cfg.pooling, "max_seq_length": cfg.max_seq_length,
            "trainable_parameters": sum(t.numel() for t in heads.values()),
            "weights_sha256": sha256_file(folder / HEADS)})
    write_manifest(folder, LOADER, TOWER_ROLES if cfg.separate_towers else None)
    return folder


def resolve_folder(spec: str | Path) -> Path:
    """The folder of a model given as a folder or as the name of a shipped counter model (`counter-bi-encoder`).

    Example:
        >>> resolve_folder("counter-bi-encoder").name  # doctest: +SKIP
        'counter-bi-encoder'
    """
    shipped = shipped_folder(str(spec))
    return shipped if shipped is not None and manifest_loader_name(shipped) == LOADER else Path(spec)


def heads_file(folder: Path) -> Path | None:
    """heads.safetensors, else an older folder's heads.pt, else None."""
    return next((folder / name for name in (HEADS, LEGACY_HEADS) if (folder / name).is_file()), None)


def is_model_folder(folder: str | Path) -> bool:
    """A trained counter model folder (or a shipped counter model's name)."""
    folder = resolve_folder(folder)
    return (folder / "config.json").is_file() and heads_file(folder) is not None


def trained_folder(folder: str | Path) -> Path:
    """The folder of `folder` (`resolve_folder`), if it holds a trained counter model; ModelError (one line) else."""
    if not is_model_folder(folder := resolve_folder(folder)):
        raise ModelError(f"{folder}: not a trained counter-argument model (needs config.json and {HEADS}; "
                         "train one with `argsim train bipolar`)")
    return folder


def load_model(folder: str | Path) -> CounterModel:
    """Load a folder written by `save_model` (or a shipped counter model by name); a clear ModelError when it is
    not one, or when the card's base is not the installed one.

    Args:
        folder: the model folder, or a shipped model's name (`counter-bi-encoder`).

    Returns:
        The `CounterModel` in eval mode, `folder` set.

    Example:
        >>> load_model("counter-bi-encoder").config.kind  # doctest: +SKIP
        'bi-encoder'
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    folder = trained_folder(folder)
    check_model_folder(folder)
    weights = heads_file(folder)
    with model_files(folder, "counter-argument model"):
        config, dim = read_config(folder)
        source = config.base_model if config.lora else str(folder / "point_encoder")  # LoRA: the adapters' base
        tower = TransformerTower(source, config.pooling, config.max_seq_length) if config.train_encoder else None
        model = CounterModel(config, dim=dim, tower=tower)
        if config.lora:
            model.point_tower.load_lora(folder / "point_encoder")
            if model.cand_tower is not model.point_tower:
                model.cand_tower.load_lora(folder / "candidate_encoder")
        elif config.train_encoder and config.separate_towers:
            model.cand_tower = TransformerTower(str(folder / "candidate_encoder"), config.pooling,
                                                config.max_seq_length)
        try:
            heads = load_torch_weights(weights) if weights.name == LEGACY_HEADS else load_file(str(weights))
        except (SafetensorError, OSError) as exc:
            raise ModelError(f"{weights}: not a safetensors file ({str(exc).splitlines()[0][:160]})") from None
        missing, unexpected = model.load_state_dict(heads, strict=False)
        bad = [m for m in missing if not m.startswith(("point_tower.", "cand_tower."))]
        if bad or unexpected:
            raise ModelError(f"{folder}: {weights.name} does not match config.json ({bad or unexpected})")
    model.eval()
    model.folder = folder
    return model


def read_config(folder: Path) -> tuple[NeuralConfig, int]:
    """config.json's `NeuralConfig` and base embedding width `dim` (a positive integer); with a card.json over a
    frozen base (or LoRA adapters over it), the card's base must be config.json's and the installed one
    (`argsim.backend.adapters.check_base`): ModelError, one line, otherwise. Called inside `model_files`."""
    raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or isinstance(raw.get("dim"), bool) or int(raw["dim"]) < 1:
        raise ValueError("config.json: 'dim' must be a positive integer")
    config = NeuralConfig.from_dict(raw)
    if (folder / CARD).is_file() and not (config.train_encoder and not config.lora):
        card = read_card(folder)
        if card["base"] != config.base_model:
            raise ModelError(f"{folder / CARD}: base '{card['base']}' is not config.json's base_model "
                             f"'{config.base_model}'")
        check_base(folder, card)
    return config, int(raw["dim"])


class RetrievalEncoder(Encoder):
    """Backend encoder of a saved model: retrieval embeddings (base embeddings for cls-only) of one tower.

    A one-tower model encodes every text with its candidate side; a two-tower model (the Bi-encoder) loads unbound,
    `for_role("query")` / `for_role("document")` giving its point / candidate tower (the roles: its manifest, else
    `TOWER_ROLES`). `runtime` (the spec `get_encoder` passes): where the transformer runs, the heads in torch. The
    `argsim_encoder.json` loader (`load_encoder`; `name`: a shipped folder's model name): the model computes in fp32
    whatever `precision` asks (its `precision` and cache key say so)."""

    def __init__(self, folder: str | Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32",
                 name: str | None = None, runtime: dict | None = None) -> None:
        super().__init__()
        from argsim.backend.names import manifest_roles

        folder = Path(folder)
        self.model = load_model(folder)
        self.name, self.device, self.batch_size = name or folder.name, device, batch_size
        self.fingerprint = fingerprint(folder)
        self.roles = (manifest_roles(folder) or dict(TOWER_ROLES)) if self.model.config.separate_towers else None
        self.side: str | None = None if self.roles else "candidate"
        self.identity = f"counter-neural:{self.fingerprint}:{self.side or 'unbound'}-retrieval"
        if runtime is not None:
            self.model.run_config = RunConfig(cache_dir=Path(runtime["cache_root"]), backend=runtime["backend"],
                                              quantize=runtime["quantize"], threads=runtime["threads"])
            self.model.run_calibration = runtime.get("calibration")
            self.backend, self.quantize = runtime["backend"], runtime["quantize"]
            self.runtime = self.backend if self.quantize == "none" else f"{self.backend}:{self.quantize}"
        if not self.model.config.train_encoder:
            self.base_encoder = frozen_encoder(self.model.config.base_model, self.model.config.pooling,
                                               self.model.config.max_seq_length, self.model.run_config,
                                               self.model.run_calibration)
        self._bound: dict[str, RetrievalEncoder] = {}

    def for_role(self, role: str | None) -> Encoder:
        if self.roles is None or role is None:
            return super().for_role(role)
        check_role(role)
        if role not in self._bound:  # the same model and run options, the role's tower and cache key
            bound = copy.copy(self)
            bound.roles, bound.side, bound._cache, bound._bound = None, self.roles[role], None, {}
            bound.identity = f"counter-neural:{self.fingerprint}:{bound.side}-retrieval"
            self._bound[role] = bound
        return self._bound[role]

    def encode(self, texts, *args, **kwargs) -> np.ndarray:
        if self.side is None:
            self.for_role(None)  # two towers and no role: refused, one line
        if self.quantize != "none":  # the transformer's runtime keys these vectors (OpenVINO: its calibration)
            inner = self.base_encoder if not self.model.config.train_encoder else self.model.tower_encoder(self.side)
            getattr(inner, "calibrate", lambda _texts: None)([texts] if isinstance(texts, str) else list(texts))
            self.set_runtime(inner.runtime)
        return super().encode(texts, *args, **kwargs)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self.model.retrieval_numpy(self.model.embed_texts(texts, side=self.side), self.side)


load_encoder = RetrievalEncoder  # the argsim_encoder.json loader (`argsim.backend.names.ENCODER_LOADERS`)


def read_history(folder: str | Path) -> list[dict]:
    """FOLDER/history.json's rows (validated: `argsim.schemas.History`), [] when there is none."""
    path = Path(folder) / OWN_HISTORY
    if not path.is_file():
        return []
    return read_json_as(History, path, what="a learning-curve table {history: [{epoch, val, loss}]}")["history"]


def learning_curves(runs: dict[str, list[dict]], path: str | Path, title: str = "validation accuracy@1/K") -> Path:
    """The learning-curve PNG (matplotlib, Agg) of `history.json` rows: validation accuracy@1/K and training loss
    against epochs, one line per run (label -> history rows with epoch, val, loss, seconds)."""
    fig, (ax, bx) = pyplot().subplots(1, 2, figsize=(11, 4))
    for label, hist in runs.items():
        ep = [h["epoch"] for h in hist]
        ax.plot(ep, [h["val"] for h in hist], marker=".", label=label)
        lossy = [h for h in hist if h.get("loss") is not None]
        bx.plot([h["epoch"] for h in lossy], [h["loss"] for h in lossy], label=label)
    ax.set(xlabel="epoch (0 = untrained)", ylabel="validation accuracy@1/K (epa)", title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    bx.set(xlabel="epoch", ylabel="training loss", title="training loss")
    bx.grid(alpha=0.3)
    fig.tight_layout()
    return save_png(fig, path)
