"""`argsim data check NAME`: validate a dataset and print its statistics beside the expected figures."""

from __future__ import annotations

from typing import Annotated

import typer

from argsim.cli.groups import console, data_app, run_config, summary_table
from argsim.errors import ArgsimError


@data_app.command("check")
def check(ctx: typer.Context,
          name: Annotated[str, typer.Argument(help="Dataset: argkp, counterargs18, poliinfo, wikipedia, sick "
                                                "(or 'all').")]) -> None:
    """Validate a dataset folder under --data-dir and print its statistics (counts per split, topics, ...)
    next to the figures documented in its SOURCE.md; exit 2 when a figure differs or a file is missing."""
    from argsim.data.catalog import DATASETS, check_dataset, load_catalog

    load_catalog()
    names = sorted(DATASETS) if name == "all" else [name]
    failed = []
    for n in names:
        stats = check_dataset(n, run_config(ctx).data_dir)
        console.print(summary_table(f"{n}: {DATASETS[n].title}", ["statistic", "value", "expected", ""], [
            [s.name, *(v if isinstance(v, int) else "" if v is None else str(v) for v in (s.value, s.expected)),
             {True: "[green]ok[/]", False: "[red]differs[/]", None: ""}[s.ok]] for s in stats]))
        failed += [f"{n}: {s.name}" for s in stats if s.ok is False]
    if failed:
        raise ArgsimError(f"{len(failed)} statistic(s) differ from the documented figures: {'; '.join(failed)}")
