"""On-disk embedding cache: one SQLite file per model identity, rows keyed by the text's SHA-1.

The file records the identity it was built for; a file whose identity, dimension or integrity does not
match is discarded and rebuilt, never silently used.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

SCHEMA_VERSION = "1"


def text_key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


class EmbeddingCache:
    """A persistent text -> float32 vector store for one model identity."""

    def __init__(self, folder: str | Path, identity: str) -> None:
        self.identity = identity
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:24]
        self.path = self.folder / f"{digest}.sqlite"
        self.dim: int | None = None
        self.rebuilt_reason: str | None = None
        self._conn = self._open()

    # -- lifecycle
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            conn = self._connect()
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("CREATE TABLE IF NOT EXISTS vectors (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not meta:
                conn.executemany("INSERT INTO meta VALUES (?, ?)",
                                 [("identity", self.identity), ("schema", SCHEMA_VERSION)])
                conn.commit()
            elif meta.get("identity") != self.identity or meta.get("schema") != SCHEMA_VERSION:
                conn.close()
                return self._rebuild("built for another model identity")
            else:
                self.dim = int(meta["dim"]) if "dim" in meta else None
            return conn
        except sqlite3.DatabaseError as exc:
            return self._rebuild(f"unreadable ({exc})")

    def _rebuild(self, reason: str) -> sqlite3.Connection:
        self.rebuilt_reason = reason
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.unlink()
        self.dim = None
        return self._open()

    def close(self) -> None:
        self._conn.close()

    # -- access
    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the texts that are cached (a corrupt row is treated as missing)."""
        found: dict[str, np.ndarray] = {}
        keys = {text_key(t): t for t in texts}
        items = list(keys.items())
        try:
            for start in range(0, len(items), 900):
                chunk = items[start:start + 900]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(f"SELECT k, v FROM vectors WHERE k IN ({marks})",
                                          [k for k, _ in chunk]).fetchall()
                for k, v in rows:
                    vec = np.frombuffer(v, dtype=np.float32)
                    if self.dim is not None and vec.shape[0] != self.dim:
                        continue
                    found[keys[bytes(k)]] = vec
        except sqlite3.DatabaseError as exc:
            self._conn = self._rebuild(f"unreadable ({exc})")
            return {}
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors (float32) for texts."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.dim is None:
            self.dim = int(vectors.shape[1])
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(self.dim),))
        elif vectors.shape[1] != self.dim:
            self._conn = self._rebuild(f"dimension changed from {self.dim} to {vectors.shape[1]}")
            return self.put_many(texts, vectors)
        self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                               [(text_key(t), v.tobytes()) for t, v in zip(texts, vectors, strict=True)])
        self._conn.commit()

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
