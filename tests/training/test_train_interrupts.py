"""Every trainer, stopped by a real SIGINT (Ctrl-C) or SIGTERM in a subprocess during its first steps, saves a
checkpoint before it exits 130 / 143, and `--resume` (`Budget(resume=True)`) continues it to the planned end;
a checkpoint made on other data is refused in one line. The steps are slowed in the child (a callback that
sleeps) so the signal lands mid-run; each case trains a tiny model for a few steps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from argsim.errors import ArgsimError
from argsim.training import Budget, resolve_placement
from tests.conftest import TOPICS, tiny_triplets

REPO = Path(__file__).resolve().parents[2]

# One parent process per test module imports the trainers once and forks a child per case (a fresh interpreter
# per case would pay the imports, about 6 CPU seconds, each time). A request line on its stdin (marker, case, out,
# asset, stderr file) is answered with the child's pid, then with its exit code. The child's steps are slowed so the
# signal lands mid-run; it exits as a command would: 130 after KeyboardInterrupt, SystemExit's code, 1 (and a
# traceback) after any other exception.
PARENT = """
import os, sys, time, traceback
from pathlib import Path
sys.path[:0] = {tests!r}
import argsim.training.trainer as trainer_module
from transformers import TrainerCallback

marker = None

class Slow(TrainerCallback):
    def on_step_end(self, args, state, control, **kw):
        marker.write_text(str(state.global_step))
        time.sleep(0.4)

real = trainer_module.run_trainer
trainer_module.run_trainer = lambda trainer, *a, **kw: (trainer.add_callback(Slow()), real(trainer, *a, **kw))[1]
from test_train_interrupts import CASES, warm_imports
warm_imports()
for line in sys.stdin:
    where, case, out, asset, err = line.rstrip("\\n").split("\\t")
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the answers' pipe is the parent's alone
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        marker, code = Path(where), 0
        try:
            CASES[case](Path(out), Path(asset), False)
        except KeyboardInterrupt:
            code = 130
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


PLACEMENT = None  # where the cases train (None: the CPU, fp32, one thread); bench/gpu_check.py sets CUDA


def _cpu():
    return PLACEMENT or resolve_placement("cpu", "fp32", threads=1, seed=5)


def bilstm(out: Path, asset: Path, resume: bool, rows: list[dict] | None = None) -> int:
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    cfg = ThematicTrainConfig(hidden=8, attention=4, batch_size=4, epochs=2, seed=5, word_vectors=str(asset))
    return train_bilstm(rows or tiny_triplets(32), out, cfg, log=lambda *_: None, placement=_cpu(),
                        budget=Budget(resume=resume)).steps


def minilm(out: Path, asset: Path, resume: bool, rows: list[dict] | None = None) -> int:
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer

    config = ThematicTrainConfig(model=str(asset), batch_size=4, lr=1e-4, max_seq_length=16, margin=1.0, lora_rank=0)
    run = finetune_sentence_transformer(rows or tiny_triplets(32), out, config, placement=_cpu(),
                                        budget=Budget(resume=resume))
    return run["steps"]


def _sbert(out: Path, asset: Path, resume: bool, layers: int) -> int:
    from argsim.trainers.kpm_sbert import SbertConfig, train_sbert

    data = _kpm()  # 15 pairs
    cfg = SbertConfig(model=str(asset), loss="cosine", batch_size=2, max_seq_length=16, train_layers=layers,
                      lr=1e-4, lr_end=1e-5)
    return train_sbert(data, out, cfg, placement=_cpu(), budget=Budget(resume=resume), quiet=True)["steps"]


def mts(out: Path, asset: Path, resume: bool) -> int:
    from argsim.kpm.mts.config import MTSConfig
    from argsim.trainers.mts import train_mts

    cfg = MTSConfig(model=str(asset), pooling="mean", epochs=3, max_pos=2, max_neg=2, max_unmatched=1, out_dim=8,
                    stance_dim=2, max_seq_length=16, topic_max_seq_length=8)  # 3 batches an epoch
    return train_mts(_kpm(), out, cfg, placement=_cpu(), budget=Budget(resume=resume), quiet=True)["steps"]


