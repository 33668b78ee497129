"""`argsim report`: show every bench/results/*.json as tables; `--readme` refreshes the README's table of argsim
vs the papers, `--full` writes every row (docs/results.md), `--html` one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from argsim.cli.groups import console, root_command, summary_table
from argsim.cli.params import OUT_FILE, out_file


@root_command("report")
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
    from argsim.report import markdown_table, select_results, table_cells, update_readme, write_full_results

    results = select_results(task, required=readme is None and full is None)  # nothing to do: says why, exit 2
    for res in results:
        if markdown:
            console.print(markdown_table(res, conditions=conditions), markup=False, highlight=False)
        else:
            console.print(summary_table(res["task"], *table_cells(res, conditions), caption=res.get("command")))
    if readme is not None:
        console.print(f"{readme}: {'updated' if update_readme(readme) else 'already up to date'}")
    if full is not None:
        console.print(f"{write_full_results(full)}: written")
    if html is not None:
        from argsim.benchmarks.evaluate_view import results_html
        from argsim.io import write_text

        console.print(f"{write_text(html, results_html(results))}: written")

