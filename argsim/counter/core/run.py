"""One ranking run: load the points and pools (counterargs-18 or a user's file), call a ranker, make records."""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np

from argsim.config import SEED, RunConfig
from argsim.counter.core.evaluation import ranking_records
from argsim.counter.core.registry import get_ranker
from argsim.data.counterargs import SETTINGS, SPLITS, Argument, build_pools, load_counterargs
from argsim.engine.base import Engine
from argsim.errors import ArgsimError, check_choice, warn
from argsim.measure import peak_memory_mb, timed
from argsim.options import setting


@dataclass
class RankRun:
    method: str
    setting: str
    split: str
    records: list[dict]
    seconds: float
    peak_mb: float
    options: dict = field(default_factory=dict)


def parse_options(pairs: list[str], allowed: Sequence[str] | None = None, method: str = "the ranker") -> dict:
    """`key=value` strings -> dict, with ints, floats, booleans and comma lists of floats recognised. With
    `allowed`, a key outside it (a typo such as `bm25_idff`) is an error naming the valid keys."""
    out: dict = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ArgsimError(f"--opt '{item}': expected key=value")
        key = key.strip().replace("-", "_")
        if allowed is not None and key not in allowed:
            raise ArgsimError(f"--opt '{key}' is not an option of {method}; valid keys: {', '.join(allowed) or 'none'}")
        if key in out:
            raise ArgsimError(f"--opt '{key}' given twice")
        out[key] = _coerce(value.strip())
    return out


def _coerce(value: str):
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for cast in (int, float, lambda v: [float(x) for x in v.split(",")]):  # a comma list of floats
        with suppress(ValueError):
            return cast(value)
    return value


def dataset_points(split: str, setting: str, limit: int | None = None, data_dir: str | Path | None = None,
                   sample: int | None = None, seed: int = SEED
                   ) -> tuple[list[Argument], dict[str, list[Argument]], dict[str, str | None]]:
    """Points of a counterargs-18 split (the first `limit` in id order, or a seeded random `sample`), their
    pools and gold counters."""
    check_choice(split, "split", SPLITS)
    check_choice(setting, "setting", SETTINGS)
    if limit is not None and sample is not None:
        raise ArgsimError("--limit and --sample both choose the points: give one of them")
    corpus = load_counterargs(data_dir)
    points = corpus.points(split)[:limit]
    if sample is not None and sample < len(points):
        points = [points[i] for i in sorted(np.random.default_rng(seed).choice(len(points), sample, replace=False))]
    pools = build_pools(corpus, split, setting)
    return points, {p.id: pools[p.id] for p in points}, {p.id: corpus.true_counter(p).id for p in points}


def default_label(method: str, options: dict) -> str:
    """The method name recorded in rankings: e.g. `simple-sd[max-min]` when a reading or weights are given."""
    if options.get("reading"):
        return f"{method}[{options['reading']}]"
    if options.get("weights") is not None:
        return f"{method}[weights]"
    return method


def score_pools(method: str, points: list[Argument], pools: dict[str, list[Argument]], options: dict | None = None,
                top_k: int = 10, engine: Engine | None = None, precision: str = "auto", config=None,
                gold: dict[str, str | None] | None = None, setting: str = "user", split: str = "user") -> dict:
    """The scores ranker `method` gives each point's pool ({point id: scores aligned with its pool, higher better}, a
    `ScoreDict`): the one call of a ranker, for `run_ranker` and `argsim.api.counter.CounterRetriever.retrieve`."""
    return get_ranker(method).fn(points, pools, split=split, setting=setting,
                                 gold=gold if gold is not None else {p.id: None for p in points}, top_k=top_k,
                                 engine=engine, precision=precision, config=config, **dict(options or {}))


