"""`argsim evaluate` / `argsim.evaluate`: every task a model can do (one `argsim.evaluation.TaskEvaluator` each),
zero-shot, with 95 % percentile-bootstrap intervals (Efron and Tibshirani, 1993, ch. 13) on the same draws for every
model of a task, paired tests, result rows and the leaderboard built back from them: docs/evaluate.md.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from argsim.backend.folders import check_model_name
from argsim.backend.names import manifest_roles, shipped_folder
from argsim.backend.runtime import check_backend
from argsim.config import BACKENDS, PRECISIONS, QUANTIZATIONS, SEED, RunConfig
from argsim.counter.neural.config import is_cross_folder
from argsim.errors import ArgsimError, warn
from argsim.kpm.scoring import is_cross_encoder
from argsim.measure import timed
from argsim.metrics.paired import paired_comparison
from argsim.metrics.record import Evaluation
from argsim.published import PUBLISHED, mteb_figure, published
from argsim.results import result_rows, run_environment

METHOD, COMPARE_METHOD = "evaluate", "evaluate-compare"
N_BOOT = 1000
ALPHA = 0.05


@dataclass(frozen=True)
class Reference:
    """A published figure drawn beside a task's bars: `label` (who, which paper or leaderboard) and `value`."""

    label: str
    value: float


@dataclass(frozen=True)
class Task:
    """One column of the leaderboard.

    Args:
        key: the task's name (`--tasks`, the rows' `setting`).
        evaluator: the `argsim.evaluation` class name (or a `TaskEvaluator` class).
        title: the column heading.
        about: the data and metric in a few words.
        options: extra keyword arguments of the evaluator's `from_dataset`.
        references: (figure name in `argsim.published.PUBLISHED[task]`, label) pairs drawn as reference lines.
        published_task: the `PUBLISHED` task those figures are read from.
        lexical: whether `bm25` can be scored on it.
    """

    key: str
    evaluator: str | type
    title: str
    about: str
    options: Mapping[str, Any] = field(default_factory=dict)
    references: tuple[tuple[str, str], ...] = ()
    published_task: str | None = None
    lexical: bool = False

    def evaluator_class(self) -> type:
        if isinstance(self.evaluator, type):
            return self.evaluator
        return getattr(importlib.import_module("argsim.evaluation"), self.evaluator)

    def reference_figures(self) -> list[Reference]:
        out = [Reference(label, v) for name, label in self.references
               if (v := published(self.published_task or self.key, name)) is not None]
        if self.key == "arguana":
            out += [Reference(f"MTEB: {name.removeprefix('mteb/')}", v) for name, v in PUBLISHED["arguana"].items()]
        return out


#: the tasks, in leaderboard order
TASKS: dict[str, Task] = {t.key: t for t in (
    Task("kpa", "KPAMapEvaluator", "KPA", "ArgKP-2021 key point matching, strict mAP",
         references=(("mts/strict_mAP", "MTS (Phan et al. 2021)"), ("sbert/strict_mAP", "SBERT (Mariani & "
                     "Marinelli 2023)")), published_task="kpm"),
    Task("counter", "CounterArgumentEvaluator", "Counter", "counterargs-18 best counter, epa, accuracy@1",
         references=(("xgboost-full/epa", "XGBoost full (Shi et al. 2023, Table 2)"),
                     ("simple-sd/epa", "Simple-SD (Wachsmuth et al. 2018)")), published_task="counterargs-ltr"),
    Task("arguana", "ArguAnaEvaluator", "ArguAna", "counter-argument retrieval (BEIR ArguAna replica), nDCG@10",
         lexical=True),
    Task("thematic", "TripletEvaluator", "Thematic", "Wikipedia sentence triplets, accuracy",
         options={"dataset": "wikipedia"},
         references=(("tdc/triplets-sen", "triplet network (Ein Dor et al. 2018)"),
                     ("tdc/mean-vectors", "mean vectors (Ein Dor et al. 2018)"))),
    Task("minutes", "TripletEvaluator", "Minutes", "assembly-minutes mined triplets, accuracy",
         options={"dataset": "minutes"},
         references=(("triplets-trained-accuracy", "JPSB (Shirafuji & Rzepka 2020)"),
                     ("triplets-e5-multilingual-accuracy", "USE (Shirafuji & Rzepka 2020)"))),
    Task("clustering", "ClusteringEvaluator", "Clustering", "Wikipedia sentence clustering, AMI"),
    Task("sick", "SICKEvaluator", "SICK-R", "SICK relatedness, Pearson"),
)}


