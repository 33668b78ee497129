"""Training the thematic triplet network (BiLSTM + attention, L1 distance, the paper's softmax loss, Adam 1e-3).

Bounded runs: `max_triplets` subsamples the training triplets (seeded) and `max_minutes` stops after that
much wall-clock time; a checkpoint is written every `checkpoint_every` steps and at the end of each epoch, and
a rerun with the same output folder resumes from it.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from argsim.io import atomic_path
from argsim.progress import progress_bar
from argsim.thematic.bilstm import (
    AttentionBiLSTM,
    Vocabulary,
    build_vocabulary,
    l1_distance,
    save_model,
    softmax_triplet_loss,
)


@dataclass
class TrainConfig:
    hidden: int = 300
    attention: int = 200
    dropout: float = 0.2
    lr: float = 1e-3
    batch_size: int = 64
    epochs: int = 1
    max_triplets: int | None = None
    max_minutes: float | None = None
    word_vectors: str = "glove50"
    seed: int = 13
    checkpoint_every: int = 200
    threads: int | None = 1  # one thread per run is ~3x faster than two on a shared 2-core machine


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


def _evaluate(model: AttentionBiLSTM, vocab: Vocabulary, triplets: list[dict], batch_size: int = 256) -> float:
    """TDC accuracy with L1 distance (d+ < d-)."""
    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(triplets), batch_size):
            chunk = triplets[start:start + batch_size]
            a, p, n = (model(*vocab.batch([t[f] for t in chunk])) for f in ("anchor", "positive", "negative"))
            correct += int((l1_distance(a, p) < l1_distance(a, n)).sum())
    model.train()
    return correct / max(len(triplets), 1)


def train_bilstm(triplets: list[dict], out: Path, config: TrainConfig, dev: list[dict] | None = None,
                 log: callable = print) -> TrainReport:  # type: ignore[valid-type]
    """Train on (anchor, positive, negative) records and save a backend-loadable model folder to `out`."""
    from argsim.backend import load_word_vectors

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if config.threads:
        torch.set_num_threads(config.threads)
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)
    if config.max_triplets and len(triplets) > config.max_triplets:
        triplets = rng.sample(triplets, config.max_triplets)
    texts = [t[f] for t in triplets for f in ("anchor", "positive", "negative")]
    vocab, matrix = build_vocabulary(texts, load_word_vectors(config.word_vectors))
    model = AttentionBiLSTM(matrix, config.hidden, config.attention, config.dropout)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    report = TrainReport(train_triplets=len(triplets))
    ckpt = out / "checkpoint.pt"
    start_epoch, start_batch = 0, 0
    if ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        if state["words"] == vocab.words and state["n"] == len(triplets):
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            start_epoch, start_batch = state["epoch"], state["batch"]
            report = TrainReport(**state["report"])
            report.stopped_by_time = False
            log(f"resuming from {ckpt} (epoch {start_epoch + 1}, batch {start_batch})")

    def save_checkpoint(epoch: int, batch: int) -> None:
        with atomic_path(ckpt) as tmp:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                        "batch": batch, "words": vocab.words, "n": len(triplets), "report": asdict(report)}, tmp)

    model.train()
    began = time.perf_counter() - report.seconds
    n_batches = (len(triplets) + config.batch_size - 1) // config.batch_size
    stop = False
    for epoch in range(start_epoch, config.epochs):
        order = list(range(len(triplets)))
        random.Random(config.seed + epoch).shuffle(order)
        first = start_batch if epoch == start_epoch else 0
        with progress_bar(n_batches - first, f"epoch {epoch + 1}/{config.epochs}") as bar:
            for b in range(first, n_batches):
                chunk = [triplets[i] for i in order[b * config.batch_size:(b + 1) * config.batch_size]]
                a, p, n = (model(*vocab.batch([t[f] for t in chunk])) for f in ("anchor", "positive", "negative"))
                loss = softmax_triplet_loss(l1_distance(a, p), l1_distance(a, n))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                report.steps += 1
                report.triplets_seen += len(chunk)
                if report.steps % 20 == 0:
                    report.losses.append(round(loss.item(), 5))
                bar.advance(1)
                report.seconds = time.perf_counter() - began
                if report.steps % config.checkpoint_every == 0:
                    save_checkpoint(epoch, b + 1)
                if config.max_minutes and report.seconds > config.max_minutes * 60:
                    report.stopped_by_time, stop = True, True
                    save_checkpoint(epoch, b + 1)  # a rerun with a larger --max-minutes continues from here
                    break
        if stop:
            break
        save_checkpoint(epoch + 1, 0)
    report.seconds = time.perf_counter() - began
    report.triplets_per_second = report.triplets_seen / max(report.seconds, 1e-9)
    if dev:
        report.dev_accuracy = _evaluate(model, vocab, dev)
    model.eval()
    save_model(out, model, vocab, {**asdict(config), "architecture": "bilstm-attention",
                                   "output_dim": 2 * config.hidden, "training": asdict(report)})
    log(json.dumps({k: v for k, v in asdict(report).items() if k != "losses"}))
    return report
