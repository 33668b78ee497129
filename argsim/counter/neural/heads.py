"""The two heads of the Bipolar-encoder (section 5.1) and the joint loss (section 5.2).

The classification head is trained as a torch module (`ClassificationHead`) and scored everywhere by
`cls_probability`, numpy on a snapshot of its weights, so that one query's rerank costs no torch dispatch
(section 6.4's latency).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class RetrievalHead(nn.Module):
    """linear(u) -> retrieval embedding; f_ret(p, c) = dot(u1, v1). Initialised to the identity, so the untrained
    head ranks exactly as the starting model's cosine: training starts from a known baseline, never below it."""

    def __init__(self, dim: int, normalize: bool = True) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.normalize = normalize
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(dim))
            self.linear.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return F.normalize(y, dim=-1) if self.normalize else y


class ClassificationHead(nn.Module):
    """softmax(linear(layer-norm(concat(u, v, |u - v|)))); `use_diff=False` drops |u - v| (the ablation)."""

    def __init__(self, dim: int, use_diff: bool = True) -> None:
        super().__init__()
        self.use_diff = use_diff
        width = dim * (3 if use_diff else 2)
        self.norm = nn.LayerNorm(width)
        self.linear = nn.Linear(width, 2)

    def features(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        u, v = torch.broadcast_tensors(u, v)
        parts = [u, v, (u - v).abs()] if self.use_diff else [u, v]
        return self.norm(torch.cat(parts, dim=-1))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Logits (..., 2); class 1 = "v is the best counter of u"."""
        return self.linear(self.features(u, v))

    def params(self) -> ClsParams:
        """A numpy snapshot of the weights for `cls_probability`."""
        def numpy(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().numpy().copy()

        return ClsParams(gamma=numpy(self.norm.weight), beta=numpy(self.norm.bias), eps=float(self.norm.eps),
                         weight=numpy(self.linear.weight).T.copy(), bias=numpy(self.linear.bias),
                         use_diff=self.use_diff)


class ClsParams(NamedTuple):
    """The classification head's weights: layer norm (gamma, beta, eps), linear (weight (width, 2), bias (2,))."""

    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    weight: np.ndarray
    bias: np.ndarray
    use_diff: bool


def cls_probability(params: ClsParams, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """P(v is the best counter of u) = softmax(linear(layer-norm(concat(u, v, |u - v|))))[1] for base embeddings
    u (..., d) and v (..., d) broadcast against each other (one query (d,) against candidates (k, d), or batches
    (b, 1, d) against (b, k, d)). Computed as 1 / (1 + exp(l0 - l1)), the two-class softmax."""
    u, v = np.broadcast_arrays(np.asarray(u), np.asarray(v))
    x = np.concatenate([u, v, np.abs(u - v)] if params.use_diff else [u, v], axis=-1)
    x = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + params.eps)
    logits = (x * params.gamma + params.beta) @ params.weight + params.bias
    return 1.0 / (1.0 + np.exp(logits[..., 0] - logits[..., 1]))


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                 margin: float = 1.0) -> torch.Tensor:
    """max(d(a, p) - d(a, n) + margin, 0), Euclidean distance (torch's TripletMarginLoss, p = 2)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin=margin, p=2)


def classification_loss(logits_pos: torch.Tensor, logits_neg: torch.Tensor) -> torch.Tensor:
    """CE(p, c+) + CE(p, c-): the positive pair has label 1, the negative pair label 0."""
    return (F.cross_entropy(logits_pos, torch.ones_like(logits_pos[:, 0], dtype=torch.long))
            + F.cross_entropy(logits_neg, torch.zeros_like(logits_neg[:, 0], dtype=torch.long)))