def bootstrap_draws(n_units: int, n_boot: int = N_BOOT, seed: int = SEED) -> np.ndarray:
    """(n_boot, n_units) unit indices drawn with replacement: one draw set per task, shared by every model."""
    return np.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))


def percentile_interval(resampled: np.ndarray) -> tuple[float, float]:
    """The 95 % percentile interval of resampled figures (NaN draws, e.g. a group left empty, are left out)."""
    finite = np.asarray(resampled, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    lo, hi = np.percentile(finite, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)]) if len(finite) else (math.nan, math.nan)
    return float(lo), float(hi)


def paired_test(a_boot: np.ndarray, b_boot: np.ndarray, a_units: np.ndarray | None = None,
                b_units: np.ndarray | None = None) -> dict[str, Any]:
    """A - B from their figures resampled on the same draws: the difference's 95 % interval, its two-sided
    bootstrap p (twice the smaller tail share of differences <= 0 / >= 0), the exact McNemar p where 0/1 unit
    outcomes are given (`argsim.metrics.paired`), and whether the difference is significant (reading chosen: the
    interval excludes 0 and, for 0/1 outcomes, McNemar's p < 0.05 as well).

    Example:
        >>> a, b = np.array([0.8, 0.7, 0.9, 0.85]), np.array([0.5, 0.6, 0.55, 0.5])
        >>> paired_test(a, b)["significant"]
        True
    """
    d = np.asarray(a_boot, dtype=np.float64) - np.asarray(b_boot, dtype=np.float64)
    d = d[np.isfinite(d)]
    low, high = percentile_interval(d)
    p_boot = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0)))) if len(d) else math.nan
    out: dict[str, Any] = {"ci95": [low, high], "p_bootstrap": p_boot, "p_mcnemar": None}
    significant = bool(low > 0 or high < 0)
    if a_units is not None and b_units is not None:
        mc = paired_comparison(a_units, b_units, n_boot=1)
        if "p_mcnemar" in mc:
            out |= {"p_mcnemar": mc["p_mcnemar"], "wins": mc["wins"], "losses": mc["losses"]}
            significant = significant and mc["p_mcnemar"] < ALPHA
    out["significant"] = significant
    return out


def model_kind(model: Any) -> str:
    """'lexical' (bm25), 'cross' (a pair scorer: a CrossEncoder object, a cross-encoder folder), 'two-tower' (a
    bi-encoder whose queries and documents go through different towers: its manifest names `roles`) or 'bi'."""
    if isinstance(model, str | Path):
        if str(model) == "bm25":
            return "lexical"
        folder = shipped_folder(str(model)) or Path(model).expanduser()
        if folder.is_dir():
            if is_cross_folder(folder) or is_cross_encoder(str(folder)):
                return "cross"
            if manifest_roles(folder):
                return "two-tower"
        return "bi"
    if type(model).__name__ in ("CrossEncoder", "PairScorer"):
        return "cross"
    return "two-tower" if getattr(model, "roles", None) else "bi"


def check_model(model: Any) -> None:
    """A model given by name must name something before any work: a registered or shipped name, `bm25`, a model
    folder (checked as a model folder) or a Hugging Face id in the local cache; ModelError (one line) else."""
    if isinstance(model, str | Path) and str(model) != "bm25":  # an object: the evaluators' resolver checks it
        check_model_name(str(model))


#: the model kinds scored on some tasks only (a bi-encoder: on all), as the messages name them
LIMITED_KINDS = {"lexical": "bm25", "cross": "a cross-encoder", "two-tower": "a two-tower model"}


