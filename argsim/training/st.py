"""sentence-transformers models train through the library's own trainers (`SentenceTransformerTrainer`,
`CrossEncoderTrainer`): the training arguments carry the device, bf16/fp16, gradient accumulation, checkpoints
(`save_steps`) and the policy; `BudgetCallback` stops on --max-steps / --max-minutes and saves a checkpoint there;
`--resume` passes the last checkpoint under OUT/checkpoints to `trainer.train(resume_from_checkpoint=...)`.
Under `accelerate launch` / `torchrun` the trainer runs DDP by itself and saves only on rank 0.

Model selection is the library's own, for every trainer alike (`fit_st(select=...)`, `selection_arguments`): the
evaluator runs every `eval_every` steps (else at every `--checkpoint-every` checkpoint, else each epoch) and where
the run ends (its last step or a budget's stop), a checkpoint is saved at each evaluation, and transformers'
`load_best_model_at_end` with `metric_for_best_model` reloads the best one when training ends. transformers
compares with a strict `>` (`greater_is_better`), so the first of equal scores is kept; `trainer_state.json` of
every checkpoint records `best_metric` and `best_model_checkpoint`, so a `--resume`d run still knows the earlier
best; checkpoint rotation never deletes the best checkpoint nor the newest. A LoRA model's checkpoints hold only
the adapter, which `argsim.backend.adapters.adapter_checkpoint_loader` reads back for the resume and for the best
reload alike. Without an evaluation the last weights are kept.
"""

from __future__ import annotations

import time
from pathlib import Path

from argsim.training.budget import Budget
from argsim.training.placement import Placement
from argsim.training.policy import OptimPolicy

CHECKPOINTS = "checkpoints"


def budget_callback(budget: Budget):
    """A TrainerCallback that stops the run when a budget is used up and saves a checkpoint there."""
    from transformers import TrainerCallback

    class BudgetCallback(TrainerCallback):
        def __init__(self) -> None:
            self.start = time.perf_counter()
            self.stopped_by: str | None = None

        def on_train_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()
            return control

        def on_step_end(self, args, state, control, **kwargs):
            reason = budget.reached(state.global_step, time.perf_counter() - self.start)
            if budget.max_minutes is not None and args.world_size > 1:  # rank 0's clock decides for all
                agreed = _broadcast_flag(reason == "max_minutes", args.device)
                reason = "max_minutes" if agreed else (None if reason == "max_minutes" else reason)
            if reason:
                self.stopped_by = reason
                control.should_training_stop = True
                control.should_save = True  # resume continues from here
                if args.eval_strategy == "steps" and state.global_step % state.eval_steps:
                    control.should_evaluate = True  # the stopped weights are a candidate for the best, as the last
            return control

    return BudgetCallback()


def _broadcast_flag(flag: bool, device) -> bool:
    import torch
    import torch.distributed as dist

    t = torch.tensor([1.0 if flag else 0.0], device=device)
    dist.broadcast(t, src=0)
    return bool(t.item() > 0)


def trainer_arguments(out: Path, placement: Placement, budget: Budget, policy: OptimPolicy, *, epochs: float,
                      batch_size: int, quiet: bool = False, cross_encoder: bool = False, **extra: object):
    """(SentenceTransformer|CrossEncoder)TrainingArguments for this run; checkpoints under OUT/checkpoints."""
    if cross_encoder:
        from sentence_transformers.cross_encoder import CrossEncoderTrainingArguments as Args
    else:
        from sentence_transformers import SentenceTransformerTrainingArguments as Args

    every = budget.checkpoint_every
    kw: dict = {"output_dir": str(Path(out) / CHECKPOINTS), "num_train_epochs": epochs,
                "per_device_train_batch_size": batch_size, "gradient_accumulation_steps": budget.grad_accum,
                "seed": placement.seed, "data_seed": placement.seed, "use_cpu": placement.cpu,
                "bf16": placement.precision == "bf16", "fp16": placement.precision == "fp16",
                "save_strategy": "steps" if every else "no", "save_steps": every or 500, "save_total_limit": 1,
                "report_to": "none", "disable_tqdm": quiet, "dataloader_num_workers": 0,
                "ddp_find_unused_parameters": True, **policy.trainer_kwargs()}
    if placement.processes > 1 and placement.cpu:
        kw["ddp_backend"] = "gloo"
    kw.update(extra)
    return Args(**kw)


