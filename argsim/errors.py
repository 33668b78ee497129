"""User-facing errors: the CLI prints them as one line and exits with code 2."""

from __future__ import annotations

from pathlib import Path


class ArgsimError(Exception):
    """An error caused by the user's input or environment, shown without a traceback."""

    exit_code = 2


class InputError(ArgsimError):
    """Bad input data: names the file and, where it applies, the row and column."""

    def __init__(self, path: str | Path | None, problem: str, row: int | None = None,
                 column: str | None = None) -> None:
        where = str(path) if path is not None else "<input>"
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column '{column}'"
        super().__init__(f"{where}: {problem}")
        self.path, self.row, self.column, self.problem = path, row, column, problem


class ModelError(ArgsimError):
    """Unknown or unloadable model."""


class BackendError(ArgsimError):
    """An inference backend / quantization / device / precision combination that cannot run."""


class DataLayoutError(ArgsimError):
    """A dataset folder that does not have the expected layout."""


def warn(message: str) -> None:
    """A one-line warning on stderr for input that is valid but suspicious (counts and a few example ids)."""
    import sys

    print(f"warning: {message}", file=sys.stderr, flush=True)


def examples(ids: list, n: int = 3) -> str:
    """`a, b, c, ...`: the first `n` ids for a warning line."""
    shown = ", ".join(str(i) for i in ids[:n])
    return shown + (", ..." if len(ids) > n else "")