def bipolar(out: Path, asset: Path, resume: bool) -> int:
    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.data import PairData
    from argsim.trainers.counter_models import train

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]
    config = NeuralConfig(kind="bipolar", epochs=3, batch_size=2, k_val=2, lr=3e-3)  # 3 batches an epoch
    data = PairData.from_text_pairs(pairs[:6], pairs[6:])
    return train(config, data, out, placement=_cpu(), budget=Budget(resume=resume))[-1]["epoch"] * 3


def counter_cross(out: Path, asset: Path, resume: bool) -> int:
    from argsim.counter.neural.config import NeuralConfig
    from argsim.trainers.counter_cross import train_cross_encoder

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]  # 9 pairs
    config = NeuralConfig(kind="cross-encoder", base_model=str(asset), epochs=2, batch_size=4, max_seq_length=16)
    train_cross_encoder(config, pairs, [t for p in pairs for t in p], out, placement=_cpu(),
                        budget=Budget(resume=resume))
    return json.loads((out / "train_config.json").read_text())["steps"]


def kpm_cross(out: Path, asset: Path, resume: bool) -> int:
    from argsim.trainers.kpm_cross import CrossConfig, train_cross

    cfg = CrossConfig(model=str(asset), batch_size=2, epochs=1.0, max_seq_length=16)  # 15 pairs: 8 steps
    return train_cross(_kpm(), out, cfg, placement=_cpu(), budget=Budget(resume=resume), quiet=True)["steps"]


def minutes(out: Path, asset: Path, resume: bool) -> int:
    from argsim.io import write_jsonl
    from argsim.trainers.minutes_sbert import MinutesTrainConfig, train_minutes_sbert

    write_jsonl(out.parent / "minutes.jsonl", tiny_triplets(32))
    config = MinutesTrainConfig(backbone=str(asset), batch_size=4, lr=2e-5, distance="euclidean", margin=1.0,
                                epochs=1)
    return train_minutes_sbert(out.parent / "minutes.jsonl", None, out, config, placement=_cpu(),
                               budget=Budget(resume=resume), quiet=True)["steps"]


def _kpm():
    from argsim.data.argkp import kpm_data

    kpm = REPO / "tests" / "fixtures" / "kpm"
    return kpm_data(kpm / "arguments.csv", kpm / "key_points.csv", kpm / "labels.csv")


CASES = {"bilstm": bilstm, "mts": mts, "bipolar": bipolar, "minutes": minutes, "minilm": minilm,
         "sbert": lambda o, a, r: _sbert(o, a, r, 0), "sbert-top": lambda o, a, r: _sbert(o, a, r, 1),
         "counter-cross": counter_cross, "kpm-cross": kpm_cross}
PLANNED = {"bilstm": 16, "mts": 9, "bipolar": 9, "minutes": 8, "minilm": 8, "sbert": 8, "sbert-top": 8,
           "counter-cross": 9, "kpm-cross": 8}


@pytest.fixture
def assets(tmp_path, tiny_bert) -> dict[str, Path]:
    from gensim.models import KeyedVectors

    from argsim.backend.models import tokenize_en

    words = sorted({w for texts in TOPICS.values() for t in texts for w in tokenize_en(t)})
    kv = KeyedVectors(vector_size=16)
    kv.add_vectors(words, np.random.default_rng(0).normal(size=(len(words), 16)).astype(np.float32))
    kv.save_word2vec_format(str(tmp_path / "tiny.txt"))
    return {"bilstm": tmp_path / "tiny.txt", **dict.fromkeys(set(CASES) - {"bilstm"}, tiny_bert)}


def warm_imports() -> None:
    """The trainers' modules, imported once in the forking parent."""
    import importlib

    for name in ("counter_cross", "counter_models", "kpm_cross", "mts", "kpm_sbert", "minutes_sbert",
                 "thematic_minilm", "thematic_bilstm"):
        importlib.import_module(f"argsim.trainers.{name}")


