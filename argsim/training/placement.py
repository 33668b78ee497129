"""Where and how a training run computes: the device and precision actually used, threads, processes, seed.

Resolved once, first thing in a train command, from the global options (`RunConfig`): a device the machine lacks
or an impossible precision is one line and exit 2 before any data or model is loaded.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from argsim.backend.device import launched_processes, pin_cuda_index, resolve_device, resolve_precision
from argsim.training.budget import Budget


@dataclass(frozen=True)
class Placement:
    device: str = "cpu"  # concrete: cpu | cuda | cuda:N | mps (under a launcher: the process's own GPU)
    precision: str = "fp32"  # fp32 | fp16 | bf16
    threads: int | None = None  # torch intra-op threads set for this run (None: torch's default)
    processes: int = 1  # WORLD_SIZE of an accelerate launch / torchrun run
    seed: int = 13

    @property
    def cpu(self) -> bool:
        return self.device == "cpu"

    def as_dict(self) -> dict:
        return asdict(self)


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


def placement_from_run(run, threads: int | None = None) -> Placement:
    """A `Placement` from the CLI's `RunConfig` (`threads`: the command's own default when --threads is unset)."""
    from argsim.config import RunConfig

    run = run if isinstance(run, RunConfig) else RunConfig()
    return resolve_placement(run.device, run.precision, run.threads or threads, run.seed)


def begin_run(config: object, placement: Placement | None = None, budget: Budget | None = None,
              **defaults: object) -> tuple[Placement, Budget]:
    """A trainer's placement and budget, every random generator seeded (`argsim.settings.seed_everything`).

    Args:
        config: the trainer's settings; its `seed` seeds the default placement and then holds the placement's.
        placement: the device / precision / seed (None: the CPU, fp32, `config.seed`).
        budget: the stops and checkpoints (None: `Budget(**defaults)`).

    Returns:
        (placement, budget).

    Example:
        >>> from types import SimpleNamespace
        >>> cfg = SimpleNamespace(seed=7)
        >>> where, budget = begin_run(cfg, budget=None, max_steps=3)
        >>> where.seed, cfg.seed, budget.max_steps
        (7, 7, 3)
    """
    from argsim.settings import seed_everything

    placement = placement or resolve_placement("cpu", "fp32", seed=config.seed)
    config.seed = placement.seed
    seed_everything(placement.seed)
    return placement, budget or Budget(**defaults)


def is_main_process() -> bool:
    """Rank 0 of a launched run (or a plain process): the only one that writes."""
    return int(os.environ.get("RANK", "0") or 0) == 0