def can_score(task: Task, kind: str, evaluator_class: type) -> bool:
    """Whether a model of `kind` (`model_kind`) can be scored on `task`: bm25 on the lexical task, a cross-encoder
    where the evaluator takes one, a two-tower model where the evaluator encodes queries and documents apart
    (reading chosen: a task that compares texts of one kind, e.g. triplets or SICK, has no side to give each
    tower, so a two-tower model is not scored there rather than scored through one tower)."""
    if kind == "lexical":
        return task.lexical
    if kind == "two-tower":
        return bool(getattr(evaluator_class, "takes_roles", False))
    return kind == "bi" or bool(getattr(evaluator_class, "accepts_cross_encoder", False))


@dataclass
class Score:
    """One model on one task: its evaluation's figures, the primary one's interval, the time it took."""

    model: str
    task: str
    metric: str
    value: float
    low: float
    high: float
    n: int | None
    seconds: float
    data: str | None
    metrics: dict[str, float]
    reference: Reference | None = None  # the model's own published figure on this task (MTEB)
    mteb_scores: dict[str, float] | None = None  # MTEB's full score dict where the evaluator keeps one (not saved)


@dataclass
class Comparison:
    """A - B on one task (`paired_test`)."""

    task: str
    a: str
    b: str
    metric: str
    delta: float
    low: float
    high: float
    p_bootstrap: float
    p_mcnemar: float | None
    significant: bool


@dataclass
class Leaderboard:
    """What `run_evaluate` measured: scores, comparisons, the tasks shown and the models in order."""

    models: list[str]
    tasks: list[Task]
    scores: list[Score]
    comparisons: list[Comparison] = field(default_factory=list)
    n_boot: int = N_BOOT
    #: the run options of each model written with its own variant (`parse_variant`: 'minilm [torch bf16]')
    variants: dict[str, RunConfig] = field(default_factory=dict)

    def score(self, model: str, task: str) -> Score | None:
        return next((s for s in self.scores if s.model == model and s.task == task), None)

    def frame(self) -> Any:
        """A pandas DataFrame: one row per (model, task) with the primary metric, its interval, n and seconds;
        `attrs["comparisons"]` holds the paired tests as a DataFrame."""
        import pandas as pd

        df = pd.DataFrame([[s.model, s.task, s.metric, s.value, s.low, s.high, s.n, s.seconds, s.data,
                            s.reference.value if s.reference else None] for s in self.scores],
                          columns=["model", "task", "metric", "value", "ci_low", "ci_high", "n", "seconds", "data",
                                   "reference"])
        df.attrs["comparisons"] = pd.DataFrame([vars(c) for c in self.comparisons])
        return df

    def rows(self, env: Mapping[str, Any] | None = None, command: str | None = None, variant: str = "") -> list:
        """The run as result rows (`argsim.results.result_rows`): every metric of every evaluation, the primary
        one with its interval in `extra`; each comparison as a row of method `evaluate-compare`. `variant` follows
        the name of each model not written with a variant of its own (`variant_label`), so runs on other backends
        keep rows of their own; those written with one take the `env` of their own options (`run_environment`; a
        comparison row takes its first model's)."""
        model_envs = {m: run_environment(c) for m, c in self.variants.items()}
        name = {m: m if m in self.variants else m + variant for m in self.models}
        rows = []
        for s in self.scores:
            ev = Evaluation(s.task, s.metrics, s.metric, data=s.data, n=s.n)
            for r in result_rows(ev, method=METHOD, model=name[s.model], setting=s.task, seconds=s.seconds,
                                 env=model_envs.get(s.model, env), command=command,
                                 paper={s.metric: s.reference.value} if s.reference else None):
                if r.metric == s.metric:
                    r.extra = {"primary": True, "ci95": [s.low, s.high], "n_boot": self.n_boot, "units": s.n}
                rows.append(r)
        for c in self.comparisons:
            ev = Evaluation(c.task, {f"delta_{c.metric}": c.delta}, f"delta_{c.metric}")
            rows += result_rows(ev, method=COMPARE_METHOD, model=f"{name[c.a]} vs {name[c.b]}", setting=c.task,
                                env=model_envs.get(c.a, env), command=command,
                                extra={"ci95": [c.low, c.high], "p_bootstrap": c.p_bootstrap,
                                       "p_mcnemar": c.p_mcnemar, "significant": c.significant, "n_boot": self.n_boot})
        return rows

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]]) -> Leaderboard:
        """The leaderboard that rows of `argsim evaluate` (dicts, as a results file holds them) describe."""
        scores, comparisons, n_boot = [], [], N_BOOT
        metrics: dict[tuple[str, str], dict[str, float]] = {}  # each score's dict, filled by all of its rows
        for r in rows:
            extra = r.get("extra") or {}
            low, high = extra.get("ci95") or [math.nan, math.nan]
            if r.get("method") == METHOD:
                found = metrics.setdefault((r["model"], r["setting"]), {})
                found[r["metric"]] = r["value"]
            if r.get("method") == METHOD and extra.get("primary"):
                n_boot = extra.get("n_boot", n_boot)
                ref = Reference("published", r["paper"]) if r.get("paper") is not None else None
                scores.append(Score(r["model"], r["setting"], r["metric"], r["value"], low, high, extra.get("units"),
                                    r.get("seconds") or 0.0, r.get("split"), found, ref))
            elif r.get("method") == COMPARE_METHOD:
                a, _, b = r["model"].partition(" vs ")
                comparisons.append(Comparison(r["setting"], a, b, r["metric"].removeprefix("delta_"), r["value"],
                                              low, high, extra.get("p_bootstrap", math.nan),
                                              extra.get("p_mcnemar"), bool(extra.get("significant"))))
        tasks = [TASKS.get(k) or Task(k, "", k, k) for k in dict.fromkeys(s.task for s in scores)]
        return cls(list(dict.fromkeys(s.model for s in scores)), tasks, scores, comparisons, n_boot)