@pytest.fixture(scope="module")
def parent():
    """The forking parent (PARENT), started with Ctrl-C's default action as from a shell (see conftest's
    `signal_at_marker`: a local Ray started by an earlier test leaves SIGINT ignored in this process)."""
    code = PARENT.format(tests=[str(REPO / "tests"), str(Path(__file__).parent)])
    proc = subprocess.Popen([sys.executable, "-c", code],
                            env=os.environ | {"PYTHONPATH": str(REPO)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    yield proc
    proc.stdin.close()
    proc.wait(timeout=60)


def _interrupt(parent, case: str, out: Path, asset: Path, sig: int) -> subprocess.CompletedProcess:
    """Run `case` in a child of `parent`, send it `sig` once it has written its marker (a step done), and return
    its exit code and stderr."""
    import time

    marker, err = out.parent / f"{case}.step", out.parent / f"{case}.stderr"
    parent.stdin.write("\t".join(map(str, (marker, case, out, asset, err))) + "\n")
    parent.stdin.flush()
    pid, deadline = int(parent.stdout.readline()), time.time() + 120
    while not marker.exists() and time.time() < deadline and parent.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), err.read_text() if err.exists() else "no stderr"
    os.kill(pid, sig)
    code = int(parent.stdout.readline())
    return subprocess.CompletedProcess([case], code, "", err.read_text())


@pytest.mark.parametrize(("case", "sig"), [("bilstm", signal.SIGINT), ("minilm", signal.SIGINT),
                                           ("sbert", signal.SIGINT), ("sbert-top", signal.SIGINT),
                                           ("mts", signal.SIGINT), ("bipolar", signal.SIGINT),
                                           ("minutes", signal.SIGINT), ("counter-cross", signal.SIGINT),
                                           ("kpm-cross", signal.SIGINT), ("bilstm", signal.SIGTERM)])
def test_a_signal_saves_a_checkpoint_that_resume_continues(case, sig, parent, assets, tmp_path, monkeypatch):
    from transformers import TrainerCallback

    import argsim.training.trainer as trainer_module

    class FirstStep(TrainerCallback):
        step = None

        def on_step_end(self, args, state, control, **kw):
            self.step = self.step or state.global_step

    out = tmp_path / case
    done = _interrupt(parent, case, out, assets[case], sig)
    assert done.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], done.stderr
    assert "Traceback" not in done.stderr and "--resume continues" in done.stderr
    saved = sorted(int(p.name.split("-")[1]) for p in (out / "checkpoints").glob("checkpoint-*"))
    assert saved and 1 <= saved[-1] < PLANNED[case], saved
    assert not (out / "train_config.json").exists()  # stopped: no record of a finished run
    first, real = FirstStep(), trainer_module.run_trainer
    monkeypatch.setattr(trainer_module, "run_trainer",
                        lambda trainer, *a: (trainer.add_callback(first), real(trainer, *a))[1])
    assert CASES[case](out, assets[case], True) == PLANNED[case]  # --resume: on to the planned end
    assert first.step == saved[-1] + 1  # from the checkpoint, not from step 1
    assert (out / "train_config.json").is_file()


def test_resume_from_a_checkpoint_made_on_other_data_or_architecture_is_refused(assets, tmp_path):
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    out = tmp_path / "m"
    bilstm(out, assets["bilstm"], False)
    with pytest.raises(ArgsimError, match="trained on other data"):
        bilstm(out, assets["bilstm"], True, rows=tiny_triplets(28))
    wider = ThematicTrainConfig(hidden=12, attention=4, batch_size=4, epochs=2, seed=5,
                                word_vectors=str(assets["bilstm"]))
    with pytest.raises(ArgsimError, match="trained on other architecture"):
        train_bilstm(tiny_triplets(32), out, wider, log=lambda *_: None, placement=_cpu(), budget=Budget(resume=True))


