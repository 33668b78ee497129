"""Train MTS (or its QA / SimAKP baselines), save a folder `get_encoder` loads, optionally over topic folds."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError
from argsim.kpm.mts_data import cluster_batches, pair_batches, topic_folds
from argsim.kpm.mts_encoder import write_ensemble, write_manifest
from argsim.kpm.mts_model import VARIANTS, ClusterLoss, MTSConfig, MTSNet, PairContrastiveLoss, build_net
from argsim.progress import progress_bar

TRAIN_INFO = "argsim_train.json"


def _epoch_batches(train: KPMData, cfg: MTSConfig, epoch: int) -> list:
    seed = cfg.seed * 1000 + epoch
    if cfg.variant == "simakp":
        batches = pair_batches(train, cfg.pair_batch_size, seed)
    else:
        batches = cluster_batches(train, cfg.max_pos, cfg.max_neg, cfg.max_unmatched, seed)
    return batches[: cfg.max_batches] if cfg.max_batches else batches


def _step_loss(net: MTSNet, batch, loss_fn) -> torch.Tensor:  # noqa: ANN001
    if net.cfg.variant == "simakp":
        both = batch.arguments + batch.key_points
        emb = net([s.text for s in both], [s.topic for s in both], [s.stance for s in both])
        n = len(batch.arguments)
        return loss_fn(emb[:n], emb[n:], torch.tensor(batch.labels, device=emb.device))
    st = batch.statements
    emb = net([s.text for s in st], [s.topic for s in st], [s.stance for s in st])
    return loss_fn(emb, torch.tensor(batch.labels, device=emb.device))


def _optimizer(net: MTSNet, cfg: MTSConfig, total_steps: int):  # noqa: ANN202
    from transformers import get_linear_schedule_with_warmup

    body = [p for p in net.backbone.parameters() if p.requires_grad]
    head = list(net.stance.parameters()) + list(net.proj.parameters())
    groups = ([{"params": body, "lr": cfg.lr}] if body else []) + [{"params": head, "lr": cfg.head_lr}]
    opt = torch.optim.AdamW(groups,
                            weight_decay=cfg.weight_decay)
    sched = get_linear_schedule_with_warmup(opt, int(cfg.warmup_ratio * total_steps), total_steps)
    return opt, sched


def save_mts(net: MTSNet, folder: Path, info: dict) -> None:
    from argsim.io import write_json

    net.save(folder)
    write_manifest(folder, "kpm-mts")
    write_json(folder / TRAIN_INFO, info)


def train_mts(train: KPMData, out: str | Path, cfg: MTSConfig, device: str | None = None,
              quiet: bool = False, log_every: int = 0, init: str | Path | None = None) -> dict:
    """Train one model on `train` and save it at `out` (after every epoch, so an interrupted run still
    leaves the last finished epoch). Returns the training info (timings, peak memory, losses)."""
    from argsim.backend import resolve_device
    from argsim.results import peak_memory_mb
    from argsim.settings import RUNTIME, seed_everything

    if cfg.variant not in VARIANTS:
        raise ArgsimError(f"unknown variant '{cfg.variant}': choose one of {', '.join(VARIANTS)}")
    seed_everything(cfg.seed)
    out = Path(out)
    dev = resolve_device(device or RUNTIME.device)
    if init is not None:  # continue training a saved MTS folder (same architecture, new schedule)
        from argsim.kpm.mts_model import load_net

        net = load_net(init, dev)
        if net.cfg.variant != cfg.variant or net.cfg.pooling != cfg.pooling:
            raise ArgsimError(f"{init}: saved as {net.cfg.variant}/{net.cfg.pooling}, cannot continue as "
                              f"{cfg.variant}/{cfg.pooling}")
        for name in ("model", "stance_dim", "out_dim"):  # the architecture is the saved one
            setattr(cfg, name, getattr(net.cfg, name))
        net.cfg = cfg
    else:
        net = build_net(cfg).to(dev)
    net.freeze_lower_layers(cfg.freeze_layers)
    if cfg.frozen_backbone:
        net.freeze_backbone()
    elif cfg.train_layers:
        net.enable_top_layer_training(cfg.train_layers)
    if cfg.variant == "simakp":
        loss_fn = PairContrastiveLoss(cfg.contrastive_pos_margin, cfg.contrastive_neg_margin, cfg.miner_epsilon)
    else:
        loss_fn = ClusterLoss(cfg.tuplet_margin_deg, cfg.tuplet_scale, cfg.ipv_weight, cfg.miner_epsilon)
    steps_per_epoch = len(_epoch_batches(train, cfg, 0))
    if steps_per_epoch == 0:
        raise ArgsimError(f"{train.name}: no key point with a matching argument to build batches from")
    opt, sched = _optimizer(net, cfg, steps_per_epoch * cfg.epochs)
    info: dict = {"method": cfg.variant, "config": asdict(cfg), "train": train.name, "device": dev,
                  "steps": 0, "epochs": [], "seconds": 0.0, "init": str(init) if init else None}
    start = time.perf_counter()
    for epoch in range(cfg.epochs):
        net.train()
        batches = _epoch_batches(train, cfg, epoch)
        t0, losses = time.perf_counter(), []
        with progress_bar(len(batches), f"{cfg.variant} epoch {epoch + 1}/{cfg.epochs}", enabled=not quiet) as bar:
            for batch in batches:
                loss = _step_loss(net, batch, loss_fn)
                opt.zero_grad()
                if loss.requires_grad:
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                    opt.step()
                sched.step()
                losses.append(float(loss.detach()))
                info["steps"] += 1
                bar.advance(1)
                if log_every and info["steps"] % log_every == 0:
                    print(f"[{cfg.variant}] epoch {epoch + 1} step {info['steps']} loss(last {log_every}) "
                          f"{sum(losses[-log_every:]) / log_every:.4f} {time.perf_counter() - t0:.0f}s",
                          file=sys.stderr, flush=True)
        net.eval()
        mean_loss = sum(losses) / len(losses) if losses else math.nan
        info["epochs"].append({"epoch": epoch + 1, "seconds": round(time.perf_counter() - t0, 1),
                               "batches": len(batches), "mean_loss": round(mean_loss, 5)})
        info["seconds"] = round(time.perf_counter() - start, 1)
        info["seconds_per_epoch"] = round(info["seconds"] / (epoch + 1), 1)
        info["peak_mb"] = peak_memory_mb()
        save_mts(net, out, info)
    return info


def train_folds(train: KPMData, dev: KPMData, out: str | Path, cfg: MTSConfig, folds: int,
                only: list[int] | None = None, device: str | None = None, quiet: bool = False,
                log_every: int = 0) -> list[dict]:
    """Topic k-fold (fold 1 = the official split): one model per fold under out/fold_<i>, plus an ensemble
    folder `out` whose `argsim_encoder.json` averages the cosine of every trained fold model."""
    out = Path(out)
    infos = []
    members = []
    for i, (tr, _held) in enumerate(topic_folds(train, dev, folds), start=1):
        folder = out / f"fold_{i}"
        if only and i not in only:
            if (folder / TRAIN_INFO).is_file():
                members.append(folder.name)
            continue
        info = train_mts(tr, folder, cfg, device, quiet, log_every)
        info["fold"] = i
        infos.append(info)
        members.append(folder.name)
    write_ensemble(out, members)
    return infos
