"""`TaskEvaluator`: the base of argsim's task evaluators (a sentence-transformers `SentenceEvaluator`), whose
per-unit outcomes give intervals and paired tests (`resample_primary`, docs/evaluate.md).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
from sentence_transformers.base.evaluation import SentenceEvaluator

from argsim.metrics.record import Evaluation


class TaskEvaluator(SentenceEvaluator):
    """Base class of argsim's task evaluators: subclasses set the class variables below and `primary` (the primary
    metric's unprefixed name), and implement `from_dataset` and `evaluate`.

    `evaluate(model)` takes anything `argsim.backend` resolves into a model: a registered name, a model folder,
    a Hugging Face id in the local cache, an argsim `Encoder`, a `SentenceTransformer`, or (where
    `accepts_cross_encoder`) a `CrossEncoder`.
    """

    #: the task's name in result rows and in `argsim evaluate`'s leaderboard
    task: ClassVar[str] = ""
    #: whether a cross-encoder (a pair scorer) can be scored on this task
    accepts_cross_encoder: ClassVar[bool] = False
    #: whether the task encodes queries and documents apart, so a two-tower model (one tower per role) fits it
    takes_roles: ClassVar[bool] = False

    def __init__(self, name: str, primary: str, config: Any = None, batch_size: int = 64) -> None:
        super().__init__()
        self.name, self.primary, self.config, self.batch_size = name, primary, config, batch_size
        self.primary_metric = primary
        #: one outcome per resampling unit of the last `evaluate` (None before)
        self.unit_values: np.ndarray | None = None

    @classmethod
    @abstractmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None) -> TaskEvaluator:
        """The evaluator on `split` of the task's real dataset (None: its official test split, dev where the data has
        no test labels), the first `limit` units, with the run's `RunConfig` (device, cache, data folder); `name`
        prefixes the metrics (default: the split)."""

    @abstractmethod
    def evaluate(self, model: Any) -> Evaluation:
        """Score `model` on this evaluator's data; keeps the per-unit outcomes of this call (sets `unit_values`, or
        the subclass overrides `resample_primary`)."""

    def __call__(self, model: Any, output_path: str | None = None, epoch: int = -1,
                 steps: int = -1) -> dict[str, float]:
        """`evaluate`'s metrics prefixed with `name`: a trainer picks checkpoints by
        `metric_for_best_model = f"eval_{name}_{primary}"`."""
        self.primary_metric = self.primary
        metrics = self.prefix_name_to_metrics(dict(self.evaluate(model).metrics), self.name)
        if hasattr(model, "model_card_data"):  # a sentence-transformers model under training: its card records them
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics

    def _encoder(self, model: Any) -> Any:
        """`model` as an embedding model (`resolve_model`, no cross-encoder) with the evaluator's options."""
        from argsim.backend.resolve import resolve_model

        return resolve_model(model, self.config, cross_encoder=False, batch_size=self.batch_size)

    def _evaluated(self, value: Any) -> Any:
        """`value` (what `evaluate` kept), or a RuntimeError when no model was evaluated yet."""
        if value is None:
            raise RuntimeError(f"{type(self).__name__}: evaluate a model before resampling")
        return value

    @staticmethod
    def _per_draw(draws: np.ndarray, metric: Any) -> np.ndarray:
        """`metric(row)` of each row of `draws` (unit indices; one draw may be given as a flat array)."""
        return np.array([metric(d) for d in np.atleast_2d(np.asarray(draws, dtype=np.int64))])

    @property
    def n_units(self) -> int:
        """How many resampling units the last `evaluate` scored."""
        return len(self._evaluated(self.unit_values))

    def resample_primary(self, draws: np.ndarray) -> np.ndarray:
        """The primary metric on each row of `draws` (an (n_boot, n_units) array of unit indices): the mean of
        `unit_values` (metrics that are not means of units, mAP and AMI/ARI, override it)."""
        return np.asarray(self._evaluated(self.unit_values), dtype=np.float64)[np.asarray(draws)].mean(axis=1)
