"""The engine layer on a local Ray: same results as the local engine (embedding shards, mapped work)."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.engine import get_engine
from argsim.engine.embedding import read_shards

runner = CliRunner()


def test_ray_map_keeps_order_and_shares_one_object(ray_session):
    import operator  # workers import functions by module: a library function, not one of this test file

    items = list(range(37))
    assert get_engine("ray").map(operator.sub, items, shared=5, block=4) == [5 - i for i in items]
    assert get_engine("local").map(operator.sub, items, shared=5) == [5 - i for i in items]


@pytest.fixture(scope="module")
def fifty_sentences(data_dir, tmp_path_factory):
    """The first 50 arguments of ArgKP dev as a CSV (arg_id, argument)."""
    import csv

    with open(data_dir / "argkp" / "arguments_dev.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:50]
    path = tmp_path_factory.mktemp("scale") / "args.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["arg_id", "argument"])
        writer.writerows([r["arg_id"], r["argument"]] for r in rows)
    return path


def _embed(tmp_path, source, name, *engine):
    out = tmp_path / name
    result = runner.invoke(app, ["--quiet", *engine, "embed", str(source), "--column", "argument",
                                 "--id-column", "arg_id", "--out", str(out)])
    assert result.exit_code == 0, result.output
    ids, keys, vectors, manifest = read_shards(out)
    return dict(zip(ids, vectors, strict=True)), dict(zip(ids, keys, strict=True)), manifest


def test_ray_embedding_shards_equal_local_and_import_into_the_cache(ray_session, fifty_sentences, tmp_path,
                                                                   minilm, monkeypatch):
    local, local_keys, m_local = _embed(tmp_path, fifty_sentences, "local")
    remote, remote_keys, m_ray = _embed(tmp_path, fifty_sentences, "ray", "--engine", "ray")
    assert m_ray["engine"] == "ray" and m_ray["actors"] == 2 and m_ray["identity"] == m_local["identity"]
    assert set(local) == set(remote) and len(local) == 50 and local_keys == remote_keys
    ids = sorted(local)
    np.testing.assert_allclose(np.stack([remote[i] for i in ids]), np.stack([local[i] for i in ids]), atol=1e-5)

    cache = tmp_path / "imported-cache"
    result = runner.invoke(app, ["--quiet", "--cache-dir", str(cache), "embed-import", str(tmp_path / "ray")])
    assert result.exit_code == 0, result.output
    from argsim.backend.cache import EmbeddingCache

    stored = EmbeddingCache(cache, minilm.identity)
    found = stored.get_keys(list(remote_keys.values()))
    stored.close()
    assert len(found) == 50
    np.testing.assert_array_equal(np.stack([found[remote_keys[i]] for i in ids]), np.stack([remote[i] for i in ids]))


def test_engine_ray_needs_a_folder_and_existing_columns(tmp_path, fifty_sentences):
    result = runner.invoke(app, ["--quiet", "--engine", "ray", "embed", str(fifty_sentences), "--column",
                                 "argument", "--out", str(tmp_path / "v.npy")])
    assert result.exit_code == 2 and "give --out a new folder" in result.output
    result = runner.invoke(app, ["--quiet", "--engine", "ray", "embed", str(fifty_sentences), "--column",
                                 "body", "--out", str(tmp_path / "shards")])
    assert result.exit_code == 2 and "missing column(s) body" in result.output
    assert not (tmp_path / "shards").exists()