def logging_steps(examples: int, batch_size: int, epochs: float, budget: Budget, processes: int = 1) -> int:
    """Log the loss about ten times per run (at most every 50 steps, at least every step)."""
    import math

    total = math.ceil(math.ceil(examples / (batch_size * processes)) / budget.grad_accum * epochs)
    if budget.max_steps:
        total = min(total, budget.max_steps)
    return max(1, min(50, total // 10))


def last_checkpoint(out: Path) -> str | None:
    """The newest `checkpoint-N` folder under OUT/checkpoints, if any."""
    from transformers.trainer_utils import get_last_checkpoint

    folder = Path(out) / CHECKPOINTS
    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def run_trainer(trainer, out: Path, budget: Budget) -> dict:
    """`trainer.train()` (resumed from the last checkpoint with --resume); returns steps, seconds, stop reason."""
    callback = budget_callback(budget)
    trainer.add_callback(callback)
    resume_from = last_checkpoint(out) if budget.resume else None
    if budget.resume and resume_from is None:
        from argsim.errors import warn

        warn(f"--resume: no checkpoint under {Path(out) / CHECKPOINTS}, so the training starts from the beginning")
    began = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume_from)
    return {"steps": trainer.state.global_step, "seconds": round(time.perf_counter() - began, 2),
            "stopped_by": callback.stopped_by, "resumed_from": resume_from,
            "losses": [round(h["loss"], 5) for h in trainer.state.log_history if "loss" in h],
            "loss_steps": [h["step"] for h in trainer.state.log_history if "loss" in h],
            "evals": [{k: v for k, v in h.items() if k == "step" or (k.startswith("eval_") and k != "eval_loss")}
                      for h in trainer.state.log_history if any(k.startswith("eval_") for k in h)]}


def selection_arguments(select: str, eval_every: int, budget: Budget) -> dict:
    """The training arguments that keep the best evaluation's weights by `select` (transformers'
    `load_best_model_at_end`): evaluations every `eval_every` steps, else at every `--checkpoint-every` checkpoint,
    else each epoch, and a checkpoint saved at each evaluation (so that the best step is always a checkpoint).

    Readings chosen: a `--checkpoint-every` that is a multiple of `eval_every` is kept to the finer cadence (every
    evaluated step is saved; with fewer saves than evaluations transformers would record a best step that has no
    checkpoint and reload an older one); one that is not is refused. `save_total_limit` is 2, not 1: rotation
    keeps the best and the newest checkpoint either way, but with a limit of 1 transformers deletes every
    checkpoint except the best when training ends, which would throw away the one a budget's stop writes for
    `--resume`. `greater_is_better` is False only for a loss.

    Args:
        select: the metric as the trainer logs it (e.g. "eval_dev_strict_map"; the "eval_" prefix may be left out).
        eval_every: evaluate every N steps (0: at the budget's checkpoints, else each epoch).
        budget: the run's `Budget` (its `checkpoint_every`).

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


def check_cadence(eval_every: int, budget: Budget) -> None:
    """Refuse, before any work, a `--checkpoint-every` that is not a multiple of `eval_every` (see
    `selection_arguments`)."""
    every = budget.checkpoint_every
    if eval_every and every and every % eval_every:
        from argsim.errors import ArgsimError

        raise ArgsimError(f"--checkpoint-every {every} must be a multiple of --eval-every {eval_every} (every "
                          "evaluated step is saved, so that the best one can be kept)")


def kept_best(trainer) -> dict | None:
    """{"step", "value"} of the checkpoint `load_best_model_at_end` reloaded (as `trainer_state.json` records it,
    across resumes), or None where no evaluated checkpoint exists (the last weights stay)."""
    folder = trainer.state.best_model_checkpoint
    if not trainer.args.load_best_model_at_end or folder is None or trainer.state.best_metric is None:
        return None
    return {"step": int(str(folder).rsplit("-", 1)[1]), "value": float(trainer.state.best_metric)}


def fit_st(model, rows: dict[str, list] | list[dict], loss, out: Path, placement: Placement, budget: Budget,
           policy: OptimPolicy, *, epochs: float, batch_size: int, evaluator=None, eval_every: int = 0,
           select: str | None = None, quiet: bool = True, callbacks: tuple = (), log_every: int | None = None,
           eval_rows: list[dict] | None = None, adapter: bool = False, **extra: object) -> tuple[object, dict]:
    """Train a sentence-transformers model with the library's own trainer: `SentenceTransformerTrainer` for a
    SentenceTransformer, `CrossEncoderTrainer` for a CrossEncoder. The one training function of every
    sentence-transformers trainer (key point SBERT and cross-encoder, counter-argument cross-encoder, MiniLM
    thematic fine-tune, political SBERT), each calling it with its loss, data and evaluator.

    Args:
        model: the SentenceTransformer or CrossEncoder.
        rows: the training columns (`{column: values}`, in the order the loss reads them) or records.
        loss: a sentence-transformers loss over `model`.
        out, placement, budget, policy: the run's folder (checkpoints under OUT/checkpoints), device and
            precision, budgets and optimizer policy (`trainer_arguments`).
        epochs, batch_size: passes over `rows` and examples per device batch.
        evaluator: a sentence-transformers evaluator; with `eval_every` > 0 it runs every `eval_every` steps
            (else when `select` or `extra`'s `eval_strategy` says).
        select: keep the weights of the best evaluation by this metric, as the trainer logs it (e.g.
            "eval_dev_strict_map"), not the last step's: `selection_arguments` (evaluations every `eval_every`
            steps, else at the budget's checkpoints, else each epoch, and where the run ends; a checkpoint at each;
            the first of equal scores; the best survives `--resume`). Needs `evaluator` or `eval_rows`; without
            either, or None, the last weights are kept.
        quiet: no progress bar.
        callbacks: more TrainerCallbacks (e.g. a history recorder).
        log_every: log the loss every N steps (default: about ten times per run, `logging_steps`).
        eval_rows: records of an evaluation dataset (the trainer's eval loss), if any.
        adapter: the model's transformer is a peft (LoRA) model: checkpoints hold only the adapter, and resuming
            or reloading the best checkpoint reads it (`argsim.backend.adapters.adapter_checkpoint_loader`).
        extra: more training arguments (e.g. `per_device_eval_batch_size`, `batch_sampler`).

    Returns:
        (the trainer, `run_trainer`'s record: steps, seconds, stop reason, logged losses and evaluations, and
        `best`: {"step", "value"} of the kept evaluation with `select`, else None). The model holds the kept
        weights.

    Raises:
        ModelError: the best checkpoint could not be read back (transformers would only log it and keep the last
            weights).

    Example:
        >>> trainer, run = fit_st(model, rows, BinaryCrossEntropyLoss(model), out, placement, Budget(),
        ...                       OptimPolicy(lr=2e-5), epochs=1, batch_size=16)  # doctest: +SKIP
        >>> run["steps"]  # doctest: +SKIP
        42
    """
    import datasets
    from sentence_transformers.cross_encoder import CrossEncoder

    def dataset(data: dict[str, list] | list[dict]):
        return datasets.Dataset.from_list(data) if isinstance(data, list) else datasets.Dataset.from_dict(data)

    cross = isinstance(model, CrossEncoder)
    if cross:
        from sentence_transformers.cross_encoder import CrossEncoderTrainer as Trainer
    else:
        from sentence_transformers import SentenceTransformerTrainer as Trainer
    data = dataset(rows)
    selecting = select is not None and (evaluator is not None or bool(eval_rows))
    if selecting:
        extra = {**extra, **selection_arguments(select, eval_every, budget)}
    elif evaluator is not None and eval_every:
        extra = {"eval_strategy": "steps", "eval_steps": eval_every, **extra}
    every = log_every or logging_steps(len(data), batch_size, epochs, budget, placement.processes)
    args = trainer_arguments(out, placement, budget, policy, epochs=epochs, batch_size=batch_size, quiet=quiet,
                             cross_encoder=cross, logging_steps=every, **extra)
    kw = {"eval_dataset": dataset(eval_rows)} if eval_rows else {}
    trainer = Trainer(model=model, args=args, train_dataset=data, loss=loss, evaluator=evaluator,
                      callbacks=list(callbacks) or None, **kw)
    if adapter:
        from argsim.backend.adapters import adapter_checkpoint_loader

        # the trainer's own reload expects the full model's keys; a LoRA checkpoint holds the adapter
        trainer._load_from_checkpoint = adapter_checkpoint_loader(model)
    failed = _guard_best_reload(trainer) if selecting else []
    run = run_trainer(trainer, out, budget)
    if failed:
        from argsim.errors import ModelError

        raise ModelError(f"cannot load the best checkpoint {failed[0]}")
    run["best"] = kept_best(trainer) if selecting else None
    return trainer, run


def _guard_best_reload(trainer) -> list[str]:
    """sentence-transformers' `_load_best_model` logs a failed reload and goes on with the last weights; this
    records the failure (the list returned) so that `fit_st` raises it instead."""
    load, failed = trainer._load_from_checkpoint, []

    def guarded(path: str, *args: object) -> None:
        try:
            load(path, *args)
        except Exception as exc:
            failed.append(f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            raise

    trainer._load_from_checkpoint = guarded
    return failed
