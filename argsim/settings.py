"""Seeding a run. The run's options themselves are an `argsim.config.RunConfig`, passed explicitly: there is no
process-wide settings object any more."""

from __future__ import annotations

import random

import numpy as np

from argsim.config import default_cache_dir, default_data_dir

__all__ = ["default_cache_dir", "default_data_dir", "seed_everything"]


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (when imported) for reproducible runs (the CLI calls it once per command)."""
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:  # pragma: no cover
        pass
