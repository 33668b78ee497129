"""Process-wide run settings (set once by the CLI's global options; library calls may override)."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from platformdirs import user_cache_dir


def default_data_dir() -> Path | None:
    """`$ARGSIM_DATA`, else `../shared/data` (relative to the repo or the working directory) when it exists."""
    env = os.environ.get("ARGSIM_DATA")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parent.parent
    for cand in (repo.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"):
        if cand.is_dir():
            return cand
    return None


def default_cache_dir() -> Path:
    """`$ARGSIM_CACHE_DIR`, else the user's cache folder."""
    env = os.environ.get("ARGSIM_CACHE_DIR")
    return Path(env) if env else Path(user_cache_dir("argsim")) / "embeddings"


@dataclass
class Runtime:
    """Global options shared by every command."""

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


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (when imported) for reproducible runs."""
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:  # pragma: no cover
        pass
