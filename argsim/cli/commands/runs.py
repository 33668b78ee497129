"""The runs of many tasks: `argsim bench backends` (the CPU backends measured against PyTorch fp32 on every task,
docs/backends.md) and `bench default`; `argsim models` (the named offline models and the trained models under the
models folder) and `models build` (the recommended model of each task, in sequence, resumable)."""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from argsim.backend import MODELS
from argsim.benchmarks.backends import BackendBenchOptions, parse_threads, run_backends_benchmark, variant_names
from argsim.cli.groups import GROUPS, check_global_options, console, group, run_config, step_options, summary_table
from argsim.cli.params import config_options, finite_float
from argsim.io import check_output_path
from argsim.modelbuild.inventory import redraw_curves, trained_models
from argsim.modelbuild.publish import TASKS, publish, shipped_summaries
from argsim.paths import results_dir, workdir

DEFAULTS = BackendBenchOptions()
HELP = {f.name: f.metadata.get("help", "") for f in fields(BackendBenchOptions)}


bench_app = group("bench", "Benchmarks whose rows go to bench/results (the work folder's).")
GROUPS.append(bench_app)


@bench_app.command("backends")
@config_options(BackendBenchOptions, "options", exclude=("threads", "variants"))
def backends(
    options: BackendBenchOptions,
    quick: Annotated[bool, typer.Option(
        "--quick", help="300 texts, 20 points a setting, 200 triplets of each kind.")] = False,
    threads: Annotated[str, typer.Option(help=HELP["threads"])] = ",".join(map(str, DEFAULTS.threads)),
    variants: Annotated[str, typer.Option(help=HELP["variants"])] = ",".join(DEFAULTS.variants),
) -> None:
    """Measure the CPU backends (torch fp32 / bf16, ONNX Runtime and OpenVINO fp32 / int8, a model2vec static
    model) with MiniLM: throughput, one-query latency, peak memory, cosine to fp32 and every task's figure, and
    its speed-up and task deltas against torch fp32 (docs/backends.md). Rows merge into backends.json."""
    options = replace(options, threads=parse_threads(threads), variants=variant_names(variants))
    if quick:
        options = BackendBenchOptions.quick(**{k: v for k, v in asdict(options).items()
                                               if k not in ("n", "counter_points", "triplets", "minutes_triplets")})
    rows = run_backends_benchmark(options, log=console.print)
    console.print(f"{len({r.method for r in rows})} variant(s) measured; rows in backends.json")


@bench_app.command("default")
def default(
    fp32: Annotated[str, typer.Option(help="The torch fp32 model the variants are compared with, as evaluate rows "
                                           "name it.")] = "minilm",
) -> None:
    """The CPU default decided from the saved rows: every variant that `argsim evaluate --compare` tested against
    torch fp32 (evaluate.json), per task its figure, fp32's 95 % interval and the paired test; it passes when every
    figure lies inside the interval with no significant difference; the fastest that passes (backends.json) and runs
    the model as stored (torch; an exported graph stays one option away) is named. The default stays torch fp32."""
    from argsim.benchmarks.default_gate import decide_from_results, decision_table

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


models_app = group("models", "The named offline models, the trained ones, and `models build` (the recommended model "
                   "of each task).", invoke_without_command=True, no_args_is_help=False)
GROUPS.append(models_app)


@models_app.callback()
def models(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Option(help="Where trained models live (under the work folder).")] = Path("models"),
) -> None:
    """List the named offline models (installed or not) and the trained models under --folder with the figure
    each reached (from its train_config.json / models_build.json)."""
    if ctx.invoked_subcommand is not None:
        return
    check_global_options(ctx)  # the listing is a group callback, not an ArgsimCommand: checked here
    console.print(summary_table("argsim models", ["name", "installed", "description"], [
        [m.name, "[green]yes[/]" if m.installed else "[dim]no[/]", m.description] for m in MODELS.values()]))
    console.print(summary_table(
        "models that ship with argsim (--model NAME; a LoRA adapter, heads or a delta over an installed base)",
        ["name", "task", "base", "artifact", "MB", "figures", "trained with"],
        [[s["name"], s["task"], s["base"], s["artifact"], f"{s['megabytes']:.2f}",
          ", ".join(f"{k} {v:.4f}" for k, v in s["figures"].items()) or "-",
          (s["command"] or "-") + (f" ({s['training_seconds'] / 60:.0f} min)" if s["training_seconds"] else "")]
         for s in shipped_summaries()]))
    root = folder if folder.is_absolute() else workdir(run_config(ctx).workdir) / folder
    found = trained_models(root)
    table = summary_table(f"trained models under {root}", ["folder", "trainer", "steps", "minutes", "stopped by",
                                                            "figures"],
                          [[str(m.folder.relative_to(root)), m.trainer, "-" if m.steps is None else m.steps,
                            "-" if m.seconds is None else f"{m.seconds / 60:.1f}", m.stopped_by or "-",
                            ", ".join(f"{k} {v:.4f}" for k, v in list(m.metrics.items())[:4]) or "-"] for m in found])
    console.print(table if found else f"no trained models under {root} yet (`argsim models build`)")


