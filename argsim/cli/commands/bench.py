"""`argsim bench backends`: the CPU backends measured against PyTorch fp32 on every task (docs/backends.md)."""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from typing import Annotated

import typer

from argsim.benchmarks.backends import BackendBenchOptions
from argsim.cli.groups import GROUPS, console, group, run_config, summary_table
from argsim.cli.params import config_options

DEFAULTS = BackendBenchOptions()
HELP = {f.name: f.metadata.get("help", "") for f in fields(BackendBenchOptions)}


bench_app = group("bench", "Benchmarks whose rows go to bench/results (the work folder's).")
GROUPS.append(bench_app)


@bench_app.command("backends")
@config_options(BackendBenchOptions, "options", exclude=("threads", "variants"))
def backends(
    ctx: typer.Context,
    options: BackendBenchOptions,
    quick: Annotated[bool, typer.Option(
        "--quick", help="300 texts, 20 points a setting, 200 triplets of each kind.")] = False,
    threads: Annotated[str, typer.Option(help=HELP["threads"])] = ",".join(map(str, DEFAULTS.threads)),
    variants: Annotated[str, typer.Option(help=HELP["variants"])] = ",".join(DEFAULTS.variants),
) -> None:
    """Measure the CPU backends (torch fp32 / bf16, ONNX Runtime and OpenVINO fp32 / int8, a model2vec static
    model) with MiniLM: throughput, one-query latency, peak memory, cosine to fp32 and every task's figure, and
    its speed-up and task deltas against torch fp32 (docs/backends.md). Rows merge into backends.json."""
    from argsim.benchmarks.backends import parse_threads, run_backends_benchmark, variant_names

    run_config(ctx)  # the global options were checked; the benchmark sets its own per variant
    options = replace(options, threads=parse_threads(threads), variants=variant_names(variants))
    if quick:
        options = BackendBenchOptions.quick(**{k: v for k, v in asdict(options).items()
                                               if k not in ("n", "counter_points", "triplets", "minutes_triplets")})
    rows = run_backends_benchmark(options, log=console.print)
    console.print(f"{len({r.method for r in rows})} variant(s) measured; rows in backends.json")


@bench_app.command("default")
def default(
    ctx: typer.Context,
    fp32: Annotated[str, typer.Option(help="The torch fp32 model the variants are compared with, as evaluate rows "
                                           "name it.")] = "minilm",
) -> None:
    """The CPU default decided from the saved rows: every variant that `argsim evaluate --compare` tested against
    torch fp32 (evaluate.json), per task its figure, fp32's 95 % interval and the paired test; it passes when every
    figure lies inside the interval with no significant difference; the fastest that passes (backends.json) and runs
    the model as stored (torch; an exported graph stays one option away) is named. The default stays torch fp32."""
    from rich.markup import escape

    from argsim.benchmarks.default_gate import decide_from_results, decision_table
    from argsim.paths import results_dir

    run_config(ctx)
    decisions, winner = decide_from_results(results_dir(), fp32)
    header, *rows = decision_table(decisions)
    rows = [[escape(c) for c in r] for r in rows]  # 'minilm [onnx int8]' is no markup
    console.print(summary_table("variants against torch fp32 (fastest first)", header, rows))
    for d in decisions:
        if d.passes and not d.eligible:
            console.print(f"{d.variant} passes but runs an exported graph, not the model as stored: one option away, "
                          "not a default", markup=False, highlight=False)
    console.print(f"default: {fp32} (torch fp32) on every CPU, so that a command gives the same figures on every "
                  "machine; " + (f"{winner} passes and runs the model as stored: one option away" if winner else
                                 "no faster variant that runs the model as stored passes"), markup=False,
                  highlight=False)
