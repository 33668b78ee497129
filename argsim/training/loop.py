"""The one custom training loop (MTS, thematic BiLSTM, CounterModel, top-layer SBERT), built on `accelerate`.

A trainer supplies its model, parameter groups, the planned number of optimizer steps and a `loss(model, batch)`
function; the loop wraps them in a module whose `forward(batch)` is that loss, so `accelerator.prepare` gives
DistributedDataParallel (gradients averaged across processes) and autocast (bf16/fp16) without changing the
trainer's model. Each step: forward -> `accelerator.backward` -> (every `grad_accum` batches) clipping,
AdamW step, scheduler step. Under `accelerate launch` / `torchrun` each process takes every WORLD_SIZE-th batch
of an epoch (`shard`, equal counts so every process steps together); only rank 0 writes.

Checkpoints: `OUT/checkpoints/last/` = `accelerator.save_state` (weights as safetensors, a tied tensor once:
`save_tied_once`; optimizer, every RNG)
+ `loop.json` (epoch, next batch, optimizer steps, seconds, the trainer's extras), written atomically every
`checkpoint_every` optimizer steps, at the end of every epoch and when a budget stops the run. `resume()` loads
it; `argsim.training.fit.fit` (the epoch loop every custom trainer runs on this one) rebuilds the epoch's
batches from the trainer's seeds and skips the ones already done, so a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from argsim.training.budget import Budget
from argsim.training.placement import Placement
from argsim.training.policy import OptimPolicy, build_optimizer, build_scheduler

CHECKPOINTS = "checkpoints"
LAST = "last"
STATE_FILE = "loop.json"


class _LossModule(nn.Module):
    """`forward(batch)` = the trainer's loss on the wrapped model (so DDP and autocast see one forward)."""

    def __init__(self, model: nn.Module, loss: Callable[[nn.Module, Any], torch.Tensor]) -> None:
        super().__init__()
        self.model, self._loss = model, loss

    def forward(self, batch: Any) -> torch.Tensor:
        return self._loss(self.model, batch)


