"""`argsim bench backends`: the CPU backends measured against PyTorch fp32 on every task (docs/backends.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from argsim.cli.groups import ArgsimGroup, console, run_config

bench_app = typer.Typer(name="bench", cls=ArgsimGroup, no_args_is_help=True, rich_markup_mode="rich",
                        add_completion=False, help="Benchmarks whose rows go to bench/results (the work folder's).")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app)


@bench_app.command("backends")
def backends(
    ctx: typer.Context,
    quick: Annotated[bool, typer.Option(
        "--quick", help="300 texts, 20 points a setting, 200 triplets of each kind.")] = False,
    n: Annotated[int, typer.Option(min=1, help="ArgKP training arguments timed for throughput.")] = 2000,
    threads: Annotated[str, typer.Option(help="Thread counts timed (comma list).")] = "1,2",
    quality_threads: Annotated[int, typer.Option(min=1, help="Threads of the latency and task passes.")] = 1,
    repeats: Annotated[int, typer.Option(min=1, help="Throughput passes (the best counts).")] = 1,
    counter_points: Annotated[int, typer.Option(min=1, help="First test points of each counterargs-18 setting.")] = 50,
    triplets: Annotated[int, typer.Option(min=1, help="First thematic test triplets.")] = 500,
    minutes_triplets: Annotated[int, typer.Option(min=1, help="First mined minutes test triplets.")] = 500,
    minutes_dir: Annotated[Path, typer.Option(help="Folder of `argsim data triplets "
                                                   "minutes --out` (its "
                                                   "test.jsonl).")] = Path("runs/minutes-triplets"),
    variants: Annotated[str, typer.Option(help="Variants to measure (comma list).")] = (
        "torch-fp32,torch-bf16,onnx-fp32,onnx-int8,openvino-fp32,openvino-int8,model2vec"),
) -> None:
    """Measure the CPU backends (torch fp32 / bf16, ONNX Runtime and OpenVINO fp32 / int8, a model2vec static
    model) with MiniLM: throughput, one-query latency, peak memory, cosine to fp32 and every task's figure, and
    whether each passes the gates of the CPU default (docs/backends.md). Rows merge into backends.json."""
    from argsim.benchmarks.backends import BackendBenchOptions, parse_threads, run_backends_benchmark, variant_names

    run_config(ctx)  # the global options were checked; the benchmark sets its own per variant
    chosen = {"threads": parse_threads(threads), "quality_threads": quality_threads, "repeats": repeats,
              "minutes_dir": minutes_dir, "variants": variant_names(variants)}
    sizes = {"n": n, "counter_points": counter_points, "triplets": triplets, "minutes_triplets": minutes_triplets}
    options = BackendBenchOptions.quick(**chosen) if quick else BackendBenchOptions(**sizes, **chosen)
    rows = run_backends_benchmark(options, log=console.print)
    console.print(f"{len({r.method for r in rows})} variant(s) measured; rows in backends.json")