def run_evaluate(model_or_models: Any, tasks: Sequence[str] | None = None, limit: int | None = None,
                 config: RunConfig | None = None, compare: Sequence[str] | None = None, n_boot: int = N_BOOT,
                 task_table: Mapping[str, Task] | None = None,
                 log: Callable[[str], None] = lambda line: None) -> Leaderboard:
    """Score every model on every chosen task it can do, with bootstrap intervals and optional paired tests.

    Args:
        model_or_models: a model (registered name, folder, Hugging Face id, `SentenceTransformer`, `CrossEncoder`,
            argsim `Encoder`), a list of them, or a {label: model} mapping.
        tasks: task keys of `TASKS` (None: all; a default task whose data is missing is left out with a warning,
            a chosen one is an error).
        limit: score only the first `limit` units of each task (a quick look).
        config: the run options (device, cache, data folder, backend, seed: the bootstrap's seed).
        compare: two model labels A, B: paired tests of A - B on every task both were scored on.
        n_boot: bootstrap draws.
        task_table: the tasks to choose from (default `TASKS`; tests pass their own).
        log: receives one line per score.

    Returns:
        The `Leaderboard`.

    Raises:
        ArgsimError: an unknown task or model, a bad `compare` or `limit`, before any model is scored.

    Example:
        >>> board = run_evaluate("minilm", tasks=["thematic"], limit=50)  # doctest: +SKIP
        >>> board.frame()[["model", "task", "value", "ci_low", "ci_high"]]  # doctest: +SKIP
    """
    config = config or RunConfig()
    table = dict(task_table or TASKS)
    unknown = [] if tasks is None else [t for t in tasks if t not in table]
    if unknown or tasks is not None and not tasks:
        raise ArgsimError(f"unknown task {', '.join(map(repr, unknown)) or '(none given)'}: choose from "
                          f"{', '.join(table)}")
    chosen = [table[k] for k in table if tasks is None or k in tasks]
    named = _named_models(model_or_models, compare, limit, n_boot)
    models, variants = {}, {}
    for label, m in named.items():  # a name written as a variant: the model and its options
        models[label], o = (isinstance(m, str) and parse_variant(m)) or (m, None)
        check_model(models[label])
        if o is not None:
            check_backend(o["backend"], o["quantize"], "cpu" if o["backend"] != "torch" else "auto", o["precision"])
            variants[label] = replace(config, **o)
    kinds = {label: model_kind(m) for label, m in models.items()}
    evaluators = _read_evaluators(chosen, kinds, tasks is not None, limit, config)
    if not evaluators:
        fits = "; ".join(f"{who}: {', '.join(t.key for t in TASKS.values() if can_score(t, kind, t.evaluator_class()))}"
                         for kind, who in LIMITED_KINDS.items())
        raise ArgsimError(f"no chosen task can score {', '.join(kinds)} ({', '.join(t.key for t in chosen)}; {fits})")
    board = Leaderboard(list(named), [t for t in chosen if t.key in evaluators], [], n_boot=n_boot, variants=variants)
    boots: dict[tuple[str, str], tuple[np.ndarray, np.ndarray | None]] = {}
    for t_index, task in enumerate(board.tasks):
        ev = evaluators[task.key]
        draws = None
        for label, model in models.items():
            if can_score(task, kinds[label], type(ev)):
                saved = getattr(ev, "config", None)
                ev.config = board.variants.get(label) or saved  # the model's own variant options, if any
                try:
                    score, draws, boots[(label, task.key)] = _score(ev, task, label, model, draws,
                                                                    (n_boot, config.seed + t_index))
                finally:
                    ev.config = saved
                board.scores.append(score)
                log(f"{task.key}: {label} {score.metric} {score.value:.4f} [{score.low:.4f}, {score.high:.4f}] "
                    f"({score.seconds:.1f} s)")
        if compare is not None and all((c, task.key) in boots for c in compare):
            (a_boot, a_units), (b_boot, b_units) = (boots[(c, task.key)] for c in compare)
            test = paired_test(a_boot, b_boot, a_units, b_units)
            sa, sb = (board.score(c, task.key) for c in compare)
            board.comparisons.append(Comparison(task.key, *compare, sa.metric, sa.value - sb.value, *test["ci95"],
                                                test["p_bootstrap"], test["p_mcnemar"], test["significant"]))
    return board


