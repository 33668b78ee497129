"""Training loop: Adam, one sampled negative per pair and epoch, validation @1/K after every epoch,
a checkpoint every epoch (`resume=True` continues from it), early stopping, and the best model saved."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.data import PairData
from argsim.counter.neural.heads import classification_loss, triplet_loss
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.sampling import NegativeSampler
from argsim.counter.neural.store import save_model
from argsim.counter.neural.validation import at1_over_k
from argsim.io import write_json
from argsim.progress import progress_bar
from argsim.settings import seed_everything

CHECKPOINT = "checkpoint.pt"
HISTORY = "history.json"


def base_table(model: CounterModel, texts: list[str]) -> np.ndarray:
    """Base embeddings of every text (frozen: backend, disk-cached; trainable: the current towers)."""
    return model.embed_texts(texts, side="candidate")


def batch_loss(model: CounterModel, u: torch.Tensor, vp: torch.Tensor, vn: torch.Tensor) -> torch.Tensor:
    """The model kind's loss on base embeddings: triplet (retrieval) + CE on both pairs (classification)."""
    cfg = model.config
    loss = torch.zeros((), dtype=u.dtype)
    if cfg.has_retrieval:
        loss = loss + triplet_loss(model.retrieval(u, "point"), model.retrieval(vp, "candidate"),
                                   model.retrieval(vn, "candidate"), cfg.margin)
    if cfg.has_classifier:
        loss = loss + classification_loss(model.classify(u, vp), model.classify(u, vn))
    return loss


def validate(model: CounterModel, data: PairData, base: np.ndarray, k: int) -> float:
    """Validation accuracy@1/k against the whole validation collection."""
    if not len(data.val_pairs):
        return float("nan")
    return at1_over_k(model, base, data.val_pairs[:, 0], data.val_pairs[:, 1], data.val_collection, ks=(k,))[k]


