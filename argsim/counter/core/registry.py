"""The ranker registry for best-counter retrieval.

A ranker is ``fn(points, pools, **options)`` returning, per point id, one score per candidate aligned with
``pools[point.id]`` (higher = better counter). It accepts (and may ignore) unknown options: ``model``,
``split``/``setting`` (for caching), ``top_k``, ``gold`` (point id -> true counter id; only for pruning that keeps
the true counter's rank exact, never to score) and every ``--opt key=value``; it returns a `ScoreDict` with
``exact_rank=False`` when scores below its top k are bounds (then MRR is not reported). Rankers register with
``@register_ranker(name, help=...)``, a family `<prefix>:<argument>` (e.g. `feature:wmd-sum`) as a factory
`RANKER_FAMILIES[prefix]` (argument -> ranker); `get_ranker(name)` imports the ranker modules (`load_rankers`), which
register themselves, so no ranker module is imported at this module's top.
"""

from __future__ import annotations

import importlib
import inspect
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
RANKER_FAMILIES: dict[str, Callable[[str], Ranker]] = {}  # prefix -> factory of the rankers `<prefix>:<argument>`
_BUILTIN_MODULES = ("argsim.counter.lexical.baselines", "argsim.counter.lexical.simplesd", "argsim.counter.ltr.rankers")
_OPTIONAL_MODULES = ("argsim.counter.neural",)


def register_ranker(name: str, help: str = "") -> Callable[[Ranker], Ranker]:
    """Decorator: register `fn` under `name` (a later registration of the same name replaces it)."""

    def deco(fn: Ranker) -> Ranker:
        RANKERS[name] = RankerInfo(name=name, fn=fn, help=help or (fn.__doc__ or "").strip().split("\n")[0])
        return fn

    return deco


class ScoreDict(dict):
    """Scores per point plus whether ranks below the top-k are exact (pruned scores are upper bounds)."""

    def __init__(self, scores: dict, exact_rank: bool = True, stats: dict | None = None) -> None:
        super().__init__(scores)
        self.exact_rank = exact_rank
        self.stats = stats or {}


#: options `run_ranker` passes itself; not `--opt` keys
RUN_OPTIONS = ("split", "setting", "gold", "top_k", "engine", "precision", "config")


def ranker_options(info: RankerInfo) -> list[str]:
    """The `--opt` keys a ranker understands: the keyword parameters of its function after (points, pools), less
    those `run_ranker` passes itself. Rankers swallow unknown keys (`**_`), so this list is what catches typos."""
    params = list(inspect.signature(info.fn).parameters.values())[2:]
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in params if p.kind in kinds and p.name not in RUN_OPTIONS]


def load_rankers() -> dict[str, RankerInfo]:
    """Import the built-in and optional ranker modules so they register themselves."""
    for mod in _BUILTIN_MODULES + _OPTIONAL_MODULES:
        try:
            importlib.import_module(mod)
        except ImportError as exc:  # silent only when the package itself is absent, not one of its imports
            if not (isinstance(exc, ModuleNotFoundError) and exc.name == mod):
                warnings.warn(f"{mod} not loaded: {exc}", stacklevel=2)
    return RANKERS


def get_ranker(name: str) -> RankerInfo:
    """The registered ranker `name`; `feature:<feature name>` (e.g. `feature:wmd-sum`) ranks by one feature."""
    rankers = load_rankers()
    prefix, sep, argument = name.partition(":")
    if sep and prefix in RANKER_FAMILIES:
        return RankerInfo(name=name, fn=RANKER_FAMILIES[prefix](argument), help=f"one {prefix}")
    if name not in rankers:
        raise ArgsimError(f"unknown ranking method '{name}': choose one of {', '.join(sorted(rankers))}")
    return rankers[name]
