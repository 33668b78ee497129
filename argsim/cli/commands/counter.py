"""Counter-argument retrieval commands: `argsim rank counterargs`, `argsim eval counterargs`, `argsim train ltr`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from argsim.cli.groups import console, eval_app, rank_app

SETTING_HELP = ("sdoc | sdc | sdoa | sda | stc | sta | epc | epa (same debate / same theme / entire portal; "
                "opposing counters / counters / opposing arguments / arguments); repeat for several")


@rank_app.command("counterargs")
def rank_counterargs(
    method: str = typer.Option("bm25", "--method", "-m", help="Ranking method: simple-sd, logreg-part, logreg-full, "
                               "xgboost-part, xgboost-full, bm25, tf-cosine, emb-cosine, feature:<name> (one "
                               "feature), or a neural ranker; `--list` shows all."),
    setting: list[str] = typer.Option(["sdoc"], "--setting", "-s", help=SETTING_HELP),
    split: str = typer.Option("test", help="counterargs-18 split: training | validation | test."),
    input_file: Path | None = typer.Option(None, "--input", "-i", help="Your own arguments instead of "
                                           "counterargs-18: JSONL/CSV/JSON with id, text, optional conclusion, "
                                           "kind (point|counter) and counter (gold id)."),
    candidates: str = typer.Option("all", help="With --input: 'all' other records or only 'counters'."),
    model: str | None = typer.Option(None, help="Encoder / model for rankers that need one (minilm, glove50, "
                                     "a folder, or a trained LTR model folder for logreg/xgboost)."),
    opt: list[str] = typer.Option([], "--opt", help="Ranker option key=value, repeatable (e.g. "
                                  "weights=-0.1,-0.1,0,0.9,0,0,0,0.9, bm25_idf=okapi, workers=2)."),
    top_k: int = typer.Option(10, help="Candidates stored per point in the ranking."),
    limit: int | None = typer.Option(None, help="Rank only the first N points (id order)."),
    out: Path = typer.Option(Path("runs/counter/ranking.jsonl"), help="Ranking JSONL (one line per point)."),
    task: str | None = typer.Option(None, help="Also merge accuracy@1 / MRR into bench/results/<task>.json."),
    list_methods: bool = typer.Option(False, "--list", help="List the ranking methods and exit."),
) -> None:
    """Rank each point's candidate pool and write the top-k counters per point as JSONL, with the rank of the
    true counter, then print accuracy@1 and MRR per setting beside the paper's Table 2."""
    from argsim.counter.rankers import load_rankers
    from argsim.counter.run import dataset_points, parse_options, run_ranker
    from argsim.io import write_jsonl

    if list_methods:
        table = Table(title="counter-argument rankers")
        table.add_column("method")
        table.add_column("what it does")
        for name, info in sorted(load_rankers().items()):
            table.add_row(name, info.help)
        console.print(table)
        return
    options = parse_options(opt)
    if model:
        options["model"] = model
    runs, records = [], []
    if input_file is not None:
        from argsim.counter.userdata import load_user_arguments

        points, pools, gold = load_user_arguments(input_file, candidates=candidates)
        runs.append(run_ranker(method, points, pools, gold, setting="user", split=input_file.stem,
                               options=options, top_k=top_k))
    else:
        for s in setting:
            points, pools, gold = dataset_points(split, s, limit=limit)
            runs.append(run_ranker(method, points, pools, gold, setting=s, split=split, options=options,
                                   top_k=top_k))
    for r in runs:
        records += r.records
    write_jsonl(out, records)
    _print_summary(records, {(r.method, r.setting, r.split): r for r in runs}, task=task, model=model)
    console.print(f"ranking of {len(records):,} points written to {out}")


@eval_app.command("counterargs")
def eval_counterargs(
    rankings: list[Path] = typer.Argument(..., help="Ranking JSONL file(s) written by `argsim rank counterargs`."),
    ties: str = typer.Option("expected", help="Ties with the true counter: expected (1/t credit), pessimistic, "
                             "optimistic."),
    task: str | None = typer.Option(None, help="Also merge the figures into bench/results/<task>.json."),
) -> None:
    """accuracy@1 and MRR per method and setting from ranking JSONL files, beside the paper's Table 2."""
    from argsim.io import read_records

    records = []
    for path in rankings:
        records += read_records(path, required=["point", "pool_size"])
    _print_summary(records, {}, task=task, ties=ties)


def _print_summary(records: list[dict], runs: dict, task: str | None = None, ties: str = "expected",
                   model: str | None = None) -> None:
    from argsim.counter.evaluate import paper_figure, summarize
    from argsim.results import ResultRow, environment, write_results
    from argsim.settings import RUNTIME

    table = Table(title="best-counter retrieval: accuracy@1 (paper = Table 2 of the bipolar-encoder paper)")
    for col in ("method", "split", "setting", "points", "pool", "random", "acc@1", "paper", "MRR", "s"):
        left = col in ("method", "split", "setting")
        table.add_column(col, justify="left" if left else "right", no_wrap=col == "method")
    rows = []
    for s in summarize(records, ties=ties):
        run = runs.get((s.method, s.setting, s.split))
        paper = paper_figure(s.method, s.setting)
        table.add_row(s.method, s.split, s.setting, f"{s.points:,}", f"{s.mean_pool:,.1f}",
                      f"{s.random_accuracy:.3f}", f"{s.accuracy_at_1:.3f}", "" if paper is None else f"{paper:.3f}",
                      "n/a" if s.mrr != s.mrr else f"{s.mrr:.3f}", "" if run is None else f"{run.seconds:.1f}")
        for metric, value, pap in (("accuracy@1", s.accuracy_at_1, paper), ("mrr", s.mrr, None)):
            if value != value:  # MRR of a pruned ranking is not exact: not reported
                continue
            rows.append(ResultRow(method=s.method, model=model, split=s.split, setting=s.setting, metric=metric,
                                  value=round(value, 4), paper=pap, seconds=None if run is None else run.seconds,
                                  peak_mb=None if run is None else run.peak_mb,
                                  extra={"points": s.points} | ({"options": run.options} if run else {})))
    console.print(table)
    if task and rows:
        write_results(task, rows, env=environment(seed=RUNTIME.seed, device=RUNTIME.device), merge=True)
