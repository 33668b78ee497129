"""Shared test fixtures: offline mode, a repo-local embedding cache, the real data folder."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ARGSIM_DEBUG", "1")  # an unexpected exception in a CLI test keeps its traceback

REPO = Path(__file__).resolve().parent.parent
# this repository's datasets live beside the checkout (../shared/data); the library has no such guess
if not os.environ.get("ARGSIM_DATA") and (REPO.parent / "shared" / "data").is_dir():
    os.environ["ARGSIM_DATA"] = str(REPO.parent / "shared" / "data")

from argsim.config import default_data_dir
from argsim.measure import usable_cores

# Under pytest-xdist (`make test`: two workers) each worker's torch gets its share of the cores: two workers of two
# intra-op threads on two cores spin-wait for each other (tests/kpm/test_kpm_train.py's SBERT run: 53 CPU seconds
# with two threads, 31 with one). Set before torch is imported; an OMP_NUM_THREADS given is kept.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT") and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OMP_NUM_THREADS"] = str(max(1, usable_cores() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    if "torch" in sys.modules:  # imported by a plugin before this file
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# typer's CliRunner turns the Typer app into its click command on every `invoke` (about 0.08 CPU seconds for
# argsim's commands, paid by every CLI test): built once per app and process instead, as the console script builds
# it once per run (the command objects keep no state between runs: ArgsimGroup.main restores what --quiet sets)
import typer.testing

typer.testing._get_command = functools.cache(typer.testing._get_command)

# A repo-local cache (git-ignored) so repeated test runs reuse embeddings of the real model: the documented
# default of every encoder's cache folder ($ARGSIM_CACHE_DIR) and of the CLI's --cache-dir.
os.environ["ARGSIM_CACHE_DIR"] = str(Path(os.environ.get("ARGSIM_TEST_CACHE_DIR", REPO / ".cache" / "test-embeddings")))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real datasets (../shared/data or $ARGSIM_DATA); tests that need them skip when absent."""
    root = default_data_dir()
    if not root.is_dir():
        pytest.skip("real datasets not found: set ARGSIM_DATA or place them in ../shared/data")
    return root


@pytest.fixture
def shared_exports(tmp_path) -> Path:
    """`tmp_path` as a cache folder holding no vectors whose `exported/` is the tests' own export folder (a link):
    a test of the vector cache (keys, separation) builds no ONNX / OpenVINO model another test exported already
    (an export of MiniLM: about 15 CPU seconds; OpenVINO int8 calibration as much again)."""
    shared = Path(os.environ["ARGSIM_CACHE_DIR"]) / "exported"
    shared.mkdir(parents=True, exist_ok=True)
    (tmp_path / "exported").symlink_to(shared, target_is_directory=True)
    return tmp_path


@pytest.fixture
def kpm_workspace(tmp_path, monkeypatch) -> Path:
    """The working folder of a CLI test: `tmp_path`, made the current directory, holding the small ArgKP-format
    files of tests/fixtures/kpm (arguments.csv, key_points.csv, labels.csv)."""
    import shutil

    monkeypatch.chdir(tmp_path)
    for name in ("arguments.csv", "key_points.csv", "labels.csv"):
        shutil.copy(FIXTURES / "kpm" / name, tmp_path / name)
    return tmp_path


@pytest.fixture(scope="session")
def minilm():
    """The shipped default encoder (all-MiniLM-L6-v2), loaded once per test session."""
    from argsim.backend import get_encoder

    return get_encoder("minilm", device="cpu")


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT (hidden size 32) with MiniLM's tokenizer, saved as a safetensors folder
    that transformers (`AutoModel`) and sentence-transformers (mean pooling) both load: trainers' learning tests
    run on it in seconds."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    from argsim.backend import model_path

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(model_path("minilm")))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    SentenceTransformer(modules=[Transformer(str(folder), max_seq_length=64), Pooling(32, "mean")],
                        device="cpu").save(str(folder))
    return folder


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray instance (2 CPUs, no dashboard) shared by every Ray test of the process (of each pytest-xdist
    worker under `make test`); skipped without Ray."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning")
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="session", autouse=True)
def counterargs_read_once():
    """The real counterargs-18 (13,532 small files, about a CPU second to read) is read once per test process:
    `load_counterargs_folder` (behind `load_counterargs`, the rankers, the API, `load_arguana`) returns one corpus
    per folder under the real data folder; any other folder (a test's own files) is read each time."""
    from argsim.data import arguana, counterargs

    real, root, corpora = counterargs.load_counterargs_folder, (default_data_dir() / "counterargs18").resolve(), {}

    def read_once(folder):
        key = Path(folder).resolve()
        if not key.is_relative_to(root):
            return real(folder)
        if key not in corpora:
            corpora[key] = real(folder)
        return corpora[key]

    counterargs.load_counterargs_folder = arguana.load_counterargs_folder = read_once
    yield
    counterargs.load_counterargs_folder = arguana.load_counterargs_folder = real


@pytest.fixture(scope="session")
def counterargs_corpus(data_dir):
    """counterargs-18, loaded once per test session (about 10-20 s on the shared machine)."""
    from argsim.data.counterargs import load_counterargs

    return load_counterargs(data_dir)


