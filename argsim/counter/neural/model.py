"""`CounterModel`, its parts following `NeuralConfig.kind`: bi-encoder (separate point and candidate towers, or
linear adapters over a frozen encoder), unipolar-ret / unipolar-cls (one shared tower + the retrieval /
classification head), bipolar / bipolar-nodiff (one shared tower + both heads; nodiff: no |u - v|). With
`train_encoder=False` only the heads are trained, on cached base embeddings of the frozen backend encoder; with
`train_encoder=True` the transformer itself is fine-tuned (the paper's setting).
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import torch
from torch import nn

from argsim.backend.encoder import Encoder
from argsim.backend.registry import runtime_spec
from argsim.config import RunConfig
from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.heads import ClassificationHead, RetrievalHead, cls_probability
from argsim.counter.neural.towers import TowerEncoder, TransformerTower, frozen_encoder
from argsim.engine import Engine, encode


class CounterModel(nn.Module):
    """Towers + heads of one neural counter-argument model; `dim` (the base embedding width) is the tower's with
    a trainable encoder, else given or read from the frozen encoder (`argsim.backend.encoder.Encoder.dim`)."""

    def __init__(self, config: NeuralConfig, dim: int | None = None, tower: TransformerTower | None = None) -> None:
        super().__init__()
        self.config = config
        self.folder: Path | None = None  # set by `store.load_model`: the saved folder this model came from
        #: the run's options its base embeddings are computed under when `embed_texts` gets none (the runtime:
        #: `--backend`, `--quantize`; the cache folder); None: the defaults (PyTorch)
        self.run_config: RunConfig | None = None
        #: texts that calibrate OpenVINO int8 under `run_config` (None: its calibration file, else the first texts)
        self.run_calibration: list[str] | None = None
        self._tower_encoders: dict[str, Encoder] = {}
        self.point_tower: TransformerTower | None = None
        self.cand_tower: TransformerTower | None = None
        if config.train_encoder:
            tower = tower or TransformerTower(config.base_model, config.pooling, config.max_seq_length)
            self.point_tower = tower
            self.cand_tower = copy.deepcopy(tower) if config.separate_towers else tower
            if config.lora:  # trainable adapters over the frozen base (a saved model loads its tensors into them)
                for t in {id(t): t for t in (self.point_tower, self.cand_tower)}.values():
                    t.add_lora(config.lora_rank, config.lora_alpha)
            dim = tower.dim
        if dim is None:  # a frozen encoder's width, from the backend
            dim = frozen_encoder(config.base_model, config.pooling, config.max_seq_length).dim
        self.dim = dim
        normalize = config.normalize_retrieval
        self.ret_point = RetrievalHead(dim, normalize=normalize) if config.has_retrieval else None
        self.ret_cand = (RetrievalHead(dim, normalize=normalize) if config.has_retrieval and config.separate_towers
                         else self.ret_point)
        self.cls = ClassificationHead(dim, use_diff=config.use_diff) if config.has_classifier else None

    def train_top_layers(self) -> None:
        """With `config.train_layers` = N > 0: fine-tune only the towers' top N layers (cached lower layers)."""
        if self.config.train_encoder and self.config.train_layers > 0:
            for tower in {id(t): t for t in (self.point_tower, self.cand_tower) if t is not None}.values():
                tower.train_top_layers(self.config.train_layers)

    def head_parameters(self, which: str = "all") -> list[nn.Parameter]:
        """Parameters of the heads: 'all', 'retrieval' or 'classification'."""
        return _unique_parameters({"all": [self.ret_point, self.ret_cand, self.cls],
                                   "retrieval": [self.ret_point, self.ret_cand], "classification": [self.cls]}[which])

    def tower_parameters(self) -> list[nn.Parameter]:
        return _unique_parameters([self.point_tower, self.cand_tower])

    def base(self, texts: list[str], side: str) -> torch.Tensor:
        """Base embeddings with gradients (trainable towers only)."""
        tower = self.point_tower if side == "point" else self.cand_tower
        if tower is None:
            raise RuntimeError("base() needs a trainable tower; a frozen model uses embed_texts()")
        return tower(texts)

    def embed_texts(self, texts: list[str], side: str = "candidate", batch_size: int = 32,
                    engine: Engine | None = None, config: RunConfig | None = None,
                    progress: str | None = None) -> np.ndarray:
        """Base embeddings of texts (no gradients): a frozen encoder's and a saved fine-tuned tower's through the
        backend (disk-cached under `config`) and `argsim.engine.encode` on `engine` (None: this process); a tower
        being trained encodes directly (its weights change every step), with a `progress` bar when given."""
        config = config or self.run_config
        tower = self.point_tower if side == "point" else self.cand_tower
        if tower is not None and self.folder is not None and not self.training:
            enc = self.tower_encoder(side, config)
            if config is not None:
                enc.configure(config.resolved_cache_dir(), config.use_cache, config.quiet)
            return encode(engine, enc, list(texts))
        if tower is not None:
            return tower.encode(list(texts), batch_size=batch_size, progress=progress)
        enc = frozen_encoder(self.config.base_model, self.config.pooling, self.config.max_seq_length, config,
                             self.run_calibration)
        return encode(engine, enc, list(texts))

    def tower_encoder(self, side: str = "candidate", config: RunConfig | None = None) -> Encoder:
        """The backend encoder (batched, disk-cached) of a saved model's fine-tuned tower on `side`, its transformer
        in the runtime of `config` (`--backend`, `--quantize`; None: `run_config`, else PyTorch)."""
        tower = self.point_tower if side == "point" else self.cand_tower
        if tower is None or self.folder is None:
            raise RuntimeError("tower_encoder() needs a fine-tuned model loaded from its folder")
        sub = "point_encoder" if tower is self.point_tower else "candidate_encoder"
        runtime = runtime_spec(config or self.run_config)
        if runtime is not None and runtime["calibration"] is None and self.run_calibration:
            runtime["calibration"] = list(self.run_calibration)
        key = (sub, None if runtime is None else (runtime["backend"], runtime["quantize"], runtime["threads"],
                                                  str(runtime["cache_root"])))
        if key not in self._tower_encoders:
            base = self.config.base_model if self.config.lora else None
            self._tower_encoders[key] = TowerEncoder(tower, self.folder / sub, runtime=runtime, lora_base=base)
        return self._tower_encoders[key]

    def retrieval(self, base: torch.Tensor, side: str) -> torch.Tensor:
        """Retrieval embedding u1 / v1 (for models without a retrieval head: the base embedding)."""
        head = self.ret_point if side == "point" else self.ret_cand
        return base if head is None else head(base)

    def classify(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.cls is None:
            raise RuntimeError(f"a {self.config.kind} model has no classification head")
        return self.cls(u, v)

    @torch.no_grad()
    def retrieval_numpy(self, base: np.ndarray, side: str, batch_size: int = 4096) -> np.ndarray:
        """Retrieval embeddings of precomputed base embeddings, as float32 numpy."""
        self.eval()
        parts = [self.retrieval(torch.from_numpy(np.ascontiguousarray(base[i:i + batch_size])), side).numpy()
                 for i in range(0, len(base), batch_size)]
        return (np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)).astype(np.float32)

    def cls_scores_numpy(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """P(best counter) for query base embedding(s) u against candidates v (`heads.cls_probability`)."""
        if self.cls is None:
            raise RuntimeError(f"a {self.config.kind} model has no classification head")
        return cls_probability(self.cls.params(), np.asarray(u, np.float32), np.asarray(v, np.float32))


def _unique_parameters(modules: list) -> list[nn.Parameter]:
    """Parameters of the given modules (None skipped), each once even when modules share weights."""
    return list({id(p): p for module in modules if module is not None for p in module.parameters()}.values())
