"""Counter-argument retrieval commands: `argsim rank counterargs`, `argsim eval counterargs`, `argsim train ltr`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.cli.groups import console, eval_app, rank_app, run_config, summary_table, train_app
from argsim.cli.params import OUT_DIR, OUT_FILE, choices, config_options, model_option
from argsim.config import RunConfig
from argsim.counter.core.run import RankRequest
from argsim.counter.lexical.feature_config import FeatureConfig
from argsim.counter.ltr.model import LTR_METHODS
from argsim.data.counterargs import SETTINGS
from argsim.engine import engine_from_config

Split = Literal["training", "validation", "test"]
Setting = Literal["sdoc", "sdc", "sdoa", "sda", "stc", "sta", "epc", "epa"]

SETTING_HELP = ("sdoc | sdc | sdoa | sda | stc | sta | epc | epa (same debate / same theme / entire portal; "
                "opposing counters / counters / opposing arguments / arguments); repeat for several")


@rank_app.command("counterargs")
@config_options(RankRequest, "request", exclude=("settings", "options"))
def rank_counterargs(
    ctx: typer.Context,
    request: RankRequest,
    setting: Annotated[list[str], typer.Option(
        "--setting", "-s", callback=choices(*SETTINGS), help=SETTING_HELP)] = ("sdoc",),
    model: Annotated[str | None, model_option(help="Encoder / model for rankers that need one (minilm, glove50, a "
                                     "folder, or a trained LTR model folder for logreg/xgboost).")] = None,
    opt: Annotated[list[str], typer.Option("--opt", help="Ranker option key=value, repeatable (e.g. "
                                  "weights=-0.1,-0.1,0,0.9,0,0,0,0.9, bm25_idf=okapi); bulk work runs on the "
                                  "global --engine.")] = (),
    out: Annotated[Path, typer.Option(
        callback=OUT_FILE, help="Ranking JSONL (one line per point).")] = Path("runs/counter/ranking.jsonl"),
    task: Annotated[str | None, typer.Option(help="Also merge accuracy@1 / MRR into "
                                                  "bench/results/<task>.json.")] = None,
    list_methods: Annotated[bool, typer.Option("--list", help="List the ranking methods and exit.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Keep the settings OUT already holds for this method and "
                                "split (written as each setting finished) and rank only the others.")] = False,
) -> None:
    """Rank each point's candidate pool and write the top-k counters per point as JSONL, with the rank of the
    true counter, then print accuracy@1 and MRR per setting beside the paper's Table 2. OUT is rewritten
    (atomically) after every finished setting, so an interrupted run keeps them; `--resume` continues it."""
    from rich.markup import escape

    from argsim.counter.core.registry import get_ranker, load_rankers, ranker_options
    from argsim.counter.core.run import parse_options, rank_counterargs
    from argsim.errors import ArgsimError

    if list_methods:
        console.print(summary_table("counter-argument rankers", ["method", "what it does"],
                                    [[escape(n), escape(i.help)] for n, i in sorted(load_rankers().items())]))
        return
    if model in load_rankers():
        raise ArgsimError(f"-m / --model {model} names a ranking method, not a model: give it as --method {model}")
    options = parse_options(opt, allowed=ranker_options(get_ranker(request.method)), method=request.method)
    request = replace(request, settings=tuple(setting), options=options | ({"model": model} if model else {}))
    runs, records = rank_counterargs(request, run_config(ctx), out=out, resume=resume)
    ranked = {r.setting for r in runs}
    for s in [s for s in setting if resume and s not in ranked]:
        console.print(f"kept {sum(r['setting'] == s for r in records):,} ranked points of {s} from {out} (--resume)")
    _print_summary(records, {(r.method, r.setting, r.split): r for r in runs}, run_config(ctx), task, model=model)
    console.print(f"ranking of {len(records):,} points written to {out}")


@eval_app.command("counterargs")
def eval_counterargs(
    ctx: typer.Context,
    rankings: Annotated[list[Path], typer.Argument(help="Ranking JSONL file(s) written by `argsim rank counterargs`.")],
    ties: Annotated[Literal["expected", "pessimistic", "optimistic"], typer.Option(
        help="Ties with the true counter: expected (1/t credit), pessimistic, optimistic.")] = "expected",
    task: Annotated[str | None, typer.Option(help="Also merge the figures into bench/results/<task>.json.")] = None,
) -> None:
    """accuracy@1 and MRR per method and setting from ranking JSONL files, beside the paper's Table 2."""
    from argsim.counter.core.evaluation import read_rankings

    _print_summary(read_rankings(rankings), {}, run_config(ctx), task, ties)


def _print_summary(records: list[dict], runs: dict, config: RunConfig, task: str | None = None,
                   ties: str = "expected", model: str | None = None) -> None:
    from rich.markup import escape

    from argsim.counter.core.evaluation import summarize
    from argsim.published import table2
    from argsim.results import result_rows, run_environment, write_results

    env = run_environment(config)
    table_rows, rows = [], []
    for s in summarize(records, ties=ties):
        run = runs.get((s.method, s.setting, s.split))
        paper = table2(s.method, s.setting)
        table_rows.append([escape(s.method), s.split, s.setting, s.points, f"{s.mean_pool:,.1f}",
                           *(f"{v:.3f}" for v in (s.random_accuracy, s.accuracy_at_1)),
                           "" if paper is None else f"{paper:.3f}", "n/a" if s.mrr != s.mrr else f"{s.mrr:.3f}",
                           "" if run is None else f"{run.seconds:.1f}"])
        ev = s.evaluation()
        ev = replace(ev, metrics={k: round(v, 4) for k, v in ev.items()})
        rows += result_rows(ev, method=s.method, model=model, setting=s.setting,
                            paper={"accuracy@1": paper}, seconds=None if run is None else run.seconds,
                            peak_mb=None if run is None else run.peak_mb,
                            extra={"points": s.points} | ({"options": run.options} if run else {}), env=env)
    if not table_rows:  # a collection without gold counters: rankings, no accuracy
        console.print(f"no point has a gold counter: {len(records):,} rankings, no accuracy@1")
        return
    console.print(summary_table("best-counter retrieval: accuracy@1 (paper = Table 2 of the bipolar-encoder paper)",
                                ["method", "split", "setting", "points", "pool", "random", "acc@1", "paper", "MRR",
                                 "s"], table_rows))
    if task and rows:
        write_results(task, rows, merge=True)


