"""Task evaluators: one `TaskEvaluator` (a sentence-transformers `SentenceEvaluator`, `argsim.evaluation.base`) per
task, and `Evaluation`, the result record they return (named metrics) that `argsim.results.result_rows` turns into
rows. The evaluators load on first use, so importing the record imports no model library.
"""

from __future__ import annotations

import importlib
from typing import Any

from argsim.metrics.record import Evaluation

#: public evaluator name -> the module that defines it (imported on first access)
_EVALUATORS: dict[str, str] = {
    "TaskEvaluator": "argsim.evaluation.base",
    "KPAMapEvaluator": "argsim.evaluation.kpa_map",
    "CounterArgumentEvaluator": "argsim.evaluation.counter",
    "TripletEvaluator": "argsim.evaluation.triplets",
    "ClusteringEvaluator": "argsim.evaluation.clustering",
    "SICKEvaluator": "argsim.evaluation.sick",
    "ArguAnaEvaluator": "argsim.evaluation.arguana",
}

__all__ = ["Evaluation", *_EVALUATORS]


def __getattr__(name: str) -> Any:
    if (module := _EVALUATORS.get(name)) is None:
        raise AttributeError(f"module 'argsim.evaluation' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
