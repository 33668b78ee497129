"""The Bi-/Unipolar-/Bipolar-encoders trained on transformers' Trainer (`fit`): Adam, one sampled negative per pair
and epoch (`EpochNegatives`), validation @1/K after every epoch choosing the saved model, early stopping (`train`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from operator import attrgetter
from pathlib import Path

import numpy as np
import torch
from transformers import EarlyStoppingCallback

from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.data import PairData
from argsim.counter.neural.heads import classification_loss, triplet_loss
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.sampling import NegativeSampler
from argsim.counter.neural.store import load_model, save_model
from argsim.counter.neural.validation import heads_on_cpu
from argsim.errors import ModelError
from argsim.evaluation.counter import CounterArgumentEvaluator
from argsim.io import write_json
from argsim.training import Budget, Placement, begin_run
from argsim.training.budget import check_epoch_selection
from argsim.training.callbacks import BudgetCallback, HistoryCallback
from argsim.training.curve import OWN_HISTORY
from argsim.training.record import data_hash, save_run
from argsim.training.run import last_checkpoint
from argsim.training.trainer import ModuleData, fit, select_metric


def batch_loss(model: CounterModel, u: torch.Tensor, vp: torch.Tensor, vn: torch.Tensor) -> torch.Tensor:
    """The model kind's loss on base embeddings: triplet (retrieval) + CE on both pairs (classification)."""
    cfg = model.config
    loss = torch.zeros((), dtype=u.dtype, device=u.device)
    if cfg.has_retrieval:
        loss = loss + triplet_loss(model.retrieval(u, "point"), model.retrieval(vp, "candidate"),
                                   model.retrieval(vn, "candidate"), cfg.margin)
    if cfg.has_classifier:
        loss = loss + classification_loss(model.classify(u, vp), model.classify(u, vn))
    return loss


def warm_start(model: CounterModel, folder: str | Path) -> None:
    """Start `model` from a saved model of the same kind and width (a folder or a shipped model's name): its heads
    and, when both hold LoRA tower adapters (e.g. the shipped `counter-bipolar`), the adapters' tensors too.

    Reading chosen: an adapter of another rank, alpha or base is refused (one line), not dropped; a saved model
    with adapters starts a run without them with its heads only; a separate candidate tower takes the saved
    `candidate_encoder/` adapter, else the point tower's.

    Args:
        model: the new model (its towers already wrapped in their adapters when `config.lora`).
        folder: the saved model (`store.load_model` reads it, checking its base).

    Raises:
        ModelError: another kind or width; adapters of another rank, alpha or base (one line).

    Example:
        >>> lora = NeuralConfig(train_encoder=True, lora_rank=16)
        >>> warm_start(CounterModel(lora), "counter-bipolar")  # doctest: +SKIP
    """
    source = load_model(folder)
    if source.config.kind != model.config.kind or source.dim != model.dim:
        raise ModelError(f"{folder}: a {source.config.kind} model of width {source.dim} cannot initialise a "
                         f"{model.config.kind} model of width {model.dim}")
    have, want, adapter = source.config, model.config, attrgetter("lora_rank", "lora_alpha", "base_model")
    adapters = want.lora and have.lora  # the saved tower adapters start this model's
    if adapters and adapter(have) != adapter(want):
        raise ModelError(f"{folder}: its tower adapters (rank {have.lora_rank}, alpha {have.lora_alpha:g}, over "
                         f"{have.base_model}) cannot start towers of rank {want.lora_rank}, alpha "
                         f"{want.lora_alpha:g} over {want.base_model}: give --lora-rank {have.lora_rank} "
                         f"--lora-alpha {have.lora_alpha:g} --model {have.base_model}")
    heads = {k: v for k, v in source.state_dict().items() if not k.startswith(("point_tower.", "cand_tower."))}
    model.load_state_dict(heads, strict=False)
    if adapters:
        point, cand = Path(source.folder) / "point_encoder", Path(source.folder) / "candidate_encoder"
        model.point_tower.set_lora(point)
        if model.cand_tower is not model.point_tower:
            model.cand_tower.set_lora(cand if cand.is_dir() else point)


