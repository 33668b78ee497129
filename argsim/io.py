"""File helpers: atomic writes and validated readers for users' own CSV / JSONL / text files."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from argsim.errors import InputError

# ---------------------------------------------------------------- atomic writes


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it is renamed onto `path`, else removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(path: str | Path, text: str) -> Path:
    """Write text atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json(path: str | Path, obj: Any, indent: int | None = 2) -> Path:
    """Write JSON atomically (UTF-8, non-ASCII kept)."""
    return write_text(path, json.dumps(obj, ensure_ascii=False, indent=indent, default=_json_default) + "\n")


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> Path:
    """Write one JSON object per line, atomically."""
    buf = io.StringIO()
    for row in rows:
        buf.write(json.dumps(row, ensure_ascii=False, default=_json_default) + "\n")
    return write_text(path, buf.getvalue())


def write_csv(path: str | Path, rows: Sequence[dict], fieldnames: Sequence[str] | None = None) -> Path:
    """Write dict rows as CSV with a header, atomically."""
    fieldnames = list(fieldnames or (rows[0].keys() if rows else []))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fieldnames, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return write_text(path, buf.getvalue())


def write_npy(path: str | Path, array: np.ndarray) -> Path:
    """Save a NumPy array atomically (the file name keeps its .npy suffix)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)
    return Path(path)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# ---------------------------------------------------------------- validated readers


def read_text_file(path: str | Path) -> str:
    """Read a UTF-8 file, with a one-line error for a missing or non-UTF-8 file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not valid UTF-8 (byte {exc.start})", row=line) from None


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; errors name the line."""
    text = read_text_file(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON: {exc.msg}", row=exc.lineno) from None


def read_records(path: str | Path, required: Sequence[str] = (), delimiter: str | None = None) -> list[dict]:
    """Read CSV/TSV (header row), JSONL or JSON (a list of objects) into dicts.

    Every record must have the `required` columns with non-empty values; the error names file, row
    (1-based data row; for CSV the header is row 1) and column.
    """
    path = Path(path)
    text = read_text_file(path)
    suffix = path.suffix.lower()
    rows: list[tuple[int, dict]] = []
    if suffix in (".jsonl", ".ndjson"):
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"malformed JSON line: {exc.msg}", row=lineno) from None
            if not isinstance(obj, dict):
                raise InputError(path, "each line must be a JSON object", row=lineno)
            rows.append((lineno, obj))
    elif suffix == ".json":
        data = read_json(path)
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise InputError(path, "expected a JSON list of objects")
        rows = list(enumerate(data, start=1))
    else:
        delim = delimiter or ("\t" if suffix in (".tsv", ".tab") else ",")
        reader = csv.reader(io.StringIO(text), delimiter=delim)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(path, "empty file (no header row)") from None
        header = [h.strip().lstrip("\ufeff") for h in header]
        for lineno, values in enumerate(reader, start=2):
            if not values or all(not v.strip() for v in values):
                continue
            if len(values) != len(header):
                raise InputError(path, f"expected {len(header)} fields, found {len(values)}", row=lineno)
            rows.append((lineno, dict(zip(header, values, strict=True))))
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(path, f"missing column(s) {', '.join(missing)}; found {', '.join(header)}",
                             column=missing[0])
    if not rows:
        raise InputError(path, "no records")
    for lineno, rec in rows:
        for col in required:
            if col not in rec:
                raise InputError(path, "missing field", row=lineno, column=col)
            val = rec[col]
            if val is None or (isinstance(val, str) and not val.strip()):
                raise InputError(path, "empty value", row=lineno, column=col)
    return [rec for _, rec in rows]


def read_texts(path: str | Path, column: str = "text") -> list[str]:
    """Texts from CSV/TSV/JSON/JSONL (`column`) or a plain text file (one non-empty text a line)."""
    path = Path(path)
    if path.suffix.lower() in (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json"):
        return [str(r[column]) for r in read_records(path, required=[column])]
    lines = read_text_file(path).splitlines()
    texts = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            if lineno < len(lines):
                raise InputError(path, "empty text", row=lineno)
            continue
        texts.append(line)
    if not texts:
        raise InputError(path, "no texts")
    return texts
