"""The official KPA-2021 Track 1 mAP as a sentence-transformers evaluator.

`KPAMapEvaluator(gold)` is a callable on a SentenceTransformer that returns `{"<name>_strict_map": ...,
"<name>_relaxed_map": ...}` with `primary_metric` = the strict mAP: every argument scored against the key points
of its topic and stance by cosine (as `rank keypoints` scores a bi-encoder), then `argsim.metrics.kpa_map`
(leaderboard formula). Handed to `SentenceTransformerTrainer(evaluator=...)` with `eval_strategy="steps"`, it
runs every `eval_steps`; `argsim.training.st.fit_st(select="eval_<name>_strict_map")` keeps the weights that
scored best, by transformers' own `load_best_model_at_end` (a LoRA model's best checkpoint, which holds only the
adapter, is read back by `argsim.backend.adapters.adapter_checkpoint_loader`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sentence_transformers.base.evaluation import BaseEvaluator

from argsim.backend.encoder import Encoder
from argsim.data.argkp import KPMData
from argsim.metrics.kpa_map import evaluate_map


class _LiveEncoder(Encoder):
    """An Encoder over a model being trained: no disk cache (its weights change), no progress bars."""

    def __init__(self, model, batch_size: int = 64) -> None:
        super().__init__()
        self.model, self.batch_size, self.name, self.identity = model, batch_size, "training", ""
        self.configure(use_cache=False, quiet=True)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                 show_progress_bar=False).astype(np.float32, copy=False)


class KPAMapEvaluator(BaseEvaluator):
    """Official KPA Track 1 mAP (leaderboard formula) of a model being trained, on labelled ArgKP data.

    Args:
        gold: the labelled split to score (e.g. ArgKP dev).
        name: the metrics' prefix.
        batch_size: encoding batch size (of the default bi-encoder scoring).
        score: how a model scores the (argument, key point) pairs of `gold`, as `{arg_id: {kp_id: score}}`;
            None: a bi-encoder's cosine within each topic and stance (as `rank keypoints` scores one). The key point
            cross-encoder passes its own pair scorer (`argsim.kpm.cross.map_evaluator`).

    Returns (when called on a model):
        {"<name>_strict_map": float, "<name>_relaxed_map": float}; `primary_metric` is the strict mAP.

    Example:
        >>> ev = KPAMapEvaluator(load_argkp("dev"))  # doctest: +SKIP
        >>> ev(SentenceTransformer(folder))["dev_strict_map"]  # doctest: +SKIP
        0.82...
    """

    def __init__(self, gold: KPMData, name: str = "dev", batch_size: int = 64,
                 score: Callable[[Any], dict[str, dict[str, float]]] | None = None) -> None:
        super().__init__()
        if not gold.has_labels:
            from argsim.errors import ArgsimError

            raise ArgsimError(f"{gold.name}: the evaluator needs gold labels")
        self.gold, self.name, self.batch_size = gold, name, batch_size
        self.score = score or self._bi_encoder_scores
        self.primary_metric = "strict_map"

    def _bi_encoder_scores(self, model) -> dict[str, dict[str, float]]:
        from argsim.kpm.scoring import score_key_points

        return score_key_points(self.gold, _LiveEncoder(model, self.batch_size))

    def __call__(self, model, output_path: str | None = None, epoch: int = -1,
                 steps: int = -1) -> dict[str, float]:
        was_training = model.training
        try:
            result = evaluate_map(self.score(model), self.gold)
        finally:
            model.train(was_training)
        metrics = self.prefix_name_to_metrics({"strict_map": result.strict, "relaxed_map": result.relaxed},
                                              self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics

    def get_config_dict(self) -> dict:
        return {"gold": self.gold.name, "formula": "leaderboard"}

