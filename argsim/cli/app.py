"""`argsim`: the root command, its global options, and discovery of the command modules."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from dataclasses import replace

import typer

from argsim.cli import commands
from argsim.cli.groups import FILE_WIDTH, GROUPS, ROOT, console, group
from argsim.cli.params import config_options
from argsim.config import RunConfig
from argsim.errors import ArgsimError
from argsim.paths import set_workdir
from argsim.settings import seed_everything

app = group("argsim", "Argument-similarity toolkit: key point matching, counter-argument retrieval, thematic "
            "clustering and minutes summarization on one embedding backend.")


@app.callback()
@config_options(RunConfig)
def main_options(ctx: typer.Context, config: RunConfig) -> None:
    """Global options (the fields of `RunConfig`), checked and applied before any command."""
    from argsim.backend.runtime import cap_threads, check_backend
    from argsim.progress import library_output

    device, precision = config.device, config.precision
    if precision in ("fp16", "bf16"):  # an explicit half precision the device cannot run: refused before any work
        from argsim.backend.device import inference_precision, pin_cuda_index, resolve_device

        pin_cuda_index(device)  # as training does, before anything asks CUDA
        resolved = resolve_device(device)  # a device the machine lacks: its own one line (ArgsimGroup)
        try:
            inference_precision(precision, resolved)
        except ArgsimError as exc:
            raise typer.BadParameter(str(exc), param_hint="--precision") from None
    try:
        check_backend(config.backend, config.quantize, device, precision)
    except ArgsimError as exc:
        raise typer.BadParameter(str(exc), param_hint="--backend") from None
    if config.engine == "ray" and config.ray_address and ctx.invoked_subcommand is not None:  # before any work
        from argsim.engine.ray_engine import check_reachable

        check_reachable(config.ray_address)
    library_output(config.quiet)  # libraries' warnings one line each (none under --quiet), their bars off under --quiet
    config = replace(config, threads=cap_threads(config.threads))  # at most the cores this process may use
    # tables as wide as their content when stdout is a file or a pipe (rich would cut them to 80); a terminal's width
    console.width = FILE_WIDTH if not console.is_terminal else None  # type: ignore[assignment]
    ctx.obj = config
    set_workdir(config.workdir)
    seed_everything(config.seed)


for _mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
    importlib.import_module(f"{commands.__name__}.{_mod.name}")  # its commands join ROOT and the groups
app.registered_commands += ROOT.registered_commands
for _g in GROUPS:
    app.add_typer(_g)


def main() -> None:
    """Console-script entry point. SIGTERM (a scheduler's or `kill`'s stop) ends the run as Ctrl-C does: cleanup
    runs (no temporary file is left, finished outputs are kept, `--resume` and the embedding cache continue), one
    line; the exit code is 143 (128 + SIGTERM) where Ctrl-C's is 130, as the trainers exit."""
    import signal

    from argsim.cli import groups

    def interrupt(signum, frame):
        groups.TERMINATED = True
        raise KeyboardInterrupt

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the application's choice, not the library's
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, interrupt)
    sys.exit(app())


if __name__ == "__main__":
    main()
