"""Where a run writes by default: the work folder, never the installed package.

Default outputs of commands (`runs/...`, `models/...`), the results files, LTR models, feature caches and word2vec
models all live under it (`workdir`); an explicit path given by the user is used as given.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path

_WORKDIR: ContextVar[Path | None] = ContextVar("argsim_workdir", default=None)


def set_workdir(path: str | Path | None) -> None:
    """Set the work folder of this run (the CLI does it once from `--workdir` / `$ARGSIM_HOME`)."""
    _WORKDIR.set(Path(path).expanduser() if path else None)


def workdir(explicit: str | Path | None = None) -> Path:
    """`explicit`, else the run's `--workdir`, else `$ARGSIM_HOME`, else the current directory."""
    if explicit:
        return Path(explicit).expanduser()
    if (chosen := _WORKDIR.get()) is not None:
        return chosen
    env = os.environ.get("ARGSIM_HOME")
    return Path(env).expanduser() if env else Path.cwd()


def under_workdir(path: str | Path) -> Path:
    """A relative `path` placed in the work folder; an absolute one unchanged."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else workdir() / path


def results_dir() -> Path:
    """`<workdir>/bench/results`: the results files `argsim report` renders."""
    return workdir() / "bench" / "results"
