"""Seeding a run. The run's options themselves are an `argsim.config.RunConfig`, passed explicitly: there is no
process-wide settings object any more."""

from __future__ import annotations

import random
from contextlib import suppress

import numpy as np


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (when installed) for reproducible runs (the CLI calls it once per command)."""
    random.seed(seed)
    np.random.seed(seed)
    with suppress(ImportError):
        import torch

        torch.manual_seed(seed)
