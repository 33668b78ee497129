"""User-facing errors: the CLI prints them as one line and exits with code 2."""

from __future__ import annotations

import difflib
import errno
import numbers
import sys
from collections.abc import Iterable
from pathlib import Path


class ArgsimError(Exception):
    """An error caused by the user's input or environment, shown without a traceback."""

    exit_code = 2


#: the longest error line argsim prints: a message quoting the user's input (a header of one 10 MB line, a
#: name thousands of characters long) is cut, so the line stays one readable line
MAX_MESSAGE = 600


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """`message` as one line of at most about `limit` characters: line breaks become spaces, and a longer
    message keeps its head and its tail (where a message says what to do) around a count of what was cut.

    Example:
        >>> one_line("a\\nb")
        'a b'
        >>> len(one_line("x" * 10_000)) < 700
        True
    """
    text = " ".join(str(message).split("\n"))
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3):]
    return f"{head} [... {len(text) - len(head) - len(tail):,} characters ...] {tail}"


class InputError(ArgsimError):
    """Bad input data: names the file and, where it applies, the row and column (CSV) or field (JSON: a dotted
    path such as `rows.3.value`)."""

    def __init__(self, path: str | Path | None, problem: str, row: int | None = None,
                 column: str | None = None, field: str | None = None) -> None:
        where = str(path) if path is not None else "<input>"
        for value, form in ((row, ", row {}"), (column, ", column '{}'"), (field, ", field '{}'")):
            where += form.format(value) if value is not None else ""
        super().__init__(one_line(f"{where}: {problem}"))
        self.path, self.row, self.column, self.problem = path, row, column, problem


class ModelError(ArgsimError):
    """Unknown or unloadable model."""


class BackendError(ArgsimError):
    """An inference backend / quantization / device / precision combination that cannot run."""


class DataLayoutError(ArgsimError):
    """A dataset folder that does not have the expected layout."""


def warn(message: str) -> None:
    """A one-line warning on stderr for input that is valid but suspicious (counts and a few example ids)."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def examples(ids: list, n: int = 3) -> str:
    """`a, b, c, ...`: the first `n` ids for a warning line."""
    return ", ".join(str(i) for i in ids[:n]) + (", ..." if len(ids) > n else "")


def nearest(name: str, choices: Iterable[str]) -> str | None:
    """The valid name the user most likely meant by `name`: one equal but for letter case, spaces, `-` and `_`
    first, else the closest by `difflib` (ratio >= 0.6); None when nothing is close.

    Args:
        name: what was given.
        choices: the valid names.

    Returns:
        The nearest valid name, or None.

    Example:
        >>> nearest("KPM", ["kpm", "minilm"])
        'kpm'
    """
    def fold(text: str) -> str:
        return "".join(text.split()).casefold().replace("_", "-")

    folded = {fold(c): c for c in reversed([str(c) for c in choices])}  # the first choice of each folding
    key = fold(str(name))
    close = [key] if key in folded else difflib.get_close_matches(key, folded, n=1)
    return folded[close[0]] if close else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`" (did you mean 'x'?)"` for `nearest(name, choices)`, else `""`: the tail of an unknown-name message.

    Example:
        >>> did_you_mean("minlm", ["minilm", "mpnet"])
        " (did you mean 'minilm'?)"
    """
    match = nearest(name, choices)
    return f" (did you mean '{match}'?)" if match is not None and match != name else ""


def check_count(value: object, name: str, minimum: int = 1) -> int:
    """`value` if it is a whole number of at least `minimum`, else an ArgsimError naming `name`: what the Python
    API does with a count the command line would have parsed as an integer option.

    Example:
        >>> check_count(3, "k")
        3
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ArgsimError(f"{name} must be a whole number of at least {minimum}, not {value!r}")
    return int(value)


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    """`value` if it is one of `choices`, else an ArgsimError naming `name`, the nearest choice and all of them.

    Example:
        >>> check_choice("cosine", "distance", ("cosine", "l1"))
        'cosine'
    """
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        raise ArgsimError(f"unknown {name} {value!r}{hint}: choose one of {', '.join(choices)}")
    return value


def environment_problem(exc: BaseException) -> str | None:
    """One line for a fault of the machine rather than of argsim (a full disk, a read-only or forbidden folder,
    a quota, no home folder); None for anything else.

    Example:
        >>> environment_problem(OSError(28, "No space left on device", "out.json"))
        'out.json: no space left on device'
    """
    if isinstance(exc, RuntimeError) and "home directory" in str(exc):
        return ("no home folder: HOME is not set and this user has no entry in the password database; set HOME, or "
                "give --cache-dir, --data-dir and --workdir")
    if not isinstance(exc, OSError):
        return None
    what = {errno.ENOSPC: "no space left on device", errno.EROFS: "read-only file system",
            errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
            errno.EDQUOT: "disk quota exceeded", errno.EMFILE: "too many open files",
            errno.ENOMEM: "out of memory"}.get(exc.errno)
    return f"{exc.filename}: {what}" if what and exc.filename else what
