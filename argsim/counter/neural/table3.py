"""Table 3 of the paper (section 6.3): @1/K of every retrieve(-then-rerank) combination on one split and setting.

`evaluate_table3` runs every row whose model is given (with the zero-shot cosine and BM25 rows) on every setting
and compares each row's @1/K hits with the zero-shot row's accuracy@1 on the same points (`versus_reference`); rows
with a cross-encoder run on a seeded sample of points (`cross_limit`, CPU cost), compared on those points.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from argsim.config import SEED, RunConfig, default_data_dir
from argsim.counter.core.evaluation import RowScore
from argsim.counter.neural.config import CROSS_MARKER, Table3Request, is_cross_folder
from argsim.counter.neural.pipeline import check_stage, hits_over_k_pools, load_stage, run_stages
from argsim.counter.neural.store import learning_curves, read_history
from argsim.data.counterargs import build_pools, load_counterargs
from argsim.errors import ArgsimError, warn
from argsim.io import read_json_as, write_json
from argsim.metrics.paired import paired_comparison
from argsim.published import table3
from argsim.schemas import Budgets, CounterCrossMarker, TableState, TrainedHistory


@dataclass
class RowSpec:
    """One table row: the first stage ('bm25', 'cosine:<model>' or a folder) and an optional reranker folder."""

    method: str
    first: str
    second: str | None = None
    uses_cross: bool = False


#: Table 3's model rows: (method, first stage, reranker, reranks with a cross-encoder), keys of `models`; a row is
#: evaluated when its models are given
MODEL_ROWS = (("Bi-encoder", "bi-encoder", None, False), ("Unipolar-ret", "unipolar-ret", None, False),
              ("BM25 + Cross-encoder", "bm25", "cross-encoder", True),
              ("BM25 + Unipolar-cls", "bm25", "unipolar-cls", False),
              ("Bi-encoder + Cross-encoder", "bi-encoder", "cross-encoder", True),
              ("Bipolar-encoder", "bipolar", "bipolar", False),
              ("Bipolar-encoder w/o |u-v|", "bipolar-nodiff", "bipolar-nodiff", False),
              ("Bipolar-encoder w/o joint", "unipolar-ret", "unipolar-cls", False))


def table3_rows(models: dict[str, str | None], base_model: str = "minilm") -> list[RowSpec]:
    """The rows whose models are given (keys: bi-encoder, unipolar-ret, unipolar-cls, cross-encoder, bipolar,
    bipolar-nodiff; `MODEL_ROWS`); the zero-shot cosine and BM25 rows are always there as orientation."""
    m = {**models, "bm25": "bm25"}
    return [RowSpec(f"zero-shot cosine ({base_model})", f"cosine:{base_model}"), RowSpec("BM25", "bm25")] + [
        RowSpec(method, m[first], m[second] if second else None, uses_cross=cross)
        for method, first, second, cross in MODEL_ROWS if m.get(first) and (second is None or m.get(second))]


def versus_reference(score: RowScore, reference: RowScore, ks: tuple[int, ...]) -> dict[int, dict]:
    """Paired comparison of a row's @1/K hits with the reference row's accuracy@1 on the same points, per K."""
    return {k: paired_comparison(score.hits[k], reference.aligned(1, score.ids)) for k in ks}


def warn_deep_ks(pools: dict[str, list], ks: Sequence[int], what: str) -> list[int]:
    """Warn (one line) about the rerank depths K deeper than every pool, where @1/K is the same as reranking the
    whole pool; returns those K.

    Example:
        >>> warn_deep_ks({"p1": ["a", "b"], "p2": ["c"]}, (1, 2), "pool")
        []
    """
    largest = max(map(len, pools.values()), default=0)
    if deep := [k for k in ks if k > largest]:
        warn(f"K = {', '.join(map(str, deep))} exceeds every {what} (largest {largest}): @1/K reranks each whole pool")
    return deep


def evaluate_row(row: RowSpec, corpus, split: str, setting: str, ks: tuple[int, ...],
                 limit: int | None = None, seed: int = SEED, stages: dict | None = None,
                 config=None) -> RowScore:
    """@1/K of one row on `split`/`setting` (optionally a seeded random subset of `limit` points); the result also
    holds K = 1, the first stage's own accuracy@1 on the same points."""
    stages = stages if stages is not None else {}
    for spec in (row.first, row.second):  # `config`: the transformers' runtime
        if spec is not None and spec not in stages:
            stages[spec] = load_stage(spec, config=config)
    points = corpus.points(split)
    if limit is not None and limit < len(points):
        points = [points[i] for i in sorted(np.random.default_rng(seed).choice(len(points), size=limit, replace=False))]
    key = ("pools", split, setting)
    if key not in stages:  # building the epa pools takes a while: once per split and setting
        stages[key] = build_pools(corpus, split, setting)
        warn_deep_ks(stages[key], ks, f"{setting} candidate pool on {split}")
    pools = {p.id: stages[key][p.id] for p in points}
    gold = {p.id: corpus.true_counter(p).id for p in points}
    result = run_stages(points, pools, stages[row.first], stages.get(row.second) if row.second else None,
                        kmax=max(ks), show_progress=row.uses_cross)
    return RowScore(list(result.top), hits_over_k_pools(result, pools, gold, tuple(sorted({1, *ks}))))


