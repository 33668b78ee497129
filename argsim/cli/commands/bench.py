"""`argsim bench backends`: the CPU backends measured against PyTorch fp32 on every task (docs/backends.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from argsim.cli.groups import ArgsimGroup, console, run_config

bench_app = typer.Typer(name="bench", cls=ArgsimGroup, no_args_is_help=True, rich_markup_mode="rich",
                        add_completion=False, help="Benchmarks whose rows go to bench/results (the work folder's).")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app)


@bench_app.command("backends")
def backends(
    ctx: typer.Context,
    quick: bool = typer.Option(False, "--quick", help="300 texts, 20 points a setting, 200 triplets of each kind."),
    n: int = typer.Option(2000, min=1, help="ArgKP training arguments timed for throughput."),
    threads: str = typer.Option("1,2", help="Thread counts timed (comma list)."),
    quality_threads: int = typer.Option(1, min=1, help="Threads of the latency and task passes."),
    repeats: int = typer.Option(1, min=1, help="Throughput passes (the best counts)."),
    counter_points: int = typer.Option(50, min=1, help="First test points of each counterargs-18 setting."),
    triplets: int = typer.Option(500, min=1, help="First thematic test triplets."),
    minutes_triplets: int = typer.Option(500, min=1, help="First mined minutes test triplets."),
    minutes_dir: Path = typer.Option(Path("runs/minutes-triplets"),
                                     help="Folder of `argsim data triplets minutes --out` (its test.jsonl)."),
    variants: str = typer.Option("torch-fp32,torch-bf16,onnx-fp32,onnx-int8,openvino-fp32,openvino-int8,model2vec",
                                 help="Variants to measure (comma list)."),
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
