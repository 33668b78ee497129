"""The result record of an evaluation: named metric values with a `primary_metric` (not an evaluator).

What a task evaluator (`argsim.evaluation.TaskEvaluator`) or a metric function measured is handed over as an
`Evaluation` (triplet accuracy, KPA mAP, accuracy@1/K, clustering agreement, ROUGE-1, SICK relatedness, a
benchmark's measurements); `argsim.results.result_rows` is the one function that turns any of them into result
rows. This module imports nothing from argsim, so metrics may return it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, eq=False)
class Evaluation(Mapping[str, float]):
    """Named metric values of one task on one data set.

    `task` names the evaluation (e.g. "triplets", "kpa-map"), `data` what it reports on (a split, a file stem),
    `n` how many items it scored; `details` holds facts that are not metrics (tie counts, over-limit counts).
    Iterating yields the metric names in insertion order; `ev["accuracy"]` is a value."""

    task: str
    metrics: Mapping[str, float]
    primary_metric: str
    data: str | None = None
    n: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.primary_metric not in self.metrics:
            raise ValueError(f"{self.task}: primary metric {self.primary_metric!r} is not among "
                             f"{', '.join(self.metrics) or 'no metrics'}")
        object.__setattr__(self, "metrics", {k: float(v) for k, v in self.metrics.items()})

    def __getitem__(self, name: str) -> float:
        return self.metrics[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Evaluation):
            return NotImplemented
        return (self.task, dict(self.metrics), self.primary_metric, self.data, self.n, dict(self.details)) == (
            other.task, dict(other.metrics), other.primary_metric, other.data, other.n, dict(other.details))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking mapping: not hashable

    @classmethod
    def single(cls, task: str, metric: str, value: float, data: str | None = None, n: int | None = None,
               details: Mapping[str, Any] | None = None) -> Evaluation:
        """An evaluation of one measured figure (a count, a throughput, a duration)."""
        return cls(task, {metric: value}, metric, data=data, n=n, details=details or {})

    @property
    def primary(self) -> float:
        """The value of the primary metric."""
        return self.metrics[self.primary_metric]
