"""Every trainer, stopped by a real SIGINT (Ctrl-C) or SIGTERM in a subprocess during its first steps, saves a
checkpoint before it exits 130 / 143, and `--resume` (`Budget(resume=True)`) continues it to the planned end;
a checkpoint made on other data is refused in one line. The steps are slowed in the child (a callback that
sleeps) so the signal lands mid-run; each case trains a tiny model for a few steps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import signal_at_marker
from test_training import TOPICS, tiny_triplets

from argsim.errors import ArgsimError
from argsim.training import Budget, resolve_placement

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
import argsim.training.st as st
from transformers import TrainerCallback

marker = Path(sys.argv[1])

class Slow(TrainerCallback):
    def on_step_end(self, args, state, control, **kw):
        marker.write_text(str(state.global_step))
        time.sleep(0.4)

real = st.run_trainer
st.run_trainer = lambda trainer, *a, **kw: (trainer.add_callback(Slow()), real(trainer, *a, **kw))[1]
from test_train_interrupts import CASES
try:
    CASES[sys.argv[2]](Path(sys.argv[3]), Path(sys.argv[4]), False)
except KeyboardInterrupt:
    sys.exit(130)
"""


PLACEMENT = None  # where the cases train (None: the CPU, fp32, one thread); bench/gpu_check.py sets CUDA


def _cpu():
    return PLACEMENT or resolve_placement("cpu", "fp32", threads=1, seed=5)


def bilstm(out: Path, asset: Path, resume: bool, rows: list[dict] | None = None) -> int:
    from argsim.thematic.train import ThematicTrainConfig, train_bilstm

    cfg = ThematicTrainConfig(hidden=8, attention=4, batch_size=4, epochs=2, seed=5, word_vectors=str(asset))
    return train_bilstm(rows or tiny_triplets(32), out, cfg, log=lambda *_: None, placement=_cpu(),
                        budget=Budget(resume=resume)).steps


def minilm(out: Path, asset: Path, resume: bool, rows: list[dict] | None = None) -> int:
    from argsim.thematic.finetune import finetune_sentence_transformer

    run = finetune_sentence_transformer(rows or tiny_triplets(32), out, base=str(asset), batch_size=4, lr=1e-4,
                                        max_seq_length=16, placement=_cpu(), budget=Budget(resume=resume))
    return run["steps"]


def _sbert(out: Path, asset: Path, resume: bool, layers: int) -> int:
    from argsim.kpm.sbert import SbertConfig, train_sbert

    data = _kpm()  # 15 pairs
    cfg = SbertConfig(model=str(asset), loss="cosine", batch_size=2, max_seq_length=16, train_layers=layers,
                      lr=1e-4, lr_end=1e-5)
    return train_sbert(data, out, cfg, placement=_cpu(), budget=Budget(resume=resume), quiet=True)["steps"]


def mts(out: Path, asset: Path, resume: bool) -> int:
    from argsim.kpm.mts_model import MTSConfig
    from argsim.kpm.mts_train import train_mts

    cfg = MTSConfig(model=str(asset), pooling="mean", epochs=3, max_pos=2, max_neg=2, max_unmatched=1, out_dim=8,
                    stance_dim=2, max_seq_length=16, topic_max_seq_length=8)  # 3 batches an epoch
    return train_mts(_kpm(), out, cfg, placement=_cpu(), budget=Budget(resume=resume), quiet=True)["steps"]


def bipolar(out: Path, asset: Path, resume: bool) -> int:
    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.data import PairData
    from argsim.counter.neural.training import train

    pairs = [(a, b) for texts in TOPICS.values() for a, b in zip(texts[:3], texts[3:], strict=True)]
    config = NeuralConfig(kind="bipolar", epochs=3, batch_size=2, k_val=2, lr=3e-3)  # 3 batches an epoch
    data = PairData.from_text_pairs(pairs[:6], pairs[6:])
    return train(config, data, out, placement=_cpu(), budget=Budget(resume=resume))[-1]["epoch"] * 3