def test_resume_with_another_seed_learning_rate_or_batch_is_refused(assets, tmp_path):
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    out, base = tmp_path / "m", dict(hidden=8, attention=4, batch_size=4, epochs=2, seed=5,
                                     word_vectors=str(assets["bilstm"]))
    bilstm(out, assets["bilstm"], False)
    for change, said in (({"seed": 6}, "with seed 5 (now 6)"), ({"lr": 0.5}, "with learning rate"),
                         ({"batch_size": 8}, "with effective batch 4 (now 8)")):
        config = ThematicTrainConfig(**base | change)
        with pytest.raises(ArgsimError, match=said.replace("(", r"\(").replace(")", r"\)")):
            train_bilstm(tiny_triplets(32), out, config, log=lambda *_: None,
                         placement=resolve_placement("cpu", "fp32", threads=1, seed=config.seed),
                         budget=Budget(resume=True))


@pytest.mark.parametrize("damage", ["no state", "cut state", "no weights", "cut weights", "cut optimizer", "empty"])
def test_resume_from_a_damaged_checkpoint_names_the_file_in_one_line(damage, assets, tmp_path):
    import shutil

    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    out = tmp_path / "m"
    config = ThematicTrainConfig(hidden=8, attention=4, batch_size=4, epochs=2, seed=5,
                                 word_vectors=str(assets["bilstm"]))
    train_bilstm(tiny_triplets(32), out, config, log=lambda *_: None, placement=_cpu(), budget=Budget(max_steps=3))
    folder = out / "checkpoints" / "checkpoint-3"
    name = {"no state": "trainer_state.json", "cut state": "trainer_state.json", "no weights": "model.safetensors",
            "cut weights": "model.safetensors", "cut optimizer": "optimizer.pt", "empty": "trainer_state.json"}[damage]
    if damage.startswith("cut"):
        os.truncate(folder / name, 20)
    elif damage == "empty":
        shutil.rmtree(folder)
        folder.mkdir()
    else:
        (folder / name).unlink()
    with pytest.raises(ArgsimError, match=f"{name} is damaged") as err:
        bilstm(out, assets["bilstm"], True)
    assert "\n" not in str(err.value)


def test_resume_of_a_finished_run_without_a_checkpoint_at_its_end_is_refused(assets, tmp_path):
    from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer

    config = ThematicTrainConfig(model=str(assets["minilm"]), batch_size=4, max_seq_length=16, lora_rank=0)
    for budget in (Budget(max_steps=2), Budget(resume=True)):  # leaves checkpoint-2 behind the finished 8 steps
        finetune_sentence_transformer(tiny_triplets(32), tmp_path / "m", config, placement=_cpu(), budget=budget)
    with pytest.raises(ArgsimError, match=r"holds a finished run \(8 steps\)"):
        finetune_sentence_transformer(tiny_triplets(32), tmp_path / "m", config, placement=_cpu(),
                                      budget=Budget(resume=True))


def test_resume_skips_a_checkpoint_whose_save_was_cut_short(assets, tmp_path, capsys):
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    out = tmp_path / "m"
    config = ThematicTrainConfig(hidden=8, attention=4, batch_size=4, epochs=2, seed=5,
                                 word_vectors=str(assets["bilstm"]))
    train_bilstm(tiny_triplets(32), out, config, log=lambda *_: None, placement=_cpu(), budget=Budget(max_steps=3))
    (cut := out / "checkpoints" / "checkpoint-5").mkdir()  # the weights written, the state not yet
    (cut / "model.safetensors").write_bytes((out / "checkpoints" / "checkpoint-3" / "model.safetensors").read_bytes())
    assert bilstm(out, assets["bilstm"], True) == PLANNED["bilstm"]
    assert "checkpoint-5 is incomplete" in capsys.readouterr().err


def test_a_second_run_into_an_out_being_trained_is_refused(assets, tmp_path):
    from argsim.io import folder_lock

    with folder_lock(tmp_path / "m" / "checkpoints"), pytest.raises(ArgsimError, match="another run is training"):
        bilstm(tmp_path / "m", assets["bilstm"], True)
    assert bilstm(tmp_path / "m", assets["bilstm"], True) == PLANNED["bilstm"]  # the lock freed


