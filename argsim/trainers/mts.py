"""Train MTS (or its QA / SimAKP baselines), save a folder `get_encoder` loads, optionally over topic folds.

Trains on transformers' Trainer (`argsim.training.trainer.fit`) with the MTS policy (AdamW, weight decay 0.01, 5%
warm-up, linear decay, clipping 1; the heads at their own rate); an epoch's key-point-centred batches (a function
of the seed and the epoch) are served whole (`whole_batches`), pytorch-metric-learning's losses are the loss.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from functools import partial
from pathlib import Path

import torch

from argsim.backend.encoder import Encoder
from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError
from argsim.evaluation.kpa_map import KPAMapEvaluator
from argsim.kpm.mts.batches import cluster_batches, pair_batches, topic_folds
from argsim.kpm.mts.config import VARIANTS, MTSConfig
from argsim.kpm.mts.encoder import MTSEncoder, write_ensemble, write_manifest
from argsim.kpm.mts.network import ClusterLoss, MTSNet, PairContrastiveLoss, build_net, load_net
from argsim.kpm.scoring import score_key_points
from argsim.measure import peak_memory_mb
from argsim.training import begin_run, is_main_process
from argsim.training.budget import check_epoch_selection
from argsim.training.callbacks import LogCallback, epoch_rows
from argsim.training.record import TRAIN_INFO, data_hash, run_info, save_run
from argsim.training.trainer import fit, whole_batches


def _epoch_batches(train: KPMData, cfg: MTSConfig, epoch: int) -> list:
    seed = cfg.seed * 1000 + epoch
    batches = (pair_batches(train, cfg.pair_batch_size, seed) if cfg.variant == "simakp"
               else cluster_batches(train, cfg.max_pos, cfg.max_neg, cfg.max_unmatched, seed))
    return batches[: cfg.max_batches] if cfg.max_batches else batches


def _step_loss(net: MTSNet, batch, loss_fn) -> torch.Tensor:
    pairs = net.cfg.variant == "simakp"  # SimAKP: (arguments, key points) pairs; else statements by cluster
    st = batch.arguments + batch.key_points if pairs else batch.statements
    emb = net([s.text for s in st], [s.topic for s in st], [s.stance for s in st])
    labels = torch.tensor(batch.labels, device=emb.device)
    return loss_fn(emb[:len(batch.arguments)], emb[len(batch.arguments):], labels) if pairs else loss_fn(emb, labels)


class LiveMTS(MTSEncoder):
    """An MTS network in training as the `MTSEncoder` of a saved folder (no disk cache), for `KPAMapEvaluator`."""

    def __init__(self, net: MTSNet, batch_size: int = 64) -> None:
        Encoder.__init__(self)
        self.net, self.batch_size, self.name, self.identity, self.exported = net, batch_size, "training", "", None
        self._torch = torch
        self.configure(use_cache=False, quiet=True)


def _net(cfg: MTSConfig, init: str | Path | None) -> MTSNet:
    """The network to train: a new one, or (`init`) a saved MTS folder continued (same architecture)."""
    if init is None:
        net = build_net(cfg)
    else:
        net = load_net(init, "cpu")
        if net.cfg.variant != cfg.variant or net.cfg.pooling != cfg.pooling:
            raise ArgsimError(f"{init}: saved as {net.cfg.variant}/{net.cfg.pooling}, cannot continue as "
                              f"{cfg.variant}/{cfg.pooling}")
        for name in ("model", "stance_dim", "out_dim"):  # the architecture is the saved one
            setattr(cfg, name, getattr(net.cfg, name))
        net.cfg = cfg
    net.freeze_lower_layers(cfg.freeze_layers)
    if cfg.frozen_backbone:
        net.freeze_backbone()
    elif cfg.train_layers:
        net.enable_top_layer_training(cfg.train_layers)
    return net


def train_mts(train: KPMData, out: str | Path, cfg: MTSConfig, quiet: bool = False, log_every: int = 0,
              init: str | Path | None = None, placement=None, budget=None, dev: KPMData | None = None) -> dict:
    """Train one model on `train` (`fit`: a checkpoint at every epoch end) and save it at `out` (rank 0);
    returns the training info (timings, peak memory, per-epoch mean losses). `log_every`: a loss line on stderr
    every N steps. With `dev`, the official strict mAP (`KPAMapEvaluator` over `LiveMTS` vectors) after every
    epoch chooses the kept epoch (`info["dev"]`: the scores, `info["best_epoch"]`: the kept one; a budget's
    `checkpoint_every` is refused with it)."""
    if cfg.variant not in VARIANTS:
        raise ArgsimError(f"unknown variant '{cfg.variant}': choose one of {', '.join(VARIANTS)}")
    run = begin_run(cfg, out, placement, budget, trainer=f"kpm-{cfg.variant}")
    if dev is not None:
        check_epoch_selection(run.budget, "--keep-best")
    net = _net(cfg, init)
    loss_fn = (PairContrastiveLoss(cfg.contrastive_pos_margin, cfg.contrastive_neg_margin, cfg.miner_epsilon)
               if cfg.variant == "simakp" else
               ClusterLoss(cfg.tuplet_margin_deg, cfg.tuplet_scale, cfg.ipv_weight, cfg.miner_epsilon))
    labels = data_hash(sorted((str(a), str(k), int(v)) for (a, k), v in train.labels.items()))
    if not (data := whole_batches(partial(_epoch_batches, train, cfg), key=labels)).n_batches:
        raise ArgsimError(f"{train.name}: no key point with a matching argument to build batches from")
    evaluator = KPAMapEvaluator(dev, score=lambda m: score_key_points(dev, LiveMTS(m))) if dev is not None else None
    logger = [LogCallback(partial(print, file=sys.stderr, flush=True), label=cfg.variant)] if log_every else []
    groups = [{"params": list(net.backbone.parameters()), "lr": cfg.lr},  # the trainable ones (`ModuleTrainer`)
              {"params": list(net.stance.parameters()) + list(net.proj.parameters()), "lr": cfg.head_lr}]
    trainer, rec = fit(net, data, run, partial(_step_loss, loss_fn=loss_fn), groups=groups,
                       evaluator=evaluator, callbacks=logger, logging_steps=log_every or 1)
    epochs = epoch_rows(trainer.state.log_history)
    info: dict = {"method": cfg.variant, "config": asdict(cfg), "train": train.name, **run_info(run, rec),
                  "processes": run.placement.processes, "epochs": epochs, "init": str(init) if init else None,
                  "seconds_per_epoch": round(rec["seconds"] / max(1, len(epochs)), 1), "peak_mb": peak_memory_mb()}
    metrics = _dev_rows(rec, evaluator.name, info) if evaluator is not None else {}
    if trainer.is_world_process_zero():
        net.save(run.out)
        write_manifest(run.out, "kpm-mts")
        save_run(run, asdict(cfg), {train.name: labels}, rec | {"epochs": epochs}, metrics, str(cfg.model),
                 {TRAIN_INFO: info})
    return info


def _dev_rows(rec: dict, name: str, info: dict) -> dict:
    """Add the dev evaluations (`dev` rows) and the kept epoch (`best_epoch`) to `info`; returns the kept metrics."""
    rows = [{"epoch": i, "step": e["step"], **{k.removeprefix("eval_"): round(v, 5) for k, v in e.items()
                                               if k.startswith(f"eval_{name}_")}}
            for i, e in enumerate(rec["evals"], start=1)]
    best = rec["best"] or {}
    kept = next((r for r in rows if r["step"] == best.get("step")), None)
    info |= {"dev": rows, "best_epoch": kept["epoch"] if kept else None}
    if kept is None:
        return {}
    return {k: v for k, v in kept.items() if k not in ("epoch", "step")} | {"best_epoch": kept["epoch"]}


def check_folds(folds: int, only: list[int] | None) -> None:
    """One line for a fold of `only` (`--fold`) that `folds` (`--folds`) does not have; run before any work."""
    if bad := [i for i in only or [] if not 1 <= i <= folds]:
        raise ArgsimError(f"--fold {bad[0]}: --folds {folds} numbers its folds 1 to {folds}")


def train_folds(train: KPMData, dev: KPMData, out: str | Path, cfg: MTSConfig, folds: int,
                only: list[int] | None = None, quiet: bool = False, log_every: int = 0, placement=None,
                budget=None) -> list[dict]:
    """Topic k-fold (fold 1 = the official split): a model per fold under out/fold_<i>, and `out` the ensemble
    (`argsim_encoder.json`) averaging their cosines."""
    check_folds(folds, only)
    out, infos, members = Path(out), [], []
    for i, (tr, _held) in enumerate(topic_folds(train, dev, folds), start=1):
        folder = out / f"fold_{i}"
        if trained := not only or i in only:
            infos.append(train_mts(tr, folder, cfg, quiet, log_every, placement=placement, budget=budget) | {"fold": i})
        if trained or (folder / TRAIN_INFO).is_file():  # a fold left out joins the ensemble when trained before
            members.append(folder.name)
    if is_main_process():
        write_ensemble(out, members)
    return infos