class EpochNegatives:
    """Each epoch's batches (and a batch's `loss`): a fresh negative per pair (hard ones from the model as the epoch
    begins) and a fresh order, seeded by (seed, epoch); the epoch in progress (`current`) goes into every
    checkpoint, since a run resumed mid-epoch cannot recompute its hard negatives.

    Example:
        >>> neg = EpochNegatives(model, data, config, base)  # doctest: +SKIP
        >>> neg.batches(0)[0]  # doctest: +SKIP
        [17, 3, 250, ...]
    """

    def __init__(self, model: CounterModel, data: PairData, config: NeuralConfig, base: np.ndarray | None) -> None:
        self.model, self.data, self.config, self.base = model, data, config, base
        self.sampler = NegativeSampler(data.train_pairs, data.train_collection, config.sampling, config.hard_rate,
                                       config.hard_pool, seed=config.seed)
        self.current: dict = {}

    def batches(self, idx: int) -> list[list[int]]:
        """Epoch idx + 1's batches of pair indices."""
        epoch, cfg = idx + 1, self.config
        if self.current.get("epoch") != epoch:
            vectors = None
            if self.sampler.probability(epoch) > 0:
                table = self.base if self.base is not None else self.model.embed_texts(  # the current towers'
                    self.data.texts, progress="embedding the texts")
                with heads_on_cpu(self.model):
                    vectors = self.model.retrieval_numpy(table, "candidate") if cfg.has_retrieval else table
            self.sampler.rng = np.random.default_rng([cfg.seed, epoch])
            negatives, hard = self.sampler.sample(epoch, vectors)
            order = np.random.default_rng([cfg.seed + 1, epoch]).permutation(len(self.data.train_pairs))
            self.current = {"epoch": epoch, "negatives": negatives.tolist(), "order": order.tolist(), "hard": hard}
        order = self.current["order"]
        return [order[s:s + cfg.batch_size] for s in range(0, len(order), cfg.batch_size)]

    def collate(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows_, pairs = np.asarray(rows), self.data.train_pairs
        return pairs[rows_, 0], pairs[rows_, 1], np.asarray(self.current["negatives"])[rows_]

    def loss(self, net: CounterModel, rows: tuple[np.ndarray, np.ndarray, np.ndarray]) -> torch.Tensor:
        """The batch loss over (point, positive, negative) text indices, from `base` (frozen) or the model's towers."""
        if self.base is not None:
            device = next(net.parameters()).device
            u, vp, vn = (torch.from_numpy(self.base[i]).to(device) for i in rows)
        else:
            u, vp, vn = (net.base(list(np.asarray(self.data.texts, dtype=object)[i]), side)
                         for i, side in zip(rows, ("point", "candidate", "candidate"), strict=True))
        return batch_loss(net, u, vp, vn)


def train(config: NeuralConfig, data: PairData, out_dir: str | Path, log: Callable[[dict], None] | None = None,
          model: CounterModel | None = None, init: str | Path | None = None, placement: Placement | None = None,
          budget: Budget | None = None) -> list[dict]:
    """Train `config.kind` on `data` (`fit`) and save the best-validated model in `out_dir` (rank 0);
    returns the history (`{"epoch", "loss", "val", "hard", "seconds"}` per epoch, epoch 0 untrained).

    Model selection: validation accuracy@1/`config.k_val` (section 6.3; `CounterArgumentEvaluator.from_pairs`)
    of every epoch chooses the saved one (the untrained model is recorded, not a candidate); `config.patience`
    evaluations without a better score stop the run. `budget.max_minutes` stops after the epoch that crosses it;
    `budget.max_steps` mid-epoch, resumed exactly; `budget.checkpoint_every` is refused (`check_epoch_selection`).
    `init`: `warm_start`'s folder.
    """
    run = begin_run(config, out_dir, placement, budget, policy={"schedule": "constant", "max_grad_norm": None},
                    trainer=f"counter-{config.kind}")
    check_epoch_selection(run.budget, f"the {config.kind}'s validation")  # its history and patience count epochs
    out_dir, budget = run.out, run.budget
    model = model if model is not None else CounterModel(config)
    if init is not None:
        warm_start(model, init)
    model.train_top_layers()
    base = None if config.train_encoder else model.embed_texts(data.texts, progress="embedding the texts")  # once
    negatives = EpochNegatives(model, data, config, base)
    evaluator = CounterArgumentEvaluator.from_pairs(data, config.k_val, base=base)  # chooses the saved epoch
    metric, info = select_metric(evaluator), {"config": config.as_dict(), "data": data.info}

    def row(state, metrics: dict, stopped: bool, loss: float | None, seconds: float) -> dict | None:
        epoch = state.epoch or 0  # a row per epoch (a budget's stop mid-epoch: none)
        return None if abs(epoch - round(epoch)) > 1e-6 else {
            "epoch": round(epoch), "loss": loss, "val": metrics[metric], "hard": negatives.current.get("hard", 0.0),
            "seconds": seconds}

    history = HistoryCallback(row, log=log,
                              write=lambda rows: write_json(out_dir / OWN_HISTORY, {**info, "history": rows}),
                              state_file="counter_state.json", extra=lambda: {"current": negatives.current})
    saved = history.restore(last_checkpoint(out_dir) if budget.resume else None)  # the epoch in progress continued
    if saved is not None:
        negatives.current = saved["current"]
    else:  # epoch 0: the untrained model
        history.add({"epoch": 0, "loss": None, "val": evaluator(model)[evaluator.primary_metric], "hard": 0.0,
                     "seconds": 0.0})

    # --max-minutes: at epoch ends, as the recipes expect
    epoch_budget = BudgetCallback(Budget(max_minutes=budget.max_minutes), epoch_end=True)
    callbacks = [history, EarlyStoppingCallback(config.patience), epoch_budget]
    groups = [{"params": model.head_parameters("retrieval"), "lr": config.lr},  # the trainable ones (`ModuleTrainer`)
              {"params": model.head_parameters("classification"), "lr": config.cls_lr or config.lr},
              {"params": model.tower_parameters(), "lr": config.encoder_lr}]  # none for a frozen encoder
    hashes = {split: data_hash([(data.texts[p], data.texts[c]) for p, c in pairs])  # what --resume checks
              for split, pairs in (("train", data.train_pairs), ("val", data.val_pairs))}
    module_data = ModuleData(range(len(data.train_pairs)), negatives.batches,
                             -(-len(data.train_pairs) // config.batch_size), negatives.collate, key=hashes)
    trainer, rec = fit(model, module_data, replace(run, budget=replace(budget, max_minutes=None)), negatives.loss,
                       groups=groups, evaluator=evaluator, callbacks=callbacks, logging_steps=1)
    rec["stopped_by"] = rec["stopped_by"] or epoch_budget.stopped_by  # `models build` resumes a stopped run
    if trainer.is_world_process_zero():
        _save_run(model, config, data.info, hashes, history.history, rec, run)
    return history.history


def _save_run(model: CounterModel, config: NeuralConfig, data_info: dict, hashes: dict, history: list[dict],
              rec: dict, run) -> None:
    """Rank 0: the kept (best-validated) model and the run's records (history.json: `HistoryCallback`'s, per row)."""
    best_row = max(history[1:] or history, key=lambda h: h["val"] if h["val"] == h["val"] else -1.0)
    save_model(model, run.out, info={"epoch": best_row["epoch"], "val": best_row["val"], "data": data_info})
    record = {**rec, "epochs_run": history[-1]["epoch"], "losses": [h["loss"] for h in history[1:]]}
    metrics = {f"val_at1_over_{config.k_val}_best": best_row["val"], "best_epoch": best_row["epoch"],
               f"val_at1_over_{config.k_val}_untrained": history[0]["val"]}
    save_run(run, config.as_dict(), hashes, record, metrics, config.base_model)
