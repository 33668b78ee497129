"""Task evaluators: one `TaskEvaluator` (a sentence-transformers `SentenceEvaluator`, `argsim.evaluation.base`) per
task, and `Evaluation`, the result record they return (named metrics) that `argsim.results.result_rows` turns into
rows. The evaluators load on first use, so importing the record imports no model library.
"""

from __future__ import annotations

from argsim.extras import lazy_exports
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
__getattr__, __dir__ = lazy_exports(__name__, _EVALUATORS, globals())
