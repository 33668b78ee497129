"""Cross-encoder (section 4.2): "[CLS] p [SEP] c" -> linear -> softmax over 2 classes, cross-entropy loss.

Trained as a sentence-transformers `CrossEncoder` (num_labels=2) with `CrossEncoderTrainer` and
`CrossEntropyLoss` through argsim.training (device, precision, DDP, budgets, checkpoints, resume); the saved
folder is a sentence-transformers CrossEncoder (its marker `argsim_cross_encoder.json` beside it), which the backend's
pair scorer loads (`argsim.backend.resolve.pair_scorer`: log P(best counter), the log-softmax of its second label).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from argsim.io import write_json

CROSS_MARKER = "argsim_cross_encoder.json"  # options of a saved cross-encoder; its history: HISTORY
HISTORY = "history.json"  # the same file name as the other models' (training.read_history reads both)


def is_cross_folder(folder: str | Path) -> bool:
    return (Path(folder) / CROSS_MARKER).is_file()


def marker_max_length(folder: str | Path) -> int:
    """The token limit a saved cross-encoder folder was trained with (its marker file; 256 where it names none)."""
    from argsim.backend.safety import model_files
    from argsim.schemas import CounterCrossMarker, read_json_as

    with model_files(folder, "cross-encoder"):
        return int(read_json_as(CounterCrossMarker, Path(folder) / CROSS_MARKER).get("max_length", 256))


def validation_choices(val_pairs: Sequence[tuple[str, str]], collection: Sequence[str], points: int = 100,
                       negatives: int = 4, seed: int = 13) -> list[list[tuple[str, str]]]:
    """Fixed validation questions: for up to `points` pairs, the true counter first, then `negatives` random
    other texts of the collection (never the point or its counter)."""
    rng = np.random.default_rng(seed)
    pairs = list(val_pairs)
    if points < len(pairs):
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=points, replace=False))]
    pool = list(dict.fromkeys(collection))
    questions = []
    for p, c in pairs:
        others = [t for t in (pool[int(i)] for i in rng.permutation(len(pool))[:negatives + 2]) if t not in (p, c)]
        questions.append([(p, c)] + [(p, t) for t in others[:negatives]])
    return questions


def choice_accuracy(score: Callable[[list[tuple[str, str]]], np.ndarray],
                    questions: Sequence[Sequence[tuple[str, str]]]) -> float:
    """Share of questions whose first pair (the true counter) gets the highest score (ties count as misses)."""
    flat = [pair for q in questions for pair in q]
    scores, hits, at = score(flat), 0, 0
    for q in questions:
        s = scores[at:at + len(q)]
        hits += int(s[0] > s[1:].max()) if len(q) > 1 else 1
        at += len(q)
    return hits / max(len(questions), 1)


def _choice_evaluator(questions: Sequence[Sequence[tuple[str, str]]], batch_size: int = 32):
    """A sentence-transformers evaluator: accuracy of picking the true counter among each question's pairs."""
    from sentence_transformers.base.evaluation.evaluator import BaseEvaluator

    from argsim.backend.resolve import PairScorer

    class ChoiceEvaluator(BaseEvaluator):
        def __init__(self) -> None:
            super().__init__()
            self.name, self.primary_metric = "val", "choice_accuracy"

        def __call__(self, model, output_path=None, epoch: int = -1, steps: int = -1) -> dict:
            acc = choice_accuracy(PairScorer(model, batch_size, name="in training").score, questions)
            metrics = self.prefix_name_to_metrics({"choice_accuracy": round(acc, 4)}, self.name)
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
            return metrics

    return ChoiceEvaluator()


def pointwise_examples(pairs: Sequence[tuple[str, str]], collection: Sequence[str], epochs: int,
                       seed: int) -> dict[str, list]:
    """Each epoch: (p, c, 1) and (p, a random other text of the collection, 0) for every pair (fresh negatives
    per epoch, drawn in order from one seeded generator); the epochs are concatenated."""
    rng = np.random.default_rng(seed)
    s1, s2, y = [], [], []
    for _ in range(epochs):
        for p, c in pairs:
            n = c
            while n == c or n == p:
                n = collection[int(rng.integers(0, len(collection)))]
            s1 += [p, p]
            s2 += [c, n]
            y += [1, 0]
    return {"sentence1": s1, "sentence2": s2, "label": y}


SELECTION_METRIC = "eval_val_choice_accuracy"  # the validation choice accuracy, as the trainer logs it


