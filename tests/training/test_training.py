"""The training layer: policy vs transformers' schedules, device/precision resolution, budgets, every trainer's
parameters on the resolved device, same seed -> same weights, resume == uninterrupted, records, HF ids."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from argsim.errors import ArgsimError
from argsim.training import Budget, OptimPolicy, resolve_placement
from tests.conftest import TOPICS, tiny_triplets

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPO = Path(__file__).resolve().parents[2]

@pytest.fixture
def tiny_vectors(tmp_path) -> str:
    """16-d random word vectors for the tiny corpus (keeps the BiLSTM tests fast)."""
    import numpy as np
    from gensim.models import KeyedVectors

    from argsim.backend.models import tokenize_en

    words = sorted({w for texts in TOPICS.values() for t in texts for w in tokenize_en(t)})
    kv = KeyedVectors(vector_size=16)
    kv.add_vectors(words, np.random.default_rng(0).normal(size=(len(words), 16)).astype(np.float32))
    kv.save_word2vec_format(str(tmp_path / "tiny.txt"))  # word2vec text: argsim refuses pickled vectors
    return str(tmp_path / "tiny.txt")


def cpu(seed: int = 13, precision: str = "fp32"):
    return resolve_placement("cpu", precision, threads=1, seed=seed)  # one thread: fastest on a busy machine


def state(folder: Path) -> dict[str, torch.Tensor]:
    """Every weight tensor saved in a model folder (safetensors or torch state dicts)."""
    from safetensors.torch import load_file

    out: dict[str, torch.Tensor] = {}
    for f in sorted(folder.rglob("*")):
        if "checkpoints" in f.parts:
            continue
        if f.suffix == ".safetensors":
            out.update({f"{f.relative_to(folder)}:{k}": v for k, v in load_file(f).items()})
        elif f.suffix == ".pt":
            loaded = torch.load(f, map_location="cpu", weights_only=True)
            flat = loaded if all(isinstance(v, torch.Tensor) for v in loaded.values()) else {
                f"{k}.{kk}": vv for k, v in loaded.items() for kk, vv in v.items()}
            out.update({f"{f.relative_to(folder)}:{k}": v for k, v in flat.items()})
    assert out, f"no weights under {folder}"
    return out


def same_weights(a: Path, b: Path) -> bool:
    sa, sb = state(a), state(b)
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.fixture
def devices_seen(monkeypatch):
    """Record the devices of the trained parameters at every step of every trainer."""
    import argsim.training.trainer as trainer_module

    seen: set[str] = set()
    run = trainer_module.run_trainer

    def run_trainer(trainer, out, budget, ident=None):
        from transformers import TrainerCallback

        class Spy(TrainerCallback):
            def on_step_end(self, args, state, control, model=None, **kw):
                seen.update(p.device.type for p in model.parameters() if p.requires_grad)

        trainer.add_callback(Spy())
        return run(trainer, out, budget, ident)

    monkeypatch.setattr(trainer_module, "run_trainer", run_trainer)
    return seen


# ------------------------------------------------------------------ policy, placement, budgets


def test_policy_equals_transformers_schedules():
    from transformers import (
        get_constant_schedule_with_warmup,
        get_linear_schedule_with_warmup,
        get_polynomial_decay_schedule_with_warmup,
        get_scheduler,
    )

    total = 40
    cases = [(OptimPolicy(lr=1e-3, warmup_ratio=0.1), lambda o: get_linear_schedule_with_warmup(o, 4, total)),
             (OptimPolicy(lr=8e-6, lr_end=1e-6), lambda o: get_polynomial_decay_schedule_with_warmup(
                 o, 0, total, lr_end=1e-6, power=1.0)),
             (OptimPolicy(lr=2e-5, warmup_ratio=0.05, schedule="constant"),
              lambda o: get_constant_schedule_with_warmup(o, 2))]
    for policy, reference in cases:  # the schedule transformers builds from the policy's TrainingArguments
        kw = policy.trainer_kwargs()
        ours = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=policy.lr)
        theirs = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=policy.lr)
        s1 = get_scheduler(kw["lr_scheduler_type"], ours, math.ceil(kw["warmup_steps"] * total), total,
                           scheduler_specific_kwargs=kw.get("lr_scheduler_kwargs"))
        s2 = reference(theirs)
        for _ in range(total + 2):
            assert ours.param_groups[0]["lr"] == pytest.approx(theirs.param_groups[0]["lr"], rel=1e-9, abs=1e-15)
            ours.step(), theirs.step(), s1.step(), s2.step()
    kw = OptimPolicy(lr=8e-6, lr_end=1e-6).trainer_kwargs()
    assert kw["lr_scheduler_type"] == "polynomial" and kw["weight_decay"] == 0.0 and kw["optim"] == "adamw_torch"


def test_precision_and_device_resolution(monkeypatch):
    from argsim import measure
    from argsim.backend import device
    from argsim.backend.device import resolve_device, resolve_precision

    monkeypatch.setattr(device, "CPU_AUTO_BF16", True)
    for flags, auto in ((["avx2", "avx512f", "avx512_vnni"], "fp32"), (["avx512f", "avx512_bf16"], "bf16"),
                        (["avx2", "amx_bf16"], "bf16")):  # autocast in bf16 only where the CPU computes it
        monkeypatch.setattr(measure, "cpu_info", lambda flags=flags: {"flags": flags})
        assert resolve_precision("auto", "cpu") == auto and resolve_precision("bf16", "cpu") == "bf16"
        assert resolve_precision("fp32", "cpu") == "fp32" and resolve_precision("auto", "mps") == "fp32"
    with pytest.raises(ArgsimError, match="fp16 needs a CUDA GPU"):
        resolve_precision("fp16", "cpu")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert resolve_precision("auto", "cuda") == "bf16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert resolve_precision("auto", "cuda:1") == "fp16"
    with pytest.raises(ArgsimError, match="bf16 is not supported"):
        resolve_precision("bf16", "cuda")
    if not torch.cuda.is_available():
        for bad in ("cuda", "cuda:1"):
            with pytest.raises(ArgsimError, match="CUDA is not available"):
                resolve_device(bad)
    with pytest.raises(ArgsimError, match="unknown device"):
        resolve_device("cuda:x")
    assert Budget(max_steps=-1).max_steps is None
    assert Budget(max_steps=3).reached(3, 0.0) == "max_steps" and Budget(max_minutes=1).reached(0, 61) == "max_minutes"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("args", [["sbert"], ["mts"], ["minutes-sbert"], ["thematic", "x.jsonl"], ["bipolar"]])
def test_missing_device_is_one_line_and_exit_2_before_any_work(args, tmp_path):
    from argsim.cli.app import app

    out = tmp_path / "never"
    result = CliRunner().invoke(app, ["--device", "cuda:1", "train", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "CUDA is not available" in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()


# ------------------------------------------------------------------ every trainer: device, seeds, resume, records


def test_sentence_transformer_trainer_device_seed_resume_and_records(devices_seen, tiny_bert, tmp_path):
    """Thematic fine-tune (the mechanics do not depend on the base: a tiny random BERT): on the resolved device; a
    run stopped by --max-steps and resumed equals the uninterrupted run with the same seed, weight for weight (so
    two runs with one seed are identical too); train_config.json + model card beside the weights."""
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer

    trips = tiny_triplets(16)
    kw = {"config": ThematicTrainConfig(model=str(tiny_bert), batch_size=4, lr=1e-4, max_seq_length=16, margin=1.0,
                                        lora_rank=0)}
    old_umask = os.umask(0o002)
    try:
        finetune_sentence_transformer(trips, tmp_path / "a", placement=cpu(), **kw)
    finally:
        os.umask(old_umask)
    # every file follows the umask, the weights safetensors writes privately (0600) included
    modes = {f.name: f.stat().st_mode & 0o777 for f in (tmp_path / "a").rglob("*") if f.is_file()}
    assert "model.safetensors" in modes and set(modes.values()) == {0o664}, modes
    assert devices_seen == {"cpu"}
    stopped = finetune_sentence_transformer(trips, tmp_path / "r", placement=cpu(), budget=Budget(max_steps=2), **kw)
    assert stopped["steps"] == 2 and stopped["stopped_by"] == "max_steps"
    assert not same_weights(tmp_path / "a", tmp_path / "r")
    done = finetune_sentence_transformer(trips, tmp_path / "r", placement=cpu(), budget=Budget(resume=True), **kw)
    assert done["steps"] == 4 and same_weights(tmp_path / "a", tmp_path / "r")
    config = json.loads((tmp_path / "a" / "train_config.json").read_text())
    for key in ("command", "seed", "git_commit", "versions", "device", "precision", "data", "seconds",
                "peak_memory", "optimizer", "budget"):
        assert key in config
    assert config["device"] == "cpu" and config["precision"] == "fp32" and config["versions"]["torch"]
    card = (tmp_path / "a" / "README.md").read_text()
    assert card.startswith("---") and "argsim training run" in card and "sentence-transformers" in card
    # the losses the trainer logged, at the steps it logged them, drawn as the learning curve beside the weights
    assert len(config["loss_steps"]) == len(config["losses"]) > 0 and config["loss_steps"][-1] <= config["steps"]
    assert config["loss_steps"] == sorted(config["loss_steps"])
    assert (tmp_path / "a" / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_thematic_finetune_keeps_the_best_dev_step_not_the_last(tiny_bert, tmp_path):
    """--eval-every: the dev sample is scored at every N-th step, and the saved model is the checkpoint of the best
    score (weight for weight), which here is not the last step; the run records that step and its score. A tiny
    random BERT at a high learning rate makes the dev scores rise, then fall."""
    from safetensors.torch import load_file

    from argsim.io import read_records
    from argsim.schemas import TripletRecord
    from argsim.trainers.thematic_minilm import SELECTION_METRIC, ThematicTrainConfig, finetune_sentence_transformer

    dev = read_records(REPO / "examples" / "thematic" / "triplets.jsonl", TripletRecord)
    out = tmp_path / "m"
    config = ThematicTrainConfig(model=str(tiny_bert), batch_size=4, lr=1e-2, max_seq_length=16, epochs=3,
                                 eval_every=2, dev_sample=30, margin=1.0, lora_rank=0)
    stats = finetune_sentence_transformer(tiny_triplets(16), out, config, placement=cpu(), dev=dev)
    config = json.loads((out / "train_config.json").read_text())
    scores = {e["step"]: e[SELECTION_METRIC] for e in config["evals"] if SELECTION_METRIC in e}
    assert sorted(scores) == [2, 4, 6, 8, 10, 12] and stats["dev_sample"] == 30
    assert len(set(scores.values())) > 1, scores  # the premise: the scores differ, so the choice is a real one
    best = max(scores, key=lambda step: (scores[step], -step))  # the first of equal scores, as the trainer keeps it
    assert stats["best_step"] == best < 12 and stats["best_dev_sample_accuracy"] == scores[best]
    saved = load_file(out / "model.safetensors")
    kept = load_file(out / "checkpoints" / f"checkpoint-{best}" / "model.safetensors")
    assert saved.keys() == kept.keys() and all(torch.equal(saved[k], kept[k]) for k in saved)


HELD_OUT = {  # sentences no training triplet holds, on the same three topics
    "coffee": ["Coffee beans are roasted before brewing.", "A cup of coffee has caffeine.",
               "Coffee shops sell espresso and latte.", "Farmers harvest coffee cherries by hand."],
    "solar": ["Solar energy comes from the sun.", "Rooftop solar panels produce power.",
              "Solar cells convert light into electricity.", "Solar farms need sunny land."],
    "football": ["The football team scored two goals.", "The goalkeeper caught the ball.",
                 "The striker missed a penalty.", "Football fans filled the stadium."],
}


def held_out_triplets() -> list[dict]:
    """36 triplets of HELD_OUT: every ordered pair of a topic's sentences, a sentence of the next topic."""
    names, rows = list(HELD_OUT), []
    for i, topic in enumerate(names):
        for a in HELD_OUT[topic]:
            for p in HELD_OUT[topic]:
                if p != a:
                    rows.append({"anchor": a, "positive": p, "negative": HELD_OUT[names[(i + 1) % 3]][len(rows) % 4]})
    return rows


