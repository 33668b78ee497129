"""Budgets every trainer takes (docs/training.md, "Budgets, checkpoints, resume"): they stop a run with a checkpoint
and never change the schedule, so `--resume` continues the uninterrupted run."""

from __future__ import annotations

from dataclasses import dataclass

from argsim.errors import ArgsimError


@dataclass(frozen=True)
class Budget:
    max_steps: int | None = None
    max_minutes: float | None = None
    grad_accum: int = 1
    checkpoint_every: int = 0
    resume: bool = False

    def __post_init__(self) -> None:
        if self.max_steps is not None and self.max_steps < 0:
            object.__setattr__(self, "max_steps", None)  # -1 (the old default) = no limit
        if self.grad_accum < 1:
            raise ArgsimError(f"--grad-accum must be at least 1, not {self.grad_accum}")
        if self.checkpoint_every < 0:
            raise ArgsimError(f"--checkpoint-every must be 0 or more, not {self.checkpoint_every}")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ArgsimError(f"--max-minutes must be positive, not {self.max_minutes}")

    def reached(self, steps: int, seconds: float) -> str | None:
        """Which budget a run with `steps` optimizer steps after `seconds` has used up, if any."""
        if self.max_steps is not None and steps >= self.max_steps:
            return "max_steps"
        if self.max_minutes is not None and seconds >= self.max_minutes * 60:
            return "max_minutes"
        return None


def check_epoch_selection(budget: Budget, what: str) -> None:
    """Refuse before any work a `--checkpoint-every` where `what` scores each epoch to choose the kept one: the
    selection evaluates at every checkpoint (`selection_arguments`), so it would score every N steps instead."""
    if budget.checkpoint_every:
        raise ArgsimError(f"{what} scores each epoch to choose the kept one; --checkpoint-every "
                          f"{budget.checkpoint_every} would score every checkpoint instead: drop --checkpoint-every")


def check_cadence(eval_every: int, budget: Budget) -> None:
    """Refuse before any work a `--checkpoint-every` that is not a multiple of `eval_every` (`selection_arguments`)."""
    every = budget.checkpoint_every
    if eval_every and every and every % eval_every:
        raise ArgsimError(f"--checkpoint-every {every} must be a multiple of --eval-every {eval_every} (every "
                          "evaluated step is saved, so that the best one can be kept)")
