"""`argsim report`: show every bench/results/*.json as tables; `--readme` refreshes the README's table of argsim
vs the papers, `--full` writes every row (docs/results.md), `--html` one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from argsim.cli.groups import console
from argsim.cli.params import OUT_FILE, out_file


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    task: Annotated[str | None, typer.Option(help="Only this task (file name without .json).")] = None,
    readme: Annotated[Path | None, typer.Option(
        callback=OUT_FILE, help="Rewrite the block between <!-- results:start --> and <!-- results:end "
                                "--> in this markdown file.")] = None,
    full: Annotated[Path | None, typer.Option(
        callback=OUT_FILE, help="Also write every row of every task as markdown here (e.g. "
                                "docs/results.md).")] = None,
    markdown: Annotated[bool, typer.Option(help="Print markdown instead of rich tables.")] = False,
    conditions: Annotated[bool, typer.Option(help="Add a column with each row's timing conditions (CPU, its flags, "
                                                "cores, threads, load average; the row's env).")] = False,
    html: Annotated[Path | None, typer.Option(
        callback=out_file(".html"), help="Also write the results as one self-contained HTML page (`argsim evaluate` "
                                         "rows as its leaderboard and charts, other tasks as tables).")] = None,
) -> None:
    """Render the committed results files (the one schema shared by every benchmark and evaluation)."""
    from argsim.errors import ArgsimError, did_you_mean
    from argsim.paths import results_dir
    from argsim.report import (
        COLUMNS,
        _fmt,
        conditions_text,
        load_all,
        markdown_table,
        update_readme,
        write_full_results,
    )

    everything = load_all()
    results = [r for r in everything if task is None or r["task"] == task]
    if not results and readme is None and full is None:  # nothing would be printed: say why, exit 2
        names = [r["task"] for r in everything]
        if task is not None and names:
            raise ArgsimError(f"no results for task '{task}'{did_you_mean(task, names)}: the tasks under "
                              f"{results_dir()} are {', '.join(names)}")
        raise ArgsimError(f"no results files under {results_dir()} (the evaluation commands' --task writes them)")
    empty = [r["task"] for r in results if not r["rows"]]
    if empty:
        from argsim.errors import examples, warn

        warn(f"{len(empty)} results file(s) hold no rows ({examples(empty)})")
    for res in results:
        if markdown:
            console.print(markdown_table(res, conditions=conditions), markup=False, highlight=False)
            continue
        rows = res.get("rows", [])
        cols = [c for c in COLUMNS if any(r.get(c) not in (None, "") for r in rows)]
        table = Table(title=res["task"], caption=res.get("command"))
        for c in cols + (["conditions"] if conditions else []):
            table.add_column(c)
        for r in rows:
            table.add_row(*(_fmt(r.get(c)) for c in cols), *([conditions_text(r)] if conditions else []))
        console.print(table)
    if readme is not None:
        changed = update_readme(readme)
        console.print(f"{readme}: {'updated' if changed else 'already up to date'}")
    if full is not None:
        console.print(f"{write_full_results(full)}: written")
    if html is not None:
        from argsim.benchmarks.evaluate_view import results_html
        from argsim.io import write_text

        console.print(f"{write_text(html, results_html(results))}: written")
