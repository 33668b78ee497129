"""Cross-encoder (section 4.2): "[CLS] p [SEP] c" -> linear -> softmax over 2 classes, cross-entropy loss.

A sentence-transformers `CrossEncoder` (num_labels=2) trained with `CrossEncoderTrainer` and `CrossEntropyLoss`;
the folder (marker `argsim_cross_encoder.json`) scores log P(best counter) through `argsim.backend.resolve.pair_scorer`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from sentence_transformers.base.evaluation import BaseEvaluator
from sentence_transformers.cross_encoder import CrossEncoder
from sentence_transformers.cross_encoder.losses import CrossEntropyLoss

from argsim.backend import model_path
from argsim.backend.resolve import PairScorer
from argsim.backend.safety import HF_LOAD
from argsim.counter.neural.config import CROSS_MARKER, NeuralConfig
from argsim.counter.neural.data import random_subset
from argsim.training import begin_run
from argsim.training.callbacks import HistoryCallback
from argsim.training.curve import OWN_HISTORY
from argsim.training.record import data_hash, save_run
from argsim.training.run import last_checkpoint
from argsim.training.trainer import fit


def validation_choices(val_pairs: Sequence[tuple[str, str]], collection: Sequence[str], points: int = 100,
                       negatives: int = 4, seed: int = 13) -> list[list[tuple[str, str]]]:
    """Fixed validation questions: for up to `points` pairs, the true counter first, then `negatives` random
    other texts of the collection (never the point or its counter)."""
    rng = np.random.default_rng(seed)
    pairs = random_subset(list(val_pairs), points, rng)
    pool = list(dict.fromkeys(collection))
    questions = []
    for p, c in pairs:
        others = [t for t in (pool[int(i)] for i in rng.permutation(len(pool))[:negatives + 2]) if t not in (p, c)]
        questions.append([(p, c)] + [(p, t) for t in others[:negatives]])
    return questions


def choice_accuracy(score: Callable[[list[tuple[str, str]]], np.ndarray],
                    questions: Sequence[Sequence[tuple[str, str]]]) -> float:
    """Share of questions whose first pair (the true counter) gets the highest score (ties count as misses)."""
    flat = [pair for q in questions for pair in q]
    scores, hits, at = score(flat), 0, 0
    for q in questions:
        s = scores[at:at + len(q)]
        hits += int(s[0] > s[1:].max()) if len(q) > 1 else 1
        at += len(q)
    return hits / max(len(questions), 1)


class ChoiceEvaluator(BaseEvaluator):
    """A sentence-transformers evaluator: `choice_accuracy` of a CrossEncoder on `questions` (`val_choice_accuracy`).

    Example:
        >>> ChoiceEvaluator([]).primary_metric
        'choice_accuracy'
    """

    def __init__(self, questions: Sequence[Sequence[tuple[str, str]]], batch_size: int = 32) -> None:
        super().__init__()
        self.questions, self.batch_size = questions, batch_size
        self.name, self.primary_metric = "val", "choice_accuracy"

    def __call__(self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1) -> dict:
        acc = choice_accuracy(PairScorer(model, self.batch_size, name="in training").score, self.questions)
        metrics = self.prefix_name_to_metrics({"choice_accuracy": round(acc, 4)}, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics


def pointwise_examples(pairs: Sequence[tuple[str, str]], collection: Sequence[str], epochs: int,
                       seed: int) -> dict[str, list]:
    """Each epoch (concatenated): (p, c, 1) and (p, a random other text, 0) for every pair, from one seeded draw."""
    rng = np.random.default_rng(seed)
    s1, s2 = [], []
    for _ in range(epochs):
        for p, c in pairs:
            n = c
            while n == c or n == p:
                n = collection[int(rng.integers(0, len(collection)))]
            s1 += [p, p]
            s2 += [c, n]
    return {"sentence1": s1, "sentence2": s2, "label": [1, 0] * (len(s1) // 2)}


SELECTION_METRIC = "eval_val_choice_accuracy"  # the validation choice accuracy, as the trainer logs it


def train_cross_encoder(config: NeuralConfig, pairs: Sequence[tuple[str, str]], collection: Sequence[str],
                        out: str | Path, *, questions: Sequence[Sequence[tuple[str, str]]] = (),
                        evals_per_epoch: int = 4, placement=None, budget=None, quiet: bool = True,
                        log: Callable[[dict], None] | None = None) -> list[dict]:
    """Pointwise training of `config.base_model` as a 2-label `CrossEncoder` on `pointwise_examples` (fresh
    negatives every epoch; Adam at `config.encoder_lr`, constant).

    With `questions` (`validation_choices`) the model is validated before training (epoch 0) and `evals_per_epoch`
    times per epoch (`ChoiceEvaluator`, a `HistoryCallback` row each); the best validated step is saved (`fit`'s
    selection; the untrained row is a baseline, not a candidate). Without `questions` the last step is saved.

    Returns:
        the history rows (OUT also holds them as history.json, the marker, train_config.json and the card).

    Example:
        >>> train_cross_encoder(NeuralConfig(kind="cross-encoder"), pairs, texts, "models/ce")  # doctest: +SKIP
    """
    policy = {"lr": config.encoder_lr, "schedule": "constant", "max_grad_norm": None}
    run = replace(begin_run(config, out, placement, budget, policy=policy, trainer="counter-cross-encoder"),
                  epochs=1)  # epochs: in the examples
    placement, budget, pairs = run.placement, run.budget, list(pairs)
    model = CrossEncoder(str(model_path(config.base_model)), num_labels=2, max_length=config.max_seq_length,
                         device=placement.device, **HF_LOAD)
    data = pointwise_examples(pairs, list(collection), config.epochs, placement.seed)
    per_step = config.batch_size * placement.processes * budget.grad_accum
    per_epoch = math.ceil(2 * len(pairs) / per_step)
    every = max(1, round(per_epoch / max(evals_per_epoch, 1)))
    evaluator = ChoiceEvaluator(questions) if questions else None

    def row(state, metrics: dict, stopped: bool, loss: float | None, seconds: float) -> dict:
        step = state.global_step
        return {"epoch": round(step / per_epoch, 3), "val": metrics.get(SELECTION_METRIC), "loss": loss,
                "examples": min(step * per_step, len(data["label"])), "seconds": seconds, "stopped_early": stopped}

    tracker = HistoryCallback(row, log=log, state_file="cross_state.json")  # each checkpoint holds its rows
    tracker.restore(last_checkpoint(run.out) if budget.resume else None)
    if not tracker.history:
        tracker.add({"epoch": 0, "val": evaluator(model)["val_choice_accuracy"] if evaluator else None,
                     "loss": None, "examples": 0, "seconds": 0.0})
    trainer, rec = fit(model, data, run, CrossEntropyLoss(model), evaluator=evaluator, eval_every=every,
                       select=SELECTION_METRIC, callbacks=(tracker,), disable_tqdm=quiet, logging_steps=every)
    tracker.take(trainer.state, {}, bool(rec["stopped_by"]))  # no validation there: a row where the run ended
    if trainer.is_world_process_zero():
        _save_cross(model, config, run, rec, tracker.history, per_epoch, pairs, evals_per_epoch)
    return tracker.history


def _save_cross(model, config: NeuralConfig, run, rec: dict, history: list[dict], per_epoch: int, pairs: list,
                evals_per_epoch: int) -> None:
    """Rank 0: the kept weights, the marker, history.json, train_config.json and the card."""
    best = rec["best"]
    model.save(str(run.out))
    marker = {"kind": "cross-encoder", "base_model": config.base_model, "max_length": config.max_seq_length,
              "lr": config.encoder_lr, "batch_size": config.batch_size, "train_pairs": len(pairs)}
    metrics = {"val_choice_accuracy_untrained": history[0]["val"],
               "val_choice_accuracy": best["value"] if best else history[-1]["val"],
               "val_choice_accuracy_last": history[-1]["val"],
               "best_epoch": round(best["step"] / per_epoch, 3) if best else None}
    options = {"epochs": config.epochs, "lr": config.encoder_lr, "batch_size": config.batch_size,
               "max_length": config.max_seq_length, "evals_per_epoch": evals_per_epoch}
    save_run(run, options, {"train": data_hash(pairs)}, rec, metrics, config.base_model,
             {CROSS_MARKER: marker, OWN_HISTORY: {"kind": "cross-encoder", "history": history}},
             pipeline_tag="text-classification")
