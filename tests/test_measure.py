"""`argsim.measure`: the peak memory in MiB whatever unit the platform's getrusage uses."""

from __future__ import annotations

import resource
import sys
from types import SimpleNamespace

import pytest

from argsim import measure


@pytest.mark.parametrize(("platform", "maxrss"), [("linux", 512 * 1024), ("darwin", 512 * 2**20)])
def test_peak_memory_is_in_mib_on_linux_and_macos(monkeypatch, platform, maxrss):
    """ru_maxrss is KiB on Linux and bytes on macOS: 512 MiB either way; the children's peak counts when larger."""
    monkeypatch.setattr(sys, "platform", platform)
    peaks = {resource.RUSAGE_SELF: maxrss, resource.RUSAGE_CHILDREN: maxrss // 2}
    monkeypatch.setattr(resource, "getrusage", lambda who: SimpleNamespace(ru_maxrss=peaks[who]))
    assert measure.peak_memory_mb() == 512.0
    peaks[resource.RUSAGE_CHILDREN] = 2 * maxrss
    assert measure.peak_memory_mb() == 1024.0
