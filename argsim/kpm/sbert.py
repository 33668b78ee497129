"""Siamese SBERT / SRoBERTa fine-tuning on labelled (argument, key point) pairs (Mariani & Marinelli).

A shared sentence-transformers encoder (mean or CLS pooling); the loss is either a cosine-similarity regression
towards target 1 for matches and 0.5 for non-matches (the report's best setting), or sentence-transformers'
ContrastiveLoss. The learning rate decays linearly from `lr` to `lr_end` (the report's "(8e-6, 1e-6)"
schedules). The result is a plain sentence-transformers folder: `get_encoder(folder)` and
`SentenceTransformer(folder)` load it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError

LOSSES = ("cosine", "contrastive")
TRAIN_INFO = "argsim_train.json"


@dataclass
class SbertConfig:
    model: str = "minilm"
    loss: str = "cosine"
    positive_target: float = 1.0
    negative_target: float = 0.5
    contrastive_margin: float = 0.5
    pooling: str | None = None  # None = the model's own; 'mean' or 'cls' rebuilds the pooling layer
    epochs: float = 1.0
    batch_size: int = 16
    lr: float = 8e-6
    lr_end: float = 1e-6
    warmup_ratio: float = 0.0
    max_seq_length: int = 64
    seed: int = 13
    max_steps: int = -1


def pair_rows(data: KPMData, cfg: SbertConfig) -> dict[str, list]:
    """Columns (sentence1, sentence2, score|label) from the labelled pairs, in the labels file's order."""
    s1, s2, y = [], [], []
    for (aid, kid), label in data.labels.items():
        s1.append(data.arg_by_id[aid].text)
        s2.append(data.kp_by_id[kid].text)
        if cfg.loss == "cosine":
            y.append(cfg.positive_target if label == 1 else cfg.negative_target)
        else:
            y.append(int(label))
    if not s1:
        raise ArgsimError(f"{data.name}: no labelled pairs to train on")
    return {"sentence1": s1, "sentence2": s2, "label": y}


def _with_pooling(model, pooling: str):  # noqa: ANN001, ANN202
    from sentence_transformers import SentenceTransformer, models

    word = model[0]
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode=pooling)
    return SentenceTransformer(modules=[word, pool], device=model.device)


def train_sbert(train: KPMData, out: str | Path, cfg: SbertConfig, device: str | None = None,
                quiet: bool = False) -> dict:
    """Fine-tune, save a sentence-transformers folder at `out`, return the training info."""
    import datasets
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments, losses

    from argsim.backend import load_sentence_transformer
    from argsim.results import peak_memory_mb
    from argsim.settings import seed_everything

    if cfg.loss not in LOSSES:
        raise ArgsimError(f"unknown loss '{cfg.loss}': choose {' or '.join(LOSSES)}")
    seed_everything(cfg.seed)
    out = Path(out)
    model = load_sentence_transformer(cfg.model, device=device)
    if cfg.pooling:
        model = _with_pooling(model, cfg.pooling)
    model.max_seq_length = cfg.max_seq_length
    ds = datasets.Dataset.from_dict(pair_rows(train, cfg))
    loss = (losses.CosineSimilarityLoss(model) if cfg.loss == "cosine"
            else losses.ContrastiveLoss(model, margin=cfg.contrastive_margin))
    steps_per_epoch = math.ceil(len(ds) / cfg.batch_size)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size, learning_rate=cfg.lr, warmup_ratio=cfg.warmup_ratio,
        lr_scheduler_type="polynomial", lr_scheduler_kwargs={"lr_end": cfg.lr_end, "power": 1.0},
        seed=cfg.seed, data_seed=cfg.seed, save_strategy="no", report_to="none", logging_steps=50,
        disable_tqdm=quiet, use_cpu=(str(model.device) == "cpu"), dataloader_drop_last=False)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=ds, loss=loss)
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    model.save(str(out))
    steps = trainer.state.global_step
    info = {"method": "sbert", "config": asdict(cfg), "train": train.name, "pairs": len(ds), "steps": steps,
            "seconds": round(seconds, 1), "seconds_per_epoch": round(seconds * steps_per_epoch / max(steps, 1), 1),
            "peak_mb": peak_memory_mb(), "device": str(model.device)}
    from argsim.io import write_json

    write_json(out / TRAIN_INFO, info)
    return info
