"""File helpers: atomic writes and validated readers for users' own CSV / JSONL / text files."""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from itertools import islice
from pathlib import Path
from typing import IO, Any, NoReturn

import numpy as np

from argsim.errors import ArgsimError, InputError, examples, warn

# ---------------------------------------------------------------- atomic writes


def current_umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    with suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # pragma: no cover - non-Linux fallback
    os.umask(mask)
    return mask


@contextmanager
def atomic_folder(target: str | Path) -> Iterator[Path]:
    """Yield a new empty folder beside `target` (parents created) to build it in; on success it is renamed onto
    `target` (which may be an empty folder), else removed. It has the mode a plain mkdir gives (`mkdtemp` alone
    makes it 0700, so the renamed model folder would be private)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        os.chmod(tmp, 0o777 & ~current_umask())
        yield tmp
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone once renamed


def widen_private_files(folder: str | Path, since: float | None = None) -> int:
    """Give the 0600 regular files under `folder` (safetensors writes weights through a private temporary file)
    the mode a new file gets from the umask; with `since` (a `time.time()`) only those modified since then;
    symlinks are not followed. Returns the number of files changed."""
    mode = 0o666 & ~current_umask()
    if mode == 0o600:
        return 0
    changed = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == 0o600 and (since is None or st.st_mtime >= since):
                os.chmod(path, mode)
                changed += 1
    return changed


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it is renamed onto `path` with the mode a plain
    `open(path, "w")` would give (`mkstemp` alone would make every file 0600), else removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # the temporary name ends like the target (x.json -> .x.json.<random>.tmp.json): writers that pick a format
    # from the suffix (xgboost, numpy) write the target's format
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~current_umask()
        if tmp_path.exists():
            os.chmod(tmp_path, mode)
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def folder_lock(folder: str | Path, busy: str = "") -> Iterator[None]:
    """Hold an exclusive advisory `flock` on `folder` itself (no lock file is left), e.g. while two processes take
    turns merging into one results file; with `busy`, a lock held elsewhere is refused (ArgsimError(busy)), not waited.

    Example:
        >>> with folder_lock("."):
        ...     pass
    """
    Path(folder).mkdir(parents=True, exist_ok=True)
    try:
        import fcntl

        fd = os.open(folder, os.O_RDONLY)
    except (ImportError, OSError):  # pragma: no cover - not POSIX, or a folder that cannot be opened
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if busy else 0))
        except BlockingIOError:
            raise ArgsimError(busy) from None
        except OSError:  # a file system without flock
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def check_output_path(path: str | Path, kind: str = "file", suffixes: Sequence[str] = ()) -> Path:
    """Fail early (InputError, one line) unless `path` can be written as a `kind` ('file' or 'folder').

    Checked before any work: a file that is an existing folder or another non-regular file (a FIFO, a device
    such as /dev/null: the atomic rename would replace it), a folder that is an existing file, a parent that is a
    file, a suffix outside `suffixes`, or a place where nothing can be created (probed by creating
    and removing a temporary file in the nearest existing folder, which also catches read-only mounts).
    """
    if str(path) == "-":
        raise InputError(path, "writing to standard output is not supported: give a file name")
    path = Path(path).expanduser()
    if os.path.lexists(path) and not path.exists():  # a broken symlink or a symlink loop
        raise InputError(path, f"{describe_path(path)}; choose another output path")
    if kind == "file":
        if path.is_dir():
            raise InputError(path, "is a folder; expected a file name")
        if path.exists() and not path.is_file():  # replacing it would remove a FIFO, socket or device node
            problem = describe_path(path) or "is not a regular file"
            raise InputError(path, f"{problem.split(';')[0].split(',')[0]}; an output must be a regular file "
                                   "(it would be replaced)")
        if suffixes and path.suffix.lower() not in suffixes:
            raise InputError(path, f"unsupported suffix '{path.suffix}': use {', '.join(suffixes)}")
    elif path.exists() and not path.is_dir():
        raise InputError(path, "is a file; expected a folder")
    probe = path if kind != "file" and path.is_dir() else path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(path, f"cannot be created: {probe} is a file, not a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".argsim-probe.", dir=probe)
    except OSError as exc:
        why = f" ({exc.strerror})" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC) else ""
        raise InputError(path, f"not writable: cannot create files in {probe}{why}") from None
    os.close(fd)
    os.unlink(tmp)
    return path


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Whether writing `a` would change `b`: the same real path (symlinks resolved), or one inode (hard links)."""
    try:
        a, b = os.path.expanduser(a), os.path.expanduser(b)
        return os.path.realpath(a) == os.path.realpath(b) or os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_distinct_outputs(outputs: Sequence[tuple[str, Path]], inputs: Sequence[tuple[str, Path]]) -> None:
    """Refuse (InputError, one line) an output that is an input (`_same_file`: through symlinks and hard links),
    or one file named by two outputs.

    Args:
        outputs: (option name, path) of what the command will write.
        inputs: (option name, path) of what it will read.

    Example:
        >>> check_distinct_outputs([("--out", Path("a.npy"))], [("TEXTS", Path("t.txt"))])
    """
    for i, (oname, opath) in enumerate(outputs):
        for iname, ipath in inputs:
            if _same_file(opath, ipath):
                raise InputError(opath, f"{oname} names the input {iname} ({ipath}); writing it would destroy "
                                        "the input: choose another output path")
        for oname2, opath2 in outputs[i + 1:]:
            if _same_file(opath, opath2):
                raise InputError(opath, f"given to both {oname} and {oname2}; one would overwrite the other: "
                                        "choose two paths")