def training_budget(folder: str | None) -> dict | None:
    """What a model folder cost to train: epochs run, best epoch, minutes, options (from its own records)."""
    if not folder or folder == "bm25" or folder.startswith("cosine:"):
        return None
    path = Path(folder)
    if is_cross_folder(path):
        meta = read_json_as(CounterCrossMarker, path / CROSS_MARKER)
        hist = read_history(path)
        last = hist[-1] if hist else {}
        return {"kind": "cross-encoder", "encoder": "fine-tuned", "epochs_run": last.get("epoch"),
                "examples_seen": last.get("examples"), "train_minutes": round(last.get("seconds", 0.0) / 60, 1),
                "lr": meta["lr"], "batch_size": meta["batch_size"], "max_length": meta.get("max_length"),
                "train_pairs": meta["train_pairs"], "val_untrained": hist[0].get("val") if hist else None,
                "val_last": last.get("val"), "device": "cpu"}
    hist_path = path / "history.json"
    if not hist_path.is_file():
        return None
    rec = read_json_as(TrainedHistory, hist_path, what="a trained model's history {config, history: [...]}")
    hist, cfg = rec["history"], rec["config"]
    best = max(hist, key=lambda h: h["val"])
    return {"kind": cfg["kind"], "encoder": "fine-tuned" if cfg["train_encoder"] else "frozen " + cfg["base_model"],
            "epochs_run": hist[-1]["epoch"], "best_epoch": best["epoch"], "val_at_best": round(best["val"], 4),
            "val_untrained": round(hist[0]["val"], 4), "train_minutes": round(hist[-1]["seconds"] / 60, 1),
            "lr": cfg["lr"], "batch_size": cfg["batch_size"], "sampling": cfg["sampling"], "device": "cpu"}


@dataclass
class Table3Result:
    """One evaluated (row, setting): its @1/K, the paired comparison with the zero-shot row, the paper's figures."""

    row: RowSpec
    setting: str
    score: RowScore
    versus: dict[int, dict] = field(default_factory=dict)
    paper: dict[int, float] = field(default_factory=dict)
    seconds: float = 0.0


def table3_plan(request: Table3Request) -> list[tuple[RowSpec, str]]:
    """(row, setting) pairs: every row on every setting, plus the Bipolar-encoder row (and its zero-shot
    reference) on the request's `bipolar_settings`."""
    rows = table3_rows(request.models, request.base_model)
    keep = ("Bipolar-encoder", f"zero-shot cosine ({request.base_model})")
    return [(r, s) for s in request.settings for r in rows] + [
        (r, s) for s in request.bipolar_settings for r in rows if r.method in keep and request.models.get("bipolar")]


def run_inputs(request: Table3Request, seed: int, data: str | None = None) -> dict:
    """What an `evaluate_table3` run depends on: its options, and each model folder with the last change of its
    files (a folder trained again is another input)."""
    def stamp(folder: str) -> list:
        path = Path(folder)
        files = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else []
        return [folder, max((p.stat().st_mtime_ns for p in files), default=0)]

    r = request
    return {"split": r.split, "settings": list(r.settings), "ks": [int(k) for k in r.ks], "base_model": r.base_model,
            "bipolar_settings": list(r.bipolar_settings), "cross_limit": r.cross_limit, "seed": seed, "data": data,
            "models": {k: stamp(v) for k, v in sorted(r.models.items()) if v}}


