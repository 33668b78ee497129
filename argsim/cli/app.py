"""`argsim`: the root command, its global options, and discovery of the command modules."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from argsim.backend.device import DEVICES
from argsim.cli import commands
from argsim.cli.groups import GROUPS, ArgsimGroup
from argsim.cli.params import OUT_DIR
from argsim.config import BACKENDS, ENGINES, PRECISIONS, QUANTIZATIONS, RunConfig
from argsim.errors import ArgsimError
from argsim.paths import set_workdir
from argsim.settings import seed_everything

app = typer.Typer(name="argsim", cls=ArgsimGroup, no_args_is_help=True, rich_markup_mode="rich",
                  add_completion=False,
                  help="Argument-similarity toolkit: key point matching, counter-argument retrieval, "
                       "thematic clustering and minutes summarization on one embedding backend.")


@app.callback()
def main_options(
    ctx: typer.Context,
    device: Annotated[str, typer.Option(help=f"Compute device: {'|'.join(DEVICES)} (auto: CUDA, MPS, CPU).")] = "auto",
    seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Random seed for every sampler, split and "
                             "initialiser (0 to 2**32-1, numpy's range).")] = 13,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
    data_dir: Annotated[Path | None, typer.Option(help="Dataset root (default $ARGSIM_DATA, else the per-user data "
                                  "folder, e.g. ~/.local/share/argsim/data).")] = None,
    cache_dir: Annotated[Path | None, typer.Option(
        callback=OUT_DIR, help="Embedding cache folder (default $ARGSIM_CACHE_DIR, else the user's cache "
                               "folder).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the embedding cache.")] = False,
    precision: Annotated[str, typer.Option(help=f"Numeric precision: {'|'.join(PRECISIONS)}. auto: training in bf16 "
                                  "on GPUs that support it, fp16 on older CUDA; inference in fp16 on CUDA; fp32 on "
                                  "CPU and MPS. bf16 runs on the CPU too; fp16 needs CUDA.")] = "auto",
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads of inference (default: torch's own choice; "
                                       "onnx / openvino: the cores argsim may use, from the CPU affinity and the "
                                       "cgroup quota).")] = None,
    backend: Annotated[str, typer.Option(help=f"Runtime of transformer encoders: {'|'.join(BACKENDS)} (onnx: ONNX "
                                "Runtime, openvino: OpenVINO; both CPU only, exported once and cached). Default "
                                "torch fp32: no faster backend keeps every task figure within 0.005 of it "
                                "(docs/backends.md).")] = "torch",
    quantize: Annotated[str, typer.Option(help=f"Quantization with --backend onnx|openvino: {'|'.join(QUANTIZATIONS)} "
                                 "(onnx: dynamic int8; openvino: static int8, calibrated).")] = "none",
    calibration: Annotated[Path | None, typer.Option(
        exists=True, dir_okay=False, help="Texts (one per line) that calibrate --backend openvino "
                                          "--quantize int8 (default: the first texts encoded).")] = None,
    engine: Annotated[str, typer.Option(help=f"Where bulk work runs: {'|'.join(ENGINES)} (embed, rank "
                               "counterargs / keypoints / counter-search, train ltr / simple-sd).")] = "local",
    ray_address: Annotated[str | None, typer.Option(
        envvar="RAY_ADDRESS", help="Ray cluster to attach to with --engine ray (default: a local one).")] = None,
    workdir: Annotated[Path | None, typer.Option(
        envvar="ARGSIM_HOME", callback=OUT_DIR, help="Where runs write by default: default outputs "
                                                     "(runs/, models/), bench/results, LTR models, "
                                                     "feature caches (default $ARGSIM_HOME, else the "
                                                     "working directory).")] = None,
) -> None:
    """Global options, applied before any command."""
    if device not in DEVICES and not device.startswith("cuda:"):
        raise typer.BadParameter(f"choose one of {', '.join(DEVICES)}", param_hint="--device")
    if precision not in PRECISIONS:
        raise typer.BadParameter(f"choose one of {', '.join(PRECISIONS)}", param_hint="--precision")
    if precision in ("fp16", "bf16"):  # an explicit half precision the device cannot run: refused before any work
        from argsim.backend.device import inference_precision, pin_cuda_index, resolve_device

        pin_cuda_index(device)  # as training does, before anything asks CUDA
        resolved = resolve_device(device)  # a device the machine lacks: its own one line (ArgsimGroup)
        try:
            inference_precision(precision, resolved)
        except ArgsimError as exc:
            raise typer.BadParameter(str(exc), param_hint="--precision") from None
    from argsim.backend.runtime import check_backend

    try:
        check_backend(backend, quantize, device, precision)
    except ArgsimError as exc:
        raise typer.BadParameter(str(exc), param_hint="--backend") from None
    if engine not in ENGINES:
        raise typer.BadParameter(f"choose one of {', '.join(ENGINES)}", param_hint="--engine")
    if engine == "ray" and ray_address and ctx.invoked_subcommand is not None:  # before any work: seconds, one line
        from argsim.engine.ray_engine import check_reachable

        check_reachable(ray_address)
    from argsim.cli.groups import fit_tables_to_output
    from argsim.progress import library_output

    library_output(quiet)  # libraries' warnings one line each (none under --quiet), their bars off under --quiet
    from argsim.backend.runtime import cap_threads

    threads = cap_threads(threads)  # at most the cores this process may use (CPU affinity, cgroup quota)
    fit_tables_to_output()
    ctx.obj = RunConfig(device=device, precision=precision, seed=seed, quiet=quiet, data_dir=data_dir,
                        cache_dir=cache_dir, use_cache=not no_cache, threads=threads, backend=backend,
                        quantize=quantize, calibration=calibration, engine=engine,
                        ray_address=ray_address, workdir=workdir)
    set_workdir(workdir)
    seed_everything(seed)


def _load_commands() -> None:
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{mod.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_load_commands()
for _g in GROUPS:
    app.add_typer(_g)


def main() -> None:
    """Console-script entry point."""
    import os

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the application's choice, not the library's
    sys.exit(app())


if __name__ == "__main__":
    main()
