"""The run configuration: read once by the command from the global options and passed down explicitly.

The library reads no global settings: a function that needs the device, the seed or the cache takes it as an
argument (or a `RunConfig`). `argsim.settings.RUNTIME` is the legacy mirror the CLI still fills while modules move
to explicit arguments; new code must not read it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

PRECISIONS = ("auto", "fp32", "fp16", "bf16")
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RunConfig:
    """Options shared by every command (the CLI's global options)."""

    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps
    precision: str = "auto"  # auto | fp32 | fp16 | bf16
    seed: int = 13
    quiet: bool = False
    data_dir: Path | None = None  # None: $ARGSIM_DATA, else ../shared/data
    cache_dir: Path | None = None  # None: $ARGSIM_CACHE_DIR, else the user's cache folder
    use_cache: bool = True
    threads: int | None = None  # torch intra-op threads; None: torch's default
    engine: str = "local"  # local | ray
    ray_address: str | None = None  # None: $RAY_ADDRESS, else a local Ray instance
    workdir: Path | None = None  # where runs write models/results by default; None: $ARGSIM_HOME, else cwd

    def with_(self, **changes: object) -> RunConfig:
        """A copy with `changes` applied."""
        return replace(self, **changes)
