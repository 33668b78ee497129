"""`fit`: the one epoch loop of the custom trainers (MTS, thematic BiLSTM, CounterModel, top-layer SBERT).

A trainer supplies its model, parameter groups, a `loss(model, batch)` function, the batches of an epoch (a
function of the epoch index, rebuilt from the trainer's seeds) and optionally an evaluator; `fit` does the rest
on a `TrainLoop`, in the manner of sentence-transformers' `fit(train_objectives, evaluator, epochs,
evaluation_steps, save_best_model)`:

- epochs: this process's share of every epoch's batches (`TrainLoop.shard`); the batches a resumed run already
  trained on are skipped (`TrainLoop.skip`), so a resumed run equals an uninterrupted one;
- budgets: `--max-steps` / `--max-minutes` stop the run with a checkpoint (`TrainLoop.step`); `max_steps`
  (the planned optimizer steps of a fractional number of epochs) ends the run where the plan ends;
  `max_epoch_minutes` ends it after the epoch that crosses that much training time (checked at epoch ends);
- evaluation: the evaluator is the sentence-transformers kind (`argsim.evaluation`'s contract): a callable on
  the model returning `{metric: value}` with its `primary_metric` among them (`AtOneOverKEvaluator`,
  `MTSMapEvaluator`, `KPAMapEvaluator`); it runs after every epoch (and before training with
  `evaluate_untrained`, and every `eval_every` optimizer steps when asked);
- model selection: a row whose primary metric is strictly above every earlier one (so the first of equal scores)
  is kept: `keep(row)` runs on rank 0 (the trainer saves its model there); `patience` evaluations in a row
  without a better score stop the run (early stopping);
- history: one row per finished epoch `{"epoch", "step", "loss" (mean over the epoch), <metrics>, "seconds"
  (training time so far), "epoch_seconds" (the epoch's)}` (epoch 0: the untrained model) and one per
  evaluation `{"step", <metrics>}` (the `evals` of `train_config.json`, which `argsim.training.curve` draws).

The loop's own state (history, best, evaluations without gain, training time, the losses of the epoch in
progress) is saved with every checkpoint under `extras["fit"]`, beside the trainer's own `state()`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from torch import nn

from argsim.training.loop import TrainLoop

FIT_STATE = "fit"  # the key of fit's state in a checkpoint's extras


@dataclass
class FitState:
    """What `fit` knows of a run; saved with each checkpoint, returned at the end.

    `history`: a row per evaluated or finished epoch; `evals`: a row per evaluation (`{"step", metrics}`);
    `best`: the kept row's `{"epoch", "step", "value"}` (None before any evaluation); `bad`: evaluations since
    the last better one; `elapsed`: training seconds (epochs' batches, not evaluations) over every invocation;
    `epoch_losses`: the losses of the epoch in progress, `epoch_began`: `elapsed` when it began; `stopped_by`:
    the budget that stopped the run, if any; `early_stop`: "patience" or "max_epoch_minutes" when the run
    ended before its epochs did.

    Example:
        >>> FitState.from_dict({"bad": 2, "unknown": 1}).bad
        2
    """

    history: list[dict] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    best: dict | None = None
    bad: int = 0
    elapsed: float = 0.0
    epoch_losses: list[float] = field(default_factory=list)
    epoch_began: float = 0.0
    stopped_by: str | None = None
    early_stop: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, state: dict) -> FitState:
        return cls(**{k: v for k, v in state.items() if k in cls.__dataclass_fields__})


def primary_value(evaluator: Any, metrics: dict) -> float:
    """The evaluator's primary metric in `metrics` (after the call, as sentence-transformers prefixes it).

    Args:
        evaluator: an evaluator with `primary_metric` (and, for a prefixed one, `name`).
        metrics: what it returned.

    Returns:
        the primary metric's value.

    Example:
        >>> class Ev:
        ...     name, primary_metric = "dev", "strict_map"
        >>> primary_value(Ev(), {"dev_strict_map": 0.5, "dev_relaxed_map": 0.7})
        0.5
    """
    name = evaluator.primary_metric
    if name not in metrics and getattr(evaluator, "name", None):
        name = f"{evaluator.name}_{name}"
    return float(metrics[name])


def fit(loop: TrainLoop, model: nn.Module, groups: list[dict], loss: Callable[[nn.Module, Any], Any],
        batches: Callable[[int], Sequence], *, epochs: int, batches_per_epoch: int,
        max_steps: int | None = None, evaluator: Callable[[nn.Module], dict] | None = None,
        evaluate_untrained: bool = False, eval_every: int = 0, patience: int | None = None,
        max_epoch_minutes: float | None = None, keep: Callable[[dict], None] | None = None,
        on_epoch_end: Callable[[dict, bool], None] | None = None, on_batch: Callable[[Any], None] | None = None,
        on_loss: Callable[[float], None] | None = None, on_step: Callable[[float], None] | None = None,
        state: Callable[[], dict] | None = None, on_resume: Callable[[dict], None] | None = None,
        legacy_state: Callable[[dict], dict] | None = None, progress: Callable[[int], str] | None = None) -> FitState:
    """Train `model` over `epochs` epochs of `batches(epoch)` on `loop`; returns the run's `FitState`.

    Args:
        loop: the run's `TrainLoop` (placement, budget, policy, OUT/checkpoints); `loop.device` is known before.
        model, groups, loss: what `TrainLoop.prepare` takes (the AdamW schedule is planned over `max_steps`, or
            `epochs` x the optimizer steps of `batches_per_epoch` batches).
        batches: the batches of epoch `e` (0-based), rebuilt from the trainer's seeds at every epoch start (also
            after a resume, when the epoch in progress must be the same).
        epochs: epochs to run (a resumed run continues from the checkpoint's epoch).
        max_steps: end the run after this many optimizer steps (the plan of fractional epochs; not a budget
            stop: the final checkpoint is written and `stopped_by` stays None).
        evaluator: a sentence-transformers style evaluator (see the module docstring).
        evaluate_untrained: evaluate before the first step (history row epoch 0; it is the first best).
        eval_every: also evaluate every N optimizer steps (0: at epoch ends only).
        patience: stop after this many evaluations in a row without a better primary metric.
        max_epoch_minutes: stop after the epoch at which the training time reaches this.
        keep: called on rank 0 with each row that becomes the best (the trainer saves its model).
        on_epoch_end: `(row, kept)` after each evaluated or finished epoch (epoch 0 included), before its
            checkpoint is written (`kept`: the row became the best; always True without an evaluator).
        on_batch: called with each batch before it is trained on; on_loss: with each batch's loss after;
            on_step: after each optimizer step, before a checkpoint (`TrainLoop.step`).
        state: the trainer's own state saved with each checkpoint (JSON); on_resume: called with it (the
            checkpoint's extras) after a resume, before any batch.
        legacy_state: turns the extras of a checkpoint written before `fit` kept its own state into a
            `FitState` dict (so such a run still resumes).
        progress: the label of epoch `e`'s progress bar (None: no bar); shown on rank 0.

    Returns:
        the `FitState`: history, evaluations, best row, why the run stopped.

    Example:
        >>> loop = TrainLoop(out, placement, Budget(), OptimPolicy(lr=1e-3))  # doctest: +SKIP
        >>> run = fit(loop, net, [{"params": list(net.parameters())}], loss_of, epoch_batches, epochs=3,
        ...           batches_per_epoch=10, evaluator=AtOneOverKEvaluator(data, 10), keep=save)  # doctest: +SKIP
        >>> run.best["epoch"]  # doctest: +SKIP
        2
    """
    from argsim.progress import progress_bar

    planned = max_steps if max_steps is not None else loop.steps_per_epoch(batches_per_epoch) * epochs
    model = loop.prepare(model, groups, planned, loss)
    fs = FitState()
    loop.extras_fn = lambda: {**(state() if state else {}), FIT_STATE: fs.as_dict()}
    resumed = loop.resume()
    if resumed:
        saved = loop.extras.get(FIT_STATE)
        if saved is None and legacy_state is not None:
            saved = legacy_state(loop.extras)
        fs = FitState.from_dict(saved or {})
        fs.stopped_by = fs.early_stop = None
        if on_resume is not None:
            on_resume(loop.extras)

    def better(value: float) -> bool:
        return fs.best is None or value > fs.best["value"]  # NaN is never better

    def evaluate(epoch: int | None) -> tuple[dict, bool]:
        metrics = evaluator(model)
        value = primary_value(evaluator, metrics)
        fs.evals.append({"step": loop.steps, **metrics})
        kept = better(value)
        if kept:
            fs.best, fs.bad = {"epoch": epoch, "step": loop.steps, "value": value}, 0
        else:
            fs.bad += 1
        return metrics, kept

    def row(epoch: int, metrics: dict) -> dict:
        mean = float(np.mean(fs.epoch_losses)) if fs.epoch_losses and epoch else None
        return {"epoch": epoch, "step": loop.steps, "loss": mean, **metrics, "seconds": round(fs.elapsed, 2),
                "epoch_seconds": round(fs.elapsed - fs.epoch_began, 2) if epoch else 0.0}

    def finish_row(r: dict, kept: bool, save: bool = True) -> None:
        fs.history.append(r)
        if on_epoch_end is not None:
            on_epoch_end(r, kept)
        if kept and save and keep is not None and loop.is_main:
            keep(r)

    if not resumed and evaluator is not None and evaluate_untrained:
        metrics, kept = evaluate(0)
        finish_row(row(0, metrics), kept)
    evaluated_at = -1  # the step of the last evaluation (no second one at an epoch end on the same step)
    recorded = False  # the batch's loss is recorded (before the checkpoint an optimizer step may write)

    def record(value: float) -> None:
        nonlocal recorded
        fs.epoch_losses.append(value)
        recorded = True
        if on_loss is not None:
            on_loss(value)

    def stepped(value: float) -> None:
        nonlocal evaluated_at
        record(value)
        if on_step is not None:
            on_step(value)
        if evaluator is not None and eval_every and loop.steps % eval_every == 0:
            epoch_now = loop.epoch + (loop.next_batch / max(batches_per_epoch, 1))
            metrics, kept = evaluate(None)
            evaluated_at = loop.steps
            if kept and keep is not None and loop.is_main:
                keep({"epoch": round(epoch_now, 3), "step": loop.steps, **metrics})

    def planned_done() -> bool:
        return max_steps is not None and loop.steps >= max_steps

    for epoch in range(loop.epoch, epochs):
        if loop.stopped_by or planned_done():
            break
        t0 = time.perf_counter()
        model.train()
        if epoch != loop.epoch or loop.next_batch == 0:
            fs.epoch_losses, fs.epoch_began = [], fs.elapsed
        mine = loop.shard(batches(epoch))
        todo = sum(1 for b in range(len(mine)) if not loop.skip(epoch, b))
        label = progress(epoch) if progress is not None else ""
        with progress_bar(todo, label, enabled=progress is not None and loop.is_main) as bar:
            for b, batch in enumerate(mine):
                if loop.skip(epoch, b):
                    continue
                if loop.stopped_by:  # resumed with its budget already used up
                    break
                if on_batch is not None:
                    on_batch(batch)
                recorded = False
                value = loop.step(batch, epoch, b, last_in_epoch=b == len(mine) - 1, on_step=stepped)
                if not recorded:  # a batch accumulated without an optimizer step
                    record(value)
                bar.advance(1)
                if loop.stopped_by or planned_done():
                    break
        fs.elapsed += time.perf_counter() - t0
        if loop.stopped_by or (planned_done() and loop.next_batch < len(mine)):
            break
        kept, save = True, True
        metrics: dict = {}
        if evaluator is not None:
            if evaluated_at == loop.steps and fs.evals:  # this step was just evaluated (and kept if better)
                metrics = {k: v for k, v in fs.evals[-1].items() if k != "step"}
                kept, save = fs.best is not None and fs.best["step"] == loop.steps, False
                if kept and fs.best["epoch"] is None:
                    fs.best["epoch"] = epoch + 1
            else:
                metrics, kept = evaluate(epoch + 1)
        finish_row(row(epoch + 1, metrics), kept, save)
        if planned_done():  # the plan ends with this epoch: the final checkpoint is written below
            break
        loop.end_epoch(epoch)
        if patience is not None and evaluator is not None and fs.bad >= patience:
            fs.early_stop = "patience"
            break
        if max_epoch_minutes is not None and fs.elapsed / 60 >= max_epoch_minutes:
            fs.early_stop = "max_epoch_minutes"
            break
    if max_steps is not None and not loop.stopped_by:
        loop.save_checkpoint()
    fs.stopped_by = loop.stopped_by
    return fs
