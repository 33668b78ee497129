"""`fit`, the one training function of every argsim trainer: transformers' `Trainer` (the library's own for a
sentence-transformers model, `ModuleTrainer` for a custom torch network) with the same arguments, callbacks, resume
check and model selection for both (docs/training.md)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets
import torch
from accelerate.utils import broadcast_object_list
from safetensors.torch import load_model, save_model
from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
from torch import nn
from transformers import Trainer, TrainingArguments
from transformers.trainer_callback import PrinterCallback

from argsim.backend.adapters import adapter_checkpoint_loader, is_lora, save_adapter
from argsim.errors import ModelError
from argsim.io import write_json
from argsim.training.budget import Budget, check_cadence
from argsim.training.callbacks import BudgetCallback, IdentityCallback, InterruptCallback
from argsim.training.placement import TrainRun, is_main_process
from argsim.training.record import data_hash
from argsim.training.run import CHECKPOINTS, IDENTITY, WEIGHTS, out_lock, resume_point, run_settings


def trainer_arguments(run: TrainRun, examples: int, args_class: type = TrainingArguments,
                      **extra: object) -> TrainingArguments:
    """`args_class` (TrainingArguments or a subclass) for `run` over `examples` training examples, overridden by
    `extra`; checkpoints: OUT/checkpoints; the loss logged about ten times a run (every 1 to 50 steps)."""
    placement, budget, every = run.placement, run.budget, run.budget.checkpoint_every
    cpu = placement.device == "cpu"
    total = math.ceil(math.ceil(examples / (run.batch_size * placement.processes)) / budget.grad_accum * run.epochs)
    kw: dict = {"output_dir": str(Path(run.out) / CHECKPOINTS), "num_train_epochs": run.epochs,
                "per_device_train_batch_size": run.batch_size, "gradient_accumulation_steps": budget.grad_accum,
                "seed": placement.seed, "data_seed": placement.seed, "use_cpu": cpu,
                "bf16": placement.precision == "bf16", "fp16": placement.precision == "fp16",
                "save_strategy": "steps" if every else "no", "save_steps": every or 500, "save_total_limit": 1,
                "logging_steps": max(1, min(50, min(total, budget.max_steps or total) // 10)),
                "report_to": "none", "disable_tqdm": True, "ddp_find_unused_parameters": True,
                "ddp_backend": "gloo" if placement.processes > 1 and cpu else None, **run.policy.trainer_kwargs()}
    return args_class(**(kw | extra))


def run_trainer(trainer, out: Path, budget: Budget, ident: dict) -> dict:
    """`trainer.train()` (resumed with --resume) with the budget and interrupt callbacks (a signal leaves a
    checkpoint and exits 130 / 143); returns steps, seconds (also each epoch's: `epoch_seconds`), stop reason,
    losses, evaluations and the kept best. `ident` (the hashes of the data and of the trainable shapes, the seed, the
    effective batch, the learning rate) is recorded beside the checkpoints (and in each: one an earlier run left),
    with the steps of a finished run: a checkpoint made on other data or settings, or older than the finished run,
    is refused in one line, and so is a second run training into the same OUT at the same time."""
    budget_cb, interrupt = BudgetCallback(budget), InterruptCallback()
    trainer.remove_callback(PrinterCallback)  # no log dicts on stdout: the record keeps them
    for callback in (budget_cb, interrupt, IdentityCallback(IDENTITY, ident)):
        trainer.add_callback(callback)
    saved = Path(out) / CHECKPOINTS / IDENTITY
    with out_lock(out):
        resume_from = resume_point(saved, budget, ident)
        began = time.perf_counter()
        trainer.train(resume_from_checkpoint=resume_from)
        interrupt.raise_if_interrupted(str(saved.parent))
        state = trainer.state
        if state.global_step >= state.max_steps and is_main_process():
            write_json(saved, ident | {"finished": state.global_step})
    logs, folder = state.log_history, state.best_model_checkpoint  # the best `load_best_model_at_end` reloaded
    kept = trainer.args.load_best_model_at_end and folder is not None and state.best_metric is not None
    return {"steps": state.global_step, "seconds": round(time.perf_counter() - began, 2),
            "stopped_by": budget_cb.stopped_by, "resumed_from": resume_from, "epoch_seconds": budget_cb.epoch_seconds,
            "losses": [round(h["loss"], 5) for h in logs if "loss" in h],
            "loss_steps": [h["step"] for h in logs if "loss" in h],
            "evals": [{k: v for k, v in h.items() if k == "step" or (k.startswith("eval_") and k != "eval_loss")}
                      for h in logs if any(k.startswith("eval_") for k in h)],
            "best": {"step": int(str(folder).rsplit("-", 1)[1]), "value": float(state.best_metric)} if kept else None}


def selection_arguments(select: str, eval_every: int, budget: Budget) -> dict:
    """The training arguments that keep the best evaluation's weights by `select` (`load_best_model_at_end`),
    evaluating and saving every `eval_every` steps, else at every `--checkpoint-every`, else each epoch.

    Readings chosen (docs/training.md): every evaluated step is saved, so `--checkpoint-every` must be a multiple of
    `eval_every`; `save_total_limit` 2 keeps the best and the newest (a budget's stop); a loss is minimised.

    Args:
        select: the metric as the trainer logs it (e.g. "eval_dev_strict_map"; the "eval_" prefix may be left out).
        eval_every: evaluate every N steps (0: at the budget's checkpoints, else each epoch).
        budget: the run's `Budget`.

    Returns:
        keyword arguments for `trainer_arguments`.

    Example:
        >>> selection_arguments("dev_map", 0, Budget())["eval_strategy"]
        'epoch'
        >>> sorted(selection_arguments("eval_dev_map", 4, Budget(checkpoint_every=8)).items())[-3:]
        [('save_steps', 4), ('save_strategy', 'steps'), ('save_total_limit', 2)]
    """
    check_cadence(eval_every, budget)
    step = eval_every or budget.checkpoint_every
    cadence = {"eval_strategy": "steps", "eval_steps": step, "save_strategy": "steps", "save_steps": step} \
        if step else {"eval_strategy": "epoch", "save_strategy": "epoch"}
    metric = select if select.startswith("eval_") else f"eval_{select}"
    return cadence | {"load_best_model_at_end": True, "metric_for_best_model": metric,
                      "greater_is_better": not metric.endswith("loss"), "save_total_limit": 2}


class LossModule(nn.Module):
    """`forward(batch)` = the trainer's loss on the wrapped network. A batch with nothing to learn from (a loss
    without gradient) still runs a backward through every parameter, so DDP processes stay in step."""

    def __init__(self, net: nn.Module, loss: Callable[[nn.Module, Any], torch.Tensor]) -> None:
        super().__init__()
        self.net, self._loss = net, loss

    def forward(self, batch: Any) -> torch.Tensor:
        loss = self._loss(self.net, batch)
        if not loss.requires_grad:
            loss = loss + 0.0 * sum(p.sum() for p in self.net.parameters() if p.requires_grad)
        return loss


@dataclass
class ModuleData(torch.utils.data.Sampler):
    """A custom trainer's training data and its batch sampler: `records` (anything indexable), `batches(epoch)`
    (index lists, `n_batches` of them each epoch) and `collate` (a batch's records -> what `loss` takes; default:
    the list of records). transformers calls `set_epoch` at each epoch start (also in a resumed epoch, whose first
    batches it skips).

    Example:
        >>> data = ModuleData("abc", lambda e: [[e, 0], [1]], 2)
        >>> data.set_epoch(1)
        >>> list(data)
        [[1, 0], [1]]
    """

    records: Sequence
    batches: Callable[[int], Sequence[Sequence[int]]]
    n_batches: int
    collate: Callable[[list], Any] = list
    key: Any = None  # what identifies the data for `--resume` (default: the records)
    epoch: int = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self):
        return iter([list(b) for b in self.batches(self.epoch)])

    def __len__(self) -> int:
        return self.n_batches


def shuffled_batches(records: Sequence, batch_size: int, seed: int, key: Any = None) -> ModuleData:
    """`ModuleData` whose epoch `e` is the records in an order shuffled by `seed + e` (so a resumed run repeats it),
    in batches of `batch_size`.

    Example:
        >>> data = shuffled_batches("abcde", 2, seed=13)
        >>> data.n_batches, sorted(i for b in data.batches(0) for i in b)
        (3, [0, 1, 2, 3, 4])
    """
    def batches(epoch: int) -> list[list[int]]:
        order = list(range(len(records)))
        random.Random(seed + epoch).shuffle(order)
        return [order[s:s + batch_size] for s in range(0, len(order), batch_size)]

    return ModuleData(records, batches, -(-len(records) // batch_size), key=key)


def whole_batches(make: Callable[[int], Sequence], key: Any) -> ModuleData:
    """`ModuleData` whose epoch `e` is the batches `make(e)` (as many as `make(0)`'s) built whole as it begins (MTS's).

    Example:
        >>> data = whole_batches(lambda e: [f"e{e}b0", f"e{e}b1"], key="toy")
        >>> data.n_batches, data.batches(1)[1], data.collate([1])
        (2, [1], 'e1b1')
    """
    built: list = []
    n = len(make(0))

    def batches(epoch: int) -> list[list[int]]:
        built[:] = make(epoch)
        return [[i] for i in range(n)]

    return ModuleData(range(n), batches, n, collate=lambda rows: built[rows[0]], key=key)


class ModuleTrainer(Trainer):
    """transformers' `Trainer` whose model is `LossModule(net, loss)`, whose batches are `data`'s (its batch sampler),
    whose AdamW takes `groups` (`{"params", "lr"}`; the policy's rate and weight decay from `args`) and whose
    `evaluate` calls `evaluator(net) -> {metric: value}` (with a `primary_metric`; None: none)."""

    def __init__(self, net: nn.Module, loss: Callable, data: ModuleData, groups: list[dict],
                 evaluator: Callable | None = None, **kw: Any) -> None:
        self.net, self.data, self.groups, self.evaluator = net, data, groups, evaluator
        super().__init__(model=LossModule(net, loss), train_dataset=data.records,
                         eval_dataset=[0] if evaluator is not None else None, **kw)

    def get_train_dataloader(self) -> torch.utils.data.DataLoader:
        loader = torch.utils.data.DataLoader(self.data.records, batch_sampler=self.data, collate_fn=self.data.collate)
        return self.accelerator.prepare(loader)

    def create_optimizer(self, model: nn.Module | None = None) -> torch.optim.Optimizer:
        if self.optimizer is None:  # AdamW over the groups (a group without "lr" gets the policy's rate)
            groups = [{**g, "params": [p for p in g["params"] if p.requires_grad]} for g in self.groups]
            self.optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=self.args.learning_rate,
                                               weight_decay=self.args.weight_decay)
        return self.optimizer

    def _prepare_inputs(self, inputs: Any) -> Any:
        return inputs  # a batch of records: the loss puts its tensors on the device

    def _get_num_items_in_batch(self, batch_samples: list, device: torch.device) -> None:
        return None  # the loss is a per-batch mean (transformers divides it by the accumulation steps)

    def floating_point_ops(self, inputs: Any) -> int:
        return 0  # not counted for a custom network

    def compute_loss(self, model: nn.Module, inputs: Any, return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        loss = model(inputs)
        return (loss, None) if return_outputs else loss

    def evaluate(self, eval_dataset: Any = None, ignore_keys: Any = None,
                 metric_key_prefix: str = "eval") -> dict[str, float]:
        metrics: dict = {}
        if self.evaluator is not None and self.is_world_process_zero():
            self.net.eval()
            try:
                metrics = self.evaluator(self.net)
            finally:
                self.net.train()  # the mode every training step sets
        metrics = broadcast_object_list([metrics])[0] if self.args.world_size > 1 else metrics
        metrics = {f"{metric_key_prefix}_{k}": float(v) for k, v in metrics.items()}
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        if not self.args.should_save:
            return
        folder = Path(output_dir or self.args.output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        save_model(self.accelerator.unwrap_model(self.model), str(folder / WEIGHTS))  # a tied tensor once

    def _load_from_checkpoint(self, resume_from_checkpoint: str, model: nn.Module | None = None) -> None:
        # read on the CPU; load_state_dict copies into the parameters wherever they are
        load_model(self.accelerator.unwrap_model(model or self.model), str(Path(resume_from_checkpoint) / WEIGHTS))

    def _load_best_model(self) -> None:
        self._load_from_checkpoint(self.state.best_model_checkpoint)


def select_metric(evaluator: Any) -> str:
    """The name under which the trainer logs `evaluator`'s primary metric (`eval_` + its prefixed name).

    Example:
        >>> class Ev:
        ...     name, primary_metric = "dev", "strict_map"
        >>> select_metric(Ev())
        'eval_dev_strict_map'
    """
    primary, name = evaluator.primary_metric, getattr(evaluator, "name", "")
    return f"eval_{name}_{primary}" if name and not primary.startswith(f"{name}_") else f"eval_{primary}"


def fit(model, data, run: TrainRun, loss, *, evaluator: Any = None, eval_every: int = 0, select: str | None = None,
        groups: list[dict] | None = None, callbacks: Sequence = (), **extra: Any) -> tuple[Trainer, dict]:
    """Train `model` on `data` with transformers' `Trainer` and return it with `run_trainer`'s record.

    A `ModuleData` trains a custom torch network on `ModuleTrainer` (a checkpoint at each epoch end unless
    `--checkpoint-every` says otherwise); columns or records a `SentenceTransformer` (`SentenceTransformerTrainer`) or
    a `CrossEncoder` (`CrossEncoderTrainer`), a LoRA model's checkpoints holding its adapter.

    Args:
        model: the network, SentenceTransformer or CrossEncoder.
        data: a `ModuleData`, or the training columns (`{column: values}`, in the order the loss reads them) or records.
        run: the `TrainRun` (`trainer_arguments`; with a `ModuleData`, its batch size is unused: the batches are whole).
        loss: `loss(net, batch) -> tensor` for a `ModuleData`, else a sentence-transformers loss over `model`.
        evaluator: the task's evaluator, run every `eval_every` steps (else at every `--checkpoint-every`, else each
            epoch); the best evaluation's weights are kept (`selection_arguments`), by `select` (default:
            `select_metric(evaluator)`). None: the last weights.
        groups: a `ModuleData`'s optimizer parameter groups (default: every trainable parameter at the policy's rate).
        callbacks: more `TrainerCallback`s. extra: more training arguments (`logging_steps`, `disable_tqdm`, ...;
            `selection_arguments`' own are the selection's).

    Returns:
        (the trainer, `run_trainer`'s record); the model holds the kept weights.

    Raises:
        ModelError: the best checkpoint could not be read back (transformers would keep the last weights).

    Example:
        >>> trainer, rec = fit(model, rows, TrainRun(out, placement, Budget(), OptimPolicy(lr=2e-5)),
        ...                    BinaryCrossEntropyLoss(model))  # doctest: +SKIP
        >>> rec["steps"]  # doctest: +SKIP
        42
    """
    custom = isinstance(data, ModuleData)
    if evaluator is not None:  # over `extra`: what selection needs (every evaluation saved, the best kept)
        extra |= selection_arguments(select or select_metric(evaluator), eval_every, run.budget)
    elif custom and not run.budget.checkpoint_every:
        extra = {"save_strategy": "epoch"} | extra  # a custom network's checkpoint at every epoch end
    if custom:
        args = trainer_arguments(replace(run, batch_size=1), data.n_batches,
                                 restore_callback_states_from_checkpoint=True, **extra)  # e.g. early stopping's count
        trainer, failed = ModuleTrainer(model, loss, data, groups or [{"params": list(model.parameters())}], evaluator,
                                        args=args, callbacks=list(callbacks) or None), []
    else:
        trainer, failed = _library_trainer(model, data, run, loss, evaluator, callbacks, extra)
    shapes = [(n, list(p.shape)) for n, p in model.named_parameters() if p.requires_grad]
    key = (data.records if data.key is None else data.key) if custom else data
    record = run_trainer(trainer, run.out, run.budget,
                         {"data": data_hash(key), "architecture": data_hash(shapes)} | run_settings(run))
    if failed:
        raise ModelError(f"cannot load the best checkpoint {failed[0]}")
    return trainer, record


def _library_trainer(model, data: dict[str, list] | list[dict], run: TrainRun, loss, evaluator: Any,
                     callbacks: Sequence, extra: dict) -> tuple[Trainer, list[str]]:
    """sentence-transformers' trainer of `model` (a CrossEncoder's or a SentenceTransformer's) and the list that
    collects the best reloads that failed (the library only logs them)."""
    cross = isinstance(model, CrossEncoder)
    rows = datasets.Dataset.from_list(data) if isinstance(data, list) else datasets.Dataset.from_dict(data)
    args = trainer_arguments(run, len(rows), CrossEncoderTrainingArguments if cross else
                             SentenceTransformerTrainingArguments, **extra)
    trainer = (CrossEncoderTrainer if cross else SentenceTransformerTrainer)(
        model=model, args=args, train_dataset=rows, loss=loss, evaluator=evaluator, callbacks=list(callbacks) or None)
    if _lora(model):  # the trainer's own reload expects the full model's keys; a LoRA checkpoint holds the adapter
        trainer._load_from_checkpoint = adapter_checkpoint_loader(model)
    load, failed = trainer._load_from_checkpoint, []

    def guarded(path: str, *args: object) -> None:  # a failed resume raises before `failed` is read
        try:
            load(path, *args)
        except Exception as exc:
            failed.append(f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            raise

    trainer._load_from_checkpoint = guarded
    return trainer, failed


def save_st(model, out: Path, base: str, extra: dict | None = None) -> None:
    """Save a trained sentence-transformers model in OUT, a LoRA model's adapter only (`save_adapter`)."""
    if _lora(model):
        save_adapter(model, Path(out), base, extra=extra)
    else:
        model.save(str(out))


def _lora(model) -> bool:
    try:
        return is_lora(model)
    except (AttributeError, IndexError, KeyError, TypeError):  # a model without a transformer module first
        return False

