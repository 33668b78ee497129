"""Measuring a run: wall time (`timed`), peak memory (`peak_memory_mb`), the cores it may use (`usable_cores`:
the CPU affinity capped by the cgroup quota, the one count of cores) and its CPU (`cpu_info`); no argsim imports."""

from __future__ import annotations

import math
import os
import platform
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


def peak_memory_mb() -> float:
    """Peak RSS of this process and waited-for children in MiB (`ru_maxrss`: KiB on Linux, bytes on macOS)."""
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


@contextmanager
def timed() -> Iterator[dict[str, float]]:
    """`with timed() as t: ...` then `t["seconds"]`."""
    out: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield out
    finally:
        out["seconds"] = round(time.perf_counter() - start, 3)


def usable_cores(root: Path = Path("/sys/fs/cgroup")) -> int:
    """The cores this process may run on: its CPU affinity, capped by the cgroup v2 quota (`cpu.max`: quota /
    period CPUs, rounded up; none when unlimited or not readable), at least 1.

    Example:
        >>> usable_cores() >= 1
        True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    with suppress(OSError, ValueError, ZeroDivisionError):
        quota, period = (root / "cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, math.ceil(int(quota) / int(period)))
    return max(1, cores)


#: CPU features that decide which kernels the backends use (int8 dot products, native bf16)
CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8")


def cpu_info() -> dict:
    """The CPU a timing ran on: model name, the `CPU_FLAGS` it has, logical CPUs and the cores argsim may use.

    Example:
        >>> sorted(cpu_info())
        ['cores_usable', 'flags', 'logical_cpus', 'model']
    """
    model, flags = "", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not model:
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        model = platform.processor()
    return {"model": model, "flags": [f for f in CPU_FLAGS if f in flags], "logical_cpus": os.cpu_count(),
            "cores_usable": usable_cores()}
