"""Model identity: a short hash of a model's files, so caches from another model are never reused."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

_EDGE = 1 << 20  # hash the first and last MiB of each file plus its size: fast and specific


def _file_digest(path: Path, h: hashlib._Hash) -> None:
    size = path.stat().st_size
    h.update(f"{path.name}:{size}".encode())
    with open(path, "rb") as fh:
        h.update(fh.read(_EDGE))
        if size > 2 * _EDGE:
            fh.seek(size - _EDGE)
            h.update(fh.read(_EDGE))


@lru_cache(maxsize=64)
def _fingerprint(path: str, mtime_key: float) -> str:
    p = Path(path)
    h = hashlib.sha256()
    if p.is_file():
        _file_digest(p, h)
    else:
        for f in sorted(x for x in p.rglob("*") if x.is_file() and not any(s.startswith(".") for s in
                                                                           x.relative_to(p).parts)):
            h.update(str(f.relative_to(p)).encode())
            _file_digest(f, h)
    return h.hexdigest()[:16]


def fingerprint(path: str | Path) -> str:
    """Hash of a model file or folder (names, sizes and edge bytes of every file)."""
    p = Path(path)
    files = [p] if p.is_file() else [x for x in p.rglob("*") if x.is_file()]
    mtime_key = max((f.stat().st_mtime for f in files), default=0.0)
    return _fingerprint(str(p.resolve()), mtime_key)
