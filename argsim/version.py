"""argsim's version, read from the installed package's metadata (pyproject.toml is its one source); no argsim
imports, so the package face, the results rows and the training records read it without importing each other."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("argsim")
except metadata.PackageNotFoundError:  # a source checkout that was never installed
    __version__ = "0+unknown"
