"""Configuration of the neural counter-argument models (one dataclass, saved as `config.json`), the marker of a
saved cross-encoder, and the request of a Table 3 evaluation; torch-free."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from argsim.config import SEED
from argsim.errors import ArgsimError
from argsim.options import check_settings, setting

#: a saved cross-encoder's marker file (its training options; `argsim train bipolar --kind cross-encoder`)
CROSS_MARKER = "argsim_cross_encoder.json"


def is_cross_folder(folder: str | Path) -> bool:
    return (Path(folder) / CROSS_MARKER).is_file()


@dataclass(frozen=True)
class Table3Request:
    """What one Table 3 evaluation covers (`argsim.counter.neural.table3`; `argsim eval counter-neural`): the row
    models (`models`: kind -> folder or None; a row runs when its models are given), the counterargs-18 `split` and
    `settings`, the depths `ks` of @1/K, the zero-shot row's `base_model`, settings of the Bipolar-encoder row alone
    (`bipolar_settings`) and the cross-encoder rows' seeded point sample (`cross_limit`; None or 0: every point).

    Example:
        >>> Table3Request({"bipolar": "counter-bipolar"}).ks
        (10, 30, 50)
    """

    models: dict[str, str | None] = field(default_factory=dict)
    split: str = "test"
    settings: tuple[str, ...] = ("epa",)
    ks: tuple[int, ...] = (10, 30, 50)
    base_model: str = "minilm"
    bipolar_settings: tuple[str, ...] = ()
    cross_limit: int | None = 300


@dataclass
class NeuralConfig:
    """Architecture and training options of one model (the paper's values in the help texts).

    The defaults are the recommended recipe's settings for the heads (`argsim models build counter-bi-encoder`:
    lr 1e-4, increasing-hard sampling, up to 200 epochs with early stopping after 20 without gain); each field is
    one option of `argsim train bipolar` (see `argsim.options`).

    Example:
        >>> NeuralConfig().lr, NeuralConfig(kind="bipolar-nodiff").use_diff
        (0.0001, False)
    """

    kind: Literal["bipolar", "bipolar-nodiff", "bi-encoder", "unipolar-ret", "unipolar-cls", "cross-encoder"] = \
        setting("bipolar", "bipolar | bipolar-nodiff | bi-encoder | unipolar-ret | unipolar-cls | cross-encoder")
    base_model: str = setting("minilm", "Starting transformer: minilm, mpnet, a folder or a Hugging Face id (e.g. "
                              "bert-base-uncased; the paper's).", option="--model", aliases=("--base-model",),
                              model=True)
    pooling: Literal["mean-norm", "mean", "cls"] = setting(
        "mean-norm", "mean-norm (the sentence-transformers pipeline) | mean | cls (the paper's [CLS])")
    train_encoder: bool = setting(False, "Fine-tune the transformer (the paper: 200 epochs on a V100) or train the "
                                  "heads on cached embeddings of the frozen encoder (CPU default).",
                                  option="--train-encoder/--frozen-encoder")
    train_layers: int = setting(0, "With --train-encoder: fine-tune only the top N transformer layers on cached "
                                "lower-layer states (CPU; 0 = all layers, the paper).", min=0)
    lora_rank: int = setting(0, "With --train-encoder: train a LoRA adapter of this rank on every layer's "
                             "attention and feed-forward layers instead of the layers themselves; the folder "
                             "keeps only the adapters and the heads (0 = no adapter).", min=0)
    lora_alpha: float = setting(32.0, "LoRA scale numerator (the update is multiplied by alpha / rank).", min=0)
    max_seq_length: int = setting(256, "Tokens per text.", min=1)
    normalize_retrieval: bool = setting(True, "L2-normalise the retrieval embeddings (the paper: raw dot "
                                        "product).")
    use_diff: bool = setting(True, "|u - v| in the classification head (False: the ablation, kind "
                             "bipolar-nodiff).", cli=False)
    # training
    epochs: int = setting(200, "Maximum epochs (the paper: 200).", min=1)
    lr: float = setting(1e-4, "Adam learning rate of the heads (the paper: 3e-6 for everything).", min=0)
    cls_lr: float | None = setting(None, "Adam learning rate of the classification head (default: --lr).", min=0)
    encoder_lr: float = setting(2e-5, "Adam learning rate of the transformer (--train-encoder, cross-encoder).", min=0)
    batch_size: int = setting(32, "Triplets per step (the paper: 4).", min=1)
    margin: float = setting(1.0, "Triplet margin (Euclidean distance; the paper: 1.0, p = 2).", min=0)
    sampling: Literal["random", "hard", "increasing"] = setting(
        "increasing", "random | hard | increasing (hard share min(epoch*rate, 1); the paper: increasing for the "
        "Bi-encoder, random for the others).")
    hard_rate: float = setting(0.02, "increase_rate of increasing-hard sampling (the paper: 0.02).", min=0)
    hard_pool: int = setting(1, "Draw the hard negative among the n nearest to the positive.", min=1)
    patience: int = setting(20, "Early stopping: epochs without a better validation accuracy.", min=1)
    k_val: int = setting(30, "Validation metric: accuracy@1 after reranking the top k.", min=1)
    seed: int = setting(SEED, "Random seed.", cli=False)

    def __post_init__(self) -> None:
        check_settings(self)  # refused as the command line's parser refuses (types, choices, bounds)
        if self.kind == "bipolar-nodiff":
            self.use_diff = False
        if self.lora_rank and not self.train_encoder:
            raise ArgsimError("--lora-rank trains an adapter of the encoder: add --train-encoder")
        if self.lora_rank and self.train_layers:
            raise ArgsimError("--lora-rank adapts every layer: leave --train-layers at 0")
        if self.lora_rank and self.kind == "cross-encoder":
            raise ArgsimError("--lora-rank applies to the bi-encoder, unipolar and bipolar kinds, not cross-encoder")

    @property
    def lora(self) -> bool:
        """The towers are LoRA adapters over the frozen base (`lora_rank` > 0)."""
        return self.train_encoder and self.lora_rank > 0

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
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def hard_probability(epoch: int, rate: float) -> float:
    """Probability of a hard negative in `epoch` (1-based): min(epoch * rate, 1) (appendix B.2)."""
    return float(min(max(epoch, 0) * rate, 1.0))
