"""`--engine ray` on `rank keypoints` and `rank counter-search`, and the engine-aware `argsim.engine.encode` under
them: the same output files as `local`, new vectors merged into the cache, a second run (ray or local) encodes
nothing. The Ray runs use the session's one local Ray (the `ray_session` fixture); the merging logic of
`encode` is tested without Ray, on the real `EmbedActor` run in this process (conftest's
`in_process_actor_pool`), and so is
`rank counter-search`: the Ray Data plumbing is the same for every caller and runs for real (once: every Ray
start-up of model actors costs seconds) under `rank keypoints`."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app

REPO = Path(__file__).resolve().parents[2]
KPM = REPO / "examples" / "kpm"
COUNTER = REPO / "examples" / "counter_neural"
runner = CliRunner()


def fresh_minilm(cache_dir: Path | None):
    """The shipped MiniLM (weights shared with the session's copy) on an empty cache folder (None: no cache)."""
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    config = RunConfig(cache_dir=cache_dir, quiet=True, use_cache=cache_dir is not None)
    return get_encoder("minilm", device="cpu", config=config)


def example_arguments() -> list[str]:
    with open(KPM / "arguments.csv", encoding="utf-8") as fh:
        return [r["argument"] for r in csv.DictReader(fh)]


def forbid_encoding(monkeypatch) -> None:
    """From here on, any embedding fails, on Ray or in this process (a run that should find every text cached)."""
    from argsim.backend.encoder import Encoder
    from argsim.engine import embedding

    def refuse(*args, **kwargs):
        raise AssertionError("embedded a text although every text was cached")

    monkeypatch.setattr(embedding, "embed_texts_ray", refuse)
    monkeypatch.setattr(Encoder, "_compute", refuse)


class FakeRay:
    name = "ray"


def test_encode_merges_blocks_into_the_cache_in_input_order(minilm, tmp_path, in_process_actor_pool):
    from argsim.engine import encode

    texts = example_arguments()[:6]
    texts = texts + texts[:2]  # repeats are embedded once
    expected = minilm.encode(texts, use_cache=False)
    enc = fresh_minilm(tmp_path / "cache")
    enc.encode(texts[:1])  # already cached: not sent to the pool
    pool = in_process_actor_pool
    np.testing.assert_allclose(encode(FakeRay(), enc, texts), expected, atol=1e-6)
    spec, sent, chunk = pool.calls[0]
    assert sent == sorted(dict.fromkeys(texts[1:6]), key=len, reverse=True)  # missing, distinct, longest first
    assert spec.model == "minilm" and spec.normalize is False and chunk == enc.batch_size * enc.chunk_batches
    assert len(enc.cache()) == 6
    np.testing.assert_allclose(encode(FakeRay(), enc, texts, normalize=True),
                               expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-6)
    assert len(pool.calls) == 1  # the second call found everything cached

    no_cache = fresh_minilm(None)
    np.testing.assert_allclose(encode(FakeRay(), no_cache, texts), expected, atol=1e-6)  # blocks kept in memory
    assert len(pool.calls[1][1]) == 6

    in_process_actor_pool.identity = "another-model"
    other = fresh_minilm(tmp_path / "other")
    from argsim.errors import ArgsimError

    with pytest.raises(ArgsimError, match="identity another-model"):
        encode(FakeRay(), other, texts)
    assert len(other.cache()) == 0  # nothing stored under the wrong identity


def test_an_encoder_without_a_recipe_encodes_here_with_a_warning(minilm, tmp_path, monkeypatch, capsys):
    import copy

    from argsim.engine import embedding, encode

    enc = copy.copy(fresh_minilm(tmp_path / "cache"))
    enc.recipe = None
    monkeypatch.setattr(embedding, "embed_texts_ray", None)
    texts = example_arguments()[:3]
    np.testing.assert_allclose(encode(FakeRay(), enc, texts), minilm.encode(texts, use_cache=False), atol=1e-6)
    assert "cannot be rebuilt on engine workers; 3 text(s)" in capsys.readouterr().err


def _rank_keypoints(out: Path, *globals_: str):
    res = runner.invoke(app, ["--quiet", *globals_, "rank", "keypoints", "--model", "minilm",
                              "--arguments", str(KPM / "arguments.csv"),
                              "--key-points", str(KPM / "key_points.csv"), "--labels", str(KPM / "labels.csv"),
                              "--threshold", "0.3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads((out / "predictions.json").read_text())


def _same_outputs(a: Path, b: Path, files: list[str]) -> None:
    """The files are equal; numbers (scores) to 1e-5, every other field exactly."""
    for name in files:
        rows_a, rows_b = a.joinpath(name).read_text().splitlines(), b.joinpath(name).read_text().splitlines()
        assert len(rows_a) == len(rows_b), name
        for x, y in zip(rows_a, rows_b, strict=True):
            fa, fb = x.split(","), y.split(",")
            assert len(fa) == len(fb)
            for u, v in zip(fa, fb, strict=True):
                try:
                    assert float(u) == pytest.approx(float(v), abs=1e-5), (name, x, y)
                except ValueError:
                    assert u == v, (name, x, y)


@pytest.mark.slow
def test_rank_keypoints_on_ray_equals_local_and_a_second_run_encodes_nothing(ray_session, tmp_path, minilm,
                                                                             monkeypatch):
    cache = tmp_path / "cache"
    local = _rank_keypoints(tmp_path / "local", "--no-cache")
    remote = _rank_keypoints(tmp_path / "ray", "--engine", "ray", "--cache-dir", str(cache))
    with open(KPM / "arguments.csv", encoding="utf-8") as fh:
        assert set(local) == set(remote) == {r["arg_id"] for r in csv.DictReader(fh)}
    for aid, scores in local.items():
        assert set(scores) == set(remote[aid])
        for kid, s in scores.items():
            assert remote[aid][kid] == pytest.approx(s, abs=1e-5)
    _same_outputs(tmp_path / "local", tmp_path / "ray", ["best_keypoints.csv", "coverage.csv"])
    from argsim.backend.cache import EmbeddingCache

    stored = EmbeddingCache(cache, minilm.identity)
    rows = len(stored)
    stored.close()
    with open(KPM / "key_points.csv", encoding="utf-8") as fh:
        kps = {r["key_point"] for r in csv.DictReader(fh)}
    assert rows == len(set(example_arguments()) | kps)  # every text once, merged into the cache

    forbid_encoding(monkeypatch)
    assert _rank_keypoints(tmp_path / "again", "--engine", "ray", "--cache-dir", str(cache)) == remote
    assert _rank_keypoints(tmp_path / "local2", "--cache-dir", str(cache)) == remote


@pytest.fixture()
def frozen_bipolar(tmp_path) -> Path:
    """A bipolar model on the frozen MiniLM with seeded, untrained heads (saved as `train bipolar` saves)."""
    import torch

    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.model import CounterModel
    from argsim.counter.neural.store import save_model

    torch.manual_seed(0)
    return save_model(CounterModel(NeuralConfig(kind="bipolar", base_model="minilm"), dim=384), tmp_path / "model")


@pytest.fixture()
def collection(tmp_path) -> tuple[Path, Path]:
    """16 candidates and 6 queries of the example collection, as text files (the queries are not candidates)."""
    queries = (COUNTER / "queries.txt").read_text(encoding="utf-8").splitlines()
    lines = (COUNTER / "candidates.txt").read_text(encoding="utf-8").splitlines()
    candidates = [t for t in lines if t.strip() and t not in queries][:16]
    (tmp_path / "candidates.txt").write_text("\n".join(candidates) + "\n", encoding="utf-8")
    (tmp_path / "queries.txt").write_text("\n".join(queries) + "\n", encoding="utf-8")
    return tmp_path / "candidates.txt", tmp_path / "queries.txt"


def _counter_search(model: Path, files: tuple[Path, Path], out: Path, *globals_: str) -> list[dict]:
    res = runner.invoke(app, ["--quiet", *globals_, "rank", "counter-search", "--model", str(model), "--candidates",
                              str(files[0]), "--queries", str(files[1]), "--k", "5", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return [json.loads(x) for x in out.read_text().splitlines()]


def test_counter_search_on_the_engine_equals_local_and_a_second_run_encodes_nothing(frozen_bipolar, collection,
                                                                                    tmp_path, minilm, monkeypatch,
                                                                                    in_process_actor_pool):
    cache = tmp_path / "cache"
    local = _counter_search(frozen_bipolar, collection, tmp_path / "local.jsonl", "--no-cache")
    pool = in_process_actor_pool
    remote = _counter_search(frozen_bipolar, collection, tmp_path / "ray.jsonl", "--engine", "ray", "--cache-dir",
                             str(cache))
    assert [len(c[1]) for c in pool.calls] == [16, 6] and pool.calls[0][0].model == "minilm"  # candidates, queries
    assert len(local) == len(remote) == 6
    for a, b in zip(local, remote, strict=True):
        assert (a["query_id"], a["query"]) == (b["query_id"], b["query"])
        assert [r["id"] for r in a["results"]] == [r["id"] for r in b["results"]]
        np.testing.assert_allclose([r["score"] for r in a["results"]], [r["score"] for r in b["results"]],
                                   atol=1e-5)
    from argsim.backend.cache import EmbeddingCache

    stored = EmbeddingCache(cache, minilm.identity)
    assert len(stored) == 22  # every candidate and query, merged into the run's cache
    stored.close()

    forbid_encoding(monkeypatch)
    assert _counter_search(frozen_bipolar, collection, tmp_path / "again.jsonl", "--engine", "ray", "--cache-dir",
                           str(cache)) == remote
    assert _counter_search(frozen_bipolar, collection, tmp_path / "local2.jsonl", "--cache-dir", str(cache)) == remote


def test_the_default_engine_needs_no_ray():
    """Importing the commands that take --engine (and their libraries) does not import Ray."""
    code = ("import sys; import argsim.cli.app, argsim.cli.commands.kpm, argsim.cli.commands.counter, "
            "argsim.kpm.scoring, argsim.kpm.ensemble, argsim.counter.neural.rerank, argsim.engine; "
            "assert 'ray' not in sys.modules, 'ray imported'")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