def run_ranker(method: str, points: list[Argument], pools: dict[str, list[Argument]], gold: dict[str, str | None],
               setting: str, split: str, options: dict | None = None, top_k: int = 10,
               label: str | None = None, engine: Engine | None = None, precision: str = "auto",
               config=None) -> RankRun:
    """Score every pool with ranker `method` (`score_pools`: `engine` for its bulk work, `precision` and `config`
    for a transformer stage) and turn the scores into ranking records (method = `label`)."""
    options = dict(options or {})
    label = label or default_label(method, options)
    load_start = os.getloadavg()[0]
    with timed() as t:
        scores = score_pools(method, points, pools, options, top_k=top_k, engine=engine, precision=precision,
                             config=config, gold=gold, setting=setting, split=split)
    records = ranking_records(points, pools, scores, gold, method=label, setting=setting, split=split, top_k=top_k,
                              exact_rank=bool(getattr(scores, "exact_rank", True)))
    # the machine is shared: the load average beside the time says what the time means
    options = (options | ({"stats": stats} if (stats := getattr(scores, "stats", None)) else {})
               | {"load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)]}
               | ({"engine": engine.describe()} if engine is not None else {}))
    return RankRun(method=label, setting=setting, split=split, records=records, seconds=t["seconds"],
                   peak_mb=peak_memory_mb(), options=options)


@dataclass(frozen=True)
class RankRequest:
    """What one ranking run ranks, on counterargs-18's pools or a user's argument file: the options of `argsim rank
    counterargs` (see `argsim.options`; each field's help says what it chooses).

    Example:
        >>> RankRequest("simple-sd", options={"reading": "max-min"}).name
        'simple-sd[max-min]'
    """

    method: str = setting("bm25", "Ranking method: simple-sd, logreg-part, logreg-full, xgboost-part, xgboost-full, "
                                  "bm25, tf-cosine, emb-cosine, feature:<name> (one feature), or a neural ranker; "
                                  "`--list` shows all.", option="--method")
    settings: tuple[str, ...] = setting(("sdoc",), "The candidate pools ranked.", cli=False)
    split: Literal["training", "validation", "test"] = setting("test", "counterargs-18 split: training | validation "
                                                                       "| test.")
    options: dict = setting(None, "The ranker's options (`--opt key=value`).", cli=False)
    top_k: int = setting(10, "Candidates stored per point in the ranking.", min=1)
    label: str | None = setting(None, "Method name written into the ranking and results (default: the method, with "
                                      "[reading] for Simple-SD readings).")
    limit: int | None = setting(None, "Rank only the first N points (id order).", min=1)
    sample: int | None = setting(None, "Rank a random sample of N points (seeded by --seed).", min=1)
    user_file: Path | None = setting(None, "Your own arguments instead of counterargs-18: JSONL/CSV/JSON with id, "
                                           "text, optional conclusion, kind (point|counter) and counter (gold id).",
                                     option=("--input", "-i"))
    candidates: Literal["all", "counters"] = setting("all", "With --input: 'all' other records or only 'counters'.")

    @property
    def name(self) -> str:
        """The method name recorded in the ranking (`label`, else `default_label`)."""
        return self.label or default_label(self.method, dict(self.options or {}))


def rank_counterargs(request: RankRequest, config: RunConfig | None = None, out: str | Path | None = None,
                     resume: bool = False) -> tuple[list[RankRun], list[dict]]:
    """Rank what `request` names (`run_ranker` for each setting, or once for its user file): the one function of
    `argsim rank counterargs` and the model publishing's check.

    Args:
        request: The method, its options, the split, settings and points. config: the run's options (seed of
            `sample`, data folder, engine, precision and runtime of transformer stages). out: a JSONL ranking
            rewritten atomically after every finished setting. resume: keep the settings `out` already holds for
            this method and split and rank the others.

    Returns:
        (runs, records): one `RankRun` per setting ranked now, and the records of every setting (kept ones too).

    Example:
        >>> runs, records = rank_counterargs(RankRequest("bm25", ("sdoc",), limit=20))  # doctest: +SKIP
    """
    from argsim.engine import engine_from_config
    from argsim.io import read_records, write_jsonl
    from argsim.schemas import RankingRecord

    config = config or RunConfig()
    if resume and request.user_file is not None:
        raise ArgsimError("--resume continues counterargs-18 settings; it does not apply to --input")
    if resume and not Path(out).is_file():
        warn(f"--resume: {out} does not exist yet, so every setting is ranked")
    kept: dict[str, list[dict]] = {}  # the records of this method and split per setting: reused, not ranked again
    others: list[dict] = []  # every other record of `out`: written back unchanged
    for rec in read_records(out, RankingRecord) if resume and Path(out).is_file() else ():
        if rec.get("method") == request.name and rec.get("split") == request.split \
                and rec.get("setting") in request.settings:
            kept.setdefault(rec["setting"], []).append(rec)
        else:
            others.append(rec)
    run = partial(run_ranker, request.method, options=request.options, top_k=request.top_k, label=request.name,
                  engine=engine_from_config(config), precision=config.precision, config=config)
    if request.user_file is not None:
        from argsim.counter.core.userdata import load_user_arguments

        points, pools, gold = load_user_arguments(request.user_file, candidates=request.candidates)
        runs = [run(points, pools, gold, setting="user", split=Path(request.user_file).stem)]
        records = runs[0].records
    else:
        runs, records = [], []
        for s in request.settings:
            if s in kept:
                records += kept[s]
                continue
            points, pools, gold = dataset_points(request.split, s, limit=request.limit, sample=request.sample,
                                                 seed=config.seed, data_dir=config.data_dir)
            runs.append(run(points, pools, gold, setting=s, split=request.split))
            records += runs[-1].records
            if out is not None:
                write_jsonl(out, [*others, *records])  # finished settings survive an interrupted later one
    if out is not None:
        write_jsonl(out, [*others, *records])
    return runs, records