def sha256_file(path: str | Path) -> str:
    """The full SHA-256 of a file (hex)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


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
    return write_text(path, "".join(json.dumps(row, ensure_ascii=False, default=_json_default) + "\n" for row in rows))


def write_csv(path: str | Path, rows: Sequence[dict], fieldnames: Sequence[str] | None = None) -> Path:
    """Write dict rows as CSV with a header, atomically."""
    fieldnames = list(fieldnames or (rows[0].keys() if rows else []))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fieldnames, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return write_text(path, buf.getvalue())


VECTOR_SUFFIXES = (".npy", ".csv", ".parquet")


def write_vectors(path: str | Path, vectors: np.ndarray, ids: Sequence[str] | None = None) -> Path:
    """Write embeddings atomically in the format the suffix names: .npy, the float32 matrix alone; .csv, a header
    `id,d0,d1,...`, one row per text; .parquet, columns `id` and `vector`. `ids` default to the row numbers."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in VECTOR_SUFFIXES:
        raise InputError(path, f"unsupported suffix '{path.suffix}': use {', '.join(VECTOR_SUFFIXES)}")
    if suffix == ".npy":
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.save(fh, vectors)
        return path
    ids = [str(i) for i in (range(len(vectors)) if ids is None else ids)]
    if len(ids) != len(vectors):
        raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
    if suffix == ".csv":
        header = ["id", *[f"d{j}" for j in range(vectors.shape[1] if vectors.ndim == 2 else 0)]]
        return write_csv(path, [dict(zip(header, [rid, *(repr(float(v)) for v in row)], strict=True))
                                for rid, row in zip(ids, vectors, strict=True)], header)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": pa.array(ids, pa.string()),
                      "vector": pa.array(list(np.asarray(vectors, dtype=np.float32)), pa.list_(pa.float32()))})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return path


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic | np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# ---------------------------------------------------------------- validated readers

# the csv module's per-field limit (131,072 characters by default) raised once for every reader: a long text in
# one CSV cell is valid input. The limit stays finite (the largest C long on this platform, at most 2**31 - 1).
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
#: JSON numbers argsim reads are counts, ids and scores: an integer of more digits, or a float that overflows
#: to infinity, is refused (a 400-digit score would fail deep inside a metric or turn into inf)
MAX_JSON_INT_DIGITS = 30


