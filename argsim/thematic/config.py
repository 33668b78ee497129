"""The settings of `argsim train thematic`: one dataclass for both networks, MiniLM and the paper's BiLSTM (Ein Dor
et al., "Learning Thematic Similarity Metric Using Triplet Networks", ACL 2018), torch-free so that the CLI builds
the command's options from its fields (`argsim.options`) without importing torch. The defaults are the shipped
`thematic` model's recipe (`argsim models build thematic-lora`; the BiLSTM's: `thematic-bilstm`); the settings
whose value differs between the networks default to None and are filled in by `ThematicTrainConfig.resolved`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from argsim.config import SEED
from argsim.errors import ArgsimError, check_choice
from argsim.options import setting

if TYPE_CHECKING:
    from argsim.training import Budget

ARCHES = ("minilm", "bilstm")
#: the settings only the other network reads: given with this one, they are refused (`ThematicTrainConfig.checked`)
FOREIGN = {"minilm": ("hidden", "attention", "dropout", "word_vectors"),
           "bilstm": ("model", "margin", "max_seq_length", "lora_rank", "lora_alpha")}
#: each network's recommended value of the settings that differ between them (a field left at None takes it):
#: MiniLM the shipped `thematic` adapter's run; the BiLSTM the paper's Adam 1e-3, batch 64, no LoRA, and dev scored
#: at epoch ends only
ARCH_DEFAULTS: dict[str, dict[str, Any]] = {
    "minilm": {"lr": 1e-4, "batch_size": 16, "lora_rank": 16, "eval_every": 250},
    "bilstm": {"lr": 1e-3, "batch_size": 64, "lora_rank": 0, "eval_every": 0},
}


def _per_arch(name: str) -> str:
    """'minilm 0.0001, bilstm 0.001': the recommended values of a per-arch field, for its help text."""
    return ", ".join(f"{arch} {ARCH_DEFAULTS[arch][name]:g}" for arch in ARCHES)


@dataclass
class ThematicTrainConfig:
    """Settings of the thematic triplet networks: `arch` picks the network; the BiLSTM's and MiniLM's own
    fields are refused by the other one (`checked`); the per-arch fields left at None are filled in by
    `resolved`. `init` continues a trained LoRA adapter (`argsim.backend.adapters.continue_adapter`), so training
    time adds up.

    Example:
        >>> shipped = ThematicTrainConfig().resolved()
        >>> shipped.arch, shipped.lora_rank, shipped.lr, shipped.margin, shipped.batch_size, shipped.eval_every
        ('minilm', 16, 0.0001, 0.3, 16, 250)
        >>> paper = ThematicTrainConfig(arch="bilstm").resolved()
        >>> paper.lr, paper.batch_size, paper.lora_rank
        (0.001, 64, 0)
        >>> ThematicTrainConfig(init="thematic").resolved().lora_rank is None  # the adapter's rank, once loaded
        True
        >>> ThematicTrainConfig(lr=2e-5, lora_rank=0).resolved().lr  # a value given is kept
        2e-05
    """

    arch: Literal["minilm", "bilstm"] = setting("minilm", "minilm (fine-tune --model with sentence-transformers' "
                                                "TripletLoss; the shipped `thematic`) or bilstm (the paper's network "
                                                "with its own values).")
    hidden: int = setting(300, "BiLSTM hidden size per direction.", min=1)
    attention: int = setting(200, "BiLSTM attention size.", min=1)
    dropout: float = setting(0.2, "BiLSTM dropout (the paper's '0.8' read as keep probability).", min=0, max=0.99)
    word_vectors: str = setting("glove50", "BiLSTM word vectors: glove50, a word2vec file, or a static model "
                                "folder (argsim distill).")
    model: str = setting("minilm", "--arch minilm: the sentence-transformers model to fine-tune (name, folder or "
                         "Hugging Face id).", model=True)
    margin: float = setting(0.3, "--arch minilm: TripletLoss margin (Euclidean, unit vectors; 0.3 beat 1.0 on the "
                            "test triplets).", min=0)
    max_seq_length: int = setting(64, "--arch minilm: token limit per sentence.", min=1)
    lr: float | None = setting(None, f"Learning rate (default per arch: {_per_arch('lr')}; the BiLSTM's is the "
                               "paper's Adam rate).", min=0)
    batch_size: int | None = setting(None, f"Triplets per step (default per arch: {_per_arch('batch_size')}).", min=1)
    epochs: int = setting(1, "Passes over the (sub-sampled) triplets.", min=1)
    max_triplets: int | None = setting(None, "Sub-sample this many training triplets (seeded).", min=1)
    eval_every: int | None = setting(None, "With --dev: also score a dev sample every N optimizer steps and keep "
                                     "the best-scoring model (0: the BiLSTM at epoch ends only, MiniLM keeps the "
                                     f"last; default per arch: {_per_arch('eval_every')}; without --dev nothing "
                                     "is scored). MiniLM: --checkpoint-every must be a multiple of it (0 saves at "
                                     "every evaluation).", min=0)
    lora_rank: int | None = setting(None, "--arch minilm: train a LoRA adapter of this rank instead of the weights "
                                    "(OUT then holds only the adapter, loaded over the installed base; see "
                                    f"docs/models.md); 0: fine-tune every weight (default per arch: "
                                    f"{_per_arch('lora_rank')}).", min=0)
    lora_alpha: float = setting(32.0, "--lora-rank: the scale numerator (the update is multiplied by alpha / rank).",
                                min=0)
    init: str | None = setting(None, "--arch minilm: continue training a LoRA adapter: a shipped model's name "
                               "(thematic, see `argsim models`) or a folder trained with --lora-rank; its base, rank "
                               "and alpha replace --model / --lora-rank / --lora-alpha (a --lora-rank given must be "
                               "the adapter's).")
    dev_sample: int = setting(2000, "--dev: dev triplets sampled (seeded) to choose the saved model on.", min=1)
    threads: int | None = setting(1, "Torch CPU threads when the global --threads is not given (0 = torch "
                                  "default); 1 is fastest when the other cores are busy.", min=0)
    seed: int = setting(SEED, "Random seed (the global --seed).", cli=False)
    max_minutes: float | None = setting(None, "Time budget when no Budget is given (the CLI's --max-minutes).",
                                        cli=False)
    checkpoint_every: int = setting(200, "Checkpoint interval when no Budget is given (the CLI's "
                                    "--checkpoint-every).", cli=False)

    def resolved(self, arch: str | None = None, has_dev: bool = True) -> ThematicTrainConfig:
        """A copy whose per-arch fields left at None hold `arch`'s recommended value (`ARCH_DEFAULTS`).

        Args:
            arch: the network (default: `self.arch`); the copy's `arch` is set to it.
            has_dev: dev triplets are given; without them an `eval_every` left at None is 0 (nothing to score).

        Returns:
            the resolved copy (`self` is not changed).

        Raises:
            ArgsimError: an unknown arch.

        Example:
            >>> ThematicTrainConfig(batch_size=8).resolved("bilstm", has_dev=False).batch_size
            8
        """
        arch = arch or self.arch
        check_choice(arch, "--arch", ARCHES)
        values = {k: v for k, v in ARCH_DEFAULTS[arch].items() if getattr(self, k) is None
                  and not (k == "lora_rank" and self.init)}  # --init: the adapter's rank (None until loaded)
        if not has_dev and self.eval_every is None:
            values["eval_every"] = 0
        return replace(self, arch=arch, **values)

    def checked(self, has_dev: bool, budget: Budget | None = None) -> ThematicTrainConfig:
        """`resolved()` after the checks a run needs before any work.

        Args:
            has_dev: dev triplets are given (`--dev`).
            budget: the run's budget (its `checkpoint_every`; default `Budget()`).

        Returns:
            the resolved copy.

        Raises:
            ArgsimError: an unknown arch; `--eval-every` without dev triplets; with MiniLM, a checkpoint interval
                that is not a multiple of the evaluation interval (`argsim.training.budget.check_cadence`); `init`
                with `--arch bilstm` or `--lora-rank 0`; a setting of the other network (`FOREIGN`).

        Example:
            >>> ThematicTrainConfig().checked(has_dev=False).eval_every
            0
        """
        from argsim.training import Budget
        from argsim.training.budget import check_cadence

        if self.eval_every and not has_dev:
            raise ArgsimError("--eval-every needs --dev (the triplets the best step is chosen on)")
        if self.init and self.arch != "minilm":
            raise ArgsimError(f"--init continues a LoRA adapter over a transformer: it cannot start --arch "
                              f"{self.arch}; drop --init or use --arch minilm")
        if self.init and self.lora_rank == 0:
            raise ArgsimError("--init continues a LoRA adapter: --lora-rank 0 (fine-tune every weight) cannot; "
                              "drop --lora-rank")
        config, plain = self.resolved(has_dev=has_dev), ThematicTrainConfig(arch=self.arch).resolved(has_dev=has_dev)
        if given := [f for f in FOREIGN.get(self.arch, ()) if getattr(config, f) != getattr(plain, f)]:
            raise ArgsimError(f"--{given[0].replace('_', '-')} is a setting of the other network: --arch "
                              f"{self.arch} does not read it; drop it")
        if config.arch == "minilm":
            check_cadence(config.eval_every, budget or Budget())
        return config