def test_thematic_finetune_raises_held_out_triplet_accuracy(tiny_bert, tmp_path):
    """The transformer fine-tune (a tiny random BERT) on 24 triplets for 3 epochs raises triplet accuracy on
    sentences it never saw above the same run at a learning rate of 0 (the untrained model)."""
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer

    dev = held_out_triplets()
    assert not {t[f] for t in dev for f in ("anchor", "positive", "negative")} & {
        t[f] for t in tiny_triplets(24) for f in ("anchor", "positive", "negative")}
    kw = {"model": str(tiny_bert), "batch_size": 8, "epochs": 3, "max_seq_length": 16, "margin": 1.0, "lora_rank": 0,
          "eval_every": 0}
    zero = finetune_sentence_transformer(tiny_triplets(24), tmp_path / "zero", ThematicTrainConfig(lr=0.0, **kw),
                                         placement=cpu(), dev=dev, quiet=True)
    tuned = finetune_sentence_transformer(tiny_triplets(24), tmp_path / "tuned", ThematicTrainConfig(lr=3e-3, **kw),
                                          placement=cpu(), dev=dev, quiet=True)
    assert tuned["steps"] == zero["steps"] == 9
    assert tuned["dev_accuracy"] > zero["dev_accuracy"] + 0.15, (zero["dev_accuracy"], tuned["dev_accuracy"])


