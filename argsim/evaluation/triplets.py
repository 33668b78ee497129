"""`TripletEvaluator`: triplet accuracy of an embedding model on thematic or minutes triplets.

A triplet (anchor, positive, negative) is correct when the anchor is closer to the positive than to the negative:
cos(a, p) - cos(a, n) > 0 (`argsim.metrics.triplets`). An exact tie counts as wrong, the reading of Ein Dor et al.,
"Learning Thematic Similarity Metric from Article Sections Using Triplet Networks", ACL 2018, section 4 (accuracy
= share of triplets whose positive is strictly closer); `ties` reports how many there were. (The minutes paper's
Table 4 counts a tie correct; pass ``ties="correct"`` for that reading.)

Data (`from_dataset`): the Wikipedia triplets as `argsim data triplets wikipedia` builds them, or the triplets
`argsim data triplets minutes` mines from the PoliInfo assembly minutes (Shirafuji et al., section 3.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from argsim.data.catalog import dataset_dir
from argsim.errors import ArgsimError, check_choice
from argsim.evaluation.base import TaskEvaluator
from argsim.io import read_records
from argsim.metrics.record import Evaluation
from argsim.metrics.triplets import TIES, TRIPLET_FIELDS, encoded_triplet_scores
from argsim.paths import under_workdir
from argsim.schemas import TripletRecord
from argsim.thematic.build import first_test_triplets

DATASETS = ("wikipedia", "minutes")
#: where `argsim data triplets minutes` writes by default (under the work folder)
MINUTES_DIR = Path("runs") / "minutes-triplets"


class TripletEvaluator(TaskEvaluator):
    """Triplet accuracy (primary) and mean margin cos(a, p) - cos(a, n) of an embedding model.

    Resampling unit: the triplet (its 0/1 outcome).

    Args:
        triplets: records with fields anchor, positive and negative.
        name: the metrics' prefix when called as a sentence-transformers evaluator (and the reported data).
        distance: ``"cosine"`` (the papers'), ``"l1"`` or ``"euclidean"``.
        ties: an exactly tied triplet is ``"wrong"`` (default, see the module docstring) or ``"correct"``.
        config: the run options of a model loaded by name (device, cache, quiet).
        batch_size: texts per forward pass of a model object.

    Returns (`evaluate`):
        An `Evaluation` with ``accuracy`` (primary) and ``mean_diff``; the tie count in `details`.

    Example:
        >>> ev = TripletEvaluator([{"anchor": "The striker scored.", "positive": "The team won the final.",
        ...                         "negative": "Parliament passed the budget."}])
        >>> ev.evaluate("minilm")["accuracy"]
        1.0
    """

    task: ClassVar[str] = "triplets"

    def __init__(self, triplets: Sequence[Mapping[str, Any]], name: str = "test", distance: str = "cosine",
                 ties: str = "wrong", config: Any = None, batch_size: int = 64) -> None:
        super().__init__(name, "accuracy", config, batch_size)
        self.triplets = list(triplets)
        if not self.triplets:
            raise ArgsimError(f"{name}: no triplets to score")
        if missing := [f for f in TRIPLET_FIELDS if f not in self.triplets[0]]:
            raise ArgsimError(f"{name}: triplets need the fields anchor, positive and negative (missing "
                              f"{', '.join(missing)})")
        check_choice(ties, "ties", TIES)
        self.distance, self.ties = distance, ties

    @classmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None, dataset: str = "wikipedia",
                     folder: str | Path | None = None) -> TripletEvaluator:
        """The first `limit` triplets of `split` (None: test) of `dataset` (``"wikipedia"`` or ``"minutes"``);
        `folder`: for minutes, the folder `argsim data triplets minutes --out` wrote (default
        ``runs/minutes-triplets`` in the work folder)."""
        split = split or "test"
        check_choice(dataset, "triplet dataset", DATASETS)
        if dataset == "wikipedia":
            rows = first_test_triplets(dataset_dir("wikipedia", getattr(config, "data_dir", None)), limit, split=split)
        else:
            path = Path(folder or under_workdir(MINUTES_DIR)) / f"{split}.jsonl"
            if not path.is_file():
                raise ArgsimError(f"{path} is missing: mine the minutes triplets first (`argsim data triplets "
                                  f"minutes --out {path.parent}`)")
            rows = read_records(path, TripletRecord)[:limit]
        return cls(rows, name=name or split, config=config)

    def evaluate(self, model: Any) -> Evaluation:
        scores = encoded_triplet_scores(self._encoder(model), self.triplets, self.distance, self.ties)
        self.unit_values = scores.correct.astype(np.float64)  # per triplet
        return Evaluation(self.task, {"accuracy": scores.accuracy, "mean_diff": scores.mean_diff}, "accuracy",
                          data=self.name, n=scores.n,
                          details={"ties": scores.ties, "tie_rule": self.ties, "distance": self.distance})

    def get_config_dict(self) -> dict:
        return {"triplets": len(self.triplets), "distance": self.distance, "ties": self.ties}
