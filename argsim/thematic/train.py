"""Training the thematic triplet network (BiLSTM + attention, L1 distance, the paper's softmax loss, Adam 1e-3).

Trains through argsim.training's accelerate loop (device, precision, DDP, checkpoints under OUT/checkpoints).
Bounded runs: `max_triplets` subsamples the training triplets (seeded); the budget (--max-steps, --max-minutes)
stops the run with a checkpoint, written also every `checkpoint_every` steps and at the end of each epoch;
--resume continues from it exactly (the epoch's batch order is a function of the seed and the epoch).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from argsim.errors import ArgsimError
from argsim.thematic.bilstm import (
    AttentionBiLSTM,
    Vocabulary,
    build_vocabulary,
    l1_distance,
    save_model,
    softmax_triplet_loss,
)
from argsim.thematic.config import ThematicTrainConfig
from argsim.training import Budget, OptimPolicy, Placement, resolve_placement
from argsim.training.fit import fit
from argsim.training.loop import TrainLoop
from argsim.training.record import data_hash, train_config, write_records

FIELDS = ("anchor", "positive", "negative")


@dataclass
class TrainReport:
    triplets_seen: int = 0
    steps: int = 0
    seconds: float = 0.0
    triplets_per_second: float = 0.0
    train_triplets: int = 0
    dev_accuracy: float | None = None
    losses: list[float] = field(default_factory=list)
    stopped_by_time: bool = False
    stopped_by: str | None = None


def policy(config: ThematicTrainConfig) -> OptimPolicy:
    """The paper's optimizer: Adam (= AdamW with weight decay 0) at a constant rate, no clipping."""
    return OptimPolicy(lr=config.lr, weight_decay=0.0, schedule="constant", max_grad_norm=None)


def _evaluate(model: AttentionBiLSTM, vocab: Vocabulary, triplets: list[dict], batch_size: int = 256) -> float:
    """TDC accuracy with L1 distance (d+ < d-)."""
    model.eval()
    device = next(model.parameters()).device
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(triplets), batch_size):
            chunk = triplets[start:start + batch_size]
            a, p, n = (model(*_on(vocab.batch([t[f] for t in chunk]), device)) for f in FIELDS)
            correct += int((l1_distance(a, p) < l1_distance(a, n)).sum())
    model.train()
    return correct / max(len(triplets), 1)


def _on(batch: tuple[torch.Tensor, torch.Tensor], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    ids, lengths = batch
    return ids.to(device), lengths


def train_bilstm(triplets: list[dict], out: Path, config: ThematicTrainConfig, dev: list[dict] | None = None,
                 log: callable = print, placement: Placement | None = None,  # type: ignore[valid-type]
                 budget: Budget | None = None) -> TrainReport:
    """Train on (anchor, positive, negative) records and save a backend-loadable model folder to `out`.

    `placement`: device / precision / seed (default: the CPU, fp32, `config.seed`, `config.threads` threads).
    `budget`: default `Budget(max_minutes=config.max_minutes, checkpoint_every=config.checkpoint_every,
    resume=True)` - a library call into the same folder continues its checkpoint, as before."""
    from argsim.backend import load_word_vectors

    out = Path(out)
    placement = placement or resolve_placement("cpu", "fp32", threads=config.threads, seed=config.seed)
    budget = budget or Budget(max_minutes=config.max_minutes, checkpoint_every=config.checkpoint_every, resume=True)
    config.seed = placement.seed
    rng = random.Random(config.seed)
    if config.max_triplets and len(triplets) > config.max_triplets:
        triplets = rng.sample(triplets, config.max_triplets)
    texts = [t[f] for t in triplets for f in FIELDS]
    vocab, matrix = build_vocabulary(texts, load_word_vectors(config.word_vectors))
    identity = {"words": data_hash(vocab.words), "n": len(triplets)}
    loop = TrainLoop(out, placement, budget, policy(config))
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)
    model = AttentionBiLSTM(matrix, config.hidden, config.attention, config.dropout)
    device = loop.device

    def loss_of(net: AttentionBiLSTM, chunk: list[dict]) -> torch.Tensor:
        a, p, n = (net(*_on(vocab.batch([t[f] for t in chunk]), device)) for f in FIELDS)
        return softmax_triplet_loss(l1_distance(a, p), l1_distance(a, n))

    n_batches = (len(triplets) + config.batch_size - 1) // config.batch_size
    report = TrainReport(train_triplets=len(triplets))

    def epoch_batches(epoch: int) -> list[list[dict]]:
        order = list(range(len(triplets)))
        random.Random(config.seed + epoch).shuffle(order)
        return [[triplets[i] for i in order[b * config.batch_size:(b + 1) * config.batch_size]]
                for b in range(n_batches)]

    def on_resume(saved: dict) -> None:
        nonlocal report
        if saved.get("identity") != identity:
            raise ArgsimError(f"{loop.checkpoint_dir}: the checkpoint was trained on other triplets or another "
                              "vocabulary; use another --out or drop --resume")
        report = TrainReport(**saved["report"])
        report.stopped_by_time, report.stopped_by = False, None
        log(f"resuming from {loop.checkpoint_dir} (epoch {loop.epoch + 1}, batch {loop.next_batch})")

    def on_batch(chunk: list[dict]) -> None:
        report.triplets_seen += len(chunk) * loop.processes  # counted before a checkpoint saves it

    def record(value: float) -> None:  # after each optimizer step, before a checkpoint
        report.steps, report.seconds = loop.steps, loop.seconds()
        if report.steps % 20 == 0:
            report.losses.append(round(value, 5))

    fit(loop, model, [{"params": list(model.parameters())}], loss_of, epoch_batches, epochs=config.epochs,
        batches_per_epoch=n_batches, on_batch=on_batch, on_step=record, on_resume=on_resume,
        state=lambda: {"identity": identity, "report": asdict(report)},
        progress=lambda epoch: f"epoch {epoch + 1}/{config.epochs}")
    report.stopped_by = loop.stopped_by
    report.stopped_by_time = loop.stopped_by == "max_minutes"
    report.seconds = loop.seconds()
    report.triplets_per_second = report.triplets_seen / max(report.seconds, 1e-9)
    if loop.is_main:
        if dev:
            report.dev_accuracy = _evaluate(model, vocab, dev)
        model.eval()
        save_model(out, model.to("cpu"), vocab, {**asdict(config), "architecture": "bilstm-attention",
                                                 "output_dim": 2 * config.hidden, "training": asdict(report)})
        run = {"steps": report.steps, "seconds": round(report.seconds, 2), "stopped_by": report.stopped_by,
               "losses": report.losses}
        metrics = {"dev_triplet_accuracy_l1": report.dev_accuracy} if report.dev_accuracy is not None else {}
        write_records(out, train_config("thematic-bilstm", placement, budget, policy(config), asdict(config),
                                        {"train": data_hash(triplets), "dev": data_hash(dev) if dev else None},
                                        run, metrics, base_model=config.word_vectors))
        log(json.dumps({k: v for k, v in asdict(report).items() if k != "losses"}))
    return report
