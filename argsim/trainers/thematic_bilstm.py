"""Training the thematic triplet network (BiLSTM + attention, L1 distance, the paper's softmax loss, Adam 1e-3) with
`fit`; `max_triplets` subsamples the training triplets (seeded).

Model selection (with dev triplets): `TripletAccuracyEvaluator` (the TDC accuracy of Ein Dor et al. (2018): L1
distance, ties wrong) on a seeded sample of `dev_sample` dev triplets. Reading chosen: the paper trains one epoch
and does not say how it picked its model; with one epoch and no `eval_every` the saved model is the last. The
reported `dev_accuracy` is on all dev triplets (a sample of which chose the model: mildly optimistic).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from argsim.backend import load_word_vectors
from argsim.backend.encoder import Encoder
from argsim.evaluation.triplets import TripletEvaluator
from argsim.metrics.record import Evaluation
from argsim.metrics.triplets import TRIPLET_FIELDS
from argsim.thematic.bilstm import (
    AttentionBiLSTM,
    Vocabulary,
    build_vocabulary,
    l1_distance,
    save_model,
    softmax_triplet_loss,
)
from argsim.thematic.config import ThematicTrainConfig
from argsim.training import Budget, Placement, begin_run, resolve_placement
from argsim.training.callbacks import LogCallback
from argsim.training.record import data_hash, save_run
from argsim.training.trainer import fit, select_metric, shuffled_batches


@dataclass
class TrainReport:
    triplets_seen: int = 0
    steps: int = 0
    seconds: float = 0.0
    triplets_per_second: float = 0.0
    train_triplets: int = 0
    dev_accuracy: float | None = None
    best_step: int | None = None
    best_epoch: float | None = None
    best_dev_sample_accuracy: float | None = None
    losses: list[float] = field(default_factory=list)
    stopped_by_time: bool = False
    stopped_by: str | None = None


class LiveBiLSTM(Encoder):
    """A BiLSTM being trained as an argsim `Encoder` (its vocabulary, no disk cache, no progress bars)."""

    def __init__(self, net: AttentionBiLSTM, vocab: Vocabulary, batch_size: int = 256) -> None:
        super().__init__()
        self.net, self.vocab, self.batch_size, self.name, self.identity = net, vocab, batch_size, "training", ""
        self.configure(use_cache=False, quiet=True)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with torch.inference_mode():
            return _embed(self.net, self.vocab, texts).float().cpu().numpy()


class TripletAccuracyEvaluator(TripletEvaluator):
    """The TDC accuracy of a BiLSTM in training (`TripletEvaluator`, L1 distance, ties wrong) on a seeded sample of
    `sample` triplets (None: all): `{"<name>_accuracy", "<name>_mean_diff"}`; it draws no random numbers.

    Example:
        >>> ev = TripletAccuracyEvaluator(dev_rows, vocab, sample=2000)  # doctest: +SKIP
        >>> ev(net)["dev_accuracy"]  # doctest: +SKIP
        0.61...
    """

    def __init__(self, triplets: list[dict], vocab: Vocabulary, sample: int | None = None, seed: int = 13) -> None:
        triplets = random.Random(seed).sample(triplets, sample) if sample and len(triplets) > sample else triplets
        super().__init__(triplets, name="dev", distance="l1", ties="wrong")
        self.vocab = vocab

    def evaluate(self, model: AttentionBiLSTM | Encoder) -> Evaluation:
        return super().evaluate(model if isinstance(model, Encoder) else LiveBiLSTM(model, self.vocab))


def _embed(net: AttentionBiLSTM, vocab: Vocabulary, texts: list[str]) -> torch.Tensor:
    ids, lengths = vocab.batch(texts)
    return net(ids.to(net.embedding.weight.device), lengths)


def train_bilstm(triplets: list[dict], out: Path, config: ThematicTrainConfig, dev: list[dict] | None = None,
                 log: callable = print, placement: Placement | None = None,  # type: ignore[valid-type]
                 budget: Budget | None = None) -> TrainReport:
    """Train on (anchor, positive, negative) records and save a backend-loadable model folder to `out`.

    Args:
        triplets, out: the training records and the model folder.
        config: the settings, resolved for the BiLSTM (`ThematicTrainConfig.resolved("bilstm")`) whatever its `arch`.
        dev: dev triplets: a sample of `config.dev_sample` chooses the kept model (`TripletAccuracyEvaluator`, every
            `config.eval_every` steps, else every epoch); its accuracy on all is reported. None: the last model.
        log: prints the run's messages.
        placement: default the CPU, fp32, `config.seed`, `config.threads` threads.
        budget: default `config.max_minutes`, `config.checkpoint_every`, resume=True (a library call continues).

    Returns:
        the `TrainReport`.

    Example:
        >>> rep = train_bilstm(rows, Path("models/t"), ThematicTrainConfig(arch="bilstm"), dev=dev)  # doctest: +SKIP
        >>> rep.best_step, rep.dev_accuracy  # doctest: +SKIP
        (1032, 0.6057)
    """
    config = config.resolved("bilstm", has_dev=bool(dev))
    placement = placement or resolve_placement("cpu", "fp32", threads=config.threads, seed=config.seed)
    budget = budget or Budget(max_minutes=config.max_minutes, checkpoint_every=config.checkpoint_every, resume=True)
    run = begin_run(config, out, placement, budget, config.eval_every if dev else 0,
                    {"schedule": "constant", "max_grad_norm": None},  # the paper's Adam at a constant rate, no clipping
                    trainer="thematic-bilstm")
    if config.max_triplets and len(triplets) > config.max_triplets:
        triplets = random.Random(config.seed).sample(triplets, config.max_triplets)
    vocab, matrix = build_vocabulary([t[f] for t in triplets for f in TRIPLET_FIELDS],
                                     load_word_vectors(config.word_vectors))
    torch.manual_seed(config.seed)
    model = AttentionBiLSTM(matrix, config.hidden, config.attention, config.dropout)
    evaluator = TripletAccuracyEvaluator(dev, vocab, sample=config.dev_sample, seed=config.seed) if dev else None

    def loss_of(net: AttentionBiLSTM, chunk: list[dict]) -> torch.Tensor:
        a, p, n = (_embed(net, vocab, [t[f] for t in chunk]) for f in TRIPLET_FIELDS)
        return softmax_triplet_loss(l1_distance(a, p), l1_distance(a, n))

    logger = [LogCallback(log, metric=select_metric(evaluator))] if evaluator is not None else []
    trainer, rec = fit(model, shuffled_batches(triplets, config.batch_size, config.seed), run, loss_of,
                       evaluator=evaluator, eval_every=config.eval_every, callbacks=logger)
    return _finish(trainer, rec, run, model, vocab, config, triplets, dev, log)


def _finish(trainer, rec: dict, run, model: AttentionBiLSTM, vocab: Vocabulary, config: ThematicTrainConfig,
            triplets: list[dict], dev: list[dict] | None, log: callable) -> TrainReport:  # type: ignore[valid-type]
    """The run's `TrainReport`; rank 0 adds the kept model's dev accuracy on all dev triplets and saves the model
    folder and the run's records."""
    n = len(triplets)
    seen = round((trainer.state.epoch or 0) * n)
    report = TrainReport(triplets_seen=seen, steps=rec["steps"], seconds=rec["seconds"], train_triplets=n,
                         triplets_per_second=seen / max(rec["seconds"], 1e-9), losses=rec["losses"],
                         stopped_by=rec["stopped_by"], stopped_by_time=rec["stopped_by"] == "max_minutes")
    if rec["best"] is not None:
        report.best_step, report.best_dev_sample_accuracy = rec["best"]["step"], rec["best"]["value"]
        report.best_epoch = next((h["epoch"] for h in trainer.state.log_history if h.get("step") == report.best_step
                                  and any(k.startswith("eval_") for k in h)), None)
    if not trainer.is_world_process_zero():
        return report
    model.eval()
    if dev:
        report.dev_accuracy = TripletAccuracyEvaluator(dev, vocab).evaluate(model)["accuracy"]  # on all of them
    info = {**asdict(config), "architecture": "bilstm-attention", "output_dim": 2 * config.hidden,
            "training": asdict(report)}
    save_model(run.out, model.to("cpu"), vocab, info)
    metrics = {} if report.dev_accuracy is None else {"dev_triplet_accuracy_l1": report.dev_accuracy}
    if report.best_step is not None:
        metrics |= {"best_step": report.best_step, "best_epoch": report.best_epoch,
                    "best_dev_sample_accuracy_l1": report.best_dev_sample_accuracy}
    hashes = {"train": data_hash(triplets), "dev": data_hash(dev) if dev else None}
    save_run(run, asdict(config), hashes, rec, metrics, config.word_vectors)
    log(json.dumps({k: v for k, v in asdict(report).items() if k != "losses"}))
    return report
