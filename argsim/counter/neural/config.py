"""Configuration of the neural counter-argument models (one dataclass, saved as `config.json`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from argsim.errors import ArgsimError

#: model kinds: which towers and heads a model has
KINDS = ("bipolar", "bipolar-nodiff", "bi-encoder", "unipolar-ret", "unipolar-cls", "cross-encoder")
#: base-embedding poolings: `mean-norm` is what all-MiniLM-L6-v2 / all-mpnet-base-v2 were trained with
POOLINGS = ("mean-norm", "mean", "cls")
SAMPLINGS = ("random", "hard", "increasing")


@dataclass
class NeuralConfig:
    """Architecture and training options of one model (paper defaults in the comments)."""

    kind: str = "bipolar"
    base_model: str = "minilm"          # paper: bert-base-uncased (not available offline)
    pooling: str = "mean-norm"          # paper: [CLS]
    train_encoder: bool = False         # paper: True (200 epochs on a V100); CPU default: frozen encoder
    train_layers: int = 0               # with train_encoder: 0 = every layer (paper), N = only the top N
    max_seq_length: int = 256
    normalize_retrieval: bool = True    # L2-normalise retrieval embeddings (paper: raw dot product)
    use_diff: bool = True               # |u - v| in the classification head (False = ablation)
    # training
    epochs: int = 40                    # paper: 200
    lr: float = 1e-3                    # paper: 3e-6 (full BERT); heads on a frozen encoder need more
    cls_lr: float | None = None         # learning rate of the classification head (None = lr)
    encoder_lr: float = 2e-5            # learning rate of the transformer when train_encoder
    batch_size: int = 32                # paper: 4
    margin: float = 1.0                 # triplet margin, Euclidean distance (paper: 1.0, p = 2)
    sampling: str = "increasing"        # paper: increasing (Bi-encoder), random (the others)
    hard_rate: float = 0.02             # paper: increase_rate 0.02
    hard_pool: int = 1                  # pick the negative among the n nearest to the positive
    patience: int = 10                  # early stopping on validation accuracy (epochs without gain)
    k_val: int = 30                     # validation metric: accuracy@1 after reranking the top k
    seed: int = 13

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ArgsimError(f"unknown model kind '{self.kind}': choose one of {', '.join(KINDS)}")
        if self.pooling not in POOLINGS:
            raise ArgsimError(f"unknown pooling '{self.pooling}': choose one of {', '.join(POOLINGS)}")
        if self.sampling not in SAMPLINGS:
            raise ArgsimError(f"unknown sampling '{self.sampling}': choose one of {', '.join(SAMPLINGS)}")
        if self.kind == "bipolar-nodiff":
            self.use_diff = False

    @property
    def has_retrieval(self) -> bool:
        return self.kind in ("bipolar", "bipolar-nodiff", "bi-encoder", "unipolar-ret")

    @property
    def has_classifier(self) -> bool:
        return self.kind in ("bipolar", "bipolar-nodiff", "unipolar-cls")

    @property
    def separate_towers(self) -> bool:
        """Bi-encoder: the point and the candidate have their own encoder (and adapter)."""
        return self.kind == "bi-encoder"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NeuralConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def hard_probability(epoch: int, rate: float) -> float:
    """Probability of a hard negative in `epoch` (1-based): min(epoch * rate, 1) (appendix B.2)."""
    return float(min(max(epoch, 0) * rate, 1.0))
