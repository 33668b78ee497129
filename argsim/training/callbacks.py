"""What argsim adds to transformers' `Trainer`, one `TrainerCallback` per concern (docs/training.md). Under DDP
a stop is agreed by all processes (rank 0's clock; a signal seen by any). The hooks set `control` in place (a
hook returning None keeps it)."""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from transformers import TrainerCallback

from argsim.errors import warn
from argsim.io import read_json, write_json
from argsim.training.budget import Budget
from argsim.training.placement import is_main_process

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _agree(value: float, args, rank0: bool = False) -> float:
    """`value` (not negative) agreed across processes: rank 0's (`rank0`: the others count as 0) or the largest."""
    if args.world_size <= 1:
        return value
    t = torch.tensor([value if not rank0 or args.process_index == 0 else 0.0], dtype=torch.float64, device=args.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _stop_with_checkpoint(args, state, control) -> None:
    control.should_training_stop = control.should_save = True  # --resume continues from here
    if args.eval_strategy == "steps" and state.eval_steps and state.global_step % state.eval_steps:
        control.should_evaluate = True  # the stopped weights are a candidate for the best, as the last step


class BudgetCallback(TrainerCallback):
    """Stop, with a checkpoint, once `budget.max_steps` optimizer steps are done or `budget.max_minutes` of this
    invocation have passed (the schedule unchanged: `Budget`); with `epoch_end`, checked at epoch ends only (the
    epoch finished, evaluated and saved: the counter trainers' `--max-minutes`). `epoch_seconds`: each epoch's time.

    Example:
        >>> BudgetCallback(Budget(max_steps=3)).stopped_by is None
        True
    """

    def __init__(self, budget: Budget, epoch_end: bool = False) -> None:
        self.budget, self.epoch_end, self.stopped_by, self.epoch_seconds = budget, epoch_end, None, []

    def reason(self, args, state) -> str | None:
        """The budget used up, if any (rank 0's clock decides the time for every process)."""
        seconds = time.perf_counter() - self.start
        if self.budget.max_minutes is not None:
            seconds = _agree(seconds, args, rank0=True)
        return self.budget.reached(state.global_step, seconds)

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.epoch_began = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if not self.epoch_end and (reason := self.reason(args, state)):
            self.stopped_by = reason
            _stop_with_checkpoint(args, state, control)

    def on_epoch_end(self, args, state, control, **kwargs):
        self.epoch_seconds.append(round(time.perf_counter() - self.epoch_began, 2))
        if self.epoch_end and (reason := self.reason(args, state)):
            self.stopped_by = reason
            control.should_training_stop = control.should_save = True


class IdentityCallback(TrainerCallback):
    """Each checkpoint holds `ident` (the data, architecture and settings it was trained on) in `name`, which
    `--resume` checks before the record beside the checkpoints (a checkpoint an earlier run left behind).

    Example:
        >>> IdentityCallback("run.json", {"data": "ab12"}).ident
        {'data': 'ab12'}
    """

    def __init__(self, name: str, ident: dict) -> None:
        self.name, self.ident = name, ident

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            write_json(Path(args.output_dir) / f"checkpoint-{state.global_step}" / self.name, self.ident)


class InterruptCallback(TrainerCallback):
    """SIGINT / SIGTERM while training (handlers installed for the run only): finish the step, save a checkpoint,
    stop; `raise_if_interrupted` then exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once (a save it
    cuts short has no readable trainer_state.json, its last file, so `--resume` takes the previous checkpoint).

    Example:
        >>> InterruptCallback().received is None
        True
    """

    def __init__(self) -> None:
        self.received, self._former = None, {}  # the signal received; the handlers replaced for the run

    def _handle(self, signum: int, frame) -> None:
        if self.received is not None:  # a second signal: leave now
            raise KeyboardInterrupt if signum == signal.SIGINT else SystemExit(EXIT_CODES[signum])
        self.received = signum

    def on_train_begin(self, args, state, control, **kwargs):
        if threading.current_thread() is threading.main_thread():
            self._former = {s: signal.signal(s, self._handle) for s in EXIT_CODES}

    def on_step_end(self, args, state, control, **kwargs):
        if _agree(self.received is not None, args):
            self.received = self.received or signal.SIGTERM
            _stop_with_checkpoint(args, state, control)

    def on_train_end(self, args, state, control, **kwargs):
        for s, former in self._former.items():
            signal.signal(s, former)

    def raise_if_interrupted(self, where: str) -> None:
        """Exit as the signal asks, after one line saying where the checkpoint is."""
        if self.received is None:
            return
        warn(f"stopped by {signal.Signals(self.received).name}: a checkpoint is under {where}; --resume continues")
        raise KeyboardInterrupt if self.received == signal.SIGINT else SystemExit(EXIT_CODES[self.received])


class LogCallback(TrainerCallback):
    """Progress lines through `log` on rank 0: with `metric`, one per evaluation (the step, the metric and whether it
    is the best so far); with `label`, one per logged loss (`[label] epoch E step S loss L Ns`).

    Example:
        >>> cb = LogCallback(print, metric="eval_dev_acc")
    """

    def __init__(self, log: Callable[[str], None], metric: str = "", label: str = "") -> None:
        self.log, self.metric, self.label, self.start = log, metric, label, time.perf_counter()

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if (value := (metrics or {}).get(self.metric)) is not None and state.is_world_process_zero:
            kept = state.best_metric is None or value > state.best_metric  # the best before this evaluation
            self.log(f"step {state.global_step}: {self.metric.removeprefix('eval_')} {value:.4f}"
                     + (" (best so far)" if kept else ""))

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.label and logs and "loss" in logs and state.is_world_process_zero:
            self.log(f"[{self.label}] epoch {state.epoch or 0:.2f} step {state.global_step} loss {logs['loss']:.4f} "
                     f"{time.perf_counter() - self.start:.0f}s")


class HistoryCallback(TrainerCallback):
    """A history row per evaluated step, `row(state, metrics, stopped, loss, seconds)` (None: none there): the
    evaluation's metrics, whether a budget stopped the run, the mean loss logged since the last row and the seconds
    since the run began. Rows go to `log` and `write(history)` on rank 0; with `state_file`, each checkpoint holds
    the history, pending losses, `extra()` and seconds, which `restore` continues on a resumed run.

    Example:
        >>> from transformers import TrainerState
        >>> h = HistoryCallback(lambda state, metrics, stopped, loss, seconds: {"loss": loss})
        >>> h.losses = [1.0, 3.0]
        >>> h.take(TrainerState(global_step=5), {}, False) or h.history
        [{'loss': 2.0}]
    """

    def __init__(self, row: Callable[..., dict | None], log: Callable[[dict], None] | None = None,
                 write: Callable[[list[dict]], object] | None = None, state_file: str = "",
                 extra: Callable[[], dict] = dict) -> None:
        self.row, self.log, self.write, self.state_file, self.extra = row, log, write, state_file, extra
        self.history, self.losses, self.step, self.offset, self.began = [], [], 0, 0.0, time.perf_counter()

    def restore(self, checkpoint: str | None) -> dict | None:
        """The state `checkpoint` holds (None: none), its history, pending losses and seconds continued."""
        if checkpoint is None or not (path := Path(checkpoint) / self.state_file).is_file():
            return None
        saved = read_json(path)
        self.history, self.losses, self.offset = saved["history"], saved["losses"], saved["seconds"]
        return saved

    def add(self, row: dict) -> None:
        self.history.append(row)
        if self.log and is_main_process():
            self.log(row)
        if self.write and is_main_process():
            self.write(self.history)

    def take(self, state, metrics: dict, stopped: bool) -> None:
        """The row of an evaluation at `state.global_step`, unless that step has one."""
        if state.global_step != self.step:
            loss = float(np.mean(self.losses)) if self.losses else None
            row = self.row(state, metrics, stopped, loss, round(self.offset + time.perf_counter() - self.began, 2))
            if row is not None:
                self.step, self.losses = state.global_step, []
                self.add(row)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.losses.append(float(logs["loss"]))

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.take(state, metrics or {}, control.should_training_stop and state.global_step < state.max_steps)

    def on_save(self, args, state, control, **kwargs):
        if self.state_file and state.is_world_process_zero:
            write_json(Path(args.output_dir) / f"checkpoint-{state.global_step}" / self.state_file,
                       {"history": self.history, "losses": self.losses, **self.extra(),
                        "seconds": self.offset + time.perf_counter() - self.began})


def epoch_rows(log_history: list[dict]) -> list[dict]:
    """A row per epoch begun in a trainer's `log_history`: `{"epoch", "step", "mean_loss"}` (step-weighted).

    Example:
        >>> epoch_rows([{"loss": 2.0, "epoch": 0.5, "step": 1}, {"loss": 1.0, "epoch": 1.0, "step": 2},
        ...             {"loss": 0.5, "epoch": 1.5, "step": 3}])
        [{'epoch': 1, 'step': 2, 'mean_loss': 1.5}, {'epoch': 2, 'step': 3, 'mean_loss': 0.5}]
    """
    rows: dict[int, list] = {}  # epoch -> [its last step, the sum of loss x steps, its steps]
    last = 0
    for h in log_history:
        if "loss" in h and "epoch" in h:
            row = rows.setdefault(max(1, math.ceil(round(h["epoch"], 6))), [0, 0.0, 0])
            steps, last = max(1, h["step"] - last), h["step"]
            row[:] = [last, row[1] + h["loss"] * steps, row[2] + steps]
    return [{"epoch": e, "step": s, "mean_loss": round(t / n, 5)} for e, (s, t, n) in rows.items()]