def train_cross_encoder(base_model: str, train_pairs: Sequence[tuple[str, str]], collection: Sequence[str],
                        out_dir: str | Path, epochs: int = 1, lr: float = 2e-5, batch_size: int = 16,
                        max_length: int = 256, seed: int = 13, resume: bool = False,
                        max_minutes: float | None = None, log: Callable[[dict], None] | None = None,
                        val_questions: Sequence[Sequence[tuple[str, str]]] = (), evals_per_epoch: int = 4,
                        placement=None, budget=None, quiet: bool = True) -> list[dict]:
    """Pointwise training with sentence-transformers' `CrossEncoder` (2 labels) + `CrossEncoderTrainer` and
    `CrossEntropyLoss`: each pair gives (p, c, 1) and (p, random negative, 0), fresh negatives every epoch;
    Adam at a constant rate (argsim.training policy), the device / precision / DDP of `placement`, the budget's
    stops, checkpoints under OUT/checkpoints and `resume`.

    With `val_questions` (see `validation_choices`) the model is validated before training (epoch 0) and
    `evals_per_epoch` times per epoch (and where a budget stops it): history rows carry fractional epochs, the
    mean training loss since the previous row and `val` = accuracy of picking the true counter among its
    question's candidates (the `val_choice_accuracy` evaluator).

    Model selection: that validation accuracy, the task's own metric, chooses the saved model: the weights of
    the best validated row of training (the first of equal scores; the untrained row is the baseline, not a
    candidate), which may be earlier than the last step (`argsim.training.st.fit_st`'s selection: a checkpoint at
    each validation, transformers' `load_best_model_at_end`; a `--resume`d run keeps the best of the rows before
    its stop, which `trainer_state.json` records). Without `val_questions` the last step is saved.
    """
    import math

    from sentence_transformers.cross_encoder import CrossEncoder
    from sentence_transformers.cross_encoder.losses import CrossEntropyLoss
    from transformers import TrainerCallback

    from argsim.backend import model_path
    from argsim.backend.safety import HF_LOAD
    from argsim.settings import seed_everything
    from argsim.training import Budget, OptimPolicy, is_main_process, resolve_placement
    from argsim.training.record import data_hash, train_config, write_records
    from argsim.training.st import TrainRun, fit_st

    placement = placement or resolve_placement("cpu", "fp32", seed=seed)
    budget = budget or Budget(max_minutes=max_minutes, resume=resume)
    seed = placement.seed
    seed_everything(seed)
    out_dir = Path(out_dir)
    pairs, collection = list(train_pairs), list(collection)
    model = CrossEncoder(str(model_path(base_model)), num_labels=2, max_length=max_length, device=placement.device,
                         **HF_LOAD)
    data = pointwise_examples(pairs, collection, epochs, seed)
    per_epoch = math.ceil(2 * len(pairs) / (batch_size * placement.processes * budget.grad_accum))
    every = max(1, round(per_epoch / max(evals_per_epoch, 1)))
    evaluator = _choice_evaluator(val_questions) if val_questions else None
    policy = OptimPolicy(lr=lr, weight_decay=0.0, schedule="constant", max_grad_norm=None)
    from argsim.counter.neural.training import read_history

    history: list[dict] = list(read_history(out_dir)) if budget.resume else []
    offset = history[-1].get("seconds") or 0.0 if history else 0.0
    examples_per_step = batch_size * placement.processes * budget.grad_accum

    def record(row: dict) -> None:
        history.append(row)
        if log and is_main_process():
            log(row)

    class History(TrainerCallback):
        def __init__(self) -> None:
            self.start, self.losses, self.step = time.perf_counter(), [], 0

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                self.losses.append(float(logs["loss"]))

        def on_evaluate(self, args, state, control, metrics=None, **kw):
            stopped = control.should_training_stop and state.global_step < state.max_steps  # a budget's stop
            self.row(state.global_step, (metrics or {}).get(SELECTION_METRIC), stopped)

        def row(self, step: int, val: float | None, stopped: bool) -> None:
            if step == self.step:
                return
            self.step = step
            record({"epoch": round(step / per_epoch, 3), "val": val,
                    "loss": float(np.mean(self.losses)) if self.losses else None,
                    "examples": min(step * examples_per_step, len(data["label"])),
                    "seconds": round(offset + time.perf_counter() - self.start, 2), "stopped_early": stopped})
            self.losses = []

    tracker = History()
    if not history:
        record({"epoch": 0, "val": evaluator(model)["val_choice_accuracy"] if evaluator else None, "loss": None,
                "examples": 0, "seconds": 0.0})
    trainer, run = fit_st(model, data, CrossEntropyLoss(model), TrainRun(out_dir, placement, budget, policy, 1,
                                                                          batch_size),
                          evaluator=evaluator, eval_every=every, select=SELECTION_METRIC if evaluator else None,
                          callbacks=(tracker,), disable_tqdm=quiet, logging_steps=every)
    if tracker.step != trainer.state.global_step:  # no validation: a row where the run ended
        tracker.row(trainer.state.global_step, None, bool(run["stopped_by"]))
    best = run["best"]  # the model holds the best validated row's weights, not necessarily the last
    if trainer.is_world_process_zero():
        model.save(str(out_dir))
        write_json(out_dir / CROSS_MARKER, {"kind": "cross-encoder", "base_model": base_model,
                                            "max_length": max_length, "lr": lr, "batch_size": batch_size,
                                            "train_pairs": len(pairs)})
        write_json(out_dir / HISTORY, {"kind": "cross-encoder", "history": history})
        metrics = {"val_choice_accuracy_untrained": history[0]["val"],
                   "val_choice_accuracy": best["value"] if best else history[-1]["val"],
                   "val_choice_accuracy_last": history[-1]["val"],
                   "best_epoch": round(best["step"] / per_epoch, 3) if best else None}
        write_records(out_dir, train_config("counter-cross-encoder", placement, budget, policy,
                                            {"epochs": epochs, "lr": lr, "batch_size": batch_size,
                                             "max_length": max_length, "evals_per_epoch": evals_per_epoch},
                                            {"train": data_hash(pairs)}, run, metrics, base_model=base_model),
                      pipeline_tag="text-classification")
    return history
