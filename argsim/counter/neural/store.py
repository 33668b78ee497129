"""Saving and loading trained models: a folder with config.json, heads.pt and (if fine-tuned) the towers.

The folder also carries `argsim_encoder.json`, so `argsim.backend.get_encoder(folder)` (and every command that
takes `--model`) gives the model's candidate-side retrieval embeddings, disk-cached by the backend.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch

from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.safety import check_model_folder, load_torch_weights, model_files
from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.towers import TransformerTower, frozen_encoder
from argsim.errors import ModelError
from argsim.io import write_json

MANIFEST = {"loader": "counter-neural"}  # a name in argsim.backend.registry.ENCODER_LOADERS


def _head_state(model: CounterModel) -> dict[str, torch.Tensor]:
    return {k: v for k, v in model.state_dict().items() if not k.startswith(("point_tower.", "cand_tower."))}


def save_model(model: CounterModel, folder: str | Path, info: dict | None = None) -> Path:
    """Write the model folder atomically enough: heads to a temporary file first, then renamed."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if model.point_tower is not None:
        for name, tower in (("point_encoder", model.point_tower), ("candidate_encoder", model.cand_tower)):
            if name == "candidate_encoder" and tower is model.point_tower:
                continue
            tower.model.save_pretrained(folder / name)
            tower.tokenizer.save_pretrained(folder / name)
    tmp = folder / "heads.pt.tmp"
    torch.save(_head_state(model), tmp)
    os.replace(tmp, folder / "heads.pt")
    write_json(folder / "config.json", {**model.config.as_dict(), "dim": model.dim, "info": info or {}})
    write_json(folder / "argsim_encoder.json", MANIFEST)
    return folder


def is_model_folder(folder: str | Path) -> bool:
    folder = Path(folder)
    return (folder / "config.json").is_file() and (folder / "heads.pt").is_file()


def load_model(folder: str | Path) -> CounterModel:
    """Load a folder written by `save_model`; a clear ModelError when it is not one."""
    folder = Path(folder)
    if not is_model_folder(folder):
        raise ModelError(f"{folder}: not a trained counter-argument model (needs config.json and heads.pt; "
                         "train one with `argsim train bipolar`)")
    check_model_folder(folder)
    with model_files(folder, "counter-argument model"):
        raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        config = NeuralConfig.from_dict(raw)
        tower = None
        if config.train_encoder:
            tower = TransformerTower(str(folder / "point_encoder"), config.pooling, config.max_seq_length)
        model = CounterModel(config, dim=int(raw["dim"]), tower=tower)
        if config.train_encoder and config.separate_towers:
            model.cand_tower = TransformerTower(str(folder / "candidate_encoder"), config.pooling,
                                                config.max_seq_length)
        state = load_torch_weights(folder / "heads.pt")
        missing, unexpected = model.load_state_dict(state, strict=False)
        bad = [m for m in missing if not m.startswith(("point_tower.", "cand_tower."))]
        if bad or unexpected:
            raise ModelError(f"{folder}: heads.pt does not match config.json ({bad or unexpected})")
    model.eval()
    model.folder = folder
    return model


class RetrievalEncoder(Encoder):
    """Backend encoder of a saved model: candidate-side retrieval embeddings (base embeddings for cls-only)."""

    def __init__(self, folder: Path, device: str = "cpu", batch_size: int = 64) -> None:
        super().__init__()
        self.model = load_model(folder)
        self.name, self.device, self.batch_size = folder.name, device, batch_size
        self.identity = f"counter-neural:{fingerprint(folder)}:candidate-retrieval"
        if not self.model.config.train_encoder:
            self.base_encoder = frozen_encoder(self.model.config.base_model, self.model.config.pooling,
                                               self.model.config.max_seq_length)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        base = self.model.embed_texts(texts, side="candidate")
        return self.model.retrieval_numpy(base, "candidate")


def load_encoder(folder: str | Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32") -> Encoder:
    """The `argsim_encoder.json` loader. The model computes in fp32 whatever `precision` asks (its `precision`
    says so, and its cache key stays the fp32 one)."""
    return RetrievalEncoder(Path(folder), device=device, batch_size=batch_size)
