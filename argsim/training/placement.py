"""Where and how a training run computes: the device and precision actually used, threads, processes, seed.

Resolved once, first thing in a train command, from the global options (`RunConfig`): a device the machine lacks
or an impossible precision is one line and exit 2 before any data or model is loaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from argsim.backend.device import launched_processes, pin_cuda_index, resolve_device, resolve_precision
from argsim.settings import seed_everything
from argsim.training.budget import Budget, check_cadence
from argsim.training.policy import OptimPolicy


@dataclass(frozen=True)
class Placement:
    device: str = "cpu"  # concrete: cpu | cuda | cuda:N | mps (under a launcher: the process's own GPU)
    precision: str = "fp32"  # fp32 | fp16 | bf16
    threads: int | None = None  # torch intra-op threads set for this run (None: torch's default)
    processes: int = 1  # WORLD_SIZE of an accelerate launch / torchrun run
    seed: int = 13


@dataclass(frozen=True)
class TrainRun:
    """Where and how one training runs: OUT, placement, budget, policy, planned epochs, examples per device batch."""

    out: Path
    placement: Placement
    budget: Budget
    policy: OptimPolicy
    epochs: float = 1.0
    batch_size: int = 16


def resolve_placement(device: str = "auto", precision: str = "auto", threads: int | None = None,
                      seed: int = 13) -> Placement:
    """Check and resolve the options; sets torch's thread count when `threads` is given."""
    pin_cuda_index(device)
    dev = resolve_device(device)
    prec = resolve_precision(precision, dev)
    if threads:
        import torch

        from argsim.backend.runtime import cap_threads

        torch.set_num_threads(threads := cap_threads(threads))
    return Placement(device=dev, precision=prec, threads=threads, processes=launched_processes(), seed=seed)


def begin_run(config: object, out: str | Path, placement: Placement | None = None, budget: Budget | None = None,
              eval_every: int = 0, policy: dict | None = None, trainer: str | None = None,
              **defaults: object) -> TrainRun:
    """A trainer's `TrainRun`, every random generator seeded and the evaluation cadence checked before any work.

    Args:
        config: the trainer's settings: its `seed` (then set to the placement's), `epochs`, `batch_size` and policy
            fields (`OptimPolicy.from_config`). out: the model folder.
        placement: None: the CPU, fp32, `config.seed`. budget: None: `Budget(**defaults)`.
        eval_every: the steps between evaluations (`check_cadence`).
        policy: `OptimPolicy.from_config`'s fixed values (what the trainer does not let the user set).
        trainer: the trainer's name in the records (`save_run`): an `out` holding another trainer's model is
            refused (`argsim.training.record.check_out`).

    Returns:
        the `TrainRun`.

    Example:
        >>> from types import SimpleNamespace
        >>> cfg = SimpleNamespace(seed=7, lr=1e-3)
        >>> run = begin_run(cfg, "out", max_steps=3)
        >>> run.placement.seed, cfg.seed, run.budget.max_steps, run.policy.lr
        (7, 7, 3, 0.001)
    """
    placement = placement or resolve_placement("cpu", "fp32", seed=config.seed)
    config.seed = placement.seed
    seed_everything(placement.seed)
    budget = budget or Budget(**defaults)
    check_cadence(eval_every, budget)
    if trainer is not None:
        from argsim.training.record import check_out

        check_out(out, trainer)
    return TrainRun(Path(out), placement, budget, OptimPolicy.from_config(config, **(policy or {})),
                    getattr(config, "epochs", 1.0), getattr(config, "batch_size", 16))


def is_main_process() -> bool:
    """Rank 0 of a launched run (or a plain process): the only one that writes."""
    return int(os.environ.get("RANK", "0") or 0) == 0
