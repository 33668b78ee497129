"""What every argsim trainer shares around transformers' `Trainer` (`trainer_arguments`, `run_trainer`, the one
model selection `selection_arguments`) and `fit_st`, the trainer of the sentence-transformers models."""

from __future__ import annotations

import math
import time
from pathlib import Path

import datasets
from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
from transformers import TrainingArguments
from transformers.trainer_callback import PrinterCallback
from transformers.trainer_utils import get_last_checkpoint

from argsim.backend.adapters import adapter_checkpoint_loader, is_lora, save_adapter
from argsim.errors import ArgsimError, ModelError, warn
from argsim.io import read_json_as, write_json
from argsim.training.budget import Budget, check_cadence
from argsim.training.callbacks import BudgetCallback, InterruptCallback
from argsim.training.placement import TrainRun, is_main_process
from argsim.training.record import data_hash

CHECKPOINTS = "checkpoints"
IDENTITY = "run.json"  # beside the checkpoints: the data and architecture they were trained on


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
                "report_to": "none", "disable_tqdm": True, "dataloader_num_workers": 0,
                "ddp_find_unused_parameters": True, **run.policy.trainer_kwargs()}
    if placement.processes > 1 and cpu:
        kw["ddp_backend"] = "gloo"
    return args_class(**(kw | extra))


def last_checkpoint(out: Path) -> str | None:
    """The newest `checkpoint-N` folder under OUT/checkpoints, if any."""
    folder = Path(out) / CHECKPOINTS
    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def identity(rows: object, model) -> dict:
    """What a checkpoint must have been trained on to be resumed: the data's hash and the trainable shapes."""
    shapes = [(n, list(p.shape)) for n, p in model.named_parameters() if p.requires_grad]
    return {"data": data_hash(rows), "architecture": data_hash(shapes)}


def run_trainer(trainer, out: Path, budget: Budget, ident: dict) -> dict:
    """`trainer.train()` (resumed with --resume) with the budget and interrupt callbacks (a signal leaves a
    checkpoint and exits 130 / 143); returns steps, seconds (also each epoch's: `epoch_seconds`), stop reason,
    losses, evaluations and the kept best. `ident` (`identity`) is recorded beside the checkpoints: a checkpoint
    made on other data or another architecture is refused in one line."""
    budget_cb, interrupt = BudgetCallback(budget), InterruptCallback()
    trainer.remove_callback(PrinterCallback)  # no log dicts on stdout: the record keeps them
    trainer.add_callback(budget_cb)
    trainer.add_callback(interrupt)
    saved = Path(out) / CHECKPOINTS / IDENTITY
    resume_from = last_checkpoint(out) if budget.resume else None
    if budget.resume and resume_from is None:
        warn(f"--resume: no checkpoint under {saved.parent}, so the training starts from the beginning")
    if resume_from is not None and saved.is_file():
        differs = [k for k, v in read_json_as(dict[str, object], saved).items() if ident.get(k) != v]
        if differs:
            raise ArgsimError(f"--resume: {resume_from} was trained on other {' and '.join(differs)}; "
                              "use another --out or drop --resume")
    if is_main_process():
        write_json(saved, ident)
    began = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume_from)
    interrupt.raise_if_interrupted(str(Path(out) / CHECKPOINTS))
    state = trainer.state
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


def fit_st(model, rows: dict[str, list] | list[dict], loss, run: TrainRun, *, evaluator=None, eval_every: int = 0,
           select: str | None = None, callbacks: tuple = (), eval_rows: list[dict] | None = None,
           **extra: object) -> tuple[object, dict]:
    """Train a SentenceTransformer (`SentenceTransformerTrainer`) or a CrossEncoder (`CrossEncoderTrainer`).

    Args:
        model, loss: the model and a sentence-transformers loss over it.
        rows: the training columns (`{column: values}`, in the order the loss reads them) or records.
        run: the `TrainRun` (`trainer_arguments`).
        evaluator: a sentence-transformers evaluator, run as `select` says.
        select: keep the best evaluation's weights by this metric (`selection_arguments`; LoRA checkpoints' adapters
            read back); needs `evaluator` or `eval_rows`, else the last weights stay.
        callbacks: more TrainerCallbacks. eval_rows: records of an evaluation dataset (its loss), if any.
        extra: more training arguments (`disable_tqdm`, `logging_steps` (default: about ten a run), ...).

    Returns:
        (the trainer, `run_trainer`'s record); the model holds the kept weights.

    Raises:
        ModelError: the best checkpoint could not be read back (transformers would keep the last weights).

    Example:
        >>> trainer, rec = fit_st(model, rows, BinaryCrossEntropyLoss(model),
        ...                       TrainRun(out, placement, Budget(), OptimPolicy(lr=2e-5)))  # doctest: +SKIP
        >>> rec["steps"]  # doctest: +SKIP
        42
    """
    selecting = select is not None and (evaluator is not None or bool(eval_rows))
    if selecting:
        extra |= selection_arguments(select, eval_every, run.budget)
    cross, data = isinstance(model, CrossEncoder), _dataset(rows)
    args = trainer_arguments(run, len(data), CrossEncoderTrainingArguments if cross else
                             SentenceTransformerTrainingArguments, **extra)
    trainer = (CrossEncoderTrainer if cross else SentenceTransformerTrainer)(
        model=model, args=args, train_dataset=data, loss=loss, evaluator=evaluator,
        callbacks=list(callbacks) or None, eval_dataset=_dataset(eval_rows) if eval_rows else None)
    if _lora(model):  # the trainer's own reload expects the full model's keys; a LoRA checkpoint holds the adapter
        trainer._load_from_checkpoint = adapter_checkpoint_loader(model)
    load, failed = trainer._load_from_checkpoint, []

    def guarded(path: str, *args: object) -> None:  # sentence-transformers only logs a failed best reload
        try:
            load(path, *args)
        except Exception as exc:
            failed.append(f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            raise

    if selecting:
        trainer._load_from_checkpoint = guarded
    record = run_trainer(trainer, run.out, run.budget, identity(rows, model))
    if failed:
        raise ModelError(f"cannot load the best checkpoint {failed[0]}")
    return trainer, record


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


def _dataset(data: dict[str, list] | list[dict]) -> datasets.Dataset:
    return datasets.Dataset.from_list(data) if isinstance(data, list) else datasets.Dataset.from_dict(data)