def test_counter_cross_encoder_keeps_the_best_validated_weights_not_the_last(tiny_bert, tmp_path):
    """Validated twice per epoch, a tiny random cross-encoder at lr 3e-3 peaks early and ends lower: the saved model
    is the peak (it scores the best row's choice accuracy again) and the records name it."""
    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.pipeline import load_stage
    from argsim.trainers.counter_cross import choice_accuracy, train_cross_encoder, validation_choices

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]
    collection = [t for p in pairs for t in p]
    questions = validation_choices(pairs, collection, points=9, negatives=3)
    config = NeuralConfig(kind="cross-encoder", base_model=str(tiny_bert), epochs=2, encoder_lr=3e-3, batch_size=4,
                          max_seq_length=32)
    hist = train_cross_encoder(config, pairs, collection, tmp_path / "ce", questions=questions, evals_per_epoch=2,
                               placement=cpu())
    vals = [h["val"] for h in hist[1:]]
    best = max(vals)
    assert vals[-1] < best, hist  # the premise: the last row is not the best
    metrics = json.loads((tmp_path / "ce" / "train_config.json").read_text())["metrics"]
    assert metrics["val_choice_accuracy"] == best and metrics["val_choice_accuracy_last"] == vals[-1]
    assert metrics["best_epoch"] == hist[1 + vals.index(best)]["epoch"]
    assert choice_accuracy(load_stage(tmp_path / "ce").score, questions) == pytest.approx(best, abs=1e-4)


