"""Base encoders ("BERT(p)" of the paper): a trainable transformer tower, or the frozen backend encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from argsim.backend import get_encoder, load_transformer, model_path
from argsim.backend.adapters import load_adapter_tensors, wrap_lora
from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.names import ADAPTER_WEIGHTS
from argsim.backend.partial import TopLayerTrainer
from argsim.backend.pooling import pool
from argsim.backend.runtime import exported_model, pooled_pipeline
from argsim.config import RunConfig
from argsim.errors import ModelError
from argsim.progress import progress_bar
from argsim.vectors import l2_normalize


def frozen_encoder(base_model: str, pooling: str, max_seq_length: int | None = None,
                   config: RunConfig | None = None, calibration: list[str] | None = None) -> Encoder:
    """The backend encoder of a frozen tower's base embeddings, in fp32 as the model's heads (disk-cached; `config`:
    the run's options; `calibration`: texts that calibrate OpenVINO int8, None: `config`'s file, else the first
    texts encoded)."""
    cal = calibration if config is not None and config.backend == "openvino" and config.quantize != "none" else None
    return get_encoder(base_model, pooling=None if pooling == "mean-norm" else pooling, max_seq_length=max_seq_length,
                       config=config, precision="fp32", calibration=cal)  # pooling None: sentence-transformers pipeline


class TransformerTower(nn.Module):
    """A trainable transformer with pooling: texts -> base embeddings u (the paper's BERT(p))."""

    def __init__(self, base_model: str, pooling: str = "mean-norm", max_seq_length: int = 256) -> None:
        super().__init__()
        self.tokenizer, self.model = load_transformer(base_model)
        self.pooling, self.max_seq_length = pooling, max_seq_length
        self.top = None  # a TopLayerTrainer once `train_top_layers` was called

    def train_top_layers(self, n: int) -> None:
        """Fine-tune only the top `n` layers, the lower layers' outputs cached per text (`argsim.backend.partial`)."""
        self.top = TopLayerTrainer(self.model, self.tokenizer, n)

    def add_lora(self, rank: int, alpha: float) -> None:
        """Wrap the transformer in a trainable LoRA adapter (`argsim.backend.adapters.wrap_lora`, the base frozen)."""
        self.model = wrap_lora(self.model, rank, alpha)

    def load_lora(self, folder: Path) -> None:
        """Set the adapter tensors from `folder` (written by `save_lora`) and merge them into the weights."""
        self.set_lora(folder)
        self.model = self.model.merge_and_unload()

    def set_lora(self, folder: Path) -> None:
        """Set this tower's (trainable, unmerged) LoRA adapter from `folder/adapter_model.safetensors` (a run
        continues a saved model's adapters: `warm_start`). ModelError (one line) for tensors of another shape or
        that the adapter has no place for."""
        try:
            load_adapter_tensors([self], folder)  # sets the tensors of `model[0].model`: this tower's transformer
        except RuntimeError as exc:  # torch's size mismatch report spans lines
            raise ModelError(f"{folder / ADAPTER_WEIGHTS}: tensors of another shape than this model's adapter "
                             f"({str(exc).splitlines()[-1].strip()[:160]})") from None

    def save_lora(self, folder: Path) -> None:
        """Write only the adapter (peft's files), never the base nor peft's README (it names this machine's base)."""
        self.model.save_pretrained(str(folder))
        (folder / "README.md").unlink(missing_ok=True)

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    def forward(self, texts: list[str]) -> torch.Tensor:
        if self.top is not None:  # "mean-norm": mean pooling, then normalised
            vec = self.top.features(list(texts), self.max_seq_length, self.pooling.removesuffix("-norm"))
        else:
            batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_seq_length,
                                   return_tensors="pt").to(self.model.device)
            vec = pool(self.model(**batch), batch["attention_mask"], self.pooling.removesuffix("-norm"))
        return F.normalize(vec, dim=-1) if self.pooling == "mean-norm" else vec

    @torch.no_grad()
    def encode(self, texts: list[str], batch_size: int = 32, progress: str | None = None) -> np.ndarray:
        """Embed texts without gradients (longest first, output in input order); `progress`: a progress bar's text."""
        was_training = self.training
        self.eval()
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with progress_bar(len(texts), progress or "", enabled=progress is not None) as bar:
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                out[idx] = self.forward([texts[i] for i in idx]).float().cpu().numpy()
                bar.advance(len(idx))
        self.train(was_training)
        return out


class TowerEncoder(Encoder):
    """A saved fine-tuned tower as a backend encoder, embeddings disk-cached under its folder's fingerprint.

    `runtime` (`argsim.backend.registry.runtime_spec`): the transformer with its pooling is exported once and runs
    there; LoRA adapters (`lora_base`: the base they adapt) are merged into the base's weights first, the export
    keyed by the adapter folder's fingerprint. Vectors are cached apart per runtime.
    """

    def __init__(self, tower: TransformerTower, folder: Path, runtime: dict | None = None,
                 lora_base: str | None = None) -> None:
        super().__init__()
        self.tower, self.name, self.batch_size = tower, folder.name, 32
        self.identity = f"counter-tower:{fingerprint(folder)}:{tower.pooling}:{tower.max_seq_length}"
        self.exported = None
        if runtime is not None:
            pooling = tower.pooling.removesuffix("-norm")
            merged = {} if lora_base is None else {  # the base with the (already merged) adapter of `folder`
                "adapter": folder, "build": lambda: pooled_pipeline(tower.model.eval(), tower.tokenizer, pooling)}
            self.exported = exported_model(folder if lora_base is None else model_path(lora_base), pooling, runtime,
                                           max_length=tower.max_seq_length, **merged)
            self.backend, self.quantize, self.runtime = runtime["backend"], runtime["quantize"], self.exported.runtime

    def calibrate(self, texts: str | list[str]) -> None:
        """OpenVINO int8 not built yet: build it calibrated on `texts` (nothing otherwise)."""
        if self.exported is not None and self.exported.needs_calibration:
            self.exported.prepare([texts] if isinstance(texts, str) else list(texts),
                                  max_length=self.tower.max_seq_length)
            self.set_runtime(self.exported.runtime)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        if self.exported is None:
            return self.tower.encode(texts, batch_size=self.batch_size)
        vecs = self.exported.run(texts, max_length=self.tower.max_seq_length, batch_size=self.batch_size)
        return l2_normalize(vecs) if self.tower.pooling == "mean-norm" else vecs