def describe_path(path: str | Path) -> str | None:
    """What is at `path` when it is not a regular file one can read (a folder, a FIFO, a broken symlink, ...);
    None for a regular file (after symlinks). Never opens the path (a FIFO would block).

    Args:
        path: the path given.

    Returns:
        The problem, or None.

    Example:
        >>> describe_path("/")
        'is a folder; expected a file'
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if path == "-":
            return "standard input is not read: give a file"
        return "is a broken symlink" if os.path.islink(path) else "file not found"
    except OSError as exc:
        words = {errno.ELOOP: "is a symlink loop", errno.ENAMETOOLONG: "name too long",
                 errno.EACCES: "permission denied", errno.EPERM: "permission denied",
                 errno.ENOTDIR: "file not found (a part of the path is a file)"}
        return words.get(exc.errno, f"cannot be read ({exc.strerror})")
    except ValueError:
        return "not a valid path"
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "is a folder; expected a file"),
             (stat.S_ISFIFO, "is a FIFO (named pipe), not a regular file; it is not read"),
             (stat.S_ISSOCK, "is a socket, not a regular file"), (stat.S_ISCHR, "is a device, not a regular file"),
             (stat.S_ISBLK, "is a device, not a regular file"))
    return next((what for test, what in kinds if test(mode)), "is not a regular file")


def check_input_file(path: str | Path) -> Path:
    """`path` if it is a regular file (symlinks followed), else InputError naming what it is (`describe_path`)."""
    if (problem := describe_path(path)) is not None:
        raise InputError(path, problem)
    return Path(path)


def regular_files(paths: Iterable[str | Path], folder: str | Path, what: str = "files") -> list[Path]:
    """The regular files among `paths` (a folder's glob), in order; anything else (`describe_path`) is skipped,
    never opened, with one warning line giving the count and an example.

    Args:
        paths: the glob's matches.
        folder: the folder globbed (for the warning).
        what: what the files are (for the warning).

    Returns:
        The regular files.

    Example:
        >>> regular_files(Path("articles").glob("*.txt"), "articles")  # doctest: +SKIP
    """
    checked = [(Path(p), describe_path(p)) for p in paths]
    if skipped := [(p, problem) for p, problem in checked if problem is not None]:
        first, problem = skipped[0]
        warn(f"{folder}: {len(skipped)} of the {what} are not regular files and are skipped "
             f"({examples([q.name for q, _ in skipped])}; {first.name} {problem})")
    return [p for p, problem in checked if problem is None]


@contextmanager
def _open_input(path: str | Path, mode: str, **kwargs: Any) -> Iterator[IO]:
    """An input file checked by `check_input_file`, open; an OSError opening or reading it is one InputError."""
    try:
        with open(check_input_file(path), mode, **kwargs) as fh:
            yield fh
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror})") from None


def split_lines(text: str) -> list[str]:
    """Lines of `text` split at `\\n` only, a `\\r` before it dropped: the line ends files use (LF, CRLF).

    `str.splitlines` also splits at form feed, vertical tab, U+0085, U+2028, U+2029 and a lone CR, which are
    characters *inside* a line of text (and valid inside a JSON string): splitting there would shift every later
    row. A final line end does not start another (empty) line.

    Args:
        text: the file's content.

    Returns:
        The lines, without their line ends.

    Example:
        >>> split_lines("a\\x0cb\\r\\nc\\n")
        ['a\\x0cb', 'c']
    """
    return [line.removesuffix("\r") for line in (text.removesuffix("\n").split("\n") if text else [])]


def _binary_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 file read one at a time, split as `split_lines` splits (a leading
    BOM dropped); one-line errors naming the byte and line of bytes that are not UTF-8 and of a NUL character."""
    offset = 0
    with _open_input(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, f"not valid UTF-8 (byte {offset + exc.start})", row=lineno) from None
            if "\x00" in line:
                at = offset + raw.index(b"\x00")
                raise InputError(path, f"holds a NUL character (byte {at}): argsim reads UTF-8 text, and this looks "
                                       "like UTF-16 or binary data", row=lineno)
            offset += len(raw)
            line = line.removeprefix("\ufeff") if lineno == 1 else line
            yield lineno, line.removesuffix("\n").removesuffix("\r")


def read_text_file(path: str | Path) -> str:
    """Read a UTF-8 file (a leading BOM dropped) exactly as stored, without newline translation (`split_lines`
    splits); one-line errors as the line readers give them (`_open_input`, `_binary_lines`).

    The file is decoded in one piece (the common case, about 5x faster and lighter than line by line); only a file
    that fails is scanned by `_binary_lines` for the byte and line to name."""
    with _open_input(path, "rb") as fh:
        data = fh.read()
    with suppress(UnicodeDecodeError):
        if "\x00" not in (text := data.decode("utf-8")):
            return text.removeprefix("\ufeff")
    _refuse_bad_bytes(path)


# `parse_json`'s hooks: JSON that parses but that argsim refuses is an InputError, given its file and row there
def _unique_object(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise InputError(None, f"duplicate key {key!r} in one JSON object (which value is meant is unknown)")
        out[key] = value
    return out


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_INT_DIGITS:
        raise InputError(None, f"a number of {len(text.lstrip('-'))} digits (at most {MAX_JSON_INT_DIGITS} are read)")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InputError(None, f"the number {text[:40]} is beyond the range of a float")
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate (U+D800..U+DFFF: no character, UTF-8 cannot hold it), else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def as_texts(texts: Any, where: str) -> list[str]:
    """`texts` (one string, or any iterable of strings: a list, generator, numpy array, pandas Series) as a list,
    read once: what the Python API and `Encoder.encode` take. Anything else (None, a dict, a frame, bytes), an item
    that is not a string, or a text holding a lone surrogate is an InputError naming `where` and the item.

    Example:
        >>> as_texts("one", "texts"), as_texts(iter(["a", "\U0001f600"]), "texts")
        (['one'], ['a', '\U0001f600'])
    """
    if isinstance(texts, str):
        texts = [texts]
    if isinstance(texts, bytes | bytearray | memoryview):
        raise InputError(where, "texts are bytes, not text: decode them first (e.g. data.decode('utf-8'))")
    if isinstance(texts, Mapping) or hasattr(texts, "columns") or not isinstance(texts, Iterable):
        raise InputError(where, f"expected a list of strings (or one string), found {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(where, f"item {i + 1} is {type(t).__name__}, not a string")
        if (at := _lone_surrogate(t)) is not None:
            raise InputError(where, f"text {i + 1} holds a lone surrogate U+{ord(t[at]):04X} at character {at + 1} "
                                    "(half of an escaped pair, not a character); fix the escape")
    return out


#: the longest input Sudachi (GiNZA's tokenizer) takes, in UTF-8 bytes; spaCy's own limit is `nlp.max_length`
SUDACHI_MAX_BYTES = 49149
#: where a long text is cut into pieces for a spaCy pipeline: after the last sentence end or space in the window
_BREAKS = re.compile(r"[。．！？!?.\n]\s*|\s+")


def text_pieces(text: str, max_chars: int) -> list[str]:
    """`text` cut into pieces of at most `max_chars` characters, each ending after its last sentence end (or
    else space) in the second half of its window, or cut hard where there is none; joined they give `text` back.

    Example:
        >>> text_pieces("ab. cd. ef", 5)
        ['ab. ', 'cd. ', 'ef']
    """
    pieces, start = [], 0
    while len(text) - start > max_chars:
        end = start + max_chars
        ends = [m.end() for m in _BREAKS.finditer(text, start + max_chars // 2, end)]
        cut = ends[-1] if ends and ends[-1] <= end else end
        pieces.append(text[start:cut])
        start = cut
    return [*pieces, text[start:]]


def pipe_docs(nlp: Any, texts: Sequence[str], batch_size: int = 256) -> Iterator[Any]:
    """One spaCy `Doc` per text through `nlp.pipe`, whatever its length: a text beyond `nlp.max_length` characters
    or Sudachi's SUDACHI_MAX_BYTES bytes (which GiNZA's `ja_ginza` refuses with an error) is cut at sentence ends
    (`text_pieces`) and its docs joined (`Doc.from_docs`): the same tokens and token vectors as one doc, no error
    for a long text.

    Args:
        nlp: a spaCy `Language` (GiNZA's, or a blank one with a sentencizer).
        texts: the texts.
        batch_size: texts per `nlp.pipe` batch.

    Returns:
        An iterator of one `Doc` per text, in order.

    Example:
        >>> [d.text for d in pipe_docs(spacy.blank("en"), ["a b"])]  # doctest: +SKIP
        ['a b']
    """
    max_chars = max(1, min(int(nlp.max_length), SUDACHI_MAX_BYTES // 4))  # 4 bytes: the longest UTF-8 character
    split = [text_pieces(text, max_chars) for text in texts]
    docs = nlp.pipe([piece for pieces in split for piece in pieces], batch_size=batch_size)
    for pieces in split:
        parts = [next(docs) for _ in pieces]
        if len(parts) > 1:
            from spacy.tokens import Doc

            with warnings.catch_warnings(action="ignore"):  # GiNZA's per-doc sub-tokens are not merged: unread
                parts = [Doc.from_docs(parts, ensure_whitespace=False)]
        yield parts[0]


def parse_json(text: str, path: str | Path | None = None, row: int | None = None) -> Any:
    """`json.loads` with argsim's rules, every failure one InputError naming `path` (and `row`, else the line):
    repeated keys, integers of more than MAX_JSON_INT_DIGITS digits, overflowing floats (`1e400`) and too deep
    nesting are refused; NaN / Infinity are read (Python's json writes them; readers of scores check them).

    Args:
        text: the JSON text.
        path: the file, for messages.
        row: the line of a JSONL file, for messages.

    Returns:
        The parsed value.

    Example:
        >>> parse_json('{"a": [1, 2.5]}')
        {'a': [1, 2.5]}
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_object, parse_int=_parse_int, parse_float=_parse_float)
        if _SURROGATE_ESCAPE.search(text):  # a \ud800-style escape: only a pair makes a character
            out = json.dumps(value, ensure_ascii=False)  # the parsed value written out holds any lone one
            if (at := _lone_surrogate(out)) is not None:
                raise InputError(path, f"a lone surrogate U+{ord(out[at]):04X} in a JSON string (half of an "
                                       "escaped pair, not a character); fix the escape", row=row)
        return value
    except InputError as exc:  # a hook's refusal, or a lone surrogate
        raise InputError(path, exc.problem, row=row) from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON{' line' if row else ''}: {exc.msg}",
                         row=row if row is not None else exc.lineno) from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply", row=row) from None
    except ValueError as exc:  # e.g. Python's limit on the digits of an int conversion
        raise InputError(path, f"malformed JSON: {str(exc)[:120]}", row=row) from None


def read_json(path: str | Path) -> Any:
    """Parse a JSON file with `parse_json`'s rules; errors name the file and line."""
    return parse_json(read_text_file(path), path)


def read_json_as(schema: Any, path: str | Path, what: str | None = None) -> Any:
    """A JSON file read with `read_json`'s rules and checked against `schema` by `argsim.schemas.validate`: every
    problem is one InputError naming the file (and the row and field).

    Args:
        schema: a pydantic model class or a type.
        path: the file.
        what: what the file holds, for the top-level message.

    Returns:
        The parsed JSON as it is in the file (plain dicts and lists), now known to be of the shape; the fields the
        schema leaves out keep their absence (callers read them with their defaults).

    Example:
        >>> read_json_as(Budgets, "budgets.json")  # doctest: +SKIP
        {'bipolar': '2 epochs'}
    """
    from argsim.schemas import validate

    data = read_json(path)
    validate(schema, data, path, what=what)
    return data


def read_records(path: str | Path, kind: type) -> list[dict]:
    """`read_numbered_records` (CSV/TSV, JSONL or JSON records, each checked against `kind`) without the row numbers."""
    return [rec for _, rec in read_numbered_records(path, kind)]


def read_numbered_records(path: str | Path, kind: type) -> list[tuple[int, dict]]:
    """Read CSV/TSV (header row), JSONL or JSON (a list of objects) into (row, dict) pairs, the row being the one
    argsim's errors name (for CSV the header is row 1), each record checked against `kind` (a record kind of
    `argsim.schemas`) by `argsim.schemas.validate_records`: the first that does not fit is one InputError naming
    file, row and column.

    Args:
        path: the file (.csv, .tsv / .tab (tab-delimited), .jsonl / .ndjson, .json; another suffix is read as CSV).
        kind: the record kind, e.g. `argsim.schemas.TripletRecord`.

    Returns:
        (row, record) pairs, each record a dict of the kind's values (and any other columns as read).

    Example:
        >>> from argsim.schemas import TripletRecord
        >>> read_numbered_records("triplets.jsonl", TripletRecord)  # doctest: +SKIP
        [(1, {'anchor': 'a', 'positive': 'b', 'negative': 'c'})]
    """
    return [rec for chunk in record_chunks(path, kind, rows=sys.maxsize) for rec in chunk]


def record_chunks(path: str | Path, kind: type, rows: int = 50_000) -> Iterator[list[tuple[int, dict]]]:
    """`read_numbered_records` in lists of at most `rows` pairs, CSV/TSV and JSONL read line by line: memory holds
    one chunk, not the file (a .json list is parsed whole). An error is raised when the chunk holding it is reached:
    callers that must refuse before any work count the records first (`count_texts`), then read them again.

    Example:
        >>> from argsim.schemas import text_records
        >>> [len(c) for c in record_chunks("texts.csv", text_records("text"), rows=400)]  # doctest: +SKIP
        [400, 400, 200]
    """
    from argsim.schemas import columns, describe, validate_records

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):  # one line held at a time; a U+2028 inside a JSON string stays in its line
        numbered: Iterable[tuple[int, Any]] = ((n, parse_json(line, path, n)) for n, line in _binary_lines(path)
                                               if line.strip())
    elif suffix == ".json":
        data = read_json(path)
        if not isinstance(data, list):
            raise InputError(path, f"expected a JSON list of records, found {describe(data)}")
        numbered = enumerate(data, start=1)
    else:
        numbered = _csv_records(path, "\t" if suffix in (".tsv", ".tab") else ",", *columns(kind))
    csv_cells, numbered, seen = suffix not in (".jsonl", ".ndjson", ".json"), iter(numbered), False
    while chunk := list(islice(numbered, rows)):
        yield validate_records(kind, chunk, path, csv=csv_cells)
        seen = True
    if not seen:
        raise InputError(path, "no records")


def _csv_records(path: Path, delimiter: str, required: Sequence[str],
                 known: Sequence[str]) -> Iterator[tuple[int, dict]]:
    """The (row, dict) records of a CSV/TSV file with a header row (blank rows skipped), read line by line."""
    # newline="": no translation, as the csv module wants; utf-8-sig: a leading BOM dropped
    with _open_input(path, "r", encoding="utf-8-sig", newline="") as fh:
        # strict: a quote opened and never closed is an error, not the rest of the file read as one field
        reader = csv.reader(fh, delimiter=delimiter, strict=True)
        header: list[str] | None = None
        try:
            for lineno, values in enumerate(reader, start=1):
                if any("\x00" in v for v in values):
                    _refuse_bad_bytes(path)
                if header is None:
                    header = [h.strip().lstrip("\ufeff") for h in values]
                    if (dup := next((h for h in known if header.count(h) > 1), None)) is not None:
                        raise InputError(path, f"column {dup!r} appears twice in the header (which one is meant is "
                                               "unknown)", row=1, column=dup)
                    if missing := [c for c in required if c not in header]:
                        other = next((s for s in ",\t;|" if len(header) == 1 and s != delimiter and s in header[0]),
                                     None)
                        hint = "" if other is None else (f" (the header is one column containing {other!r}: a .csv "
                                                         "file is read comma-separated, a .tsv or .tab file "
                                                         "tab-separated)")
                        raise InputError(path, f"missing column(s) {', '.join(missing)}; found "
                                               f"{', '.join(header)}{hint}", column=missing[0])
                elif values and any(v.strip() for v in values):
                    if len(values) != len(header):
                        raise InputError(path, f"expected {len(header)} fields, found {len(values)}", row=lineno)
                    yield lineno, dict(zip(header, values, strict=True))
        except csv.Error as exc:  # the reader's: `lineno` is the last row read
            if header is not None and "unexpected end of data" in str(exc):
                raise InputError(path, "a quote opened in this row is never closed (the rest of the file would be "
                                       "read as one field)", row=lineno + 1) from None
            raise InputError(path, f"malformed CSV: {exc}", row=1 if header is None else reader.line_num) from None
        except UnicodeDecodeError:
            _refuse_bad_bytes(path)
        if header is None:
            raise InputError(path, "empty file (no header row)")


def _refuse_bad_bytes(path: str | Path) -> NoReturn:
    """The InputError of the first byte of `path` that is not UTF-8 or is NUL, naming it and its line."""
    for _ in _binary_lines(Path(path)):
        pass
    raise InputError(path, "not valid UTF-8 text")  # pragma: no cover - the scan above raises


def warn_duplicate_ids(ids: Sequence[str], path: str | Path, column: str) -> int:
    """One warning line when `ids` repeat (rows keyed by them would be ambiguous); returns how many repeat.

    Args:
        ids: the ids in file order.
        path: the file (for the warning).
        column: the id column.

    Example:
        >>> warn_duplicate_ids(["a", "b"], "in.csv", "id")
        0
    """
    if repeated := [i for i, n in Counter(ids).items() if n > 1]:
        warn(f"{path}: {len(repeated)} value(s) of column '{column}' repeat ({examples(repeated)}); the rows are "
             "kept as given, so those ids name several vectors")
    return len(repeated)


#: the suffixes read as records (columns); any other file is plain text, one text a line
RECORD_SUFFIXES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json")


def read_texts(path: str | Path, column: str = "text") -> list[str]:
    """Texts from CSV/TSV/JSON/JSONL (`column`) or a plain text file (one non-empty text a line)."""
    return list(_texts(path, column, whole=True, rows=sys.maxsize))  # read once (counting first: twice)


def _texts(path: str | Path, column: str, whole: bool, rows: int = 50_000) -> Iterator[str]:
    """The texts of a record file's `column` (validated `rows` records at a time), else of a plain text file
    (`_binary_lines`; a blank line between texts refused); `whole`: a first read (no texts and lone CRs checked)."""
    path = Path(path)
    if path.suffix.lower() in RECORD_SUFFIXES:
        from argsim.schemas import text_records

        yield from (record[column] for chunk in record_chunks(path, text_records(column), rows=rows)
                    for _, record in chunk)
        return
    blank, count, lone_cr = None, 0, 0
    for lineno, line in _binary_lines(path):
        if not line.strip():
            blank = blank or lineno
            continue
        if blank is not None:
            raise InputError(path, "empty text (a blank line between texts would shift the rows)", row=blank)
        count, lone_cr = count + 1, lone_cr + ("\r" in line)
        yield line
    if whole and not count:
        raise InputError(path, "no texts")
    if whole and lone_cr:
        warn(f"{path}: {lone_cr} text(s) hold a carriage return that ends no line (a classic Mac OS line end?): lines "
             "end at LF, so each is read as one text; convert the line ends to LF to split them")


def count_texts(path: str | Path, column: str = "text") -> int:
    """The number of texts of a file (`read_texts`), every one checked while one chunk is held: the check before
    any work of a file then read in chunks (`text_chunks`).

    Example:
        >>> count_texts("texts.csv", column="argument")  # doctest: +SKIP
        1000000
    """
    return sum(1 for _ in _texts(path, column, whole=True))


def text_chunks(path: str | Path, total: int, column: str = "text", rows: int = 50_000) -> Iterator[list[str]]:
    """The texts of a file (checked by `count_texts`, which gave `total`) in lists of at most `rows`, the file read
    line by line (a .json list excepted); a file that changed since it was counted is refused.

    Example:
        >>> [len(c) for c in text_chunks("texts.csv", 1000, "argument", rows=400)]  # doctest: +SKIP
        [400, 400, 200]
    """
    texts, seen = _texts(path, column, whole=False, rows=rows), 0
    while chunk := list(islice(texts, rows)):
        seen += len(chunk)
        yield chunk
    if seen != total:
        raise InputError(path, f"changed while it was read ({seen:,} texts now, {total:,} when checked)")


def canonical_label(value: Any) -> str:
    """One spelling of a label: text NFC-normalised with its outer spaces and zero-width characters dropped, and
    a number written as a number (JSON 1, 1.0, "1", " 1", "1.0" are all "1"); None is "".

    Example:
        >>> [canonical_label(v) for v in (1, 1.0, " 1", "1.0", "Ａ", "a\\u200b")]
        ['1', '1', '1', '1', 'Ａ', 'a']
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    text = topic_key(str(value))  # the same normal form as topics'
    try:
        number = float(text)
    except ValueError:
        return text
    return canonical_label(number) if math.isfinite(number) else text


def topic_key(topic: str) -> str:
    """What makes two topics one: the text in Unicode NFC, without outer spaces or zero-width characters (letter
    case is not folded: `warn_unscorable` names such near misses).

    Example:
        >>> topic_key("Uniforme\u0301s\u200b ") == topic_key("Uniformés")
        True
    """
    # zero-width space / joiners and BOM: invisible, they change no meaning at the ends of a label
    return unicodedata.normalize("NFC", topic).strip().strip("\u200b\u200c\u200d\u2060\ufeff").strip()


def canonical_labels(values: Sequence[Any], where: str, column: str = "label") -> list[str]:
    """`canonical_label` of each value, with one warning line when one label was spelled several ways (counted
    as one label, not several), giving the count and an example.

    Args:
        values: the labels as read (numbers, text).
        where: the file or argument, for the warning.
        column: the column, for the warning.

    Returns:
        The labels, one spelling each.

    Example:
        >>> canonical_labels(["a", "a", "b"], "in.csv")
        ['a', 'a', 'b']
    """
    out = [canonical_label(v) for v in values]
    spellings: dict[str, set] = {}
    for raw, label in zip(values, out, strict=True):
        spellings.setdefault(label, set()).add(repr(raw))
    if merged := {label: sorted(s) for label, s in spellings.items() if len(s) > 1}:
        label, forms = next(iter(merged.items()))
        warn(f"{where}: column '{column}': {len(merged)} label(s) spelled several ways are each read as one label "
             f"(e.g. {', '.join(forms[:3])} as {label!r})")
    return out


def canonical_columns(rows: list[dict], path: str | Path, columns: Sequence[str]) -> list[dict]:
    """`canonical_labels` applied in place to each of `columns` that the records hold (a record without it keeps
    none); returns `rows`."""
    for column in columns:
        present = [r for r in rows if column in r]
        for r, label in zip(present, canonical_labels([r[column] for r in present], str(path), column), strict=True):
            r[column] = label
    return rows