#: three topics of six sentences: the trainers' tiny data (tests/training, tests/backend, bench/gpu_check.py)
TOPICS = {
    "coffee": ["Coffee is brewed from roasted beans.", "Espresso is a strong coffee drink.",
               "Coffee plants grow in the tropics.", "Many people drink coffee in the morning.",
               "Arabica beans have a mild taste.", "Coffee houses spread across Europe."],
    "solar": ["Solar panels turn sunlight into electricity.", "Photovoltaic cells are made of silicon.",
              "Solar power grows quickly worldwide.", "The sun provides energy for panels on roofs.",
              "Solar farms cover large desert areas.", "Batteries store solar energy for the night."],
    "football": ["The striker scored a late goal.", "Football matches last ninety minutes.",
                 "The goalkeeper saved a penalty.", "The team won the league title.", "Fans sang in the stadium.",
                 "The coach changed the formation."],
}


def tiny_triplets(n: int = 24) -> list[dict]:
    import random

    rng, names, rows = random.Random(0), list(TOPICS), []
    for i in range(n):
        same, other = names[i % 3], names[(i + 1) % 3]
        a, p = rng.sample(TOPICS[same], 2)
        rows.append({"anchor": a, "positive": p, "negative": rng.choice(TOPICS[other])})
    return rows


def parse_command_line(line: str):
    """Parse an `argsim ...` line through the CLI's own parser (options, types, callbacks), invoking nothing."""
    import shlex

    from typer.main import get_command

    from argsim.cli.app import app

    argv = shlex.split(line)
    assert argv[0] == "argsim", line
    cmd, args, parent, name = get_command(app), argv[1:], None, "argsim"
    while True:
        ctx = cmd.make_context(name, list(args), parent=parent)
        if not hasattr(cmd, "resolve_command"):
            return ctx
        name, cmd, args = cmd.resolve_command(ctx, [*getattr(ctx, "_protected_args", []), *ctx.args])
        parent = ctx


class InProcessActorPool:
    """Stands in for `embedding.embed_texts_ray` without Ray: the real `EmbedActor`, rebuilt from the spec it is
    given (as a Ray actor is), embeds blocks of 2 texts in this process; the blocks come back in reverse order
    (Ray returns them in no fixed order). Records what it was asked. `identity` fakes the workers' identity."""

    def __init__(self, identity: str | None = None) -> None:
        self.identity, self.calls = identity, []

    def __call__(self, engine, spec, texts, chunk_rows, quiet=True):
        import numpy as np
        import pyarrow as pa
        import torch

        from argsim.engine.embedding import EmbedActor

        self.calls.append((spec, list(texts), chunk_rows))
        threads = torch.get_num_threads()
        actor = EmbedActor(spec)  # sets one torch thread, as in a Ray worker: restored below
        torch.set_num_threads(threads)
        blocks = [texts[i:i + 2] for i in range(0, len(texts), 2)]
        for block in reversed(blocks):
            out = actor(pa.table({spec.column: pa.array(block, type=pa.string())}))
            vectors = np.stack(out.column("vector").to_pylist()).astype(np.float32)
            identity = self.identity or out.column("identity").to_pylist()[0]
            yield out.column("key").to_pylist(), vectors, identity


@pytest.fixture()
def in_process_actor_pool(monkeypatch):
    """`argsim.engine.embedding.embed_texts_ray` replaced by an `InProcessActorPool` (returned): `--engine ray`
    embedding through the real actor code without starting Ray."""
    from argsim.engine import embedding

    pool = InProcessActorPool()
    monkeypatch.setattr(embedding, "embed_texts_ray", pool)
    return pool


def signal_at_marker(argv: list[str], env: dict, marker: Path, sig: int, wait: float = 120) -> tuple[int, str]:
    """Start `argv`, send it `sig` once it has written `marker` (its work under way), and return its exit code and
    stderr. The child gets Ctrl-C's default action, as from a shell: a local Ray started by an earlier test leaves
    SIGINT ignored in this process, and an ignored signal is inherited (Python then never raises KeyboardInterrupt)."""
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + wait
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=wait)
    return proc.returncode, err


# ------------------------------------------------------------------ scheduling under `make test`

#: the longest files of `make test` (seconds; with a cold embedding and export cache, as in a clean clone, the
#: exporting file first): under pytest-xdist (`make test`: `--dist loadfile --no-loadscope-reorder`, each file whole
#: on one worker, in collection order) they start first, so the two workers end together; without the reorder
#: option xdist would start the files with the most tests first
LONGEST_FIRST = ["test_backend_runtime_models.py", "test_interrupts.py", "test_counter_neural.py", "test_training.py",
                 "test_train_interrupts.py", "test_kpm_quality.py", "test_adapters.py", "test_arguana.py",
                 "test_kpm_train.py", "test_backend_runtime.py", "test_shipped.py", "test_schemas.py",
                 "test_st_selection.py", "test_safety_quiet.py", "test_counter_retriever.py", "test_wheel.py",
                 "test_scale.py", "test_engine_commands.py"]


def pytest_collection_modifyitems(config, items):
    """In a pytest-xdist worker: the files of LONGEST_FIRST first, in that order; the others keep theirs."""
    if hasattr(config, "workerinput"):
        rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
