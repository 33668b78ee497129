"""The options every `argsim train ...` command shares (the training budget), and the run's placement from the
globals.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from argsim.cli.params import Command, config_options
from argsim.training.budget import Budget

#: the help and bounds of Budget's fields as options
BUDGET_OPTIONS: dict[str, dict] = {
    "max_steps": {"min": 1, "help": "Stop after this many optimizer steps (a checkpoint is kept; the learning-rate "
                                    "schedule still follows the epochs, so --resume continues it)."},
    "max_minutes": {"min": 0.01, "help": "Stop after this many minutes of this run (a checkpoint is kept for "
                                         "--resume)."},
    "grad_accum": {"min": 1, "help": "Batches accumulated per optimizer step."},
    "checkpoint_every": {"min": 0, "help": "Save a checkpoint every N optimizer steps under OUT/checkpoints (0: at "
                                           "budget stops and epoch ends only)."},
    "resume": {"option": "--resume", "help": "Continue from the checkpoint under OUT/checkpoints."},
}


def budget_options(**helps: str) -> Callable[[Command], Command]:
    """A decorator adding the fields of `argsim.training.Budget` (its defaults, the help texts above) to a train
    command after its own options, passed as `plan: Budget`; `helps`: {field: help text} replacing a shared one."""
    if unknown := set(helps) - set(BUDGET_OPTIONS):
        raise ValueError(f"no budget option {', '.join(sorted(unknown))}")
    meta = {k: {**v, **({"help": helps[k]} if k in helps else {})} for k, v in BUDGET_OPTIONS.items()}
    return config_options(Budget, "plan", meta=meta)


def placement(ctx: typer.Context, threads: int | None = None):
    """Resolve the device / precision / threads of the global options (exit 2 on a device the machine lacks)."""
    from argsim.cli.groups import run_config
    from argsim.training import resolve_placement

    run = run_config(ctx)  # `threads`: the command's own default when --threads is unset
    return resolve_placement(run.device, run.precision, run.threads or threads, run.seed)
