"""The settings of Matching The Statements (Phan et al. 2021): one dataclass, saved with the model.

Kept apart from the network (`argsim.kpm.mts.network`) so that reading the settings (the CLI builds
`argsim train mts`'s options from these fields, see `argsim.options`) does not import torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from argsim.options import setting

VARIANTS = ("mts", "qa", "simakp")
CONFIG_FILE = "mts_config.json"
#: field names of older saved configs -> today's
OLD_NAMES = {"statement_max_len": "max_seq_length", "topic_max_len": "topic_max_seq_length"}


@dataclass
class MTSConfig:
    """Architecture, optimisation and loss settings of an MTS model (the paper's where it gives them).

    Example:
        >>> MTSConfig().pooling, MTSConfig(variant="qa").variant
        ('cls-last4', 'qa')
    """

    model: str = setting("minilm", "Backbone: minilm, mpnet or a transformers folder.", model=True)
    variant: Literal["mts", "qa", "simakp"] = setting(
        "mts", "mts (the paper's model), qa ('topic [SEP] statement' inputs, section 5.4) or simakp (pair-wise "
        "contrastive baseline, section 5.4).")
    pooling: Literal["cls-last4", "cls", "mean"] = setting("cls-last4", "cls-last4 (paper), cls or mean.")
    stance_dim: int = setting(32, "N: stance embedding size.", min=1)
    out_dim: int = setting(256, "D: final embedding size (with --identity-init: the backbone's feature size).", min=1)
    dropout: float = setting(0.1, "Dropout before the projection.", min=0, max=0.99)
    max_seq_length: int = setting(50, "Token limit of a statement (argument or key point).", min=1)
    topic_max_seq_length: int = setting(30, "Token limit of a topic.", min=1)
    # optimisation
    epochs: int = setting(2, "Epochs (each = one batch per key point).", min=1)
    lr: float = setting(3e-5, "Learning rate of the transformer (linear decay after warm-up).", min=0)
    head_lr: float = setting(1e-3, "Learning rate of the stance and projection layers.", min=0)
    warmup_ratio: float = setting(0.05, "Share of the steps spent warming up linearly.", min=0, max=1)
    weight_decay: float = setting(0.01, "AdamW weight decay.", min=0)
    max_pos: int = setting(30, "Matching arguments per key-point batch.", min=1)
    max_neg: int = setting(90, "Non-matching (but matched elsewhere) arguments per batch.", min=0)
    max_unmatched: int = setting(15, "Arguments matching no key point per batch (own clusters).", min=0)
    pair_batch_size: int = setting(32, "Pairs per batch for --variant simakp.", min=1)
    freeze_layers: int = setting(0, "Freeze embeddings + the first N transformer layers (CPU speed).", min=0)
    identity_init: bool = setting(False, "Initialise the projection to pass the statement's own embedding "
                                  "through (topic/stance blocks zero), so training starts from the zero-shot "
                                  "encoder; use with --pooling mean for sentence encoders.")
    frozen_backbone: bool = setting(False, "Train only the stance and projection layers on the frozen backbone's "
                                    "features (encoded once through the backend cache).")
    train_layers: int = setting(0, "Train only the top N transformer layers, caching the frozen lower layers' "
                                "states once per text (BERT-type backbones; ~3x faster on CPU). 0 = fine-tune "
                                "everything (the paper).", min=0)
    max_batches: int = setting(0, "Batches per epoch (0 = all): for quick runs.", min=0)
    # loss
    tuplet_margin_deg: float = setting(5.73, "Tuplet margin beta IN DEGREES (pytorch-metric-learning converts to "
                                       "radians; 5.73 deg = 0.1 rad).", min=0)
    tuplet_scale: float = setting(64.0, "Tuplet scale s.", min=0)
    ipv_weight: float = setting(0.5, "Weight of the intra-pair variance loss.", min=0)
    miner_epsilon: float = setting(0.2, "Multi-similarity miner epsilon (cosine).", min=0)
    contrastive_pos_margin: float = setting(1.0, "--variant simakp: positive margin of the contrastive loss.")
    contrastive_neg_margin: float = setting(0.5, "--variant simakp: negative margin of the contrastive loss.")
    seed: int = setting(13, "Random seed (the global --seed).", cli=False)

    def save(self, folder: Path) -> None:
        """Write the settings as `mts_config.json` under `folder`."""
        (folder / CONFIG_FILE).write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> MTSConfig:
        """The settings saved under `folder` (unknown keys ignored, missing ones at their defaults; the token limits'
        older names, `statement_max_len` / `topic_max_len`, read as `max_seq_length` / `topic_max_seq_length`)."""
        data = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        for old, new in OLD_NAMES.items():
            if old in data:
                data.setdefault(new, data.pop(old))
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
