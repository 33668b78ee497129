"""The run configuration: read once by the command from the global options and passed down explicitly.

The library reads no global settings: a function that needs the device, the seed or the cache takes it as an
argument (or a `RunConfig`); defaults come from documented environment variables (`ARGSIM_DATA`,
`ARGSIM_CACHE_DIR`) read when a default is needed. There is no process-wide settings object.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

PRECISIONS = ("auto", "fp32", "fp16", "bf16")
#: inference runtimes of transformer encoders (argsim.backend.runtime): PyTorch, ONNX Runtime, OpenVINO
BACKENDS = ("torch", "onnx", "openvino")
#: weight/activation quantization of the ONNX Runtime (dynamic int8) and OpenVINO (static int8) backends
QUANTIZATIONS = ("none", "int8")


def default_data_dir() -> Path:
    """The dataset root when no `--data-dir` is given: `$ARGSIM_DATA`, else the per-user data folder
    (`platformdirs.user_data_dir("argsim")/data`: ~/.local/share/argsim/data on Linux, ~/Library/Application
    Support/argsim/data on macOS, %LOCALAPPDATA%\\argsim\\data on Windows), whether or not it exists yet.

    Example:
        >>> folder = default_data_dir()  # $ARGSIM_DATA when set, else e.g. ~/.local/share/argsim/data
        >>> isinstance(folder, Path)
        True
    """
    env = os.environ.get("ARGSIM_DATA")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("argsim")) / "data"


def default_cache_dir() -> Path:
    """`$ARGSIM_CACHE_DIR`, else the user's cache folder."""
    from platformdirs import user_cache_dir

    env = os.environ.get("ARGSIM_CACHE_DIR")
    return Path(env) if env else Path(user_cache_dir("argsim")) / "embeddings"
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RunConfig:
    """Options shared by every command (the CLI's global options)."""

    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps
    precision: str = "auto"  # auto | fp32 | fp16 | bf16
    seed: int = 13
    quiet: bool = False
    data_dir: Path | None = None  # None: $ARGSIM_DATA, else the per-user data folder (default_data_dir)
    cache_dir: Path | None = None  # None: $ARGSIM_CACHE_DIR, else the user's cache folder
    use_cache: bool = True
    threads: int | None = None  # CPU threads of inference / torch; None: the cores argsim may use (ONNX, OpenVINO)
    backend: str = "torch"  # torch | onnx | openvino: the runtime of transformer encoders
    quantize: str = "none"  # none | int8 (onnx: dynamic; openvino: static, calibrated)
    calibration: Path | None = None  # texts (one per line) that calibrate OpenVINO int8; None: the texts encoded
    engine: str = "local"  # local | ray
    ray_address: str | None = None  # None: $RAY_ADDRESS, else a local Ray instance
    workdir: Path | None = None  # where runs write models/results by default; None: $ARGSIM_HOME, else cwd

    def resolved_cache_dir(self) -> Path:
        """`cache_dir`, else `default_cache_dir()` (the embedding cache's folder)."""
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()

    def with_(self, **changes: object) -> RunConfig:
        """A copy with `changes` applied."""
        return replace(self, **changes)
