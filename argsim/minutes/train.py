"""Training the political Sentence-BERT with sentence-transformers' trainer and TripletLoss.

Paper settings: mean pooling, triplet loss (Euclidean distance) with margin 1, batch 16, Adam lr 2e-5 (weight
decay 0), 10% linear warm-up, 3 epochs. The defaults (`MinutesTrainConfig`) are the recommended recipe: the same
with cosine distance, margin 0.5 and lr 1e-3. Trains through argsim.training: the device and
precision the user names, budgets, checkpoints and resume, DDP under `accelerate launch` / `torchrun`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from argsim.errors import ArgsimError
from argsim.io import read_records, write_json
from argsim.options import setting
from argsim.schemas import TripletRecord

BACKBONES = ("ginza", "minilm")


@dataclass
class MinutesTrainConfig:
    """The settings of `train_minutes_sbert`; the defaults are the recommended recipe (`argsim models build
    minutes-sbert`: lr 1e-3, cosine distance, margin 0.5, 3 epochs; the paper's: Euclidean distance, margin 1,
    lr 2e-5). Each field is one option of `argsim train minutes-sbert`
    (see `argsim.options`).

    Example:
        >>> MinutesTrainConfig().distance, MinutesTrainConfig(distance="euclidean", margin=1.0).margin
        ('cosine', 1.0)
    """

    backbone: str = setting("ginza", "ginza (GiNZA word vectors + trainable dense layer over Sudachi tokens), "
                            "minilm, or a sentence-transformers folder.", option="--model", aliases=("--backbone",))
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


def _load_triplets(path: Path, limit: int | None, seed: int) -> list[dict]:
    import numpy as np

    rows = read_records(path, TripletRecord)
    if limit is not None and len(rows) > limit:
        idx = np.sort(np.random.default_rng(seed).choice(len(rows), size=limit, replace=False))
        rows = [rows[i] for i in idx]
    return [{k: str(r[k]) for k in ("anchor", "positive", "negative")} for r in rows]


def policy(config: MinutesTrainConfig):
    """The paper's optimizer: Adam (weight decay 0), 10% linear warm-up, then linear decay."""
    from argsim.training import OptimPolicy

    return OptimPolicy(lr=config.lr, weight_decay=0.0, warmup_ratio=config.warmup_ratio)


