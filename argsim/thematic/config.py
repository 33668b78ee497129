"""The settings of `argsim train thematic`: one dataclass for both networks (BiLSTM and MiniLM).

Kept apart from the trainers so that reading the settings (the CLI builds the command's options from these
fields, see `argsim.options`) does not import torch. The defaults are the recommended recipe (`argsim models
build thematic-bilstm`: the paper's BiLSTM, Adam 1e-3, one epoch); `thematic-minilm` is a preset over the same
fields (`arch="minilm"`, batch 16, lr 2e-5, margin 0.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from argsim.options import setting


@dataclass
class ThematicTrainConfig:
    """Settings of the thematic triplet networks: `arch` picks the network; the BiLSTM's and MiniLM's own
    fields are ignored by the other one.

    Example:
        >>> ThematicTrainConfig().lr, ThematicTrainConfig(arch="minilm", lr=2e-5, batch_size=16).arch
        (0.001, 'minilm')
    """

    arch: Literal["bilstm", "minilm"] = setting("bilstm", "bilstm (the paper's network) or minilm (fine-tune "
                                                "--model with sentence-transformers' TripletLoss).")
    hidden: int = setting(300, "BiLSTM hidden size per direction.", min=1)
    attention: int = setting(200, "BiLSTM attention size.", min=1)
    dropout: float = setting(0.2, "BiLSTM dropout (the paper's '0.8' read as keep probability).", min=0, max=0.99)
    word_vectors: str = setting("glove50", "BiLSTM word vectors: glove50, a word2vec file, or a static model "
                                "folder (argsim distill).")
    model: str = setting("minilm", "--arch minilm: the sentence-transformers model to fine-tune (name, folder or "
                         "Hugging Face id).")
    margin: float = setting(0.3, "--arch minilm: TripletLoss margin (Euclidean, unit vectors; 0.3 beat 1.0 on the "
                            "test triplets).", min=0)
    max_seq_length: int = setting(64, "--arch minilm: token limit per sentence.", min=1)
    lr: float = setting(1e-3, "Adam learning rate (the paper: 1e-3 for the BiLSTM; use 2e-5 for MiniLM).", min=0)
    batch_size: int = setting(64, "Triplets per step (MiniLM: use 16).", min=1)
    epochs: int = setting(1, "Passes over the (sub-sampled) triplets.", min=1)
    max_triplets: int | None = setting(None, "Sub-sample this many training triplets (seeded).", min=1)
    eval_every: int = setting(0, "Score a sample of the --dev triplets every N optimizer steps too and keep the "
                              "best-scoring model (0: the BiLSTM at epoch ends only; MiniLM keeps the last).",
                              min=0)
    lora_rank: int = setting(0, "--arch minilm: train a LoRA adapter of this rank instead of the weights (OUT then "
                             "holds only the adapter, loaded over the installed base; see docs/models.md).", min=0)
    lora_alpha: float = setting(32.0, "--lora-rank: the scale numerator (the update is multiplied by alpha / rank).",
                                min=0)
    dev_sample: int = setting(2000, "--dev: dev triplets sampled (seeded) to choose the saved model on.", min=1)
    threads: int | None = setting(1, "Torch CPU threads when the global --threads is not given (0 = torch "
                                  "default); 1 is fastest when the other cores are busy.", min=0)
    seed: int = setting(13, "Random seed (the global --seed).", cli=False)
    max_minutes: float | None = setting(None, "Time budget when no Budget is given (the CLI's --max-minutes).",
                                        cli=False)
    checkpoint_every: int = setting(200, "Checkpoint interval when no Budget is given (the CLI's "
                                    "--checkpoint-every).", cli=False)
