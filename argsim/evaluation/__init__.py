"""Task evaluators: one per task, each a sentence-transformers evaluator, and the result record they return.

Every evaluator is a `TaskEvaluator` (a sentence-transformers `SentenceEvaluator`): callable on a model (an argsim
encoder, a model name or folder, a `SentenceTransformer`, or a `CrossEncoder` where the task can take one), it
returns a dict of metrics and names its `primary_metric`. The same classes choose checkpoints in training
(`metric_for_best_model`), score models in `argsim evaluate` and answer the API's `evaluate` methods.
`Evaluation` is the result record (named metrics, not an evaluator) that `argsim.results.result_rows` turns
into rows. The evaluators load on first use, so importing the record imports no model library.
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
    module = _EVALUATORS.get(name)
    if module is None:
        raise AttributeError(f"module 'argsim.evaluation' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
