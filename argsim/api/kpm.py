"""`KeyPointMatcher`: key point matching (KPA-2021 Track 1) as a library object, scored as `argsim rank keypoints`
scores (`argsim.kpm.rank.rank_keypoints`, the function the command calls), trained with the recommended Siamese
SBERT recipe, evaluated with the official mAP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from argsim.backend.folders import check_model_name
from argsim.backend.names import default_model
from argsim.backend.resolve import resolve_model
from argsim.config import RunConfig
from argsim.data.argkp import KPMData, kpm_data, load_argkp
from argsim.errors import ArgsimError
from argsim.kpm.ensemble import check_weights
from argsim.paths import workdir

if TYPE_CHECKING:
    from argsim.kpm.rank import KeypointRanking
    from argsim.metrics.record import Evaluation
    from argsim.trainers.kpm_sbert import SbertConfig

MATCH_COLUMNS = ["arg_id", "argument", "topic", "stance", "key_point_id", "key_point", "score", "matched"]


def _records(items: Any, text_col: str, id_col: str, prefix: str, topic: str | None,
             stance: int) -> list[tuple[int, dict]]:
    """Texts or a frame -> numbered records; a missing column takes ids a0.. / k0.., `topic` and `stance`."""
    rows = items.to_dict("records") if hasattr(items, "columns") else [
        {text_col: t} for t in ([items] if isinstance(items, str) else items)]  # a non-text item: refused
    return [(i + 1, {id_col: f"{prefix}{i}", "topic": topic or "", "stance": stance, **row})
            for i, row in enumerate(rows)]


def match_inputs(arguments: Any, key_points: Any, topic: str | None = None, stance: int = 1,
                 name: str = "input") -> KPMData:
    """`KeyPointMatcher.match`'s inputs (see its Args) as the loader's `KPMData` (no labels), through the builder
    the CLI's files go through (`argsim.data.argkp.kpm_data`: the same refusals and warnings)."""
    return kpm_data(("arguments", _records(arguments, "argument", "arg_id", "a", topic, stance)),
                    ("key points", _records(key_points, "key_point", "key_point_id", "k", topic, stance)), name=name)


def split_data(split: Any, data_dir: str | Path | None = None, name: str = "dataframe") -> KPMData:
    """A labelled ArgKP split as `argsim.data.argkp.kpm_data` builds it: a split name (``"dev"``, read from
    `data_dir`), a `KPMData` as it is, or a frame of (argument, key point) pairs as `load_dataset("argkp")` returns
    them (the arguments and key points in order of first appearance, the labels where a `label` column has one,
    NaN: unlabelled; the text columns `argument` and `key_point` optional: the metric needs no text)."""
    if isinstance(split, str):
        return load_argkp(split, data_dir)
    if not hasattr(split, "columns"):
        return split
    rows = [(i, {"argument": "", "key_point": "", **row}) for i, row in enumerate(split.to_dict("records"), start=1)]
    labelled = [(i, row) for i, row in rows if row.get("label", float("nan")) == row.get("label")]
    return kpm_data((name, rows), (name, rows), (name, labelled), name=name, repeated=True)


