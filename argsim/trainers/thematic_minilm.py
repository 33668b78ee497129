"""The transformer variant: MiniLM fine-tuned on thematic triplets with `TripletLoss` (Euclidean distance; a margin
below 2 because MiniLM's unit vectors lie within 2 of each other, so the library default of 5 could never be met),
by default the shipped `thematic`'s recipe (LoRA rank 16, margin 0.3, lr 1e-4; AdamW, 10% warm-up, linear decay).

Model selection (`config.eval_every` > 0, with dev triplets): `TripletEvaluator` (Euclidean, ties wrong) on a
seeded sample of `dev_sample` chooses the saved step (`fit`'s selection): on triplets-sen, training past a few
hundred steps lowered test TDC below zero-shot (docs/thematic.md). The reported dev accuracy is on all dev
triplets (mildly optimistic); the test split stays unseen.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from sentence_transformers.sentence_transformer.evaluation import TripletEvaluator
from sentence_transformers.sentence_transformer.losses import TripletDistanceMetric, TripletLoss

from argsim.backend import load_sentence_transformer
from argsim.backend.adapters import add_lora, continue_adapter
from argsim.backend.models import set_st_max_seq_length
from argsim.metrics.triplets import TRIPLET_FIELDS, encoded_triplet_scores
from argsim.thematic.config import ThematicTrainConfig
from argsim.training import begin_run
from argsim.training.record import data_hash, run_info, save_run
from argsim.training.trainer import fit, save_st

SELECTION_METRIC = "eval_dev_euclidean_accuracy"


def finetune_sentence_transformer(triplets: list[dict], out: Path, config: ThematicTrainConfig | None = None, *,
                                  placement=None, budget=None, quiet: bool = False,
                                  dev: list[dict] | None = None) -> dict:
    """Fine-tune `config.model` on (anchor, positive, negative) records and save it (or its LoRA adapter) to `out`.

    Args:
        triplets, out: the training records (`config.max_triplets` of them, seeded) and the model folder.
        config: the settings (default `ThematicTrainConfig()`), resolved for MiniLM; `config.init` continues a
            trained adapter (`continue_adapter`: its base, rank and alpha replace `model`, `lora_rank`, `lora_alpha`).
        placement, budget: default the CPU, fp32, `config.seed`; `config.max_minutes` only. quiet: no progress bar.
        dev: dev triplets: with `config.eval_every`, a sample chooses the saved step; the accuracy on all is reported.

    Returns:
        the run's statistics (also OUT/argsim_training.json).

    Example:
        >>> more = ThematicTrainConfig(init="thematic", max_triplets=2000)
        >>> stats = finetune_sentence_transformer(rows, Path("models/thematic-more"), more)  # doctest: +SKIP
    """
    config = (config or ThematicTrainConfig()).resolved("minilm", has_dev=bool(dev))
    run = begin_run(config, out, placement, budget, config.eval_every if dev else 0, {"warmup_ratio": 0.1},
                    trainer="thematic-minilm")
    if config.max_minutes and run.budget.max_minutes is None:
        run = replace(run, budget=replace(run.budget, max_minutes=config.max_minutes))
    evaluator = None
    if config.eval_every and dev:  # TripletEvaluator on a seeded sample of `dev_sample` (all when None or fewer)
        rows = random.Random(run.placement.seed).sample(dev, config.dev_sample) \
            if config.dev_sample and len(dev) > config.dev_sample else dev
        evaluator = TripletEvaluator(*([r[f] for r in rows] for f in TRIPLET_FIELDS), name="dev", batch_size=64,
                                     similarity_fn_names=["euclidean"], show_progress_bar=False, write_csv=False)
    if config.max_triplets and len(triplets) > config.max_triplets:
        triplets = random.Random(run.placement.seed).sample(triplets, config.max_triplets)
    if config.init:  # `continue_adapter`: the adapter's base, rank and alpha
        model, base, rank, alpha = continue_adapter(config.init, run.placement.device, rank=config.lora_rank)
        config = replace(config, model=base, lora_rank=rank, lora_alpha=alpha)
    else:
        model = load_sentence_transformer(config.model, device=run.placement.device)
        config = replace(config, lora_rank=config.lora_rank or 0)
    set_st_max_seq_length(model, str(config.model), config.max_seq_length)
    if config.lora_rank > 0 and not config.init:
        add_lora(model, config.lora_rank, config.lora_alpha)
    loss = TripletLoss(model, distance_metric=TripletDistanceMetric.EUCLIDEAN, triplet_margin=config.margin)
    # --lora-rank: --resume and the best-step reload read the adapter of a checkpoint
    trainer, rec = fit(model, {f: [t[f] for t in triplets] for f in TRIPLET_FIELDS}, run, loss, evaluator=evaluator,
                       eval_every=config.eval_every, select=SELECTION_METRIC, disable_tqdm=quiet)
    return _finish(trainer, model, config, run, rec, triplets, dev, evaluator)


def _finish(trainer, model, config: ThematicTrainConfig, run, rec: dict, triplets: list[dict],
            dev: list[dict] | None, evaluator) -> dict:
    """The run's statistics: its settings, triplets seen, speed, stop and (with an evaluator) the kept step; rank 0
    adds the dev accuracy and saves the model (or its adapter), argsim_training.json and the records."""
    n, place = len(triplets), run.placement
    seen = min(rec["steps"] * config.batch_size * run.budget.grad_accum * place.processes, n * config.epochs)
    stats = {"base": config.model, "triplets": n, "triplets_seen": seen, "epochs": config.epochs,
             "batch_size": config.batch_size, "lr": config.lr, "margin": config.margin,
             "max_seq_length": config.max_seq_length, **run_info(run, rec),
             "triplets_per_second": seen / max(rec["seconds"], 1e-9), "lora_rank": config.lora_rank}
    if config.init:
        stats["init"] = config.init
    if evaluator is not None:
        best = rec["best"] or {}
        stats |= {"eval_every": config.eval_every, "dev_sample": len(evaluator.anchors),
                  "best_step": best.get("step"), "best_dev_sample_accuracy": best.get("value")}
    if not trainer.is_world_process_zero():
        return stats
    metrics = {}
    if dev:  # TDC accuracy with the Euclidean distance the loss uses (ties count as wrong)
        metrics["dev_triplet_accuracy"] = encoded_triplet_scores(
            model, dev, distance="euclidean", ties="wrong", convert_to_numpy=True, show_progress_bar=False).accuracy
        stats["dev_accuracy"] = metrics["dev_triplet_accuracy"]
    save_st(model, run.out, config.model, {k: stats[k] for k in ("steps", "seconds", "init") if k in stats})
    hashes = {"train": data_hash(triplets), "dev": data_hash(dev) if dev else None}
    save_run(run, dict(stats), hashes, rec, metrics, config.model, {"argsim_training.json": stats})
    return stats
