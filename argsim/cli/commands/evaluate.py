"""`argsim evaluate MODEL [MODEL ...]`: every task a model can do, zero-shot, in one leaderboard (docs/evaluate.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from argsim.benchmarks.evaluate import N_BOOT, TASKS
from argsim.cli.groups import console, root_command, run_config, summary_table
from argsim.cli.params import OUT_DIR, OUT_FILE, comma_choices, out_file


@root_command("evaluate")
def evaluate(
    ctx: typer.Context,
    models: Annotated[list[str], typer.Argument(
        help="Models: a registered or shipped name (`argsim models`), a model folder (sentence-transformers, or "
             "trained by argsim), a Hugging Face id in the local cache, or bm25 (ArguAna only).")],
    tasks: Annotated[str | None, typer.Option(callback=comma_choices(*TASKS),
                                              help=f"Comma list of tasks (default all): {', '.join(TASKS)}.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Score only the first N units of each task (a quick "
                                                          "look).")] = None,
    compare: Annotated[tuple[str, str] | None, typer.Option(
        help="Two of the models, A B: paired tests of A - B on every task (paired bootstrap; McNemar for 0/1 "
             "outcomes); significant differences marked *.")] = None,
    n_boot: Annotated[int, typer.Option(min=100, help="Bootstrap draws of each interval and paired test.")] = N_BOOT,
    out: Annotated[Path | None, typer.Option(callback=OUT_FILE, help="Write the rows (argsim's results format) to "
                                                                     "this JSON file.")] = None,
    record: Annotated[bool, typer.Option("--record", help="Also merge the rows into bench/results/evaluate.json "
                                                          "(the work folder's).")] = False,
    mteb_out: Annotated[Path | None, typer.Option(callback=OUT_DIR, help="Write MTEB result JSON files here (one "
                                                                         "folder per model, a file per task).")] = None,
    html: Annotated[Path | None, typer.Option(callback=out_file(".html"), help="Write the leaderboard and a chart "
                                              "per task as one self-contained HTML page.")] = None,
) -> None:
    """Score models on every task they can do (bi-encoders: all; cross-encoders: the ranking tasks), zero-shot, on
    the official test splits, with 95 % bootstrap intervals and the papers' and MTEB's figures beside them."""
    from rich.markup import escape

    from argsim.benchmarks.evaluate import run_evaluate
    from argsim.benchmarks.evaluate_view import leaderboard_cells, references_text, write_outputs

    cfg = run_config(ctx)
    chosen = [t.strip() for t in tasks.split(",") if t.strip()] if tasks is not None else None
    board = run_evaluate(models, tasks=chosen, limit=limit, config=cfg, compare=compare, n_boot=n_boot,
                         log=lambda line: None if cfg.quiet else console.print(line, markup=False, highlight=False))
    header, rows = leaderboard_cells(board)
    rows = [[escape(c) if isinstance(c, str) else c for c in r] for r in rows]  # 'minilm [onnx int8]' is no markup
    console.print(summary_table(f"argsim evaluate: value [95 % interval]{f', first {limit} units' if limit else ''}",
                                header, rows))
    for line in references_text(board):
        console.print(f"published - {line}", markup=False, highlight=False)
    for line in write_outputs(board, cfg, out=out, record=record, mteb_out=mteb_out, html=html):
        console.print(line, markup=False, highlight=False)