def evaluate_table3(corpus, request: Table3Request, config=None,
                    on_result: Callable[[Table3Result], None] | None = None, state: str | Path | None = None,
                    data: str | None = None) -> list[Table3Result]:
    """Evaluate the plan of `table3_plan` for `request` on `corpus`; `config`: the run's options (the stages'
    runtime; its seed draws the cross-encoder rows' sample); `on_result` is called after each row (progress).

    With `state` (a JSON file), every finished (row, setting) is stored there as it finishes: the same call again
    evaluates only the rest and removes the file at the end; a call on other inputs (`run_inputs`) is refused in
    one line while the file is there."""
    zero_shot, seed = f"cosine:{request.base_model}", getattr(config, "seed", SEED)
    split, ks = request.split, request.ks
    stages, reference, out = {}, {}, []  # loaded stages (and pools), the zero-shot row's score per setting, results
    inputs = run_inputs(request, seed, data)
    state, done = Path(state) if state is not None else None, {}
    if state is not None and state.exists():  # the rows an interrupted run finished, if it ran on these inputs
        saved = read_json_as(TableState, state, what="an interrupted table's state {inputs, rows}")
        if saved["inputs"] != inputs:
            differs = sorted(k for k in {*inputs, *saved["inputs"]} if inputs.get(k) != saved["inputs"].get(k))
            raise ArgsimError(f"{state}: holds the finished rows of an interrupted run on other inputs "
                              f"({', '.join(differs)}); rerun that command to finish it, or delete the file to "
                              "start over")
        if done := saved["rows"]:
            warn(f"{state}: {len(done)} row(s) of an interrupted run are kept; only the rest are evaluated")
    for row, setting in table3_plan(request):
        key = f"{row.method}|{row.first}|{row.second}|{setting}"
        if key not in done:  # evaluated now, kept as the state file keeps it
            t0 = time.perf_counter()
            score = evaluate_row(row, corpus, split, setting, ks, seed=seed, stages=stages, config=config,
                                 limit=(request.cross_limit or None) if row.uses_cross else None)
            done[key] = {"ids": list(score.ids), "hits": {str(k): v.tolist() for k, v in score.hits.items()},
                         "seconds": time.perf_counter() - t0}
            if state is not None:
                write_json(state, {"inputs": inputs, "rows": done}, indent=None)
        kept = done[key]
        score = RowScore(kept["ids"], {int(k): np.asarray(v, dtype=bool) for k, v in kept["hits"].items()})
        if row.first == zero_shot:
            reference[setting] = score
        versus = versus_reference(score, reference[setting], ks) \
            if setting in reference and row.first != zero_shot else {}
        paper = table3(row.method) if (split, setting) == ("test", "epa") else {}
        result = Table3Result(row, setting, score, versus, dict(paper), kept["seconds"])
        out.append(result)
        if on_result:
            on_result(result)
    if state is not None:
        state.unlink(missing_ok=True)  # the table is whole: nothing left to resume
    return out


def table3_row_specs(results: Sequence[Table3Result], split: str, ks: Sequence[int], all_points: int,
                     budgets: dict | None = None) -> list[tuple]:
    """The result rows as (Evaluation, labels) pairs for `argsim.results.rows_from_specs`, one per (row, setting, K);
    a row evaluated on fewer than `all_points` points says so in its method name."""
    specs = []
    for r in results:
        acc, n = r.score.acc, len(r.score.ids)
        label = r.row.method if n >= all_points else f"{r.row.method} ({n}-point sample)"
        evaluation = r.score.evaluation(split)
        evaluation = replace(evaluation, metrics={m: round(v, 4) for m, v in evaluation.items()})
        budget = (budgets or {}).get(r.row.method) or {"retriever": training_budget(r.row.first),
                                                       "reranker": training_budget(r.row.second)}
        for k in ks:
            specs.append((evaluation, {
                "method": label, "model": r.row.second or r.row.first, "setting": r.setting,
                "metrics": [f"accuracy@1/{k}"], "paper": {f"accuracy@1/{k}": r.paper.get(k)}, "seconds": r.seconds,
                "extra": {"points": n, "first_stage": r.row.first, "first_stage_at1": round(acc[1], 4),
                          "reranker": r.row.second, "vs_zero_shot": r.versus.get(k), "budget": budget}}))
    return specs


def run_table3(request: Table3Request, budgets: str | Path | None = None, curves: str | Path | None = None,
               config=None, state: str | Path | None = None) -> tuple[list[Table3Result], list[tuple]]:
    """Table 3 as `argsim eval counter-neural` runs it: every model folder checked before the long work
    (`pipeline.check_stage`), `curves` plotted from the folders' histories, `evaluate_table3` on counterargs-18
    under the config's data folder (its seed draws the cross-encoder rows' sample).

    Args:
        request: the rows, split, settings, depths and samples (`Table3Request`).
        budgets: A JSON file: method -> training budget text (default: each folder's records, `training_budget`).
        curves: A PNG of the given models' learning curves. config: the run's `RunConfig`.
        state: where finished rows are kept for an interrupted run to continue (`evaluate_table3`).

    Returns:
        The results and their rows' specs (`table3_row_specs`, for `argsim.results.rows_from_specs`).

    Example:
        >>> results, specs = run_table3(Table3Request({"bipolar": "counter-bipolar"}))  # doctest: +SKIP
    """
    config = config or RunConfig()
    models = {k: str(v) if v else None for k, v in request.models.items()}
    request = replace(request, models=models)
    for name, folder in models.items():
        if folder:
            check_stage(folder, f"--{name}")
    text = read_json_as(Budgets, budgets, what="a JSON object: method -> training budget text") if budgets else None
    if curves:
        learning_curves({k: h for k, v in models.items() if v and (h := read_history(v))}, curves)
    corpus = load_counterargs(config.data_dir)
    results = evaluate_table3(corpus, request, config, state=state, data=str(config.data_dir or default_data_dir()))
    return results, table3_row_specs(results, request.split, request.ks, len(corpus.points(request.split)), text)