def test_counter_cross_encoder_resumed_keeps_the_best_validated_before_the_stop(tiny_bert, tmp_path):
    """The same run stopped by --max-steps 5 (the stopped weights are validated too, their row marked) and resumed:
    the best validated row comes before the stop, and the resumed run still saves its weights (the best of the
    whole history, the first of equal scores), not the last ones."""
    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.pipeline import load_stage
    from argsim.trainers.counter_cross import choice_accuracy, train_cross_encoder, validation_choices

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]
    collection = [t for p in pairs for t in p]
    questions = validation_choices(pairs, collection, points=9, negatives=3)
    config = NeuralConfig(kind="cross-encoder", base_model=str(tiny_bert), epochs=2, encoder_lr=3e-3, batch_size=4,
                          max_seq_length=32)
    kw = {"questions": questions, "evals_per_epoch": 2, "placement": cpu()}
    first = train_cross_encoder(config, pairs, collection, tmp_path / "ce", budget=Budget(max_steps=5), **kw)
    assert first[-1]["stopped_early"] and first[-1]["examples"] == 20
    (tmp_path / "ce" / "history.json").unlink()  # the rows come back from the checkpoint, as after a signal
    hist = train_cross_encoder(config, pairs, collection, tmp_path / "ce", budget=Budget(resume=True), **kw)
    assert hist[:len(first)] == first and len(hist) > len(first)
    vals = [h["val"] for h in hist[1:]]
    at = vals.index(max(vals))  # the first of equal scores
    assert at < len(first) - 1 and max(vals[len(first) - 1:]) < vals[at], hist  # the premise: the best is earlier
    metrics = json.loads((tmp_path / "ce" / "train_config.json").read_text())["metrics"]
    assert metrics["val_choice_accuracy"] == vals[at] and metrics["best_epoch"] == hist[1 + at]["epoch"]
    assert choice_accuracy(load_stage(tmp_path / "ce").score, questions) == pytest.approx(vals[at], abs=1e-4)


def test_thematic_finetune_with_eval_every_keeps_the_budget_stop_checkpoint(tiny_bert, tmp_path):
    """A --max-steps/--max-minutes stop with --eval-every leaves its own checkpoint beside the best one, so --resume
    continues from the stop (the trainer's end-of-run clean-up must not delete it). A tiny random BERT."""
    from argsim.io import read_records
    from argsim.schemas import TripletRecord
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer

    dev = read_records(REPO / "examples" / "thematic" / "triplets.jsonl", TripletRecord)
    out = tmp_path / "m"
    config = ThematicTrainConfig(model=str(tiny_bert), batch_size=4, lr=3e-4, max_seq_length=16, epochs=3,
                                 eval_every=2, dev_sample=10, margin=1.0, lora_rank=0)
    finetune_sentence_transformer(tiny_triplets(16), out, config, placement=cpu(), dev=dev, budget=Budget(max_steps=5))
    assert (out / "checkpoints" / "checkpoint-5").is_dir()
    assert json.loads((out / "train_config.json").read_text())["stopped_by"] == "max_steps"


def test_eval_every_options_are_checked_before_any_work(tmp_path):
    from argsim.cli.app import app

    for extra in (["--eval-every", "2"], ["--eval-every", "2", "--dev", "d.jsonl", "--checkpoint-every", "3"]):
        out = tmp_path / "never"
        result = CliRunner().invoke(app, ["train", "thematic", "missing.jsonl", "--arch", "minilm", "--out", str(out),
                                          *extra])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert "--eval-every" in result.output and not out.exists()


