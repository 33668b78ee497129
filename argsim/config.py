"""The run configuration: read once by the command from the global options and passed down explicitly.

The library reads no global settings: a function that needs the device, the seed or the cache takes it as an
argument (or a `RunConfig`); defaults come from documented environment variables read when a default is needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from platformdirs import user_cache_dir, user_data_dir

from argsim.errors import ArgsimError
from argsim.options import check_settings, setting

Precision = Literal["auto", "fp32", "fp16", "bf16"]
#: inference runtimes of transformer encoders (argsim.backend.runtime): PyTorch, ONNX Runtime, OpenVINO
Backend = Literal["torch", "onnx", "openvino"]
#: weight/activation quantization of the ONNX Runtime (dynamic int8) and OpenVINO (static int8) backends
Quantization = Literal["none", "int8"]
Engine = Literal["local", "ray"]
PRECISIONS, BACKENDS, QUANTIZATIONS, ENGINES = (get_args(t) for t in (Precision, Backend, Quantization, Engine))
DEVICES = ("auto", "cpu", "cuda", "mps")


def default_data_dir() -> Path:
    """The dataset root when no `--data-dir` is given: `$ARGSIM_DATA`, else the per-user data folder
    (`platformdirs.user_data_dir("argsim")/data`), whether or not it exists yet.

    Example:
        >>> folder = default_data_dir()  # $ARGSIM_DATA when set, else e.g. ~/.local/share/argsim/data
        >>> isinstance(folder, Path)
        True
    """
    if env := os.environ.get("ARGSIM_DATA"):
        return Path(env)
    # expanduser: without a home folder platformdirs returns "~/..." (a folder named "~" in the working
    # directory); Path.expanduser then raises, which the CLI names in one line
    return Path(user_data_dir("argsim")).expanduser() / "data"


def default_cache_dir() -> Path:
    """`$ARGSIM_CACHE_DIR`, else the user's cache folder."""
    env = os.environ.get("ARGSIM_CACHE_DIR")
    return Path(env) if env else Path(user_cache_dir("argsim")).expanduser() / "embeddings"


def check_device_name(device: str) -> str:
    """`device` in lower case, if it names a device (`DEVICES` or cuda:N); ArgsimError (one line) else.

    Example:
        >>> check_device_name("CUDA:1")
        'cuda:1'
    """
    device = (device or "auto").lower()
    if device not in DEVICES and not (device.startswith("cuda:") and device[5:].isdigit()):
        raise ArgsimError(f"unknown device '{device}' (--device): choose one of {', '.join(DEVICES)} or cuda:N")
    return device


#: the one default seed of every sampler, split and initialiser (the global `--seed`)
SEED = 13


@dataclass(frozen=True)
class RunConfig:
    """Options shared by every command: the CLI's global options, generated from these fields
    (`argsim.cli.params.config_options`); the API takes the same object (`config=`). Frozen: change a copy with
    `dataclasses.replace`.

    Example:
        >>> from dataclasses import replace
        >>> replace(RunConfig(), device="cpu", quiet=True).seed
        13
    """

    device: str = setting("auto", f"Compute device: {'|'.join(DEVICES)} or cuda:N (auto: CUDA, MPS, CPU).")
    seed: int = setting(SEED, "Random seed for every sampler, split and initialiser (0 to 2**32-1, numpy's range).",
                        min=0, max=2**32 - 1)
    quiet: bool = setting(False, "No progress bars.", option=("--quiet", "-q"))
    data_dir: Path | None = setting(None, "Dataset root (default $ARGSIM_DATA, else the per-user data folder, e.g. "
                                          "~/.local/share/argsim/data).")
    cache_dir: Path | None = setting(None, "Embedding cache folder (default $ARGSIM_CACHE_DIR, else the user's "
                                           "cache folder).", output="folder")
    use_cache: bool = setting(True, "Use the embedding cache (--no-cache bypasses it).", option="--cache/--no-cache")
    precision: Precision = setting("auto", "Numeric precision. auto: training in bf16 on GPUs that support it, fp16 "
                                   "on older CUDA; inference in fp16 on CUDA; fp32 on CPU and MPS. bf16 runs on the "
                                   "CPU too; fp16 needs CUDA.")
    threads: int | None = setting(None, "CPU threads of inference (default: torch's own choice; onnx / openvino: "
                                        "the cores argsim may use, from the CPU affinity and the cgroup quota).",
                                  min=1)
    backend: Backend = setting("torch", "Runtime of transformer encoders (onnx: ONNX Runtime, openvino: OpenVINO; "
                               "both CPU only, exported once and cached). Default torch: a faster variant becomes "
                               "the default only when every task figure passes fp32's interval and paired test "
                               "(docs/backends.md).")
    quantize: Quantization = setting("none", "Quantization with --backend onnx|openvino (onnx: dynamic int8; "
                                     "openvino: static int8, calibrated).")
    calibration: Path | None = setting(None, "Texts (one per line) that calibrate --backend openvino --quantize "
                                             "int8 (default: the first texts encoded).", exists=True, dir_okay=False)
    engine: Engine = setting("local", "Where bulk work runs (embed, rank counterargs / keypoints / counter-search, "
                             "train ltr / simple-sd).")
    ray_address: str | None = setting(None, "Ray cluster to attach to with --engine ray (default: a local one).",
                                      envvar="RAY_ADDRESS")
    workdir: Path | None = setting(None, "Where runs write by default: default outputs (runs/, models/), "
                                         "bench/results, LTR models, feature caches (default $ARGSIM_HOME, else "
                                         "the working directory).", envvar="ARGSIM_HOME", output="folder")

    def __post_init__(self) -> None:
        check_settings(self)  # refused as the command line's parser refuses (types, choices, bounds)
        check_device_name(self.device)

    def resolved_cache_dir(self) -> Path:
        """`cache_dir`, else `default_cache_dir()` (the embedding cache's folder)."""
        return self.cache_dir if self.cache_dir is not None else default_cache_dir()
