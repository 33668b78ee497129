"""argsim's version, read from the installed package's metadata (pyproject.toml is its one source), and what else
names the code and command behind a figure or a trained model: the git commit and the command line (no argsim
imports: the package face, the results rows and the training records read them without importing each other)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterable
from contextlib import suppress
from importlib import metadata
from pathlib import Path

try:
    __version__ = metadata.version("argsim")
except metadata.PackageNotFoundError:  # a source checkout that was never installed
    __version__ = "0+unknown"

REPO = Path(__file__).resolve().parent.parent  # the checkout, when argsim is used from one


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """The installed version of each of `names` that is installed (a results row's `packages`, a training
    record's `versions`, a backend's export key).

    Example:
        >>> package_versions(["numpy", "no-such-package"]).keys()
        dict_keys(['numpy'])
    """
    found = {}
    for name in names:
        with suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def git_commit(repo: Path = REPO) -> str | None:
    """The checkout's commit (with `+dirty` when tracked files changed), or None outside a git checkout (argsim
    installed from a wheel: its folder's parent is site-packages, never asked, even inside another repository)."""
    if not (repo / ".git").exists():
        return None
    try:
        head, dirty = (subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10,
                                      check=True).stdout.strip()
                       for args in (["rev-parse", "HEAD"], ["status", "--porcelain", "--untracked-files=no"]))
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def command_line() -> str:
    """The command that produced this process, as typed: `argsim ...` also when run as `python -m argsim.cli.app`
    (for a results file's or a training record's `command`)."""
    argv = list(sys.argv)
    if argv and (argv[0].endswith("argsim") or argv[0].endswith(("argsim/cli/app.py", "argsim.cli.app"))):
        argv[0] = "argsim"
    return shlex.join(argv)
