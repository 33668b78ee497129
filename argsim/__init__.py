"""argsim: argument-similarity research toolkit (one CLI, one embedding backend, five papers).

The Python API takes and returns plain lists, pandas DataFrames and numpy arrays:

    >>> import argsim
    >>> argsim.encode(["Tax the rich.", "Lower taxes."]).shape
    (2, 384)

Public names (see docs/python-api.md): `load_dataset`, `encode`, `KeyPointMatcher`, `CounterRetriever`,
`cluster_sentences`, `summarize_minutes` / `summarize_minutes_frame` (with their `SummarizeOptions`), `evaluate`
(every task's benchmark as a DataFrame), the metrics `kpa_map`, `accuracy_at_1`, `triplet_accuracy`, `rouge1`,
`RunConfig` (device, seed, cache folder, ... of a run) and `mteb_tasks` (argsim's tasks as MTEB task objects; needs
the `mteb` extra). They load on first use: `import argsim` itself imports neither torch nor pandas.

Importing argsim changes nothing global: offline use (HF_HUB_OFFLINE=1) is the environment's choice (the Makefile
and the tests set it); the `argsim` command itself sets TOKENIZERS_PARALLELISM=false unless it is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from argsim.extras import lazy_exports
from argsim.version import __version__

#: public name -> the module that defines it (imported on first access)
_EXPORTS = {
    "load_dataset": "argsim.api.datasets",
    "encode": "argsim.api.encode",
    "encode_query": "argsim.api.encode",
    "encode_document": "argsim.api.encode",
    "KeyPointMatcher": "argsim.api.kpm",
    "CounterRetriever": "argsim.api.counter",
    "cluster_sentences": "argsim.api.thematic",
    "summarize_minutes": "argsim.api.minutes",
    "summarize_minutes_frame": "argsim.api.minutes",
    "kpa_map": "argsim.api.metrics",
    "accuracy_at_1": "argsim.api.metrics",
    "triplet_accuracy": "argsim.api.metrics",
    "rouge1": "argsim.api.metrics",
    "RunConfig": "argsim.config",
    "SummarizeOptions": "argsim.minutes.summarize",
    "mteb_tasks": "argsim.evaluation.mteb_tasks",
    "evaluate": "argsim.api.evaluate",
}

__all__ = ["CounterRetriever", "KeyPointMatcher", "RunConfig", "SummarizeOptions", "__version__", "accuracy_at_1",
           "cluster_sentences", "encode", "encode_document", "encode_query", "evaluate", "kpa_map", "load_dataset",
           "mteb_tasks", "rouge1", "summarize_minutes", "summarize_minutes_frame", "triplet_accuracy"]

if TYPE_CHECKING:  # pragma: no cover
    from argsim.api.counter import CounterRetriever
    from argsim.api.datasets import load_dataset
    from argsim.api.encode import encode, encode_document, encode_query
    from argsim.api.evaluate import evaluate
    from argsim.api.kpm import KeyPointMatcher
    from argsim.api.metrics import accuracy_at_1, kpa_map, rouge1, triplet_accuracy
    from argsim.api.minutes import summarize_minutes, summarize_minutes_frame
    from argsim.api.thematic import cluster_sentences
    from argsim.config import RunConfig
    from argsim.evaluation.mteb_tasks import mteb_tasks
    from argsim.minutes.summarize import SummarizeOptions

# a public name's module is imported on first access, so `import argsim` stays cheap; dir(): the public names only
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
