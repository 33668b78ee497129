"""Training the political Sentence-BERT with sentence-transformers' trainer and TripletLoss.

Paper settings: mean pooling, triplet loss (Euclidean distance) with margin 1, batch 16, Adam lr 2e-5 (weight
decay 0), 10% linear warm-up, 3 epochs. The defaults (`MinutesTrainConfig`) are the recommended recipe: the same
with cosine distance, margin 0.5 and lr 1e-3. Trains through argsim.training (docs/training.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from argsim.backend import load_sentence_transformer
from argsim.counter.neural.data import random_subset
from argsim.errors import ArgsimError
from argsim.io import read_records
from argsim.metrics.triplets import TRIPLET_FIELDS
from argsim.minutes import sbert
from argsim.options import setting
from argsim.schemas import TripletRecord
from argsim.training import begin_run
from argsim.training.record import data_hash, run_info, save_run


@dataclass
class MinutesTrainConfig:
    """The settings of `train_minutes_sbert` (one option of `argsim train minutes-sbert` each); the defaults are the
    recommended recipe (`argsim models build minutes-sbert`).

    Example:
        >>> MinutesTrainConfig().distance, MinutesTrainConfig(distance="euclidean", margin=1.0).margin
        ('cosine', 1.0)
    """

    backbone: str = setting("ginza", "ginza (GiNZA word vectors + trainable dense layer over Sudachi tokens), "
                            "minilm, or a sentence-transformers folder.", option="--model", aliases=("--backbone",),
                            model=True)
    epochs: int = setting(3, "Epochs (the paper: 3).", min=1)
    batch_size: int = setting(16, "Batch size (the paper: 16).", min=1)
    lr: float = setting(1e-3, "Adam learning rate (the paper: 2e-5).", min=0)
    warmup_ratio: float = setting(0.1, "Linear warm-up share of the steps (the paper: 10%).", min=0, max=1)
    margin: float = setting(0.5, "Triplet margin (the paper: 1).", min=0)
    distance: Literal["euclidean", "cosine"] = setting("cosine", "Triplet distance: cosine | euclidean (the "
                                                       "paper).")
    max_train: int | None = setting(None, "Subsample this many training triplets (seeded).", min=1)
    max_dev: int | None = setting(2000, "Score at most this many dev triplets per epoch.", min=1)
    update_embeddings: bool = setting(True, "ginza backbone: train the word vectors too (--freeze-embeddings: "
                                      "train only the dense layer).",
                                      option="--update-embeddings/--freeze-embeddings")
    word_min_count: int = setting(0, "ginza backbone: words seen at least this often in the training texts get a "
                                  "vector of their own (initialised from GiNZA's shared row); 0 keeps GiNZA's "
                                  "20,000 shared rows only.", min=0)
    seed: int = setting(13, "Random seed (the global --seed).", cli=False)

    def __post_init__(self) -> None:
        if self.backbone != "ginza" and (self.word_min_count or not self.update_embeddings):
            raise ArgsimError(f"--word-min-count / --freeze-embeddings set the ginza backbone's word vectors; "
                              f"--model {self.backbone} has none: drop them")


def _load_triplets(path: Path, limit: int | None, seed: int) -> list[dict]:
    rows = random_subset(read_records(path, TripletRecord), limit, np.random.default_rng(seed))
    return [{k: str(r[k]) for k in TRIPLET_FIELDS} for r in rows]


def train_minutes_sbert(train_path: Path, dev_path: Path | None, out: Path, config: MinutesTrainConfig,
                        placement=None, budget=None, quiet: bool = False) -> dict:
    """Train and save a sentence-transformers model under `out` (rank 0 writes); returns the training log.

    Model selection: the dev triplets' accuracy by cosine (the task's metric, whatever the loss's distance;
    `TripletEvaluator`) before training (a baseline, not a candidate), at every checkpoint and where the run ends
    chooses the saved checkpoint (`fit`'s selection); train_config.json's metrics are the kept one's."""
    from sentence_transformers.sentence_transformer.evaluation import TripletEvaluator
    from sentence_transformers.sentence_transformer.losses import TripletDistanceMetric, TripletLoss

    from argsim.training.trainer import fit

    run = begin_run(config, out, placement, budget, trainer="minutes-sbert")
    train = _load_triplets(train_path, config.max_train, config.seed)
    dev = _load_triplets(dev_path, config.max_dev, config.seed) if dev_path else []
    if not train:
        raise ArgsimError(f"{train_path}: no training triplets")
    hashes = {"train": data_hash(train), "dev": data_hash(dev) if dev else None}
    model, train, dev, words = _model_and_rows(config, train, dev, run.placement.device)
    loss = TripletLoss(model, distance_metric=getattr(TripletDistanceMetric, config.distance.upper()),
                       triplet_margin=config.margin)
    evaluator = TripletEvaluator(*([r[k] for r in dev] for k in TRIPLET_FIELDS), name="dev", write_csv=False,
                                 similarity_fn_names=["cosine"], show_progress_bar=False) if dev else None
    untrained = None if not evaluator or run.budget.resume else evaluator(model)[SELECTION_METRIC.removeprefix("eval_")]
    trainer, rec = fit(model, train, run, loss, evaluator=evaluator, select=SELECTION_METRIC, disable_tqdm=quiet)
    dev_scores = [{k: v for k, v in h.items() if k.startswith("eval_dev") or k in ("epoch", "step")}
                  for h in trainer.state.log_history if any(k.startswith("eval_dev") for k in h)]
    best = rec["best"] or {}
    log = {"config": asdict(config), "train_triplets": len(train), "dev_triplets": len(dev),
           "dev_untrained": untrained, "best_step": best.get("step"), "best_dev": best.get("value"),
           "own_words": None if words is None else len(words), "epoch_seconds": rec["epoch_seconds"], "dev": dev_scores,
           **run_info(run, rec), "train_file": str(train_path), "dev_file": str(dev_path) if dev_path else None}
    if trainer.is_world_process_zero():
        metrics = next((dict(h) for h in dev_scores if best and h["step"] == best["step"]), {})  # the kept one's
        if untrained is not None:
            metrics[f"{SELECTION_METRIC}_untrained"] = untrained
        model.save(str(run.out))
        if config.backbone == "ginza":  # the segmented marker, with the model's own words
            sbert.mark_segmented(run.out, words=len(words))
        save_run(run, asdict(config), hashes, rec, metrics, config.backbone, {"train_log.json": log})
    return log


def _model_and_rows(config: MinutesTrainConfig, train: list[dict], dev: list[dict], device: str
                    ) -> tuple[object, list[dict], list[dict], list[str] | None]:
    """The model to train, the triplets it reads and its own words: for ginza, `sbert.build_ginza_model` over the
    Sudachi-segmented texts (`config.word_min_count`: the training texts' frequent words); else the backbone."""
    if config.backbone != "ginza":
        return load_sentence_transformer(config.backbone, device=device), train, dev, None
    texts = sorted({r[k] for r in train + dev for k in TRIPLET_FIELDS})
    tokens = dict(zip(texts, sbert.tokenize(texts), strict=True))
    words: list[str] = []
    if config.word_min_count > 0:  # counted over the training texts only
        train_texts = sorted({r[k] for r in train for k in TRIPLET_FIELDS})
        words = sbert.frequent_words([tokens[t] for t in train_texts], config.word_min_count)
    seg = dict(zip(texts, sbert.render([tokens[t] for t in texts], frozenset(words)), strict=True))
    train, dev = ([{k: seg[v] for k, v in r.items()} for r in rows] for rows in (train, dev))
    return sbert.build_ginza_model(config.update_embeddings, words=words), train, dev, words


SELECTION_METRIC = "eval_dev_cosine_accuracy"
