"""Custom torch models on transformers' own `Trainer`: `ModuleTrainer` and `fit_module` (docs/training.md)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from accelerate.utils import broadcast_object_list
from safetensors.torch import load_model, save_model
from torch import nn
from transformers import Trainer

from argsim.training import st

WEIGHTS = "model.safetensors"


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


def whole_batches(make: Callable[[int], Sequence], n: int, key: Any) -> ModuleData:
    """`ModuleData` whose epoch `e` is the `n` batches `make(e)` built whole (MTS's), built as the epoch begins.

    Example:
        >>> data = whole_batches(lambda e: [f"e{e}b0", f"e{e}b1"], 2, key="toy")
        >>> data.batches(1)[1], data.collate([1])
        ([1], 'e1b1')
    """
    built: list = []

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
        loader = torch.utils.data.DataLoader(self.data.records, batch_sampler=self.data, collate_fn=self.data.collate,
                                             num_workers=0)
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
            was = self.net.training
            self.net.eval()
            try:
                metrics = self.evaluator(self.net)
            finally:
                self.net.train(was)
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


def fit_module(net: nn.Module, loss: Callable, data: ModuleData, run, *,
               groups: list[dict] | None = None, evaluator: Any = None, eval_every: int = 0,
               callbacks: Sequence = (), log_every: int | None = None) -> tuple[ModuleTrainer, dict]:
    """Train `net` on `data` with `ModuleTrainer`.

    Args:
        net, loss, data: the network, `loss(net, collated batch)`, the `ModuleData`.
        run: the `TrainRun` (its batch size unused: `data`'s batches are whole).
        groups: the optimizer's parameter groups (default: every trainable parameter at the policy's rate).
        evaluator: the task's evaluator, run every `eval_every` steps; the best checkpoint is kept
            (`st.selection_arguments`).
        callbacks: more `TrainerCallback`s. log_every: log the loss every N steps (default: about ten times a run).

    Returns:
        (the trainer, `st.run_trainer`'s record).

    Example:
        >>> trainer, rec = fit_module(net, loss_of, ModuleData(rows, batches, 10), run)  # doctest: +SKIP
    """
    groups = groups or [{"params": [p for p in net.parameters() if p.requires_grad]}]
    if evaluator is not None:
        extra = st.selection_arguments(select_metric(evaluator), eval_every, run.budget)
    else:  # a checkpoint every --checkpoint-every steps (`trainer_arguments`), else at every epoch end
        extra = {} if run.budget.checkpoint_every else {"save_strategy": "epoch"}
    extra |= {"logging_steps": log_every} if log_every else {}
    args = st.trainer_arguments(replace(run, batch_size=1), data.n_batches,
                                restore_callback_states_from_checkpoint=True, **extra)  # e.g. early stopping's count
    trainer = ModuleTrainer(net, loss, data, groups, evaluator, args=args, callbacks=list(callbacks) or None)
    return trainer, st.run_trainer(trainer, run.out, run.budget,
                                   st.identity(data.records if data.key is None else data.key, net))