def _named_models(model_or_models: Any, compare: Sequence[str] | None, limit: int | None,
                  n_boot: int) -> dict[str, Any]:
    """{label: model} of one model, a list of models, or a {label: model} mapping, the run's options checked
    (ArgsimError on repeated models, a bad `compare`, `limit` or `n_boot`)."""
    if isinstance(model_or_models, Mapping):
        named = {str(k): v for k, v in model_or_models.items()}
    else:
        items = [model_or_models] if isinstance(model_or_models, str | Path) or not isinstance(
            model_or_models, Sequence) else list(model_or_models)
        named = {}
        for i, m in enumerate(items):  # a name or folder as given, an object by its `name` or class
            label = str(m if isinstance(m, str | Path) else getattr(m, "name", None) or f"{type(m).__name__}#{i + 1}")
            if label in named:
                raise ArgsimError(f"model '{label}' is given twice")
            named[label] = m
    if not named:
        raise ArgsimError("give at least one model")
    if compare is not None:
        compare = list(compare)
        if len(compare) != 2 or compare[0] == compare[1] or any(c not in named for c in compare):
            raise ArgsimError(f"--compare takes two different models of those evaluated ({', '.join(named)}), "
                              f"not {' '.join(map(str, compare))}")
    if limit is not None and limit < 1:
        raise ArgsimError(f"--limit {limit}: give a positive number of units")
    if n_boot < 100:
        raise ArgsimError(f"--n-boot {n_boot}: at least 100 draws make a 95 % interval")
    return named


