"""Training the political Sentence-BERT with sentence-transformers' trainer and TripletLoss.

Paper settings (defaults): mean pooling, triplet loss (Euclidean distance) with margin 1, batch 16,
Adam lr 2e-5 (weight decay 0), 10% linear warm-up, 3 epochs.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from argsim.errors import ArgsimError
from argsim.io import read_records, write_json

BACKBONES = ("ginza", "minilm")


@dataclass
class TrainConfig:
    backbone: str = "ginza"  # ginza | minilm | a sentence-transformers folder
    epochs: int = 3
    batch_size: int = 16
    lr: float = 2e-5
    warmup_ratio: float = 0.1
    margin: float = 1.0
    distance: str = "euclidean"  # euclidean | cosine (TripletDistanceMetric)
    max_train: int | None = None  # subsample the training triplets (seeded)
    max_dev: int | None = 2000
    update_embeddings: bool = True  # ginza backbone: train the word vectors too
    seed: int = 13


def _load_triplets(path: Path, limit: int | None, seed: int) -> list[dict]:
    import numpy as np

    rows = read_records(path, required=["anchor", "positive", "negative"])
    if limit is not None and len(rows) > limit:
        idx = np.sort(np.random.default_rng(seed).choice(len(rows), size=limit, replace=False))
        rows = [rows[i] for i in idx]
    return [{k: str(r[k]) for k in ("anchor", "positive", "negative")} for r in rows]


def train_minutes_sbert(train_path: Path, dev_path: Path | None, out: Path, config: TrainConfig) -> dict:
    """Train and save a sentence-transformers model under `out`; returns the training log."""
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.evaluation import TripletEvaluator
    from sentence_transformers.losses import TripletDistanceMetric, TripletLoss
    from transformers import TrainerCallback

    from argsim.backend import load_sentence_transformer
    from argsim.minutes import sbert

    torch.manual_seed(config.seed)
    train = _load_triplets(train_path, config.max_train, config.seed)
    dev = _load_triplets(dev_path, config.max_dev, config.seed) if dev_path else []
    if not train:
        raise ArgsimError(f"{train_path}: no training triplets")
    segmented = config.backbone == "ginza"
    if segmented:
        texts = sorted({r[k] for r in train + dev for k in ("anchor", "positive", "negative")})
        seg = dict(zip(texts, sbert.segment(texts), strict=True))
        train = [{k: seg[v] for k, v in r.items()} for r in train]
        dev = [{k: seg[v] for k, v in r.items()} for r in dev]
        model = sbert.build_ginza_model(config.update_embeddings)
    else:
        model = load_sentence_transformer(config.backbone, device="cpu")
    metric = {"euclidean": TripletDistanceMetric.EUCLIDEAN, "cosine": TripletDistanceMetric.COSINE}[config.distance]
    loss = TripletLoss(model, distance_metric=metric, triplet_margin=config.margin)
    evaluator = None
    if dev:
        evaluator = TripletEvaluator([r["anchor"] for r in dev], [r["positive"] for r in dev],
                                     [r["negative"] for r in dev], name="dev", show_progress_bar=False)
    epoch_times: list[float] = []

    class EpochTimer(TrainerCallback):
        def on_epoch_begin(self, args, state, control, **kw):  # noqa: ANN001, ANN201, ANN003
            self.t = time.perf_counter()

        def on_epoch_end(self, args, state, control, **kw):  # noqa: ANN001, ANN201, ANN003
            epoch_times.append(round(time.perf_counter() - self.t, 2))

    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size, learning_rate=config.lr,
        warmup_steps=config.warmup_ratio,  # a float below 1 is a ratio of the steps in transformers 5
        lr_scheduler_type="linear", weight_decay=0.0, seed=config.seed, save_strategy="no",
        eval_strategy="epoch" if evaluator else "no", per_device_eval_batch_size=64, logging_steps=200,
        report_to=[], use_cpu=True, dataloader_num_workers=0, disable_tqdm=False)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=Dataset.from_list(train),
                                         eval_dataset=Dataset.from_list(dev[:64]) if dev else None, loss=loss,
                                         evaluator=evaluator, callbacks=[EpochTimer()])
    start = time.perf_counter()
    trainer.train()
    seconds = round(time.perf_counter() - start, 2)
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    if segmented:
        sbert.mark_segmented(out)
    dev_scores = [{k: v for k, v in h.items() if k.startswith("eval_dev")} | {"epoch": h.get("epoch")}
                  for h in trainer.state.log_history if any(k.startswith("eval_dev") for k in h)]
    log = {"config": asdict(config), "train_triplets": len(train), "dev_triplets": len(dev),
           "seconds": seconds, "epoch_seconds": epoch_times, "dev": dev_scores,
           "train_file": str(train_path), "dev_file": str(dev_path) if dev_path else None}
    write_json(out / "train_log.json", log)
    return log


def read_log(folder: Path) -> dict:
    return json.loads((folder / "train_log.json").read_text(encoding="utf-8"))