class TrainLoop:
    """One run of a custom trainer. Use: `prepare`, `resume`, then `step` per batch and `end_epoch`."""

    def __init__(self, out: str | Path, placement: Placement, budget: Budget, policy: OptimPolicy) -> None:
        from accelerate import Accelerator
        from accelerate.state import AcceleratorState
        from accelerate.utils import DistributedDataParallelKwargs, set_seed

        AcceleratorState._reset_state()  # one process may run several trainings (folds, tests) with other options
        self.out, self.placement, self.budget, self.policy = Path(out), placement, budget, policy
        self.accelerator = Accelerator(cpu=placement.cpu, mixed_precision=placement.mixed_precision,
                                       kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])
        self.accelerator.register_save_state_pre_hook(save_tied_once)
        set_seed(placement.seed)
        self.steps = 0  # optimizer steps
        self.epoch, self.next_batch = 0, 0  # position of the next batch to train on
        self.extras: dict = {}  # the trainer's own state saved with a checkpoint (JSON)
        self.extras_fn: Callable[[], dict] | None = None  # or a function giving it at save time
        self.stopped_by: str | None = None
        self._micro = 0  # batches accumulated since the last optimizer step
        self._seconds_before = 0.0
        self._started = time.perf_counter()

    # ------------------------------------------------------------------ set-up
    @property
    def device(self) -> torch.device:
        return self.accelerator.device

    @property
    def is_main(self) -> bool:
        return self.accelerator.is_main_process

    @property
    def processes(self) -> int:
        return self.accelerator.num_processes

    def prepare(self, model: nn.Module, groups: list[dict], total_steps: int,
                loss: Callable[[nn.Module, Any], torch.Tensor]) -> nn.Module:
        """Move `model` to the device, build AdamW + schedule over `total_steps`; returns the model (unwrapped)."""
        self.model = model.to(self.device)
        self.total_steps = max(1, total_steps)
        optimizer = build_optimizer(groups, self.policy)
        self.params = [p for g in optimizer.param_groups for p in g["params"]]
        self.module, self.optimizer = self.accelerator.prepare(_LossModule(self.model, loss), optimizer)
        self.scheduler = build_scheduler(self.optimizer.optimizer, self.policy, self.total_steps)
        return self.model

    def shard(self, batches: Sequence) -> list:
        """This process's batches of an epoch: every WORLD_SIZE-th, the same count on every process."""
        n, rank = self.processes, self.accelerator.process_index
        if n == 1:
            return list(batches)
        per = len(batches) // n
        return list(batches[rank::n][:per])

    def steps_per_epoch(self, n_batches: int) -> int:
        per_process = n_batches // self.processes if self.processes > 1 else n_batches
        return -(-per_process // self.budget.grad_accum)

    # ------------------------------------------------------------------ stepping
    def seconds(self) -> float:
        return self._seconds_before + time.perf_counter() - self._started

    def skip(self, epoch: int, batch: int) -> bool:
        """True for a batch a resumed run has already trained on."""
        return epoch < self.epoch or (epoch == self.epoch and batch < self.next_batch)

    def step(self, batch: Any, epoch: int, index: int, last_in_epoch: bool,
             on_step: Callable[[float], None] | None = None) -> float:
        """Train on one batch (position `index` of epoch `epoch`); returns its loss. Check `stopped_by` after.
        `on_step(loss)` runs after each optimizer step, before a checkpoint is written. A run resumed with its
        budget already used up trains nothing (NaN is returned and `stopped_by` is set)."""
        if self.stopped_by:
            return float("nan")
        self._micro += 1
        sync = self._micro >= self.budget.grad_accum or last_in_epoch
        ctx = self.accelerator.no_sync(self.module) if not sync else _nullcontext()
        with ctx:
            loss = self.module(batch)
            if not loss.requires_grad:  # nothing to learn from this batch: keep every process's backward in step
                loss = loss + 0.0 * sum(p.sum() for p in self.params)
            self.accelerator.backward(loss / self.budget.grad_accum)
        if sync:
            if self.policy.max_grad_norm:
                self.accelerator.clip_grad_norm_(self.params, self.policy.max_grad_norm)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
            self._micro = 0
            self.steps += 1
        self.epoch, self.next_batch = epoch, index + 1
        value = float(loss.detach())
        if sync and on_step is not None:
            on_step(value)
        if sync:
            self.stopped_by = self._agreed_stop()
            every = self.budget.checkpoint_every
            if self.stopped_by or (every and self.steps % every == 0):
                self.save_checkpoint()
        return value

    def _agreed_stop(self) -> str | None:
        """The budget every process agrees has run out (the time budget is decided by rank 0 for all)."""
        reason = self.budget.reached(self.steps, self.seconds())
        if self.processes > 1 and self.budget.max_minutes is not None:
            flag = torch.tensor([1.0 if reason == "max_minutes" else 0.0], device=self.device)
            from accelerate.utils import broadcast

            flag = broadcast(flag, from_process=0)
            if flag.item() > 0:
                reason = "max_minutes"
            elif reason == "max_minutes":
                reason = None
        return reason

    def end_epoch(self, epoch: int, extras: dict | None = None) -> None:
        """Mark `epoch` done (the next batch is epoch + 1, batch 0) and checkpoint with `extras`."""
        if extras is not None:
            self.extras = extras
        self.epoch, self.next_batch = epoch + 1, 0
        self.save_checkpoint()

    # ------------------------------------------------------------------ checkpoints
    @property
    def checkpoint_dir(self) -> Path:
        return self.out / CHECKPOINTS / LAST

    def save_checkpoint(self) -> None:
        """Atomically replace OUT/checkpoints/last (every process takes part; rank 0 writes the files)."""
        tmp = self.out / CHECKPOINTS / f".{LAST}.tmp"
        if self.is_main:
            shutil.rmtree(tmp, ignore_errors=True)
        self.accelerator.wait_for_everyone()
        self.accelerator.save_state(str(tmp), safe_serialization=True)
        self.accelerator.wait_for_everyone()  # every rank's random states are in tmp before it is renamed
        if self.extras_fn is not None:
            self.extras = self.extras_fn()
        if self.is_main:
            state = {"epoch": self.epoch, "next_batch": self.next_batch, "steps": self.steps,
                     "seconds": round(self.seconds(), 3), "total_steps": self.total_steps, "extras": self.extras}
            (tmp / STATE_FILE).write_text(json.dumps(state, indent=2), encoding="utf-8")
            old = self.out / CHECKPOINTS / f".{LAST}.old"
            shutil.rmtree(old, ignore_errors=True)
            if self.checkpoint_dir.exists():
                self.checkpoint_dir.rename(old)
            tmp.rename(self.checkpoint_dir)
            shutil.rmtree(old, ignore_errors=True)
        self.accelerator.wait_for_everyone()

    def resume(self) -> bool:
        """Load OUT/checkpoints/last when the budget asks to resume and it exists; True when it did."""
        path = self.checkpoint_dir
        if not self.budget.resume:
            return False
        if not (path / STATE_FILE).is_file():
            from argsim.errors import warn

            warn(f"--resume: no checkpoint under {path}, so the training starts from the beginning")
            return False
        self.accelerator.load_state(str(path))
        state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
        self.epoch, self.next_batch, self.steps = state["epoch"], state["next_batch"], state["steps"]
        self._seconds_before, self.extras = float(state["seconds"]), state.get("extras", {})
        self._started = time.perf_counter()
        if self.budget.max_steps is not None and self.steps >= self.budget.max_steps:
            self.stopped_by = "max_steps"
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(self.steps):  # the schedule is a pure function of the step count
                self.scheduler.step()
        return True

    def unwrapped(self) -> nn.Module:
        return self.model


def save_tied_once(models: list[nn.Module], weights: list[dict], output_dir: str) -> None:
    """accelerate's `save_state` pre-hook: a tensor held under several names (a tied head, e.g. the one retrieval
    head a Bi-/Bipolar-encoder applies to points and candidates, `model.ret_point` = `model.ret_cand`) is written
    once, under its first name, so the safetensors file holds no aliased tensors (accelerate would otherwise drop
    the other names itself and warn on every checkpoint). The file is the one accelerate wrote before; loading
    re-ties it: the names share one parameter, which `load_state` (safetensors' `load_model`, which knows the
    model's shared names) fills through the saved one.

    Args:
        models: the prepared models (unused).
        weights: their state dicts, edited in place.
        output_dir: the checkpoint folder (unused).

    Returns:
        None.

    Example:
        >>> lin = torch.nn.Linear(2, 2)
        >>> state = {"a.weight": lin.weight, "b.weight": lin.weight, "a.bias": lin.bias}
        >>> save_tied_once([], [state], "")
        >>> sorted(state)
        ['a.bias', 'a.weight']
    """
    from accelerate.utils import id_tensor_storage

    for state in weights:
        seen: set = set()
        for name in list(state):
            tensor = state[name]
            if not isinstance(tensor, torch.Tensor):
                continue
            same = (id_tensor_storage(tensor), tensor.data_ptr(), tuple(tensor.shape), tensor.stride())
            if same in seen:  # the very tensor again (other views of one storage are left to accelerate)
                del state[name]
            else:
                seen.add(same)


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
