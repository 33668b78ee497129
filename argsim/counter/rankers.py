"""The ranker registry for best-counter retrieval.

A ranker is a callable ``fn(points: list[Argument], pools: dict[str, list[Argument]], **options)
-> dict[str, np.ndarray]`` returning, for every point id, one score per candidate aligned with
``pools[point.id]`` (higher = better counter). Rankers must accept (and may ignore) unknown ``**options``;
the CLI passes ``model`` (an encoder name / model folder, when given), ``split``/``setting`` (for
caching), ``top_k``, ``gold`` (point id -> true counter id; only for pruning that keeps the true counter's rank
exact, never to score) and every ``--opt key=value``. A ranker may return a dict subclass with attribute
``exact_rank = False`` when scores below its top-k are bounds (then MRR is not reported).

Register with::

    @register_ranker("my-method", help="one line for --help")
    def my_ranker(points, pools, **options): ...

`get_ranker(name)` imports the built-in rankers (`argsim.counter.baselines`, `argsim.counter.ltr`) and,
when installed, `argsim.counter.neural` (whose modules register themselves on import), then looks the name up.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from argsim.errors import ArgsimError

Ranker = Callable[..., dict[str, np.ndarray]]


@dataclass(frozen=True)
class RankerInfo:
    name: str
    fn: Ranker
    help: str


RANKERS: dict[str, RankerInfo] = {}
_BUILTIN_MODULES = ("argsim.counter.baselines", "argsim.counter.simplesd", "argsim.counter.ltr")
_OPTIONAL_MODULES = ("argsim.counter.neural",)


def register_ranker(name: str, help: str = "") -> Callable[[Ranker], Ranker]:  # noqa: A002
    """Decorator: register `fn` under `name` (a later registration of the same name replaces it)."""

    def deco(fn: Ranker) -> Ranker:
        RANKERS[name] = RankerInfo(name=name, fn=fn, help=help or (fn.__doc__ or "").strip().split("\n")[0])
        return fn

    return deco


def load_rankers() -> dict[str, RankerInfo]:
    """Import the built-in and optional ranker modules so they register themselves."""
    for mod in _BUILTIN_MODULES + _OPTIONAL_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:  # the package exists but one of its imports is missing: say so
                warnings.warn(f"{mod} not loaded: {exc}", stacklevel=2)
        except ImportError as exc:
            warnings.warn(f"{mod} not loaded: {exc}", stacklevel=2)
    return RANKERS


def get_ranker(name: str) -> RankerInfo:
    """The registered ranker `name`; `feature:<feature name>` (e.g. `feature:wmd-sum`) ranks by one feature."""
    rankers = load_rankers()
    if name.startswith("feature:"):
        from argsim.counter.simplesd import single_feature_ranker

        return RankerInfo(name=name, fn=single_feature_ranker(name.split(":", 1)[1]), help="one feature")
    if name not in rankers:
        raise ArgsimError(f"unknown ranking method '{name}': choose one of {', '.join(sorted(rankers))}")
    return rankers[name]
