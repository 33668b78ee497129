"""Pooling of a transformer's token states into one vector: the one mean pooling (`mean_pool`) and the choices
(`POOLINGS`) of every encoder, exported ones included."""

from __future__ import annotations

POOLINGS = ("model", "mean", "cls", "cls-last4")


def pool(model_output, attention_mask, pooling: str):
    """Pool a transformers output: `mean` (mask-aware), `cls`, or `cls-last4`."""
    import torch

    if pooling == "cls":
        return model_output.last_hidden_state[:, 0]
    if pooling == "cls-last4":
        hidden = model_output.hidden_states
        if hidden is None or len(hidden) < 5:
            raise ValueError("cls-last4 needs a model with at least four layers and output_hidden_states")
        return torch.cat([h[:, 0] for h in hidden[-4:]], dim=-1)
    return mean_pool(model_output.last_hidden_state, attention_mask)


def mean_pool(hidden, attention_mask):
    """Mask-aware mean of token states (batch, tokens, dim) over the tokens the mask (batch, tokens) keeps."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