def _save_checkpoint(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def warm_start(model: CounterModel, folder: str | Path) -> None:
    """Copy the heads of a saved model of the same kind and width into `model` (e.g. heads trained on the
    frozen encoder, before fine-tuning the encoder with them)."""
    from argsim.counter.neural.store import load_model
    from argsim.errors import ModelError

    source = load_model(folder)
    if source.config.kind != model.config.kind or source.dim != model.dim:
        raise ModelError(f"{folder}: a {source.config.kind} model of width {source.dim} cannot initialise a "
                         f"{model.config.kind} model of width {model.dim}")
    heads = {k: v for k, v in source.state_dict().items() if not k.startswith(("point_tower.", "cand_tower."))}
    model.load_state_dict(heads, strict=False)


def train(config: NeuralConfig, data: PairData, out_dir: str | Path, resume: bool = False,
          log: Callable[[dict], None] | None = None, max_minutes: float | None = None,
          model: CounterModel | None = None, init: str | Path | None = None) -> list[dict]:
    """Train `config.kind` on `data`; the best-validation model is saved in `out_dir`. Returns the history.

    History rows: epoch (0 = untrained), loss, val (accuracy@1/k_val), hard (share of hard negatives),
    seconds (cumulative training time). `max_minutes` stops after the epoch that crosses the budget. `init`: a
    saved model whose heads start the training (`warm_start`).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    seed_everything(config.seed)
    frozen = not config.train_encoder
    if model is None:
        dim = None
        if frozen:
            probe = CounterModel(NeuralConfig(kind="unipolar-ret", base_model=config.base_model,
                                              pooling=config.pooling, max_seq_length=config.max_seq_length), dim=1)
            dim = probe.embed_texts(["dimension probe"]).shape[1]
        model = CounterModel(config, dim=dim)
    if init is not None:
        warm_start(model, init)
    model.train_top_layers()
    groups = [{"params": model.head_parameters("retrieval"), "lr": config.lr},
              {"params": model.head_parameters("classification"), "lr": config.cls_lr or config.lr}]
    groups = [g for g in groups if g["params"]]
    if not frozen:
        groups.append({"params": [p for p in model.tower_parameters() if p.requires_grad], "lr": config.encoder_lr})
    optimizer = torch.optim.Adam(groups)
    sampler = NegativeSampler(data.train_pairs, data.train_collection, config.sampling, config.hard_rate,
                              config.hard_pool, seed=config.seed)
    base = base_table(model, data.texts) if frozen else None
    texts = np.asarray(data.texts, dtype=object)

    history: list[dict] = []
    best, bad_epochs, start, elapsed = -1.0, 0, 1, 0.0
    ckpt = out_dir / CHECKPOINT
    if resume and ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        sampler.rng.bit_generator.state = state["sampler_rng"]
        torch.set_rng_state(state["torch_rng"])
        history, best, bad_epochs = state["history"], state["best"], state["bad_epochs"]
        start, elapsed = state["epoch"] + 1, history[-1]["seconds"] if history else 0.0
    else:
        val_base = base if frozen else base_table(model, data.texts)
        v0 = validate(model, data, val_base, config.k_val)
        history.append({"epoch": 0, "loss": None, "val": v0, "hard": 0.0, "seconds": 0.0})
        best = v0
        save_model(model, out_dir, info={"epoch": 0, "val": v0, "data": data.info})
        if log:
            log(history[-1])

    rng = np.random.default_rng(config.seed + 1)
    for _ in range(start - 1):  # keep the batch order of a resumed run identical to an uninterrupted one
        rng.permutation(len(data.train_pairs))
    for epoch in range(start, config.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        vectors = None
        if sampler.probability(epoch) > 0:
            table = base if frozen else base_table(model, data.texts)
            vectors = model.retrieval_numpy(table, "candidate") if config.has_retrieval else table
        negatives, hard_share = sampler.sample(epoch, vectors)
        order = rng.permutation(len(data.train_pairs))
        losses = []
        with progress_bar(len(order), f"epoch {epoch}/{config.epochs}") as bar:
            for s in range(0, len(order), config.batch_size):
                rows = order[s:s + config.batch_size]
                p_idx, c_idx, n_idx = data.train_pairs[rows, 0], data.train_pairs[rows, 1], negatives[rows]
                if frozen:
                    u, vp, vn = (torch.from_numpy(base[i]) for i in (p_idx, c_idx, n_idx))
                else:
                    u = model.base(list(texts[p_idx]), "point")
                    vp = model.base(list(texts[c_idx]), "candidate")
                    vn = model.base(list(texts[n_idx]), "candidate")
                loss = batch_loss(model, u, vp, vn)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                bar.advance(len(rows))
        val_base = base if frozen else base_table(model, data.texts)
        val = validate(model, data, val_base, config.k_val)
        elapsed += time.perf_counter() - t0
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "val": val, "hard": hard_share,
                        "seconds": round(elapsed, 2)})
        if log:
            log(history[-1])
        if val > best:
            best, bad_epochs = val, 0
            save_model(model, out_dir, info={"epoch": epoch, "val": val, "data": data.info})
        else:
            bad_epochs += 1
        _save_checkpoint(ckpt, {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                                "sampler_rng": sampler.rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                                "history": history, "best": best, "bad_epochs": bad_epochs,
                                "config": config.as_dict()})
        write_json(out_dir / HISTORY, {"config": config.as_dict(), "data": data.info, "history": history})
        if bad_epochs >= config.patience:
            break
        if max_minutes is not None and elapsed / 60 >= max_minutes:
            break
    write_json(out_dir / HISTORY, {"config": config.as_dict(), "data": data.info, "history": history})
    return history


def read_history(folder: str | Path) -> list[dict]:
    path = Path(folder) / HISTORY
    return json.loads(path.read_text(encoding="utf-8"))["history"] if path.is_file() else []
