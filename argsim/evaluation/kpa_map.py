"""`KPAMapEvaluator`: key point matching (ArgKP-2021, KPA-2021 Track 1) scored by the official mAP.

Friedman et al., "Overview of the 2021 Key Point Analysis Shared Task", ArgMining 2021, section 4: strict
(undecided pairs negative) and relaxed (undecided positive) mAP as the organisers' script computes them
(`argsim.metrics.kpa_map.evaluate_map`; the `leaderboard` formula by default, the one behind every published figure).

Besides the mAPs: the F1-best decision threshold of the model's scores (`threshold`, `f1_at_threshold`; the rule:
docs/kpm.md, `argsim.kpm.threshold`). Reading: only labelled pairs count (unlabelled "undecided" pairs are left out).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from argsim.backend.resolve import kept_mode
from argsim.data.argkp import KPMData, load_argkp, split_files
from argsim.data.catalog import dataset_dir
from argsim.errors import ArgsimError, check_choice
from argsim.evaluation.base import TaskEvaluator
from argsim.metrics.kpa_map import FORMULAS, ArgumentRows, Predictions, best_key_points, evaluate_map, f1_threshold
from argsim.metrics.record import Evaluation


class KPAMapEvaluator(TaskEvaluator):
    """The official KPA-2021 Track 1 strict / relaxed mAP of a key point matcher, and its F1-best threshold.

    How a model scores the (argument, key point) pairs of its topic and stance:
    - a model name or folder (the shipped `kpm`, a trained SBERT, MTS or cross-encoder folder): as
      `argsim rank keypoints --model` scores it (`argsim.kpm.ensemble.score_model`: cosine, or a cross-encoder
      folder's probability in the input format it was trained with);
    - an argsim `Encoder` or a `SentenceTransformer`: the cosine of its embeddings (`argsim.kpm.scoring`);
    - a `CrossEncoder` object: its score of (argument text, key point text);
    - `score`, when given: that function of the model (a trainer's own pair format).

    Resampling unit: the argument. `resample_primary` recomputes the strict mAP on the drawn arguments (a repeat
    is one more row of its group, so its group's top-half cut counts it twice).

    Args:
        gold: labelled ArgKP-format data (`argsim.data.argkp.load_argkp("dev")`, `kpm_data`).
        name: the metrics' prefix when called as a sentence-transformers evaluator.
        config: the run options of models loaded by name (device, cache, quiet); None: the defaults.
        formula: ``"leaderboard"`` or ``"2021-09"`` (`argsim.metrics.kpa_map`).
        arg_template, kp_template: how a plain encoder sees a statement (fields {text}, {topic}, {stance}).
        batch_size: texts or pairs per forward pass of a model object.
        score: a function model -> {arg_id: {kp_id: score}} replacing the scoring above.

    Returns (`evaluate`):
        An `Evaluation` with ``strict_map`` (primary), ``relaxed_map``, ``threshold`` and ``f1_at_threshold``.

    Example:
        >>> from argsim.data.argkp import load_argkp
        >>> ev = KPAMapEvaluator(load_argkp("dev").subset(["We should abandon the use of school uniform"]))
        >>> round(ev.evaluate("minilm")["strict_map"], 4)
        0.8882
    """

    task: ClassVar[str] = "kpa-map"
    accepts_cross_encoder: ClassVar[bool] = True

    def __init__(self, gold: KPMData, name: str = "dev", config: Any = None, formula: str = "leaderboard",
                 arg_template: str = "{text}", kp_template: str = "{text}", batch_size: int = 64,
                 score: Any = None) -> None:
        super().__init__(name, "strict_map", config, batch_size)
        if not gold.has_labels:
            raise ArgsimError(f"{gold.name}: the key point evaluation needs gold labels")
        check_choice(formula, "formula", FORMULAS)
        self.gold, self.formula, self.arg_template, self.kp_template = gold, formula, arg_template, kp_template
        self.score = score
        self.rows: ArgumentRows | None = None
        self.predictions: Predictions | None = None

    @classmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None) -> KPAMapEvaluator:
        """ArgKP `split` (None: `test` where its labels are present, else `dev`), its first `limit` arguments."""
        data_dir = getattr(config, "data_dir", None)
        split = split or ("test" if split_files(dataset_dir("argkp", data_dir), "test")[2].is_file() else "dev")
        gold = load_argkp(split, data_dir)
        if limit is not None:
            args = gold.arguments[:limit]
            ids = {a.arg_id for a in args}
            gold = KPMData(f"{gold.name}[:{limit}]", args, gold.key_points,
                           {p: v for p, v in gold.labels.items() if p[0] in ids}, gold.files)
        return cls(gold, name=name or split, config=config)

    def evaluate(self, model: Any) -> Evaluation:
        from argsim.kpm.ensemble import score_model

        with kept_mode(model):  # {arg_id: {kp_id: score}} of `model` on the gold arguments (the class docstring)
            preds = self.score(model) if self.score is not None else score_model(
                self.gold, model, self.config, self.arg_template, self.kp_template)
        result = evaluate_map(preds, self.gold, formula=self.formula)
        threshold, f1 = f1_threshold(preds, self.gold.labels)
        self.predictions = preds
        self.rows = ArgumentRows.build(best_key_points(preds, set(self.gold.kp_by_id))[0], self.gold)
        self.unit_values = np.arange(len(self.gold.arguments), dtype=np.float64)  # unit = argument (row index)
        return Evaluation(self.task, {"strict_map": result.strict, "relaxed_map": result.relaxed,
                                      "threshold": threshold, "f1_at_threshold": f1}, "strict_map",
                          data=self.gold.name, n=result.arguments,
                          details={"formula": self.formula, "dummies": result.dummies})

    def resample_primary(self, draws: np.ndarray) -> np.ndarray:
        rows = self._evaluated(self.rows)
        return self._per_draw(draws, lambda d: rows.mean_ap(d, formula=self.formula))

    def get_config_dict(self) -> dict:
        return {"gold": self.gold.name, "formula": self.formula}
