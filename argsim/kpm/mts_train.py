"""Train MTS (or its QA / SimAKP baselines), save a folder `get_encoder` loads, optionally over topic folds.

Trains through argsim.training's accelerate loop: the device / precision / processes of the run, the MTS policy
(AdamW, weight decay 0.01, 5% warm-up, linear decay, clipping 1; the heads at their own rate), budgets,
checkpoints under OUT/checkpoints and --resume (an epoch's batches are a function of the seed and the epoch).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError
from argsim.io import write_json
from argsim.kpm.mts_data import cluster_batches, pair_batches, topic_folds
from argsim.kpm.mts_encoder import write_ensemble, write_manifest
from argsim.kpm.mts_model import VARIANTS, ClusterLoss, MTSConfig, MTSNet, PairContrastiveLoss, build_net
from argsim.training.fit import fit

TRAIN_INFO = "argsim_train.json"


def _epoch_batches(train: KPMData, cfg: MTSConfig, epoch: int) -> list:
    seed = cfg.seed * 1000 + epoch
    if cfg.variant == "simakp":
        batches = pair_batches(train, cfg.pair_batch_size, seed)
    else:
        batches = cluster_batches(train, cfg.max_pos, cfg.max_neg, cfg.max_unmatched, seed)
    return batches[: cfg.max_batches] if cfg.max_batches else batches


def _step_loss(net: MTSNet, batch, loss_fn) -> torch.Tensor:
    if net.cfg.variant == "simakp":
        both = batch.arguments + batch.key_points
        emb = net([s.text for s in both], [s.topic for s in both], [s.stance for s in both])
        n = len(batch.arguments)
        return loss_fn(emb[:n], emb[n:], torch.tensor(batch.labels, device=emb.device))
    st = batch.statements
    emb = net([s.text for s in st], [s.topic for s in st], [s.stance for s in st])
    return loss_fn(emb, torch.tensor(batch.labels, device=emb.device))


def policy(cfg: MTSConfig):
    """AdamW with weight decay `cfg.weight_decay`, warm-up `cfg.warmup_ratio`, linear decay, clipping 1."""
    from argsim.training import OptimPolicy

    return OptimPolicy(lr=cfg.lr, weight_decay=cfg.weight_decay, warmup_ratio=cfg.warmup_ratio, max_grad_norm=1.0)


def _groups(net: MTSNet, cfg: MTSConfig) -> list[dict]:
    body = [p for p in net.backbone.parameters() if p.requires_grad]
    head = list(net.stance.parameters()) + list(net.proj.parameters())
    return ([{"params": body, "lr": cfg.lr}] if body else []) + [{"params": head, "lr": cfg.head_lr}]


class MTSMapEvaluator:
    """The official KPA Track 1 mAP (leaderboard formula) of an MTS network in memory, in the
    sentence-transformers evaluator style: called on the network, it returns `{"<name>_strict_map": ...,
    "<name>_relaxed_map": ...}`; `primary_metric` is the strict mAP. Every argument is scored against the key
    points of its topic and stance by the cosine of the two statements' vectors (topic and stance as inputs),
    as `rank keypoints --model DIR` scores a saved MTS folder.

    Args:
        gold: the labelled split to score (e.g. ArgKP dev).
        name: the metrics' prefix.
        batch_size: statements per forward pass.

    Returns (when called on a network): the two mAPs.

    Example:
        >>> ev = MTSMapEvaluator(load_argkp("dev"))  # doctest: +SKIP
        >>> ev(net)["dev_strict_map"]  # doctest: +SKIP
        0.79...
    """

    def __init__(self, gold: KPMData, name: str = "dev", batch_size: int = 64) -> None:
        if not gold.has_labels:
            raise ArgsimError(f"{gold.name}: the evaluator needs gold labels")
        self.gold, self.name, self.batch_size = gold, name, batch_size
        self.primary_metric = f"{name}_strict_map"
        self.greater_is_better = True

    def __call__(self, net: MTSNet, output_path: str | None = None, epoch: int = -1,
                 steps: int = -1) -> dict[str, float]:
        import numpy as np

        from argsim.backend.encoder import Encoder
        from argsim.kpm.scoring import score_key_points
        from argsim.metrics.kpa_map import evaluate_map

        batch_size = self.batch_size

        class Live(Encoder):  # the network being trained: no disk cache, no progress bars
            def __init__(self) -> None:
                super().__init__()
                self.name, self.identity = "training", ""
                self.configure(use_cache=False, quiet=True)

            def _encode_batch(self, texts: list[str]) -> np.ndarray:
                raise NotImplementedError("MTS encodes statements with their topic and stance")

            def encode_statements(self, texts, topics, stances, engine=None) -> np.ndarray:
                outs = []
                with torch.inference_mode():
                    for i in range(0, len(texts), batch_size):
                        outs.append(net(list(texts[i:i + batch_size]), list(topics[i:i + batch_size]),
                                        list(stances[i:i + batch_size])).float().cpu().numpy())
                return np.concatenate(outs, axis=0) if outs else np.zeros((0, net.cfg.out_dim), np.float32)

        was_training = net.training
        net.eval()
        try:
            result = evaluate_map(score_key_points(self.gold, Live()), self.gold)
        finally:
            net.train(was_training)
        return {self.primary_metric: result.strict, f"{self.name}_relaxed_map": result.relaxed}


def save_mts(net: MTSNet, folder: Path, info: dict) -> None:
    net.save(folder)
    write_manifest(folder, "kpm-mts")
    write_json(folder / TRAIN_INFO, info)


def train_mts(train: KPMData, out: str | Path, cfg: MTSConfig, device: str | None = None,
              quiet: bool = False, log_every: int = 0, init: str | Path | None = None, placement=None,
              budget=None, dev: KPMData | None = None) -> dict:
    """Train one model on `train` through the accelerate loop and save it at `out` (rank 0, after every epoch,
    so an interrupted run still leaves the last finished epoch; OUT/checkpoints for --resume). Returns the
    training info (timings, peak memory, losses). `placement`: device / precision / seed (default: `device` or
    the CPU, fp32, `cfg.seed`); `budget`: stops, accumulation, checkpoints (default: none).

    Model selection: with `dev` (labelled), `MTSMapEvaluator` (the official strict mAP, the task's metric)
    scores the network after every epoch and the folder keeps the best epoch (the first of equal scores), not
    the last; `info["dev"]` lists the scores, `info["best_epoch"]` the kept one. A run stopped by a budget
    mid-epoch leaves the best finished epoch (or, before any, the stopped weights); --resume continues the
    checkpoint under OUT/checkpoints as without `dev`."""
    from argsim.measure import peak_memory_mb
    from argsim.settings import seed_everything
    from argsim.training import Budget, resolve_placement
    from argsim.training.loop import TrainLoop
    from argsim.training.record import data_hash, train_config, write_records

    if cfg.variant not in VARIANTS:
        raise ArgsimError(f"unknown variant '{cfg.variant}': choose one of {', '.join(VARIANTS)}")
    placement = placement or resolve_placement(device or "cpu", "fp32", seed=cfg.seed)
    budget = budget or Budget()
    cfg.seed = placement.seed
    seed_everything(cfg.seed)
    out = Path(out)
    if init is not None:  # continue training a saved MTS folder (same architecture, new schedule)
        from argsim.kpm.mts_model import load_net

        net = load_net(init, "cpu")
        if net.cfg.variant != cfg.variant or net.cfg.pooling != cfg.pooling:
            raise ArgsimError(f"{init}: saved as {net.cfg.variant}/{net.cfg.pooling}, cannot continue as "
                              f"{cfg.variant}/{cfg.pooling}")
        for name in ("model", "stance_dim", "out_dim"):  # the architecture is the saved one
            setattr(cfg, name, getattr(net.cfg, name))
        net.cfg = cfg
    else:
        net = build_net(cfg)
    net.freeze_lower_layers(cfg.freeze_layers)
    if cfg.frozen_backbone:
        net.freeze_backbone()
    elif cfg.train_layers:
        net.enable_top_layer_training(cfg.train_layers)
    if cfg.variant == "simakp":
        loss_fn = PairContrastiveLoss(cfg.contrastive_pos_margin, cfg.contrastive_neg_margin, cfg.miner_epsilon)
    else:
        loss_fn = ClusterLoss(cfg.tuplet_margin_deg, cfg.tuplet_scale, cfg.ipv_weight, cfg.miner_epsilon)
    n_batches = len(_epoch_batches(train, cfg, 0))
    if n_batches == 0:
        raise ArgsimError(f"{train.name}: no key point with a matching argument to build batches from")
    loop = TrainLoop(out, placement, budget, policy(cfg))
    info: dict = {"method": cfg.variant, "config": asdict(cfg), "train": train.name, "device": placement.device,
                  "precision": placement.precision, "processes": placement.processes, "steps": 0, "epochs": [],
                  "seconds": 0.0, "init": str(init) if init else None}
    losses: list[float] = []  # the epoch in progress's (for --log-every)
    evaluator = MTSMapEvaluator(dev) if dev is not None else None
    if evaluator is not None:
        info["dev"], info["best_epoch"] = [], None
    clock = {"t0": time.perf_counter(), "batches": 0}  # the epoch in progress: its start (--log-every), batches

    def epoch_batches(epoch: int) -> list:
        if epoch != loop.epoch or loop.next_batch == 0:
            clock["t0"] = time.perf_counter()
            losses.clear()
        batches = _epoch_batches(train, cfg, epoch)
        clock["batches"] = len(loop.shard(batches))
        return batches

    def on_loss(value: float) -> None:
        losses.append(value)
        info["steps"] = loop.steps
        if log_every and loop.is_main and info["steps"] % log_every == 0:
            print(f"[{cfg.variant}] epoch {loop.epoch + 1} step {info['steps']} loss(last {log_every}) "
                  f"{sum(losses[-log_every:]) / log_every:.4f} {time.perf_counter() - clock['t0']:.0f}s",
                  file=sys.stderr, flush=True)

    def on_epoch_end(row: dict, kept: bool) -> None:
        epoch = row["epoch"]
        info["epochs"].append({"epoch": epoch, "seconds": round(row["epoch_seconds"], 1),
                               "batches": clock["batches"],
                               "mean_loss": round(math.nan if row["loss"] is None else row["loss"], 5)})
        info["seconds"] = round(loop.seconds(), 1)
        info["seconds_per_epoch"] = round(info["seconds"] / epoch, 1)
        info["peak_mb"] = peak_memory_mb()
        if evaluator is not None:
            info["dev"].append({"epoch": epoch, **{k: round(v, 5) for k, v in row.items()
                                                   if k.startswith(f"{evaluator.name}_")}})
            if kept:
                info["best_epoch"] = epoch
        if not kept and loop.is_main:
            write_json(out / TRAIN_INFO, info)

    def state() -> dict:
        info["steps"] = loop.steps
        return {"info": info, "losses": losses}

    def restore(saved: dict) -> None:
        nonlocal info
        info = saved["info"]
        losses[:] = saved["losses"]

    def legacy_state(extras: dict) -> dict:  # a checkpoint written before fit kept its own state
        old = extras["info"]
        best = [r for r in old.get("dev") or [] if r["epoch"] == old.get("best_epoch")]
        return {"elapsed": sum(e["seconds"] for e in old["epochs"]), "epoch_losses": list(extras["losses"]),
                "best": {"epoch": best[0]["epoch"], "step": None, "value": best[0][evaluator.primary_metric]}
                if best and evaluator is not None else None}

    result = fit(loop, net, _groups(net, cfg), lambda model, batch: _step_loss(model, batch, loss_fn), epoch_batches,
                 epochs=cfg.epochs, batches_per_epoch=n_batches, evaluator=evaluator,
                 keep=lambda row: save_mts(net, out, info), on_epoch_end=on_epoch_end, on_loss=on_loss, state=state,
                 on_resume=restore, legacy_state=legacy_state,
                 progress=None if quiet else lambda epoch: f"{cfg.variant} epoch {epoch + 1}/{cfg.epochs}")
    net.eval()
    info["seconds"] = round(loop.seconds(), 1)
    info.setdefault("seconds_per_epoch", info["seconds"])
    info["peak_mb"], info["stopped_by"] = peak_memory_mb(), loop.stopped_by
    if loop.is_main:
        if evaluator is not None and info.get("best_epoch") is not None:
            write_json(out / TRAIN_INFO, info)  # the folder holds the best epoch's weights
        else:
            save_mts(net, out, info)
        run = {"steps": loop.steps, "seconds": info["seconds"], "stopped_by": loop.stopped_by,
               "epochs": info["epochs"], "losses": [r["loss"] for r in result.history],  # the learning curve
               "loss_steps": [r["step"] for r in result.history], "evals": result.evals}
        hashes = {train.name: data_hash(sorted((str(a), str(k), int(v)) for (a, k), v in train.labels.items()))}
        metrics = {}
        if evaluator is not None and info.get("best_epoch") is not None:
            metrics = {k: v for k, v in info["dev"][info["best_epoch"] - 1].items() if k != "epoch"}
            metrics["best_epoch"] = info["best_epoch"]
        write_records(out, train_config(f"kpm-{cfg.variant}", placement, budget, policy(cfg), asdict(cfg), hashes,
                                        run, metrics, base_model=str(cfg.model)))
    return info


def train_folds(train: KPMData, dev: KPMData, out: str | Path, cfg: MTSConfig, folds: int,
                only: list[int] | None = None, device: str | None = None, quiet: bool = False,
                log_every: int = 0, placement=None, budget=None) -> list[dict]:
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
        info = train_mts(tr, folder, cfg, device, quiet, log_every, placement=placement, budget=budget)
        info["fold"] = i
        infos.append(info)
        members.append(folder.name)
    from argsim.training import is_main_process

    if is_main_process():
        write_ensemble(out, members)
    return infos
