"""The options every `argsim train ...` command shares (budgets), and the run's placement from the globals."""

from __future__ import annotations

import typer

MAX_STEPS = typer.Option(None, "--max-steps", min=1, help="Stop after this many optimizer steps (a checkpoint is "
                         "kept; the learning-rate schedule still follows the epochs, so --resume continues it).")
MAX_MINUTES = typer.Option(None, "--max-minutes", min=0.01, help="Stop after this many minutes of this run (a "
                           "checkpoint is kept for --resume).")
GRAD_ACCUM = typer.Option(1, "--grad-accum", min=1, help="Batches accumulated per optimizer step.")
CHECKPOINT_EVERY = typer.Option(0, "--checkpoint-every", min=0, help="Save a checkpoint every N optimizer steps "
                                "under OUT/checkpoints (0: at budget stops and epoch ends only).")
RESUME = typer.Option(False, "--resume", help="Continue from the checkpoint under OUT/checkpoints.")


def budget(max_steps: int | None, max_minutes: float | None, grad_accum: int, checkpoint_every: int,
           resume: bool):  # noqa: ANN201
    from argsim.training import Budget

    return Budget(max_steps=max_steps, max_minutes=max_minutes, grad_accum=grad_accum,
                  checkpoint_every=checkpoint_every, resume=resume)


def placement(ctx: typer.Context, threads: int | None = None):  # noqa: ANN201
    """Resolve the device / precision / threads of the global options (exit 2 on a device the machine lacks)."""
    from argsim.cli.groups import run_config
    from argsim.training import placement_from_run

    return placement_from_run(run_config(ctx), threads=threads)


def quiet(ctx: typer.Context) -> bool:
    from argsim.cli.groups import run_config

    return run_config(ctx).quiet
