"""The options every `argsim train ...` command shares (budgets), and the run's placement from the globals.

`@budget_options()` adds --max-steps, --max-minutes, --grad-accum, --checkpoint-every and --resume to a train
command (after its own options) and passes them as one `plan: argsim.training.Budget`; a command whose budget
means something else overrides an option's definition, e.g. `@budget_options(max_minutes=typer.Option(...))`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from argsim.cli.params import Command, option_group

MAX_STEPS = typer.Option(None, "--max-steps", min=1, help="Stop after this many optimizer steps (a checkpoint is "
                         "kept; the learning-rate schedule still follows the epochs, so --resume continues it).")
MAX_MINUTES = typer.Option(None, "--max-minutes", min=0.01, help="Stop after this many minutes of this run (a "
                           "checkpoint is kept for --resume).")
GRAD_ACCUM = typer.Option(1, "--grad-accum", min=1, help="Batches accumulated per optimizer step.")
CHECKPOINT_EVERY = typer.Option(0, "--checkpoint-every", min=0, help="Save a checkpoint every N optimizer steps "
                                "under OUT/checkpoints (0: at budget stops and epoch ends only).")
RESUME = typer.Option(False, "--resume", help="Continue from the checkpoint under OUT/checkpoints.")


def budget(max_steps: int | None, max_minutes: float | None, grad_accum: int, checkpoint_every: int,
           resume: bool):
    """The `Budget` of the budget options' values."""
    from argsim.training import Budget

    return Budget(max_steps=max_steps, max_minutes=max_minutes, grad_accum=grad_accum,
                  checkpoint_every=checkpoint_every, resume=resume)


def budget_options(**overrides: Any) -> Callable[[Command], Command]:
    """A decorator adding the budget options to a train command, passed to it as `plan` (see the module doc);
    `overrides`: {option parameter: typer.Option} replacing a shared definition."""
    shared = {"max_steps": (int | None, MAX_STEPS), "max_minutes": (float | None, MAX_MINUTES),
              "grad_accum": (int, GRAD_ACCUM), "checkpoint_every": (int, CHECKPOINT_EVERY), "resume": (bool, RESUME)}
    unknown = set(overrides) - set(shared)
    if unknown:
        raise ValueError(f"no budget option {', '.join(sorted(unknown))}")
    return option_group("plan", budget, **{k: (kind, overrides.get(k, info)) for k, (kind, info) in shared.items()})


def placement(ctx: typer.Context, threads: int | None = None):
    """Resolve the device / precision / threads of the global options (exit 2 on a device the machine lacks)."""
    from argsim.cli.groups import run_config
    from argsim.training import placement_from_run

    return placement_from_run(run_config(ctx), threads=threads)


def quiet(ctx: typer.Context) -> bool:
    from argsim.cli.groups import run_config

    return run_config(ctx).quiet
