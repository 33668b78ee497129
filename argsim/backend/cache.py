"""On-disk embedding cache: one SQLite file per model identity, rows keyed by the text's SHA-1 (docs/usage.md).

A file of another identity or schema, or one SQLite cannot read, is discarded and rebuilt; a row whose CRC-32 (of
its key and vector bytes, schema 2), length or dimension does not match is missing (recomputed, replaced); schema 1
files are upgraded in place. A folder or file that cannot be written is a `CacheError` (one line, exit 2) when the
cache opens, before any text is encoded. `put_many` commits at once, so an interrupted encode keeps its chunks.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from argsim.errors import ArgsimError

SCHEMA_VERSION = "2"
_HINT = "choose another with --cache-dir DIR or run with --no-cache"


class CacheError(ArgsimError):
    """An embedding cache that cannot be used (not a folder, not writable)."""


def text_key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


def row_checksum(key: bytes, value: bytes) -> int:
    """CRC-32 of a row's key and vector bytes."""
    return zlib.crc32(value, zlib.crc32(key))


def check_cache_folder(folder: str | Path) -> Path:
    """`folder` as a usable cache folder (created if missing), else `CacheError` naming the problem."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CacheError(f"embedding cache {folder}: is a file, not a folder; {_HINT}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheError(f"embedding cache {folder}: cannot create the folder ({exc.strerror}); {_HINT}") from None
    if not _writable(folder):
        raise CacheError(f"embedding cache {folder}: the folder is not writable; {_HINT}")
    return folder


def _writable(path: Path) -> bool:
    """Writable by this process and not marked read-only (no write bit at all, which root would ignore)."""
    return os.access(path, os.W_OK) and bool(path.stat().st_mode & 0o222)


class EmbeddingCache:
    """A persistent text -> float32 vector store for one model identity."""

    def __init__(self, folder: str | Path, identity: str) -> None:
        self.identity = identity
        self.folder = check_cache_folder(folder)
        digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:24]
        self.path = self.folder / f"{digest}.sqlite"
        if self.path.exists() and not self.path.is_file():
            raise CacheError(f"embedding cache {self.path}: is not a regular file; {_HINT}")
        if self.path.exists() and not _writable(self.path):
            raise CacheError(f"embedding cache {self.path}: the file is not writable; {_HINT}")
        self.dim: int | None = None
        self.rebuilt_reason: str | None = None
        self.rejected = 0  # rows refused by the checks since opening
        self._conn = self._open()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            conn = self._connect()
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not meta:  # a new file; another process may be creating it at the same moment: whichever writes
                # first, both read back the same meta rows (never an error that would delete the other's file)
                conn.execute("CREATE TABLE IF NOT EXISTS vectors (k BLOB PRIMARY KEY, v BLOB NOT NULL, "
                             "c INTEGER NOT NULL)")
                conn.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                                 [("identity", self.identity), ("schema", SCHEMA_VERSION)])
                conn.commit()
                meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("identity") != self.identity or meta.get("schema") not in ("1", SCHEMA_VERSION):
                conn.close()
                return self._rebuild("built for another model identity")
            if meta.get("schema") == "1":  # -> 2: add the checksum column and stamp the rows as they are
                conn.execute("ALTER TABLE vectors ADD COLUMN c INTEGER NOT NULL DEFAULT -1")
                rows = conn.execute("SELECT k, v FROM vectors").fetchall()
                conn.executemany("UPDATE vectors SET c=? WHERE k=?",
                                 [(row_checksum(bytes(k), bytes(v)), k) for k, v in rows])
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                conn.commit()
            self.dim = int(meta["dim"]) if "dim" in meta else None
            return conn
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc) or "unable to open" in str(exc):
                raise CacheError(f"embedding cache {self.path}: {exc}; {_HINT}") from None
            return self._rebuild(f"unreadable ({exc})")
        except sqlite3.DatabaseError as exc:
            return self._rebuild(f"unreadable ({exc})")

    def _rebuild(self, reason: str) -> sqlite3.Connection:
        self.rebuilt_reason = reason
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        self.dim = None
        return self._open()

    def close(self) -> None:
        self._conn.close()

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the texts that are cached and pass every check (a row that fails is missing)."""
        keys = {text_key(t): t for t in texts}
        return {keys[k]: v for k, v in self.get_keys(list(keys)).items()}

    def get_keys(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Vectors by text key (SHA-1 digest), checked like `get_many`."""
        found: dict[bytes, np.ndarray] = {}
        try:
            for start in range(0, len(keys), 900):
                chunk = list(keys[start:start + 900])
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(f"SELECT k, v, c FROM vectors WHERE k IN ({marks})", chunk).fetchall()
                for k, v, c in rows:
                    k, v = bytes(k), bytes(v)
                    if c != row_checksum(k, v) or len(v) % 4 or (self.dim is not None and len(v) != 4 * self.dim):
                        self.rejected += 1
                        continue
                    found[k] = np.frombuffer(v, dtype=np.float32)
        except sqlite3.DatabaseError as exc:
            self._conn = self._rebuild(f"unreadable ({exc})")
            return {}
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors (float32) for texts, committed at once."""
        self.put_keys([text_key(t) for t in texts], vectors)

    def put_keys(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store vectors by text key (SHA-1 digest), committed at once."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(keys) == 0:
            return
        if self.dim is None:
            self.dim = int(vectors.shape[1])
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(self.dim),))
        elif vectors.shape[1] != self.dim:
            self._conn = self._rebuild(f"dimension changed from {self.dim} to {vectors.shape[1]}")
            return self.put_keys(keys, vectors)
        rows = [(bytes(k), v.tobytes()) for k, v in zip(keys, vectors, strict=True)]
        self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                               [(k, b, row_checksum(k, b)) for k, b in rows])
        self._conn.commit()

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