def minutes(out: Path, asset: Path, resume: bool) -> int:
    from argsim.io import write_jsonl
    from argsim.minutes.train import MinutesTrainConfig, train_minutes_sbert

    write_jsonl(out.parent / "minutes.jsonl", tiny_triplets(32))
    config = MinutesTrainConfig(backbone=str(asset), batch_size=4, lr=2e-5, distance="euclidean", margin=1.0,
                                epochs=1)
    return train_minutes_sbert(out.parent / "minutes.jsonl", None, out, config, placement=_cpu(),
                               budget=Budget(resume=resume), quiet=True)["steps"]


def _kpm():
    from argsim.data.argkp import load_kpm_files

    kpm = REPO / "tests" / "fixtures" / "kpm"
    return load_kpm_files(kpm / "arguments.csv", kpm / "key_points.csv", kpm / "labels.csv")


CASES = {"bilstm": bilstm, "mts": mts, "bipolar": bipolar, "minutes": minutes, "minilm": minilm,
         "sbert": lambda o, a, r: _sbert(o, a, r, 0),
         "sbert-top": lambda o, a, r: _sbert(o, a, r, 1)}
PLANNED = {"bilstm": 16, "mts": 9, "bipolar": 9, "minutes": 8, "minilm": 8, "sbert": 8, "sbert-top": 8}


@pytest.fixture
def assets(tmp_path, tiny_bert) -> dict[str, Path]:
    from gensim.models import KeyedVectors

    from argsim.backend.models import tokenize_en

    words = sorted({w for texts in TOPICS.values() for t in texts for w in tokenize_en(t)})
    kv = KeyedVectors(vector_size=16)
    kv.add_vectors(words, np.random.default_rng(0).normal(size=(len(words), 16)).astype(np.float32))
    kv.save_word2vec_format(str(tmp_path / "tiny.txt"))
    return {"bilstm": tmp_path / "tiny.txt", "minilm": tiny_bert, "sbert": tiny_bert, "sbert-top": tiny_bert,
            "mts": tiny_bert, "bipolar": tiny_bert, "minutes": tiny_bert}


def _interrupt(case: str, out: Path, asset: Path, sig: int) -> subprocess.CompletedProcess:
    marker = out.parent / f"{case}.step"
    code = CHILD.format(tests=str(REPO / "tests"))
    env = os.environ | {"PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", code, str(marker), case, str(out), str(asset)]
    code_, err = signal_at_marker(argv, env, marker, sig)
    return subprocess.CompletedProcess(argv, code_, "", err)


@pytest.mark.parametrize(("case", "sig"), [("bilstm", signal.SIGINT), ("minilm", signal.SIGINT),
                                           ("sbert", signal.SIGINT), ("sbert-top", signal.SIGINT),
                                           ("mts", signal.SIGINT), ("bipolar", signal.SIGINT),
                                           ("minutes", signal.SIGINT),
                                           ("bilstm", signal.SIGTERM)])
def test_a_signal_saves_a_checkpoint_that_resume_continues(case, sig, assets, tmp_path):
    out = tmp_path / case
    done = _interrupt(case, out, assets[case], sig)
    assert done.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig], done.stderr
    assert "Traceback" not in done.stderr and "--resume continues" in done.stderr
    saved = sorted(int(p.name.split("-")[1]) for p in (out / "checkpoints").glob("checkpoint-*"))
    assert saved and 1 <= saved[-1] < PLANNED[case], saved
    assert not (out / "train_config.json").exists()  # stopped: no record of a finished run
    assert CASES[case](out, assets[case], True) == PLANNED[case]  # --resume: on to the planned end
    assert (out / "train_config.json").is_file()


def test_resume_from_a_checkpoint_made_on_other_data_or_architecture_is_refused(assets, tmp_path):
    from argsim.thematic.train import ThematicTrainConfig, train_bilstm

    out = tmp_path / "m"
    bilstm(out, assets["bilstm"], False)
    with pytest.raises(ArgsimError, match="trained on other data"):
        bilstm(out, assets["bilstm"], True, rows=tiny_triplets(28))
    wider = ThematicTrainConfig(hidden=12, attention=4, batch_size=4, epochs=2, seed=5,
                                word_vectors=str(assets["bilstm"]))
    with pytest.raises(ArgsimError, match="trained on other architecture"):
        train_bilstm(tiny_triplets(32), out, wider, log=lambda *_: None, placement=_cpu(), budget=Budget(resume=True))
