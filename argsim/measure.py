"""Measuring a run: wall time (`timed`) and peak memory (`peak_memory_mb`); no argsim imports."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager


def peak_memory_mb() -> float:
    """Peak resident memory of this process (and waited-for children) in MiB."""
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(self_kb, child_kb) / 1024, 1)


@contextmanager
def timed() -> Iterator[dict[str, float]]:
    """`with timed() as t: ...` then `t["seconds"]`."""
    out: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield out
    finally:
        out["seconds"] = round(time.perf_counter() - start, 3)