def train_minutes_sbert(train_path: Path, dev_path: Path | None, out: Path, config: MinutesTrainConfig,
                        placement=None, budget=None, quiet: bool = False) -> dict:
    """Train and save a sentence-transformers model under `out` (rank 0 writes); returns the training log.

    `placement` (device, precision, seed; default: the CPU in fp32 with `config.seed`) and `budget` (default:
    none) come from argsim.training.

    Model selection: with dev triplets, sentence-transformers' `TripletEvaluator` scores them (triplet accuracy
    by cosine, the task's metric: `argsim eval triplets` reports the minutes figure with it, whichever distance
    the loss uses) before training, at every checkpoint (each epoch, or each `--checkpoint-every` steps) and where
    the run ends, and the saved model is the checkpoint with the best dev accuracy, not the last (the first of
    equal scores; `argsim.training.st.fit_st`'s selection, kept across --resume); the untrained model is a
    baseline, not a candidate. The log records the untrained and the best dev accuracy and the kept step;
    `train_config.json`'s metrics are the kept checkpoint's."""
    from sentence_transformers.sentence_transformer.evaluation import TripletEvaluator
    from sentence_transformers.sentence_transformer.losses import TripletDistanceMetric, TripletLoss
    from transformers import TrainerCallback

    from argsim.backend import load_sentence_transformer
    from argsim.minutes import sbert
    from argsim.settings import seed_everything
    from argsim.training import Budget, resolve_placement
    from argsim.training.record import data_hash, train_config, write_records
    from argsim.training.st import TrainRun, fit_st, logging_steps

    placement = placement or resolve_placement("cpu", "fp32", seed=config.seed)
    budget = budget or Budget()
    config.seed = placement.seed
    seed_everything(config.seed)
    train = _load_triplets(train_path, config.max_train, config.seed)
    dev = _load_triplets(dev_path, config.max_dev, config.seed) if dev_path else []
    if not train:
        raise ArgsimError(f"{train_path}: no training triplets")
    hashes = {"train": data_hash(train), "dev": data_hash(dev) if dev else None}
    segmented = config.backbone == "ginza"
    if segmented:
        texts = sorted({r[k] for r in train + dev for k in ("anchor", "positive", "negative")})
        tokens = dict(zip(texts, sbert.tokenize(texts), strict=True))
        words: list[str] = []
        if config.word_min_count > 0:  # counted over the training texts only
            train_texts = sorted({r[k] for r in train for k in ("anchor", "positive", "negative")})
            words = sbert.frequent_words([tokens[t] for t in train_texts], config.word_min_count)
        seg = dict(zip(texts, sbert.render([tokens[t] for t in texts], frozenset(words)), strict=True))
        train = [{k: seg[v] for k, v in r.items()} for r in train]
        dev = [{k: seg[v] for k, v in r.items()} for r in dev]
        model = sbert.build_ginza_model(config.update_embeddings, words=words)
    else:
        model = load_sentence_transformer(config.backbone, device=placement.device)
    metric = {"euclidean": TripletDistanceMetric.EUCLIDEAN, "cosine": TripletDistanceMetric.COSINE}[config.distance]
    loss = TripletLoss(model, distance_metric=metric, triplet_margin=config.margin)
    evaluator = None
    if dev:  # the task's metric: triplet accuracy by cosine, as `argsim eval triplets` scores the minutes figure
        evaluator = TripletEvaluator([r["anchor"] for r in dev], [r["positive"] for r in dev],
                                     [r["negative"] for r in dev], name="dev", similarity_fn_names=["cosine"],
                                     show_progress_bar=False, write_csv=False)
    epoch_times: list[float] = []

    class EpochTimer(TrainerCallback):
        def on_epoch_begin(self, args, state, control, **kw):
            self.t = time.perf_counter()

        def on_epoch_end(self, args, state, control, **kw):
            epoch_times.append(round(time.perf_counter() - self.t, 2))

    opt = policy(config)
    untrained = evaluator(model)[SELECTION_METRIC.removeprefix("eval_")] if evaluator and not budget.resume else None
    run_ = TrainRun(out, placement, budget, opt, config.epochs, config.batch_size)
    trainer, run = fit_st(model, train, loss, run_, evaluator=evaluator, callbacks=(EpochTimer(),),
                          disable_tqdm=quiet,
                          logging_steps=min(200, logging_steps(len(train), config.batch_size, config.epochs, budget,
                                                               placement.processes)),
                          eval_rows=dev[:64] if dev else None, per_device_eval_batch_size=64,
                          select=SELECTION_METRIC if evaluator else None)
    dev_scores = [{k: v for k, v in h.items() if k.startswith("eval_dev")} | {"epoch": h.get("epoch"),
                                                                               "step": h.get("step")}
                  for h in trainer.state.log_history if any(k.startswith("eval_dev") for k in h)]
    best = run["best"]
    best_row = next((h for h in dev_scores if best and h["step"] == best["step"]), {})
    log = {"config": asdict(config), "train_triplets": len(train), "dev_triplets": len(dev),
           "dev_untrained": untrained, "best_step": best["step"] if best else None,
           "best_dev": best["value"] if best else None,
           "own_words": len(words) if segmented else None,
           "seconds": run["seconds"], "epoch_seconds": epoch_times, "dev": dev_scores, "steps": run["steps"],
           "stopped_by": run["stopped_by"], "device": placement.device, "precision": placement.precision,
           "train_file": str(train_path), "dev_file": str(dev_path) if dev_path else None}
    if trainer.is_world_process_zero():
        out.mkdir(parents=True, exist_ok=True)
        model.save(str(out))
        if segmented:
            sbert.mark_segmented(out, words=len(words))
        write_json(out / "train_log.json", log)
        metrics = dict(best_row)  # the kept checkpoint's dev scores
        if untrained is not None:
            metrics[f"{SELECTION_METRIC}_untrained"] = untrained
        write_records(out, train_config("minutes-sbert", placement, budget, opt, asdict(config), hashes, run,
                                        metrics, base_model=config.backbone))
    return log


SELECTION_METRIC = "eval_dev_cosine_accuracy"

