"""Commands on any task's files: `argsim data check` (every dataset) and `argsim eval triplets` (triplet accuracy
and mean diff of any backend model on a JSONL of triplets, thematic or minutes)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.cli.groups import console, data_app, eval_app, run_config, summary_table
from argsim.cli.params import OUT_FILE, model_option
from argsim.data.catalog import DATASETS, check_dataset, load_catalog
from argsim.errors import ArgsimError
from argsim.io import read_records, write_json
from argsim.results import environment, evaluate_models, write_results
from argsim.schemas import TripletRecord


@data_app.command("check")
def check(ctx: typer.Context,
          name: Annotated[str, typer.Argument(help="Dataset: argkp, counterargs18, poliinfo, wikipedia, sick "
                                                "(or 'all').")]) -> None:
    """Validate a dataset folder under --data-dir and print its statistics (counts per split, topics, ...)
    next to the figures documented in its SOURCE.md; exit 2 when a figure differs or a file is missing."""
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


@eval_app.command("triplets")
def eval_triplets(
    ctx: typer.Context,
    triplets: Annotated[Path, typer.Argument(help="JSONL (or CSV) with fields anchor, positive, negative "
                                              "(as written by `argsim data triplets ...`).")],
    model: Annotated[list[str], model_option(help="Model name or folder; repeat to compare several.")] = ("minilm",),
    distance: Annotated[Literal["cosine", "l1", "euclidean"], typer.Option(
        help="cosine | l1 | euclidean (l1 for the thematic BiLSTM).")] = "cosine",
    ties: Annotated[Literal["correct", "wrong"], typer.Option(
        help="Count diff == 0 as 'correct' (minutes paper) or 'wrong'.")] = "correct",
    limit: Annotated[int | None, typer.Option(min=1, help="Score only the first N triplets.")] = None,
    task: Annotated[str | None, typer.Option(help="Also merge the rows into bench/results/<task>.json.")] = None,
    out: Annotated[Path | None, typer.Option(callback=OUT_FILE, help="Write the scores as JSON here.")] = None,
) -> None:
    """Share of triplets whose positive is closer to the anchor than the negative, and the mean diff."""
    from argsim.evaluation import TripletEvaluator

    cfg = run_config(ctx)
    records = read_records(triplets, TripletRecord)[:limit]  # checked before anything loads
    env = environment(seed=cfg.seed, device=cfg.device, data_files=[triplets])
    evaluator = TripletEvaluator(records, triplets.stem, distance, ties, cfg)
    scored, rows = evaluate_models(evaluator, model, env, method="triplet-eval", setting=distance)
    table_rows = [[name, *s.metrics.values(), s.details["ties"], f"{seconds:.1f}"] for name, s, seconds in scored]
    payload = [{"model": name, **s.metrics, "n": s.n, "ties": s.details["ties"], "seconds": seconds}
               for name, s, seconds in scored]
    console.print(summary_table(f"triplets: {triplets.name} ({len(records):,})",
                                ["model", "accuracy", "mean diff", "ties", "seconds"], table_rows))
    if out:
        write_json(out, {"triplets": str(triplets), "distance": distance, "results": payload})
    if task:
        write_results(task, rows, merge=True)
