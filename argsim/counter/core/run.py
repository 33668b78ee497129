"""One ranking run: load the points and pools (counterargs-18 or a user's file), call a ranker, make records."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from argsim.config import SEED
from argsim.counter.core.evaluation import ranking_records
from argsim.counter.core.registry import get_ranker
from argsim.data.counterargs import SETTINGS, SPLITS, Argument, build_pools, load_counterargs
from argsim.engine.base import Engine
from argsim.errors import ArgsimError, did_you_mean
from argsim.measure import peak_memory_mb, timed


@dataclass
class RankRun:
    method: str
    setting: str
    split: str
    records: list[dict]
    seconds: float
    peak_mb: float
    n_points: int
    n_pairs: int
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
            valid = ", ".join(allowed) if allowed else "none"
            raise ArgsimError(f"--opt '{key}' is not an option of {method}; valid keys: {valid}")
        if key in out:
            raise ArgsimError(f"--opt '{key}' given twice")
        out[key] = _coerce(value.strip())
    return out


def _coerce(value: str):
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    if "," in value:
        try:
            return [float(v) for v in value.split(",")]
        except ValueError:
            return value
    return value


def dataset_points(split: str, setting: str, limit: int | None = None, data_dir: str | Path | None = None,
                   sample: int | None = None, seed: int = SEED
                   ) -> tuple[list[Argument], dict[str, list[Argument]], dict[str, str | None]]:
    """Points of a counterargs-18 split (the first `limit` in id order, or a seeded random `sample`), their
    pools and gold counters."""
    if split not in SPLITS:
        raise ArgsimError(f"unknown split '{split}'{did_you_mean(split, SPLITS)}: choose one of {', '.join(SPLITS)}")
    if setting not in SETTINGS:
        raise ArgsimError(f"unknown setting '{setting}'{did_you_mean(setting, SETTINGS)}"
                          f": choose one of {', '.join(SETTINGS)}")
    if limit is not None and sample is not None:
        raise ArgsimError("--limit and --sample both choose the points: give one of them")
    corpus = load_counterargs(data_dir)
    points = corpus.points(split)[:limit]
    if sample is not None and sample < len(points):
        rng = np.random.default_rng(seed)
        points = [points[i] for i in sorted(rng.choice(len(points), size=sample, replace=False))]
    all_pools = build_pools(corpus, split, setting)
    pools = {p.id: all_pools[p.id] for p in points}
    return points, pools, {p.id: corpus.true_counter(p).id for p in points}


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
    """The scores ranker `method` gives each point's pool: {point id: scores aligned with its pool, higher better}
    (a `ScoreDict`; its `exact_rank` False when scores below the top `top_k` are bounds). The one call of a ranker,
    for an evaluation run (`run_ranker`) and a plain retrieval (`argsim.api.counter.CounterRetriever.retrieve`)."""
    extra = {"config": config} if config is not None else {}
    return get_ranker(method).fn(points, pools, split=split, setting=setting,
                                 gold=gold if gold is not None else {p.id: None for p in points}, top_k=top_k,
                                 engine=engine, precision=precision, **extra, **dict(options or {}))


def run_ranker(method: str, points: list[Argument], pools: dict[str, list[Argument]], gold: dict[str, str | None],
               setting: str, split: str, options: dict | None = None, top_k: int = 10,
               label: str | None = None, engine: Engine | None = None, precision: str = "auto",
               config=None) -> RankRun:
    """Score every pool with ranker `method` and turn the scores into ranking records (method = `label`).

    `engine` (an `argsim.engine` engine; None: this process) is handed to the ranker, which runs its bulk work
    (exact WMDs, pruned ranking) there; rankers without bulk work ignore it. `precision` (the run's `--precision`)
    is handed on the same way: rankers with a transformer stage compute in it, the others ignore it; and so is
    `config` (the run's `RunConfig`, when given): the runtime (`--backend`, `--quantize`) of a transformer stage.
    """
    options = dict(options or {})
    label = label or default_label(method, options)
    load_start = os.getloadavg()[0]
    with timed() as t:
        scores = score_pools(method, points, pools, options, top_k=top_k, engine=engine, precision=precision,
                             config=config, gold=gold, setting=setting, split=split)
    records = ranking_records(points, pools, scores, gold, method=label, setting=setting, split=split, top_k=top_k)
    exact = bool(getattr(scores, "exact_rank", True))
    for r in records:
        r["exact_rank"] = exact
    stats = getattr(scores, "stats", None)
    if stats:
        options = options | {"stats": stats}
    # the machine is shared: the load average beside the time says what the time means
    options = options | {"load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)]}
    if engine is not None:
        options = options | {"engine": engine.describe()}
    return RankRun(method=label, setting=setting, split=split, records=records, seconds=t["seconds"],
                   peak_mb=peak_memory_mb(), n_points=len(points), n_pairs=sum(len(v) for v in pools.values()),
                   options=options)


def read_kept(out: str | Path, label: str, split: str, settings: Sequence[str]
              ) -> tuple[dict[str, list[dict]], list[dict]]:
    """What an earlier (possibly interrupted) ranking in `out` holds: the records of method `label` on `split` in
    each of `settings` (reused by `rank_counterargs(..., kept=...)` instead of ranking again), and every other
    record (other methods, splits or settings; written back unchanged)."""
    from argsim.io import read_records

    kept: dict[str, list[dict]] = {}
    others: list[dict] = []
    if Path(out).is_file():
        for rec in read_records(out, required=["point", "setting"]):
            if rec.get("method") == label and rec.get("split") == split and rec.get("setting") in settings:
                kept.setdefault(rec["setting"], []).append(rec)
            else:
                others.append(rec)
    return kept, others


def rank_counterargs(method: str, settings: Sequence[str] = ("sdoc",), split: str = "test",
                     options: dict | None = None, top_k: int = 10, label: str | None = None,
                     limit: int | None = None, sample: int | None = None, seed: int = SEED,
                     data_dir: str | Path | None = None, engine: Engine | None = None, precision: str = "auto",
                     user_file: str | Path | None = None, candidates: str = "all", out: str | Path | None = None,
                     kept: dict[str, list[dict]] | None = None, others: Sequence[dict] = (),
                     config=None) -> tuple[list[RankRun], list[dict]]:
    """Rank the pools of counterargs-18 `split` in each of `settings` (or of a user's argument file, `user_file`,
    whose records are the `candidates`) with ranker `method`: the runs and this method's ranking records.

    `kept` (from `read_kept`): settings already ranked, whose records are reused. With `out`, the JSONL ranking
    (`others` first, then this method's records) is rewritten atomically after every finished setting, so an
    interrupted run keeps them. `config`: the run's options, handed to the ranker (`run_ranker`).
    """
    from argsim.io import write_jsonl

    label = label or default_label(method, dict(options or {}))
    runs: list[RankRun] = []
    records: list[dict] = []
    if user_file is not None:
        from argsim.counter.core.userdata import load_user_arguments

        points, pools, gold = load_user_arguments(user_file, candidates=candidates)
        runs.append(run_ranker(method, points, pools, gold, setting="user", split=Path(user_file).stem,
                               options=options, top_k=top_k, label=label, engine=engine, precision=precision,
                               config=config))
        records = runs[0].records
    else:
        for s in settings:
            if kept and s in kept:
                records += kept[s]
                continue
            points, pools, gold = dataset_points(split, s, limit=limit, sample=sample, seed=seed, data_dir=data_dir)
            runs.append(run_ranker(method, points, pools, gold, setting=s, split=split, options=options,
                                   top_k=top_k, label=label, engine=engine, precision=precision,
                                   config=config))
            records += runs[-1].records
            if out is not None:
                write_jsonl(out, [*others, *records])  # finished settings survive an interrupted later one
    if out is not None:
        write_jsonl(out, [*others, *records])
    return runs, records
