"""CPU-friendly partial fine-tuning of a BERT-type transformer: only the top N layers are trained.

The input of the first trainable layer (and the frozen [CLS] vectors that `cls-last4` needs) is computed once
per text without gradients and cached (fp16); each training step then runs only the top N layers. With
N = 2 of MiniLM's 6 layers a step costs about a third of full fine-tuning, and repeated texts (an argument
appears in many pairs / batches) are never re-encoded by the frozen layers. The pooled features equal those
of the full model (up to fp16 rounding of the cached states), so inference uses the ordinary forward pass.
"""

from __future__ import annotations

import torch
from torch import nn

from argsim.backend.pooling import mean_pool


class TopLayerTrainer:
    """Pooled features (mean, cls or cls-last4) with gradients through the top `n_top` layers only."""

    def __init__(self, backbone: nn.Module, tokenizer, n_top: int) -> None:
        layers = getattr(getattr(backbone, "encoder", None), "layer", None)
        if layers is None or backbone.config.model_type != "bert":
            raise ValueError("training only the top layers needs a BERT-type backbone (e.g. minilm)")
        self.backbone, self.tokenizer = backbone, tokenizer
        self.n_layers = len(layers)
        self.n_top = max(1, min(n_top, self.n_layers))
        backbone.embeddings.requires_grad_(False)
        for layer in layers[: self.n_layers - self.n_top]:
            layer.requires_grad_(False)
        self.cache: dict[tuple[str, int], tuple[torch.Tensor, torch.Tensor]] = {}

    @property
    def device(self) -> torch.device:
        return next(self.backbone.parameters()).device

    def _fill(self, texts: list[str], max_len: int) -> None:
        if not (missing := [t for t in dict.fromkeys(texts) if (t, max_len) not in self.cache]):
            return
        was_training = self.backbone.training
        self.backbone.eval()
        first_top = self.n_layers - self.n_top
        frozen_last4 = range(max(self.n_layers - 3, 0), first_top + 1)  # hidden_states indices
        with torch.no_grad():
            for start in range(0, len(missing), 64):
                chunk = missing[start:start + 64]
                batch = self.tokenizer(chunk, padding=True, truncation=True, max_length=max_len,
                                       return_tensors="pt").to(self.device)
                hs = self.backbone(**batch, output_hidden_states=True).hidden_states
                lengths = batch["attention_mask"].sum(dim=1).tolist()
                for j, text in enumerate(chunk):
                    cls = (torch.stack([hs[i][j, 0] for i in frozen_last4]) if len(frozen_last4)
                           else torch.zeros(0, hs[0].shape[-1]))
                    self.cache[(text, max_len)] = (hs[first_top][j, :lengths[j]].half().cpu(), cls.cpu())
        self.backbone.train(was_training)

    def features(self, texts: list[str], max_len: int, pooling: str) -> torch.Tensor:
        from transformers.masking_utils import create_bidirectional_mask

        self._fill(texts, max_len)
        states = [self.cache[(t, max_len)] for t in texts]
        longest = max(s[0].shape[0] for s in states)
        hidden = torch.zeros(len(texts), longest, states[0][0].shape[1], device=self.device)
        mask = torch.zeros(len(texts), longest, dtype=torch.long, device=self.device)
        for j, (h, _) in enumerate(states):
            hidden[j, :h.shape[0]] = h.float()
            mask[j, :h.shape[0]] = 1
        mask4d = create_bidirectional_mask(config=self.backbone.config, inputs_embeds=hidden, attention_mask=mask)
        cls_out = []
        for layer in self.backbone.encoder.layer[self.n_layers - self.n_top:]:
            hidden = layer(hidden, mask4d)
            cls_out.append(hidden[:, 0])
        if pooling == "cls":
            return cls_out[-1]
        if pooling == "mean":
            return mean_pool(hidden, mask)
        if pooling != "cls-last4":
            raise ValueError(f"unknown pooling {pooling}")
        frozen = torch.stack([s[1] for s in states]).to(self.device)
        parts = [frozen[:, i] for i in range(frozen.shape[1])] + cls_out
        return torch.cat(parts[-4:], dim=-1)