@models_app.command("build")
def models_build(
    ctx: typer.Context,
    names: Annotated[list[str], typer.Argument(help="Recipes to build (default: all); the recipes they need are "
                                      "added. `--list` shows them.")] = None,
    list_only: Annotated[bool, typer.Option(
        "--list", help="Show the recipes, their state and times; build nothing.")] = False,
    log: Annotated[Path, typer.Option(help="Log file (appended; every step's "
                                           "output).")] = Path("runs/models-build.log"),
    max_minutes: Annotated[float, typer.Option("--max-minutes", min=0.01, parser=finite_float(0.01),
                                               help="Stop the build after this many minutes: the running "
                                               "training stops at its next budget check with a checkpoint (a "
                                               "counter model: after the epoch that crosses it), recipes not "
                                               "started wait; the next build resumes.")] = None,
) -> None:
    """Train the recommended model of each task in sequence: a total time estimate first, one progress bar,
    resumable (finished recipes are skipped by their records, an interrupted one continues with --resume), then
    each is scored and bench/results/<task>.json updated."""
    from argsim.modelbuild.runner import build, plan

    run = run_config(ctx)
    root = workdir(run.workdir)
    log = log if log.is_absolute() else root / log
    if not list_only:
        check_output_path(log)  # a folder or a path under a file: one line before any recipe runs
    the_plan = plan(names or [], root)
    console.print(summary_table("models build", ["recipe", "state", "2 CPUs (min)", "1 GPU (min, est.)", "output"],
                                [[r.name, the_plan.states[r.name], f"{r.cpu_minutes:g}", f"{r.gpu_minutes:g}", r.out]
                                 for r in the_plan.recipes]))
    if list_only:
        for r in the_plan.recipes:
            console.print(f"[bold]{r.name}[/] ({r.description}; {r.basis}):\n  " + "\n  ".join(
                r.lines), soft_wrap=True)
    console.print(f"to do: ~{the_plan.minutes / 60:.1f} h on 2 CPU cores "
                  f"(~{the_plan.gpu_minutes:.0f} min on one GPU, estimated from step costs)")
    if list_only:
        return
    options = step_options(ctx.find_root().command, {"seed": run.seed, "device": run.device,
                                                     "precision": run.precision, "data_dir": run.data_dir})
    summaries = build(the_plan, root, log, options, quiet=run.quiet, echo=console.print, max_minutes=max_minutes)
    count = {k: sum(s["status"] == k for s in summaries) for k in ("built", "skipped", "stopped", "pending")}
    console.print(f"models build: {count['built']} built, {count['skipped']} already finished"
                  + (f", {count['stopped']} stopped by --max-minutes, {count['pending']} not started (rerun to "
                     "continue)" if count["stopped"] or count["pending"] else "") + f"; log {log}")


@models_app.command("publish")
def models_publish(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help=f"The shipped model to replace or add: {', '.join(TASKS)}.")],
    folder: Annotated[Path, typer.Argument(help="The trained folder, with its figures in train_config.json: "
                                  + "; ".join(f"{n}: {t.trained_with}" for n, t in TASKS.items())
                                  + ".")],
) -> None:
    """Put a trained model (a LoRA adapter, heads over a frozen base, LoRA adapters with heads, or the political
    SBERT's delta over GiNZA's table) into the argsim package as the shipped model NAME, only when its recorded
    figure on the task's own metric is at least the shipped one's; writes its card (base and the hash of its
    weights, data and licence, command, figures, training time, the figure on a fixed slice of the evaluation
    split)."""
    card = publish(name, folder, run_config(ctx))
    figs = ", ".join(f"{k} {v:.4f}" for k, v in card["figures"].items())
    slice_figs = ", ".join(f"{k} {v:.4f}" for k, v in card["slice"].items() if isinstance(v, float))
    console.print(f"published {folder} as '{name}': {figs}; on {card['slice']['data']}: {slice_figs}")


@models_app.command("curve")
def models_curve(
    folders: Annotated[list[Path], typer.Argument(help="Trained model folders (each with a train_config.json).")],
) -> None:
    """(Re)draw FOLDER/learning_curve.png from FOLDER/train_config.json: the training loss against steps and
    any evaluation logged during training (a counter model: its validation accuracy per epoch, from
    history.json). New training runs draw it themselves."""
    for folder, png in zip(folders, redraw_curves(folders), strict=True):
        console.print(f"{folder}: " + (f"learning curve written to {png}" if png else "no loss was logged"))
