"""The embedding cache: checksummed rows, unusable cache folders refused before the work, interrupted encodes
that keep their finished chunks."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.backend.cache import CacheError, EmbeddingCache, text_key
from argsim.backend.encoder import Encoder
from argsim.cli.app import app


class CountingEncoder(Encoder):
    """A deterministic toy encoder that records every text it encodes."""

    name = "counting"
    identity = "counting:v1"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.fail_on_call: int | None = None
        self.calls = 0
        self.batch_size, self.chunk_batches = 4, 1

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.fail_on_call is not None and self.calls == self.fail_on_call:
            raise KeyboardInterrupt
        self.seen.extend(texts)
        return np.array([[len(t), sum(map(ord, t)) % 97, 1.0] for t in texts], dtype=np.float32)


@pytest.fixture
def counting(tmp_path, monkeypatch):
    enc = CountingEncoder().configure(cache_dir=tmp_path / "cache")
    yield enc
    if enc._cache is not None:
        enc._cache.close()


def test_interrupted_encode_keeps_finished_chunks_and_resumes(counting):
    texts = [f"sentence number {i} " + "x" * (i % 7) for i in range(30)]
    counting.fail_on_call = 4  # batches 1-3 finish (12 texts), batch 4 is interrupted
    with pytest.raises(KeyboardInterrupt):
        counting.encode(texts)
    assert len(counting.cache()) == 12
    first = list(counting.seen)
    counting.seen, counting.fail_on_call = [], None
    resumed = counting.encode(texts)
    assert sorted(counting.seen) == sorted(set(texts) - set(first))  # only what was missing
    counting._cache.close()
    counting._cache = None
    np.testing.assert_array_equal(resumed, counting.encode(texts, use_cache=False))


def test_flipped_bytes_are_never_served(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-F")
    vecs = np.arange(12, dtype=np.float32).reshape(3, 4)
    cache.put_many(["a", "b", "c"], vecs)
    raw = bytearray(vecs[1].tobytes())
    raw[5] ^= 0x10  # one bit of one stored vector
    cache._conn.execute("UPDATE vectors SET v=? WHERE k=?", (bytes(raw), text_key("b")))
    cache._conn.commit()
    found = cache.get_many(["a", "b", "c"])
    assert set(found) == {"a", "c"} and cache.rejected == 1
    np.testing.assert_array_equal(found["c"], vecs[2])


def test_flipped_bytes_are_recomputed_by_the_encoder(counting):
    counting.encode(["alpha", "beta"])
    conn = counting.cache()._conn
    (v,) = conn.execute("SELECT v FROM vectors WHERE k=?", (text_key("beta"),)).fetchone()
    conn.execute("UPDATE vectors SET v=? WHERE k=?", (bytes([v[0] ^ 1]) + bytes(v[1:]), text_key("beta")))
    conn.commit()
    counting.seen = []
    out = counting.encode(["alpha", "beta"])
    assert counting.seen == ["beta"]
    np.testing.assert_array_equal(out, counting.encode(["alpha", "beta"], use_cache=False))


def test_schema_1_file_is_upgraded_with_checksums(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-U")
    path = cache.path
    cache.close()
    path.unlink()
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE vectors (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
    con.executemany("INSERT INTO meta VALUES (?, ?)", [("identity", "model-U"), ("schema", "1"), ("dim", "2")])
    con.execute("INSERT INTO vectors VALUES (?, ?)", (text_key("x"), np.ones(2, np.float32).tobytes()))
    con.commit()
    con.close()
    reopened = EmbeddingCache(tmp_path, "model-U")
    assert reopened.rebuilt_reason is None
    np.testing.assert_array_equal(reopened.get_many(["x"])["x"], [1, 1])


@pytest.mark.parametrize("kind", ["file", "readonly-folder", "readonly-file", "db-is-folder"])
def test_unusable_cache_is_refused_before_any_encoding(tmp_path, kind):
    folder = tmp_path / "cache"
    if kind == "file":
        folder.write_text("not a folder")
    else:
        folder.mkdir()
        db = EmbeddingCache(folder, "model-R")
        db.close()
        if kind == "readonly-folder":
            folder.chmod(0o555)
        elif kind == "readonly-file":
            db.path.chmod(0o444)
        else:
            db.path.unlink()
            db.path.mkdir()
    try:
        with pytest.raises(CacheError, match="embedding cache"):
            EmbeddingCache(folder, "model-R")
    finally:
        folder.chmod(0o755) if folder.is_dir() else None


def test_cli_cache_path_that_is_a_file_is_one_line_exit_2(tmp_path, monkeypatch):
    (tmp_path / "in.txt").write_text("one text\nanother text\n")
    (tmp_path / "cachefile").write_text("x")
    out = tmp_path / "v.npy"
    result = CliRunner().invoke(app, ["--quiet", "--cache-dir", str(tmp_path / "cachefile"), "embed",
                                      str(tmp_path / "in.txt"), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "--cache-dir" in result.output and "is a file" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()


def test_two_processes_creating_one_cache_at_once_both_keep_it(tmp_path, monkeypatch):
    """Two argsim processes open a brand-new cache file at the same moment: each reads an empty meta table, then
    the other's meta rows are there when it writes its own. Neither may take that for a broken file and delete
    the cache the other has open: both use the one file and see each other's vectors."""
    first = EmbeddingCache(tmp_path, "counting:v1")
    first.put_many(["a"], np.ones((1, 4), dtype=np.float32))
    real_connect = EmbeddingCache._connect

    class EmptyMetaOnce:  # the second process read the meta table just before the first one wrote it
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn, self.hidden = conn, False

        def execute(self, sql: str, *args):
            cursor = self.conn.execute(sql, *args)
            if sql.startswith("SELECT key, value FROM meta") and not self.hidden:
                self.hidden = True
                return self.conn.execute("SELECT key, value FROM meta WHERE 0")
            return cursor

        def __getattr__(self, name: str):
            return getattr(self.conn, name)

    monkeypatch.setattr(EmbeddingCache, "_connect", lambda self: EmptyMetaOnce(real_connect(self)))
    second = EmbeddingCache(tmp_path, "counting:v1")
    assert second.rebuilt_reason is None
    assert np.array_equal(second.get_many(["a"])["a"], np.ones(4, dtype=np.float32))
    second.put_many(["b"], np.full((1, 4), 2, dtype=np.float32))
    assert set(first.get_many(["a", "b"])) == {"a", "b"}
