"""sentence-transformers models train through the library's own trainers (`SentenceTransformerTrainer`,
`CrossEncoderTrainer`): the training arguments carry the device, bf16/fp16, gradient accumulation, checkpoints
(`save_steps`) and the policy; `BudgetCallback` stops on --max-steps / --max-minutes and saves a checkpoint there;
`--resume` passes the last checkpoint under OUT/checkpoints to `trainer.train(resume_from_checkpoint=...)`.
Under `accelerate launch` / `torchrun` the trainer runs DDP by itself and saves only on rank 0.
"""

from __future__ import annotations

import time
from pathlib import Path

from argsim.training.budget import Budget
from argsim.training.placement import Placement
from argsim.training.policy import OptimPolicy

CHECKPOINTS = "checkpoints"


def budget_callback(budget: Budget):  # noqa: ANN201 (a transformers TrainerCallback)
    """A TrainerCallback that stops the run when a budget is used up and saves a checkpoint there."""
    from transformers import TrainerCallback

    class BudgetCallback(TrainerCallback):
        def __init__(self) -> None:
            self.start = time.perf_counter()
            self.stopped_by: str | None = None

        def on_train_begin(self, args, state, control, **kwargs):  # noqa: ANN001, ANN003, ANN201
            self.start = time.perf_counter()
            return control

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN003, ANN201
            reason = budget.reached(state.global_step, time.perf_counter() - self.start)
            if budget.max_minutes is not None and args.world_size > 1:  # rank 0's clock decides for all
                agreed = _broadcast_flag(reason == "max_minutes", args.device)
                reason = "max_minutes" if agreed else (None if reason == "max_minutes" else reason)
            if reason:
                self.stopped_by = reason
                control.should_training_stop = True
                control.should_save = True  # resume continues from here
            return control

    return BudgetCallback()


def _broadcast_flag(flag: bool, device) -> bool:  # noqa: ANN001
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


def run_trainer(trainer, out: Path, budget: Budget) -> dict:  # noqa: ANN001
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


def fit_st(model, rows: dict[str, list] | list[dict], loss, out: Path, placement: Placement, budget: Budget,  # noqa: ANN001
           policy: OptimPolicy, *, epochs: float, batch_size: int, evaluator=None, eval_every: int = 0,  # noqa: ANN001
           quiet: bool = True, callbacks: tuple = (), log_every: int | None = None,
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
            (else when `extra`'s `eval_strategy` says).
        quiet: no progress bar.
        callbacks: more TrainerCallbacks (e.g. a history recorder, a best-weights keeper).
        log_every: log the loss every N steps (default: about ten times per run, `logging_steps`).
        eval_rows: records of an evaluation dataset (the trainer's eval loss), if any.
        adapter: the model's transformer is a peft (LoRA) model: checkpoints hold only the adapter, and resuming
            or reloading the best checkpoint reads it (`argsim.backend.adapters.adapter_checkpoint_loader`).
        extra: more training arguments (e.g. `load_best_model_at_end`, `metric_for_best_model`).

    Returns:
        (the trainer, `run_trainer`'s record: steps, seconds, stop reason, logged losses and evaluations).

    Example:
        >>> trainer, run = fit_st(model, rows, BinaryCrossEntropyLoss(model), out, placement, Budget(),
        ...                       OptimPolicy(lr=2e-5), epochs=1, batch_size=16)  # doctest: +SKIP
        >>> run["steps"]  # doctest: +SKIP
        42
    """
    import datasets
    from sentence_transformers.cross_encoder import CrossEncoder

    def dataset(data: dict[str, list] | list[dict]):  # noqa: ANN202
        return datasets.Dataset.from_list(data) if isinstance(data, list) else datasets.Dataset.from_dict(data)

    cross = isinstance(model, CrossEncoder)
    if cross:
        from sentence_transformers.cross_encoder import CrossEncoderTrainer as Trainer
    else:
        from sentence_transformers import SentenceTransformerTrainer as Trainer
    data = dataset(rows)
    if evaluator is not None and eval_every:
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
    return trainer, run_trainer(trainer, out, budget)