def test_resume_refusals_come_before_the_data_and_the_model_load(assets, tmp_path):
    from argsim.io import folder_lock
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    out = tmp_path / "m"
    bilstm(out, assets["bilstm"], False)
    unread = ThematicTrainConfig(hidden=8, attention=4, batch_size=4, epochs=2, seed=5, lr=0.5,
                                 word_vectors=str(tmp_path / "absent.txt"))  # loading it would fail
    with pytest.raises(ArgsimError, match="with learning rate"):
        train_bilstm([], out, unread, log=lambda *_: None, placement=_cpu(), budget=Budget(resume=True))
    with folder_lock(out / "checkpoints"), pytest.raises(ArgsimError, match="another run is training"):
        train_bilstm([], out, unread, log=lambda *_: None, placement=_cpu(), budget=Budget())


def test_resume_checks_a_checkpoint_an_earlier_run_left_against_that_run(assets, tmp_path, monkeypatch):
    from argsim.training.trainer import ModuleTrainer

    out = tmp_path / "m"
    with monkeypatch.context() as patch:  # a stopped run on 32 triplets
        patch.setattr("argsim.training.budget.Budget.reached", lambda self, steps, seconds: "max_steps")
        bilstm(out, assets["bilstm"], False)
    with monkeypatch.context() as patch:  # a new run on other triplets dies before its first checkpoint
        patch.setattr(ModuleTrainer, "train", lambda *a, **kw: (_ for _ in ()).throw(MemoryError()))
        with pytest.raises(MemoryError):
            bilstm(out, assets["bilstm"], False, rows=tiny_triplets(28))
    with pytest.raises(ArgsimError, match="checkpoint-1 was trained on other data"):
        bilstm(out, assets["bilstm"], True, rows=tiny_triplets(28))


def test_a_budget_stop_is_not_finished_and_an_older_record_still_resumes_into_more_epochs(assets, tmp_path):
    from dataclasses import replace

    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    out, saved = tmp_path / "m", tmp_path / "m" / "checkpoints" / "run.json"
    config = ThematicTrainConfig(hidden=8, attention=4, batch_size=4, epochs=2, seed=5,
                                 word_vectors=str(assets["bilstm"]))
    train_bilstm(tiny_triplets(32), out, config, log=lambda *_: None, placement=_cpu(), budget=Budget(max_steps=3))
    assert "finished" not in json.loads(saved.read_text())  # a --max-steps stop: --resume continues it
    # the record of an older argsim: the data and the architecture only, none in the checkpoint
    saved.write_text(json.dumps({k: v for k, v in json.loads(saved.read_text()).items()
                                 if k in ("data", "architecture")}))
    (out / "checkpoints" / "checkpoint-3" / "run.json").unlink()
    assert bilstm(out, assets["bilstm"], True) == PLANNED["bilstm"]
    assert json.loads(saved.read_text())["finished"] == PLANNED["bilstm"]
    more = replace(config, epochs=3)  # --resume with a larger --epochs: on into epoch 3
    assert train_bilstm(tiny_triplets(32), out, more, log=lambda *_: None, placement=_cpu(),
                        budget=Budget(resume=True)).steps == PLANNED["bilstm"] * 3 // 2


def test_models_build_trains_again_a_finished_run_it_cannot_resume(tmp_path):
    from argsim.modelbuild.recipes import Recipe
    from argsim.modelbuild.runner import state

    recipe = Recipe("r", "fake", "r", "m", "true m", 0.01, 0.01, "test")
    (folder := tmp_path / "m" / "checkpoints").mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"data": "ab", "finished": 8}))  # no train_config.json: it failed after
    (folder / "checkpoint-2").mkdir()
    (folder / "checkpoint-2" / "trainer_state.json").write_text("{}")
    assert state(recipe, tmp_path) == "new"  # --resume would be refused: nothing to resume
    (folder / "checkpoint-8").mkdir()
    (folder / "checkpoint-8" / "trainer_state.json").write_text("{}")
    assert state(recipe, tmp_path) == "interrupted"