def _read_evaluators(chosen: Sequence[Task], kinds: Mapping[str, str], explicit: bool, limit: int | None,
                     config: RunConfig) -> dict[str, Any]:
    """The evaluator of every chosen task some model can be scored on, each one's data read before any scoring (a
    default task whose data is missing left out with a warning; an `explicit` choice's an error)."""
    evaluators = {}
    for task in chosen:
        cls = task.evaluator_class()
        if not any(can_score(task, k, cls) for k in kinds.values()):
            continue
        try:
            evaluators[task.key] = cls.from_dataset(None, limit, config, **dict(task.options))
        except ArgsimError as exc:
            if explicit:
                raise
            warn(f"{task.key} left out: {exc}")
    return evaluators


def _score(ev: Any, task: Task, label: str, model: Any, draws: np.ndarray | None,
           boot: tuple[int, int]) -> tuple[Score, np.ndarray, tuple[np.ndarray, np.ndarray | None]]:
    """(`Score`, the draws (made on first use from `boot` = (n_boot, seed)), (resampled primary, 0/1 units: those
    of an evaluator whose primary figure is their mean, so McNemar applies, else None))."""
    from argsim.evaluation.base import TaskEvaluator

    with timed() as t:
        result = ev.evaluate(model)
    if draws is None:
        draws = bootstrap_draws(ev.n_units, *boot)
    resampled = np.asarray(ev.resample_primary(draws), dtype=np.float64)
    low, high = percentile_interval(resampled)
    found = mteb_figure(str(model)) if task.key == "arguana" and isinstance(model, str | Path) else None
    ref = Reference(f"MTEB: {found[0]}", found[1]) if found else None
    mteb = getattr(ev, "scores", None)  # MTEB's full score dict where the evaluator keeps one
    mteb = {k: float(v) for k, v in mteb.items() if isinstance(v, int | float)} if isinstance(mteb, Mapping) else None
    units = None
    if type(ev).resample_primary is TaskEvaluator.resample_primary and ev.unit_values is not None:
        units = np.array(ev.unit_values, dtype=np.float64)
        units = units if np.isin(units, (0.0, 1.0)).all() else None
    return (Score(label, task.key, result.primary_metric, result.primary, low, high, result.n, t["seconds"],
                  result.data, dict(result.metrics), ref, mteb), draws, (resampled, units))


#: a model written as rows name one of its variants: 'minilm [openvino int8]', 'minilm [torch bf16]'
VARIANT_NAME = re.compile(r"(?P<model>\S.*?) \[(?P<variant>[a-z0-9 ]+)\]")


def parse_variant(model: str) -> tuple[str, dict[str, str]] | None:
    """(model, its backend / quantize / precision) of a model written as rows name a variant of it
    (`argsim.benchmarks.evaluate_view.variant_label`),
    so `argsim evaluate 'minilm [torch bf16]' minilm --compare 'minilm [torch bf16]' minilm` scores both in one
    run, on the same bootstrap draws; None for a name without a bracket that starts with a backend. Reading chosen:
    a variant names all three options (the others at their defaults), whatever the global options say.

    Raises:
        ArgsimError: a bracket that starts with a backend but is not how rows name a variant.

    Example:
        >>> parse_variant("minilm [openvino int8]")
        ('minilm', {'backend': 'openvino', 'quantize': 'int8', 'precision': 'auto'})
        >>> parse_variant("minilm") is None
        True
    """
    found = VARIANT_NAME.fullmatch(model)
    words = found["variant"].split() if found else []
    if not words or words[0] not in BACKENDS:
        return None
    options = {"backend": words[0], "quantize": "none", "precision": "auto"}
    for w in words[1:]:
        options["quantize" if w in QUANTIZATIONS else "precision" if w in PRECISIONS else "?"] = w
    canonical = [words[0], *(v for v in (options["quantize"], options["precision"]) if v not in ("none", "auto"))]
    if "?" in options or words != canonical or canonical == ["torch"]:
        raise ArgsimError(f"model '{model}': a variant is written [BACKEND QUANTIZE PRECISION] as result rows name "
                          f"it, e.g. '{found['model']} [openvino int8]' or '{found['model']} [torch bf16]'")
    return found["model"], options