def test_train_thematic_default_trains_a_lora_adapter_and_chooses_on_dev(tiny_bert, tmp_path):
    """`argsim train thematic T --dev D --out M` with no training option (the base given as a tiny random BERT):
    the shipped recipe's LoRA adapter (rank 16, lr 1e-4, margin 0.3, batch 16) with a dev evaluation every 2 steps
    here (--eval-every and --checkpoint-every left to their defaults, 250 and 0, would not fire in 3 steps); OUT
    holds only the adapter and the records the resolved settings."""
    from argsim.cli.app import app
    from argsim.io import write_jsonl

    write_jsonl(tmp_path / "t.jsonl", tiny_triplets(48))
    write_jsonl(tmp_path / "d.jsonl", held_out_triplets())
    out = tmp_path / "m"
    result = CliRunner().invoke(app, ["--quiet", "train", "thematic", str(tmp_path / "t.jsonl"), "--model",
                                      str(tiny_bert), "--max-seq-length", "16", "--dev", str(tmp_path / "d.jsonl"),
                                      "--eval-every", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert "adapter_model.safetensors" in names and "model.safetensors" not in names
    config = json.loads((out / "train_config.json").read_text())
    options = config["options"]
    assert (options["lora_rank"], options["lr"], options["margin"], options["batch_size"]) == (16, 1e-4, 0.3, 16)
    assert config["steps"] == 3 and [e["step"] for e in config["evals"]][0] == 2
    assert options["best_step"] == 2 and 0 <= config["metrics"]["dev_triplet_accuracy"] <= 1


def test_custom_loop_device_seed_resume_and_bf16(devices_seen, tiny_vectors, tmp_path):
    """Thematic BiLSTM through the accelerate loop: resolved device, same seed -> same weights, a run stopped
    mid-epoch by --max-steps and resumed equals the uninterrupted run (dropout RNG included); bf16 autocast."""
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    trips = tiny_triplets(32)
    cfg = {"hidden": 8, "attention": 4, "batch_size": 8, "epochs": 2, "seed": 5, "word_vectors": tiny_vectors}
    quiet = {"log": lambda *_: None}
    a = train_bilstm(trips, tmp_path / "a", ThematicTrainConfig(**cfg), placement=cpu(5), budget=Budget(), **quiet)
    train_bilstm(trips, tmp_path / "b", ThematicTrainConfig(**cfg), placement=cpu(5), budget=Budget(), **quiet)
    assert devices_seen == {"cpu"} and a.steps == 8
    assert same_weights(tmp_path / "a", tmp_path / "b")
    first = train_bilstm(trips, tmp_path / "r", ThematicTrainConfig(**cfg), placement=cpu(5),
                         budget=Budget(max_steps=3), **quiet)
    assert first.steps == 3 and first.stopped_by == "max_steps" and not same_weights(tmp_path / "a", tmp_path / "r")
    rest = train_bilstm(trips, tmp_path / "r", ThematicTrainConfig(**cfg), placement=cpu(5), budget=Budget(resume=True),
                        **quiet)
    assert rest.steps == 8 and rest.triplets_seen == a.triplets_seen
    assert same_weights(tmp_path / "a", tmp_path / "r")
    half = train_bilstm(trips, tmp_path / "h", ThematicTrainConfig(**cfg), placement=cpu(5, "bf16"),
                        budget=Budget(max_steps=1, grad_accum=2), **quiet)
    config = json.loads((tmp_path / "h" / "train_config.json").read_text())
    assert half.steps == 1 and config["precision"] == "bf16" and config["budget"]["grad_accum"] == 2
    assert (tmp_path / "h" / "README.md").read_text().startswith("---\nlibrary_name: argsim")


def test_module_trainer_serves_whole_batches_per_epoch_resumed_and_takes_the_policy_rates(tmp_path):
    """`whole_batches`: epoch e is make(e)'s batches in order, also when a run stopped mid-epoch resumes (transformers
    skips the epoch's first batches); ModuleTrainer's AdamW: a group's own rate, else the policy's, and the
    policy's weight decay (MTS's 0.01, not TrainingArguments' default 0)."""
    from types import SimpleNamespace

    from torch import nn

    from argsim.training import begin_run
    from argsim.training.trainer import fit as train
    from argsim.training.trainer import whole_batches

    seen: list[str] = []

    def loss(net, batch: str) -> torch.Tensor:
        seen.append(batch)
        return (net(torch.ones(1, 2)) ** 2).sum()

    def fit(budget: Budget):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        run = begin_run(SimpleNamespace(seed=3, lr=0.1, weight_decay=0.01, epochs=3), tmp_path, cpu(3), budget)
        groups = [{"params": list(net[0].parameters()), "lr": 0.5}, {"params": list(net[1].parameters())}]
        data = whole_batches(lambda e: [f"e{e}b{i}" for i in range(3)], key="toy")
        return train(net, data, run, loss, groups=groups, logging_steps=1)

    trainer, rec = fit(Budget(max_steps=4, checkpoint_every=1))
    assert rec["steps"] == 4 and seen == ["e0b0", "e0b1", "e0b2", "e1b0"]
    assert [(g["initial_lr"], g["weight_decay"]) for g in trainer.optimizer.param_groups] == [(0.5, 0.01), (0.1, 0.01)]
    seen.clear()
    trainer, rec = fit(Budget(resume=True))
    assert rec["steps"] == 9 and seen == ["e1b1", "e1b2", "e2b0", "e2b1", "e2b2"]


def test_log_callback_writes_an_evaluation_line_or_a_loss_line():
    from transformers import TrainerControl, TrainerState

    from argsim.training.callbacks import LogCallback

    lines: list[str] = []
    state, control = TrainerState(global_step=4, epoch=1.5), TrainerControl()
    evals, losses = LogCallback(lines.append, metric="eval_dev_acc"), LogCallback(lines.append, label="mts")
    for cb in (evals, losses):
        cb.on_evaluate(None, state, control, metrics={"eval_dev_acc": 0.5, "eval_loss": 1.0})
        cb.on_log(None, state, control, logs={"loss": 0.25})
    state.best_metric = 0.75
    evals.on_evaluate(None, state, control, metrics={"eval_dev_acc": 0.625})
    assert lines == ["step 4: dev_acc 0.5000 (best so far)", "[mts] epoch 1.50 step 4 loss 0.2500 0s",
                     "step 4: dev_acc 0.6250"]


def test_bilstm_keeps_the_epoch_with_the_best_dev_triplet_accuracy(tiny_vectors, tmp_path):
    """With dev triplets the BiLSTM is scored after every epoch (L1 triplet accuracy, ties wrong) and OUT holds the
    best epoch's model, not the last: at lr 1e-2 the tiny run peaks after epoch 1 and ends lower. The saved folder,
    reloaded through the backend and scored by the numpy metric, reaches the best recorded evaluation, and its
    weights are those of a one-epoch run without dev (evaluating draws no random numbers)."""
    from argsim.backend import get_encoder
    from argsim.metrics.triplets import encoded_triplet_scores
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    trips, dev = tiny_triplets(32), held_out_triplets()
    cfg = {"hidden": 8, "attention": 4, "batch_size": 8, "seed": 3, "word_vectors": tiny_vectors, "lr": 1e-2}
    quiet = {"log": lambda *_: None, "placement": cpu(3), "budget": Budget()}
    report = train_bilstm(trips, tmp_path / "m", ThematicTrainConfig(epochs=3, **cfg), dev=dev, **quiet)
    records = json.loads((tmp_path / "m" / "train_config.json").read_text())
    key = "eval_dev_accuracy"
    assert [e["step"] for e in records["evals"]] == [4, 8, 12]  # one evaluation per epoch
    values = [e[key] for e in records["evals"]]
    best = max(values)
    assert values[-1] < best, values  # the premise: the last epoch is not the best
    first_best = values.index(best) + 1
    metrics = records["metrics"]
    assert metrics["best_epoch"] == first_best and metrics["best_step"] == 4 * first_best
    assert metrics["best_dev_sample_accuracy_l1"] == best and report.best_step == 4 * first_best
    saved = encoded_triplet_scores(get_encoder(str(tmp_path / "m")), dev, distance="l1", ties="wrong",
                                   use_cache=False)
    assert saved.accuracy == pytest.approx(best) and report.dev_accuracy == pytest.approx(best)
    assert metrics["dev_triplet_accuracy_l1"] == pytest.approx(best)
    train_bilstm(trips, tmp_path / "one", ThematicTrainConfig(epochs=first_best, **cfg), **quiet)
    assert same_weights(tmp_path / "m", tmp_path / "one")


def test_bilstm_eval_every_resumes_exactly(tiny_vectors, tmp_path):
    """--eval-every 3 with dev: a run stopped by --max-steps between evaluations (and evaluated there, a
    candidate) and resumed records the same evaluations and keeps the same best model as the uninterrupted run."""
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    trips, dev = tiny_triplets(32), held_out_triplets()
    cfg = {"hidden": 8, "attention": 4, "batch_size": 8, "epochs": 3, "seed": 5, "word_vectors": tiny_vectors,
           "lr": 1e-2, "eval_every": 3}
    quiet = {"log": lambda *_: None, "placement": cpu(5)}
    whole = train_bilstm(trips, tmp_path / "a", ThematicTrainConfig(**cfg), dev=dev, budget=Budget(), **quiet)
    first = train_bilstm(trips, tmp_path / "r", ThematicTrainConfig(**cfg), dev=dev, budget=Budget(max_steps=5),
                         **quiet)
    assert first.stopped_by == "max_steps" and first.best_step in (3, 5)  # evaluated at 3 and at the stop
    rest = train_bilstm(trips, tmp_path / "r", ThematicTrainConfig(**cfg), dev=dev, budget=Budget(resume=True),
                        **quiet)
    a, r = (json.loads((tmp_path / x / "train_config.json").read_text()) for x in ("a", "r"))
    assert [e["step"] for e in a["evals"]] == [3, 6, 9, 12]  # every 3 steps (the stop's evaluation at 5 aside)
    assert [e for e in r["evals"] if e["step"] != 5] == a["evals"] and r["metrics"] == a["metrics"]
    assert rest.best_step == whole.best_step and same_weights(tmp_path / "a", tmp_path / "r")


def test_kpm_trainers_train_on_the_resolved_device(devices_seen, tmp_path):
    """Siamese SBERT (full and top-layer) and MTS: one or two steps each, parameters on the resolved device."""
    from argsim.data.argkp import kpm_data
    from argsim.kpm.mts.config import MTSConfig
    from argsim.trainers.kpm_sbert import SbertConfig, train_sbert
    from argsim.trainers.mts import train_mts

    data = kpm_data(FIXTURES / "kpm" / "arguments.csv", FIXTURES / "kpm" / "key_points.csv",
                          FIXTURES / "kpm" / "labels.csv")
    for layers in (0, 2):
        info = train_sbert(data, tmp_path / f"sbert{layers}", SbertConfig(batch_size=8, max_seq_length=16,
                                                                       train_layers=layers, loss="cosine",
                                                                       lr=8e-6, lr_end=1e-6),
                           placement=cpu(), budget=Budget(max_steps=1), quiet=True)
        assert info["steps"] == 1 and info["device"] == "cpu"
    cfg = MTSConfig(epochs=1, max_batches=1, max_pos=2, max_neg=2, max_unmatched=1, train_layers=1,
                    max_seq_length=16, topic_max_seq_length=8)
    info = train_mts(data, tmp_path / "mts", cfg, placement=cpu(), quiet=True)
    assert info["steps"] == 1 and json.loads((tmp_path / "mts" / "train_config.json").read_text())["device"] == "cpu"
    assert devices_seen == {"cpu"}


def test_counter_trainers_train_on_the_resolved_device(devices_seen, tmp_path):
    """Bipolar-encoder with the top transformer layer fine-tuned (transformers' Trainer; a --max-steps stop
    mid-epoch leaves a checkpoint with the epoch in progress) and the Cross-encoder (CrossEncoderTrainer):
    parameters on the resolved device."""
    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.data import PairData
    from argsim.trainers.counter_cross import train_cross_encoder
    from argsim.trainers.counter_models import train

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]
    data = PairData.from_text_pairs(pairs[:6], pairs[6:])
    config = NeuralConfig(kind="bipolar", train_encoder=True, train_layers=1, max_seq_length=16, epochs=1,
                          batch_size=2, k_val=2, lr=1e-3)
    hist = train(config, data, tmp_path / "bp", placement=cpu(), budget=Budget(max_steps=2))
    saved = tmp_path / "bp" / "checkpoints" / "checkpoint-2"
    assert hist[0]["epoch"] == 0 and json.loads((saved / "trainer_state.json").read_text())["global_step"] == 2
    assert json.loads((saved / "counter_state.json").read_text())["current"]["epoch"] == 1  # the epoch in progress
    hist = train_cross_encoder(NeuralConfig(kind="cross-encoder", epochs=1, max_seq_length=16, batch_size=4),
                               pairs[:6], [t for p in pairs for t in p], tmp_path / "ce", placement=cpu(),
                               budget=Budget(max_steps=1))
    assert hist[-1]["stopped_early"] and json.loads((tmp_path / "ce" / "train_config.json").read_text())["steps"] == 1
    assert devices_seen == {"cpu"}


def test_minutes_trainer_honours_the_placement(devices_seen, tmp_path):
    from argsim.io import write_jsonl
    from argsim.trainers.minutes_sbert import MinutesTrainConfig, train_minutes_sbert

    write_jsonl(tmp_path / "t.jsonl", tiny_triplets(8))
    config = MinutesTrainConfig(backbone="minilm", batch_size=4, lr=2e-5, distance="euclidean", margin=1.0)
    log = train_minutes_sbert(tmp_path / "t.jsonl", None, tmp_path / "m", config, placement=cpu(),
                              budget=Budget(max_steps=1), quiet=True)
    assert log["steps"] == 1 and log["device"] == "cpu" and devices_seen == {"cpu"}
    assert json.loads((tmp_path / "m" / "train_config.json").read_text())["optimizer"]["weight_decay"] == 0.0


# ------------------------------------------------------------------ Hugging Face ids


def _hf_cache_with_minilm(root: Path, repo: str) -> Path:
    """A model saved into huggingface_hub's own cache layout: models--org--name/snapshots/<rev>/ + refs/main."""
    import shutil

    from argsim.backend import model_path

    rev = "0123456789abcdef0123456789abcdef01234567"
    folder = root / f"models--{repo.replace('/', '--')}"
    shutil.copytree(model_path("minilm"), folder / "snapshots" / rev)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(rev)
    return folder / "snapshots" / rev


def test_model_accepts_a_hugging_face_id_from_the_local_cache(tmp_path, monkeypatch):
    from argsim.backend import load_sentence_transformer, model_path
    from argsim.errors import ModelError

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = _hf_cache_with_minilm(tmp_path / "hub", "acme/tiny-minilm")
    assert model_path("acme/tiny-minilm") == snapshot
    model = load_sentence_transformer("acme/tiny-minilm", device="cpu")
    assert model.encode(["a sentence"]).shape == (1, 384)
    with pytest.raises(ModelError, match="unknown model 'FacebookAI/roberta-base'.*HF_HUB_OFFLINE is set"):
        model_path("FacebookAI/roberta-base")
    from argsim.cli.app import app

    result = CliRunner().invoke(app, ["train", "sbert", "--model", "FacebookAI/roberta-base", "--arguments",
                                      str(FIXTURES / "kpm" / "arguments.csv"), "--key-points",
                                      str(FIXTURES / "kpm" / "key_points.csv"), "--labels",
                                      str(FIXTURES / "kpm" / "labels.csv"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "roberta-base" in result.output


def test_importing_argsim_leaves_hf_offline_to_the_environment():
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env["PYTHONPATH"] = str(REPO)
    code = "import os, argsim; print(os.environ.get('HF_HUB_OFFLINE'), os.environ.get('TRANSFORMERS_OFFLINE'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None None"


# ------------------------------------------------------------------ many processes (DDP over gloo)


def _launch(tmp_path: Path, launcher: list[str], args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([*launcher, "-m", "argsim.cli.app", "-q", "--threads", "1", *args], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


@pytest.mark.slow
def test_ddp_sentence_transformer_trainer_two_processes(tmp_path):
    """`accelerate launch --multi_gpu --num_processes 2` on a CPU-only machine = torchrun + gloo DDP."""
    from argsim.io import write_jsonl

    write_jsonl(tmp_path / "t.jsonl", tiny_triplets(48))
    run = _launch(tmp_path, [_bin("accelerate"), "launch", "--multi_gpu", "--num_processes", "2"],
                  ["train", "thematic", "t.jsonl", "--out", "m", "--arch", "minilm", "--lora-rank", "0",
                   "--batch-size", "4", "--lr", "1e-4", "--margin", "1.0"])
    assert run.returncode == 0, run.stderr[-3000:]
    config = json.loads((tmp_path / "m" / "train_config.json").read_text())
    assert config["processes"] == 2 and config["steps"] == 6  # 48 triplets / (4 per batch x 2 processes)
    assert config["losses"][-1] < config["losses"][0]
    assert len(list(tmp_path.rglob("model.safetensors"))) == 1
    assert run.stdout.count("trained minilm") == 1  # only rank 0 reports


@pytest.mark.slow
def test_ddp_custom_loop_bipolar_two_processes(tmp_path):
    """`torchrun --nproc_per_node 2` (gloo on the CPU): the Bipolar-encoder's Trainer splits every epoch between
    the processes, its loss falls, and rank 0 alone writes one model."""
    examples = REPO / "examples" / "counter_neural"
    run = _launch(tmp_path, [_bin("torchrun"), "--nproc_per_node", "2"],
                  ["--no-cache", "train", "bipolar", "--train", str(examples / "train.jsonl"), "--val",
                   str(examples / "val.jsonl"), "--epochs", "3", "--batch-size", "4", "--k-val", "3", "--lr", "1e-3",
                   "--out", "m"])
    assert run.returncode == 0, run.stderr[-3000:]
    config = json.loads((tmp_path / "m" / "train_config.json").read_text())
    assert config["processes"] == 2 and config["steps"] == 6  # 16 pairs / (4 per batch x 2 processes) x 3 epochs
    assert config["losses"][-1] < config["losses"][0]
    assert len(list(tmp_path.rglob("heads.safetensors"))) == 1 and len(list(tmp_path.rglob("train_config.json"))) == 1
    assert sorted(p.name for p in (tmp_path / "m" / "checkpoints" / "checkpoint-6").glob("rng_state_*")) == [
        "rng_state_0.pth", "rng_state_1.pth"]
    assert run.stdout.count("model saved to") == 1  # only rank 0 reports


# ------------------------------------------------------------------ custom models on transformers' Trainer


def test_tied_heads_are_checkpointed_once_silently_and_resume_exactly(tmp_path, capfd, caplog):
    """The Bipolar-encoder's point and candidate retrieval heads are one module: its checkpoints hold the tied
    tensors once (safetensors' `save_model`; no "Removed shared tensor" warning on any save), and a run stopped
    mid-epoch and resumed ends with the uninterrupted run's heads and history. --max-minutes stops at an epoch end
    and the record says so."""
    from safetensors import safe_open

    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.data import PairData
    from argsim.counter.neural.model import CounterModel
    from argsim.trainers.counter_models import train

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]
    data = PairData.from_text_pairs(pairs[:6], pairs[6:])
    config = NeuralConfig(kind="bipolar", epochs=3, batch_size=2, k_val=2, lr=3e-3)
    tied = CounterModel(config, dim=4)
    assert tied.ret_cand is tied.ret_point  # the premise: one head under two names
    full = train(config, data, tmp_path / "a", placement=cpu())
    train(config, data, tmp_path / "r", placement=cpu(), budget=Budget(max_steps=4))
    rest = train(config, data, tmp_path / "r", placement=cpu(), budget=Budget(resume=True))
    assert full[-1]["loss"] < full[1]["loss"], full  # it learned (val stays 0.0 on 3 pairs at k 2)
    assert [(h["loss"], h["val"]) for h in rest] == [(h["loss"], h["val"]) for h in full]
    assert same_weights(tmp_path / "a", tmp_path / "r")
    printed = capfd.readouterr()
    assert "Removed shared tensor" not in printed.out + printed.err + caplog.text
    last = max((tmp_path / "r" / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    with safe_open(str(last / "model.safetensors"), "pt") as f:
        heads = sorted(k for k in f.keys() if ".ret_" in k)
    assert len(heads) == 2 and len({k.rsplit(".", 2)[0] for k in heads}) == 1, heads  # one of the two names
    timed = train(config, data, tmp_path / "t", placement=cpu(), budget=Budget(max_minutes=1e-6))
    record = json.loads((tmp_path / "t" / "train_config.json").read_text())
    assert len(timed) == 2 and record["stopped_by"] == "max_minutes"  # after epoch 1, said so (`models build` resumes)