class KeyPointMatcher:
    """Match arguments to key points with a model name or folder (or an ensemble of several); train the
    recommended recipe; score with the official mAP.

    Args:
        model: None (the default of `argsim rank keypoints`: the shipped key point matcher ``"kpm"`` where the
            package carries it, else ``"minilm"``), a backend model name (``"minilm"`` zero-shot, ``"kpm"``), a
            model folder (trained by `fit`, `argsim train sbert`, `train mts` or
            `train kpm-cross`), a model object (an argsim `Encoder`, a `SentenceTransformer`, a `CrossEncoder`;
            `argsim.backend.resolve.resolve_model`), or a list of them for an ensemble.
        weights: Ensemble weights, one per model (None: equal).
        combine: How an ensemble combines scores: ``"zscore"``, ``"zlogit"`` or ``"mean"`` (see
            `argsim rank keypoints --help`).
        arg_template, kp_template: How plain encoders see a statement: fields ``{text}``, ``{topic}``,
            ``{stance}`` (e.g. ``"{topic} {text}"``); context-aware models (MTS) ignore them.
        threshold: The score from which an argument matches its best key point (below it no key point fits);
            None: the model's own (`argsim.kpm.threshold`: recorded with the model, else its score scale's
            default).
        config: The run options (device, precision, seed, cache, quiet, data folder); None: the defaults.

    Example:
        >>> import argsim
        >>> m = argsim.KeyPointMatcher("minilm")
        >>> m.match(["Nuclear power plants are clean.", "Meltdowns make nuclear power dangerous.",
        ...          "The weather is nice today."],
        ...         ["Nuclear power is clean", "Nuclear power is dangerous"])[["argument", "key_point", "matched"]]
                                          argument                   key_point  matched
        0          Nuclear power plants are clean.      Nuclear power is clean     True
        1  Meltdowns make nuclear power dangerous.  Nuclear power is dangerous     True
        2               The weather is nice today.                         NaN    False
    """

    def __init__(self, model: str | Path | Sequence[str | Path] | None = None,
                 weights: Sequence[float] | None = None, combine: str = "zscore", arg_template: str = "{text}",
                 kp_template: str = "{text}", threshold: float | None = None,
                 config: RunConfig | None = None) -> None:
        model = default_model("kpm") if model is None else model
        self.config = config or RunConfig()
        # a model object is one model (a SentenceTransformer iterates over its modules): only lists are ensembles
        self.models = [str(m) if isinstance(m, Path) else m for m in (model if isinstance(model, (list, tuple))
                                                                        else [model])]
        if not self.models:
            raise ArgsimError("give at least one model")
        for m in self.models:
            if isinstance(m, str):
                check_model_name(m)  # an unknown name (`KPM`: did you mean 'kpm'?) now, as the CLI's --model
            else:
                resolve_model(m, self.config)  # an object argsim cannot use: one line now, not at the first match
        check_weights(self.models, weights)
        self.weights = list(weights) if weights else None
        self.combine = combine
        self.arg_template, self.kp_template = arg_template, kp_template
        self.threshold = threshold
        self.training_info_: dict | None = None

    def __repr__(self) -> str:
        from argsim.kpm.rank import model_label

        labels = [model_label(m) for m in self.models]
        model = labels[0] if len(labels) == 1 else labels
        return f"KeyPointMatcher(model={model!r})"

    def _rank(self, data: KPMData) -> KeypointRanking:
        """The run of `argsim rank keypoints` on loaded data (`argsim.kpm.rank.rank_keypoints`)."""
        from argsim.kpm.rank import rank_keypoints

        return rank_keypoints(data, self.models, self.weights, self.combine, self.config, self.arg_template,
                              self.kp_template, self.threshold)

    def match(self, arguments: Any, key_points: Any, topic: str | None = None, stance: int = 1,
              all_pairs: bool = False) -> pd.DataFrame:
        """Each argument's best key point and its score.

        Args:
            arguments: A list of argument texts, or a DataFrame with column ``argument`` (optional ``arg_id``,
                ``topic``, ``stance``).
            key_points: A list of key point texts, or a DataFrame with column ``key_point`` (optional
                ``key_point_id``, ``topic``, ``stance``).
            topic: The topic of list inputs (shown to templates that use ``{topic}``, and to MTS models).
            stance: The stance of list inputs: 1 (pro) or -1 (con).
            all_pairs: Return every scored (argument, key point) pair instead, with a column ``best``.

        Returns:
            A DataFrame, one row per argument in input order: ``arg_id, argument, topic, stance, key_point_id,
            key_point, score, matched`` (ids ``a0, a1, ...`` / ``k0, k1, ...`` for lists): its best key point and
            score when that score reaches the threshold (``matched`` True); below it, no key point fits: an empty
            key point, the best score, ``matched`` False. An argument without a key point of its topic and stance
            has an empty key point and a NaN score.
        """
        return self._match_rows(match_inputs(arguments, key_points, topic, stance), all_pairs)

    def match_df(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """`match` on a frame of (argument, key point) pairs as `load_dataset("argkp")` returns it: its distinct
        arguments against its distinct key points of the same topic and stance.

        Returns:
            As `match`: one row per distinct argument with its best key point and score.
        """
        return self._match_rows(split_data(pairs), all_pairs=False)  # read once, warned once

    def _match_rows(self, data, all_pairs: bool) -> pd.DataFrame:
        """`match`'s frame for key point data (`argsim.data.argkp.KPMData`)."""
        ranking = self._rank(data)
        if all_pairs:
            best = {(m.arg_id, m.key_point_id) for m in ranking.matches if m.matched}
            rows = [(a.arg_id, a.text, a.topic, a.stance, kid, data.kp_by_id[kid].text, score,
                     score >= ranking.threshold, (a.arg_id, kid) in best)
                    for a in data.arguments for kid, score in ranking.predictions.get(a.arg_id, {}).items()]
            return pd.DataFrame(rows, columns=[*MATCH_COLUMNS, "best"])
        by_arg = {m.arg_id: m for m in ranking.matches}
        rows = []
        for a in data.arguments:
            m = by_arg.get(a.arg_id)
            fits = m is not None and m.matched
            rows.append((a.arg_id, a.text, a.topic, a.stance, m.key_point_id if fits else None,
                         m.key_point if fits else None, m.score if m else np.nan, fits))
        return pd.DataFrame(rows, columns=MATCH_COLUMNS)

    def evaluate(self, split: str | pd.DataFrame = "dev", topics: Sequence[str] | None = None,
                 formula: str = "leaderboard", data_dir: str | Path | None = None) -> Evaluation:
        """The official mAP (`argsim.kpa_map`) of this matcher on a labelled ArgKP split, and the threshold that
        maximises F1 on its labelled pairs (`argsim.evaluation.KPAMapEvaluator`).

        Args:
            split: An ArgKP split name (``"dev"``, ``"train"``), or a DataFrame of labelled pairs as
                ``load_dataset("argkp")`` returns.
            topics: Score only these topics of the split (None: all).
            formula: ``"leaderboard"`` (every published result) or ``"2021-09"``.
            data_dir: The dataset root (None: the config's, else ``$ARGSIM_DATA``).

        Returns:
            An `argsim.evaluation.Evaluation` (a mapping): ``strict_map`` (primary), ``relaxed_map``,
            ``threshold``, ``f1_at_threshold``.

        Example:
            >>> import argsim
            >>> scores = argsim.KeyPointMatcher("minilm").evaluate(
            ...     "dev", topics=["We should abandon the use of school uniform"])
            >>> {name: round(value, 4) for name, value in scores.items()}
            {'strict_map': 0.8882, 'relaxed_map': 0.9581, 'threshold': 0.7401, 'f1_at_threshold': 0.6096}
        """
        from argsim.evaluation.kpa_map import KPAMapEvaluator

        data = split_data(split, data_dir if data_dir is not None else self.config.data_dir)
        if topics is not None:
            data = data.subset(topics)
        if not data.has_labels:
            raise ArgsimError(f"{data.name}: no gold labels to evaluate against")
        evaluator = KPAMapEvaluator(data, name=data.name, config=self.config, formula=formula,
                                    score=lambda _models: self._rank(data).predictions)
        return evaluator.evaluate(self.models)

    def fit(self, split: str | pd.DataFrame = "train", out: str | Path | None = None,
            recipe: SbertConfig | None = None, data_dir: str | Path | None = None) -> KeyPointMatcher:
        """Fine-tune this matcher's (first) model as a Siamese SBERT with the recommended recipe (`SbertConfig`'s
        defaults, what `argsim models build kpm-sbert` trains) on the labelled pairs of an ArgKP split, and match
        with the trained folder from now on.

        Args:
            split: An ArgKP split name, or a DataFrame of labelled pairs (`load_dataset("argkp")`).
            out: The folder to save the sentence-transformers model in (None: ``models/kpm-sbert`` in the run's
                work folder, `RunConfig.workdir`, else ``$ARGSIM_HOME``, else the current folder).
            recipe: The training settings (`argsim.trainers.kpm_sbert.SbertConfig`, the options of `argsim train sbert`;
                e.g. ``SbertConfig(epochs=2, max_steps=100)``); None: the recommended recipe. Its model and seed
                are this matcher's model and the config's seed.
            data_dir: The dataset root for a split name (None: the config's).

        Returns:
            self, matching with the trained model; `training_info_` holds the run's record (steps, seconds).

        Example:
            >>> import argsim
            >>> matcher = argsim.KeyPointMatcher("minilm").fit("train")  # doctest: +SKIP
            >>> matcher.models  # doctest: +SKIP
            ['models/kpm-sbert']
        """
        from argsim.kpm.evaluate import training_inputs
        from argsim.trainers.kpm_sbert import SbertConfig, train_sbert
        from argsim.training import resolve_placement

        if len(self.models) != 1:
            raise ArgsimError("fit trains one model: give KeyPointMatcher a single model")
        if not isinstance(self.models[0], str):
            raise ArgsimError("fit trains a model given by name or folder, not a model object (save it first)")
        data = split_data(split, data_dir if data_dir is not None else self.config.data_dir, "training frame")
        training_inputs(data, None, self.config)
        cfg = replace(recipe or SbertConfig(), model=self.models[0], seed=self.config.seed)
        out = Path(out) if out is not None else workdir(self.config.workdir) / "models" / "kpm-sbert"
        where = resolve_placement(self.config.device, self.config.precision, self.config.threads, self.config.seed)
        self.training_info_ = train_sbert(data, out, cfg, quiet=self.config.quiet, placement=where)
        self.models = [str(out)]
        return self
