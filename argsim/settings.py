"""Legacy process-wide run settings: `RUNTIME` is mirrored from the CLI's `RunConfig` only for the trainer modules
that still read it (they move to explicit arguments); nothing else may read it. `seed_everything` stays here."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.config import default_cache_dir, default_data_dir


@dataclass
class Runtime:
    """Legacy mirror of the CLI's global options (see the module docstring)."""

    device: str = "auto"
    seed: int = 13
    quiet: bool = False
    data_dir: Path | None = None
    cache_dir: Path | None = None
    use_cache: bool = True

    def resolved_data_dir(self) -> Path | None:
        return self.data_dir if self.data_dir is not None else default_data_dir()

    def resolved_cache_dir(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()


RUNTIME = Runtime()

__all__ = ["RUNTIME", "Runtime", "default_cache_dir", "default_data_dir", "seed_everything"]


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (when imported) for reproducible runs."""
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:  # pragma: no cover
        pass