@train_app.command("ltr")
@config_options(FeatureConfig)
def train_ltr_cmd(
    ctx: typer.Context,
    config: FeatureConfig,
    setting: Annotated[list[str], typer.Option(
        "--setting", "-s", callback=choices(*SETTINGS),
        help=SETTING_HELP + "; one model per setting, trained on the training split's pools of that setting.")] = (
        "sdoc",),
    method: Annotated[list[str], typer.Option(
        "--method", callback=choices(*LTR_METHODS),
        help="Which models to fit (share one feature extraction).")] = LTR_METHODS,
    neg_per_point: Annotated[int, typer.Option(
        min=0, help="False pairs sampled per training point from its pool (0 = all).")] = 10,
    input_file: Annotated[Path | None, typer.Option("--input", "-i", help="Train on your own arguments instead "
                                           "(JSONL/CSV/JSON with id, text, optional conclusion, kind point|counter "
                                           "and counter = the true counter's id); saved under OUT/user/.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Use a random sample of N training points.")] = None,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Models go to OUT/<setting>/<method>/.")] = Path("models/counter/ltr"),
) -> None:
    """Fit logistic-regression / XGBoost rankers (appendix B.1 hyper-parameters) pointwise on counterargs-18
    training pairs: each point's true counter plus sampled false candidates from its pool."""
    from argsim.counter.ltr.training import train_ltr_settings

    saved = train_ltr_settings(setting, tuple(method), config, run_config(ctx), neg_per_point=neg_per_point or None,
                               out_dir=out, limit=limit, input_file=input_file)
    rows = [[s["setting"], s["method"], s["sampling"]["pairs"], s["sampling"]["positives"], str(s["folder"]),
             f"{s['seconds']:.0f}"] for s in saved]
    console.print(summary_table("trained LTR models", ["setting", "method", "pairs", "positives", "folder", "s"], rows))


@train_app.command("simple-sd")
@config_options(FeatureConfig, exclude=("bert_model", "bert_pooling", "bm25_idf"))  # Simple-SD: x1..x8 only
def train_simple_sd(
    ctx: typer.Context,
    config: FeatureConfig,
    setting: Annotated[list[str], typer.Option(
        "--setting", "-s", callback=choices(*SETTINGS), help=SETTING_HELP)] = ("sdoc", "sda"),
    split: Annotated[Split, typer.Option(help="Split to compare / tune on.")] = "validation",
    limit: Annotated[int | None, typer.Option(min=1, help="Random sample of N points per setting (seeded).")] = None,
    tune: Annotated[bool, typer.Option("--tune", help="Also search the 8 weights by coordinate ascent (exact "
                              "features of every pair) on --tune-setting.")] = False,
    tune_setting: Annotated[Setting | None, typer.Option(help="Setting to tune on (default: sda if among --setting, "
                                            "else the first).")] = None,
    out: Annotated[Path, typer.Option(
        callback=OUT_FILE, help="JSON with the readings' accuracies and "
                                "the tuned weights (pass it to `rank "
                                "counterargs --opt weights=FILE`).")] = Path("models/counter/simple-sd.json"),
    task: Annotated[str | None, typer.Option(help="Also merge the figures into bench/results/<task>.json.")] = None,
) -> None:
    """Compare the readings of Simple-SD's weights (literal, interleaved, max-min, sum-min) by accuracy@1 on
    the validation split and, with --tune, search better weights there."""
    from argsim.counter.lexical.features import FEATURE_NAMES
    from argsim.counter.lexical.simplesd import READINGS, study_readings, study_row_specs
    from argsim.io import write_json
    from argsim.results import rows_from_specs, run_environment, write_results

    cfg = run_config(ctx)
    report = study_readings(split, list(setting), limit=limit, tune=tune, tune_setting=tune_setting,
                            word_vectors=config.word_vectors, stopwords=config.stopwords,
                            engine=engine_from_config(cfg),
                            seed=cfg.seed, data_dir=cfg.data_dir)
    console.print(summary_table(f"Simple-SD readings, accuracy@1 on {split}", ["setting", *READINGS],
                                [[s, *(f"{accs[n]:.3f}" for n in READINGS)] for s, accs in report["readings"].items()]))
    if "tuned" in report:
        t = report["tuned"]
        console.print(f"tuned on {split}/{t['setting']}: accuracy@1 {t['accuracy']:.3f} with weights "
                      + ", ".join(f"{FEATURE_NAMES[i]}={v:g}" for i, v in enumerate(t["weights"]) if v != 0))
    write_json(out, report)
    console.print(f"written to {out}")
    if task:
        write_results(task, rows_from_specs(study_row_specs(report), env=run_environment(cfg)),
                      merge=True)
