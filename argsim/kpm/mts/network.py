"""The MTS network (Phan et al. 2021, section 4) and its loss, on a shared transformer backbone.

statement, topic -> transformer -> [CLS] of the last four layers (cls-last4), stance (+1/-1) -> linear
(no activation) -> N dims; e = Linear([h_stance; h_topic; h_statement]) in D dims; cosine at inference.
The QA variant encodes "topic [SEP] statement" as one sequence instead ([h_stance; h_pair]).
Loss: pytorch-metric-learning TupletMarginLoss (margin in DEGREES) + w * IntraPairVarianceLoss on the pairs
chosen by MultiSimilarityMiner, all with cosine similarity.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from argsim.backend.pooling import pool
from argsim.kpm.mts.config import MTSConfig

HEAD_FILE = "mts_head.pt"


class MTSNet(nn.Module):
    """Shared transformer + stance layer + context-integration linear layer."""

    def __init__(self, tokenizer, backbone, cfg: MTSConfig) -> None:
        super().__init__()
        self.tokenizer, self.backbone, self.cfg = tokenizer, backbone, cfg
        feat = backbone.config.hidden_size * (4 if cfg.pooling == "cls-last4" else 1)
        texts = 1 if cfg.variant == "qa" else 2
        self.stance = nn.Linear(1, cfg.stance_dim)
        self.dropout = nn.Dropout(cfg.dropout)
        self.proj = nn.Linear(cfg.stance_dim + texts * feat, cfg.out_dim)
        if cfg.identity_init:  # start from the backbone's own sentence embedding: the statement block of the
            # projection is the identity, stance and topic blocks zero (they are learned from there)
            if cfg.out_dim != feat:
                raise ValueError(f"identity init needs out_dim = feature size ({feat}), not {cfg.out_dim}")
            with torch.no_grad():
                self.proj.weight.zero_()
                self.proj.bias.zero_()
                self.proj.weight[:, -feat:] = torch.eye(feat)
        self._top = None
        self._frozen = None
        #: the backbone's pooled features from ONNX Runtime / OpenVINO at inference (`MTSEncoder` sets it):
        #: `(first, second, max_len) -> float32 array`; None: the torch backbone
        self.exported = None

    @property
    def device(self) -> torch.device:
        return self.proj.weight.device

    def _features(self, first: list[str], second: list[str] | None, max_len: int) -> torch.Tensor:
        if self.exported is not None and not self.training:
            return torch.from_numpy(self.exported(first, second, max_len)).to(self.device)
        if self._top is not None and self.training and second is None:
            return self._top.features(first, max_len, self.cfg.pooling)
        if self._frozen is not None and self.training and second is None:
            vecs = self._frozen(max_len).encode(first, show_progress=False)
            return torch.from_numpy(vecs).to(self.device)
        batch = self.tokenizer(first, second, padding=True, truncation=True, max_length=max_len,
                               return_tensors="pt").to(self.device)
        out = self.backbone(**batch, output_hidden_states=self.cfg.pooling == "cls-last4")
        return pool(out, batch["attention_mask"], self.cfg.pooling)

    def forward(self, texts: list[str], topics: list[str], stances: list[int]) -> torch.Tensor:
        """Embeddings (len(texts), out_dim) of statements in their context."""
        s = torch.tensor(stances, dtype=next(self.stance.parameters()).dtype, device=self.device).unsqueeze(1)
        h_stance = self.stance(s)
        if self.cfg.variant == "qa":
            h = self._features(list(topics), list(texts), self.cfg.topic_max_seq_length + self.cfg.max_seq_length)
            v = torch.cat([h_stance, h], dim=1)
        else:
            uniq = list(dict.fromkeys(topics))
            h_topics = self._features(uniq, None, self.cfg.topic_max_seq_length)
            index = torch.tensor([uniq.index(t) for t in topics], device=self.device)
            h_text = self._features(list(texts), None, self.cfg.max_seq_length)
            v = torch.cat([h_stance, h_topics[index], h_text], dim=1)
        return self.proj(self.dropout(v))

    def freeze_lower_layers(self, n: int) -> None:
        """Freeze the embeddings and the first n transformer layers (cheaper CPU training)."""
        if n > 0:
            for module in (self.backbone.embeddings, *self.backbone.encoder.layer[:n]):
                module.requires_grad_(False)

    def freeze_backbone(self) -> None:
        """Train only the stance and projection layers; the backbone's pooled features come from the
        backend encoder (same weights, same pooling), so they are computed once and cached on disk."""
        from argsim.backend import get_encoder

        self.backbone.requires_grad_(False)
        model = str(self.cfg.model)
        self._frozen = lambda max_len: get_encoder(model, pooling=self.cfg.pooling, max_seq_length=max_len,
                                                   device=str(self.device))

    def enable_top_layer_training(self, n: int) -> None:
        """Train only the top `n` transformer layers on cached lower-layer states (see argsim.backend.partial)."""
        from argsim.backend.partial import TopLayerTrainer

        self._top = TopLayerTrainer(self.backbone, self.tokenizer, n)

    def save(self, folder: Path) -> None:
        """Write the backbone as a transformers folder, the head as a state dict and the settings under `folder`."""
        folder.mkdir(parents=True, exist_ok=True)
        self.backbone.save_pretrained(str(folder / "backbone"))
        self.tokenizer.save_pretrained(str(folder / "backbone"))
        torch.save({"stance": self.stance.state_dict(), "proj": self.proj.state_dict()}, folder / HEAD_FILE)
        self.cfg.save(folder)


def build_net(cfg: MTSConfig) -> MTSNet:
    """A fresh network on the backbone `cfg.model` (registry name or folder)."""
    from argsim.backend import load_transformer

    return MTSNet(*load_transformer(cfg.model), cfg)


def load_net(folder: str | Path, device: str = "cpu", backbone: bool = True) -> MTSNet:
    """A trained network saved by `MTSNet.save`; `backbone=False`: its stance and projection layers only (the
    backbone's weights are not read: its features come from an ONNX Runtime / OpenVINO export, `MTSNet.exported`)."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from argsim.backend.safety import HF_LOAD, check_model_folder, load_torch_weights, model_files

    folder = Path(folder)
    with model_files(folder, "MTS model"):
        cfg = MTSConfig.load(folder)
        check_model_folder(folder / "backbone")
        tokenizer = AutoTokenizer.from_pretrained(str(folder / "backbone"), **HF_LOAD)
        if backbone:
            model = AutoModel.from_pretrained(str(folder / "backbone"), use_safetensors=True, **HF_LOAD)
        else:  # the architecture without weights (meta tensors), dropped once the heads are built
            with torch.device("meta"):
                model = AutoModel.from_config(AutoConfig.from_pretrained(str(folder / "backbone"), **HF_LOAD))
        net = MTSNet(tokenizer, model, cfg)
        if not backbone:
            net.backbone = None
        head = load_torch_weights(folder / HEAD_FILE)
        net.stance.load_state_dict(head["stance"])
        net.proj.load_state_dict(head["proj"])
    return net.to(device).eval()


class ClusterLoss(nn.Module):
    """Tuplet margin + weighted intra-pair variance on multi-similarity-mined pairs (MTS section 4.5)."""

    def __init__(self, margin_deg: float = 5.73, scale: float = 64.0, ipv_weight: float = 0.5,
                 miner_epsilon: float = 0.2, mine: bool = True) -> None:
        super().__init__()
        from pytorch_metric_learning import distances, losses, miners

        cos = distances.CosineSimilarity()
        self.tuplet = losses.TupletMarginLoss(margin=margin_deg, scale=scale, distance=cos)
        self.ipv = losses.IntraPairVarianceLoss(distance=cos)
        self.loss = losses.MultipleLosses([self.tuplet, self.ipv], weights=[1.0, ipv_weight])
        self.miner = miners.MultiSimilarityMiner(epsilon=miner_epsilon, distance=cos) if mine else None

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.loss(embeddings, labels, self.miner(embeddings, labels) if self.miner is not None else None)


class PairContrastiveLoss(nn.Module):
    """SimAKP: contrastive loss on (argument, key point) pairs, keeping only the hard ones in the batch:
    negatives with cos >= min positive cos - eps, positives with cos <= max negative cos + eps."""

    def __init__(self, pos_margin: float = 1.0, neg_margin: float = 0.5, epsilon: float = 0.2,
                 mine: bool = True) -> None:
        super().__init__()
        from pytorch_metric_learning import distances, losses

        self.loss = losses.ContrastiveLoss(pos_margin=pos_margin, neg_margin=neg_margin,
                                           distance=distances.CosineSimilarity())
        self.epsilon, self.mine = epsilon, mine

    def forward(self, args: torch.Tensor, kps: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        n = len(labels)
        emb = torch.cat([args, kps], dim=0)
        idx = torch.arange(n, device=args.device)
        pos, neg = labels == 1, labels == 0
        if self.mine and pos.any() and neg.any():
            with torch.no_grad():
                sims = nn.functional.cosine_similarity(args, kps)
                hard_neg = neg & (sims >= sims[pos].min() - self.epsilon)
                hard_pos = pos & (sims <= sims[neg].max() + self.epsilon)
            pos, neg = hard_pos, hard_neg
        return self.loss(emb, indices_tuple=(idx[pos], idx[pos] + n, idx[neg], idx[neg] + n))
