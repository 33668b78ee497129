"""Where and how a training run computes: the device and precision actually used, threads, processes, seed.

Resolved once, first thing in a train command, from the global options (`RunConfig`): a device the machine lacks
or an impossible precision is one line and exit 2 before any data or model is loaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from argsim.backend.device import launched_processes, pin_cuda_index, resolve_device, resolve_precision
from argsim.training.budget import Budget
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
    """Where and how one training runs: OUT, placement, budget, policy, planned epochs, examples per device batch and
    the trainer's name in the records (`begin_run`'s `trainer`)."""

    out: Path
    placement: Placement
    budget: Budget
    policy: OptimPolicy
    epochs: float = 1.0
    batch_size: int = 16
    trainer: str | None = None


def resolve_placement(device: str = "auto", precision: str = "auto", threads: int | None = None,
                      seed: int = 13) -> Placement:
    """Check and resolve the options; sets torch's thread count when `threads` is given."""
    pin_cuda_index(device)
    dev = resolve_device(device)
    prec = resolve_precision(precision, dev)
    if threads:
        import torch

        from argsim.backend.runtime import cap_threads

        threads = cap_threads(threads)
        torch.set_num_threads(threads)
    return Placement(device=dev, precision=prec, threads=threads, processes=launched_processes(), seed=seed)


def is_main_process() -> bool:
    """Rank 0 of a launched run (or a plain process): the only one that writes."""
    return int(os.environ.get("RANK", "0") or 0) == 0
