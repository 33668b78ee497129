"""Shared test fixtures: offline mode, a repo-local embedding cache, the real data folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from argsim.config import default_data_dir  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# A repo-local cache (git-ignored) so repeated test runs reuse embeddings of the real model: the documented
# default of every encoder's cache folder ($ARGSIM_CACHE_DIR) and of the CLI's --cache-dir.
os.environ["ARGSIM_CACHE_DIR"] = str(Path(os.environ.get("ARGSIM_TEST_CACHE_DIR", REPO / ".cache" / "test-embeddings")))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real datasets (../shared/data or $ARGSIM_DATA); tests that need them skip when absent."""
    root = default_data_dir()
    if root is None or not root.is_dir():
        pytest.skip("real datasets not found: set ARGSIM_DATA or place them in ../shared/data")
    return root


@pytest.fixture(scope="session")
def minilm():
    """The shipped default encoder (all-MiniLM-L6-v2), loaded once per test session."""
    from argsim.backend import get_encoder

    return get_encoder("minilm", device="cpu")


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray instance (2 CPUs, no dashboard) shared by every Ray test; skipped without Ray."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning")
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="session")
def counterargs_corpus(data_dir):
    """counterargs-18, loaded once per test session (about 10-20 s on the shared machine)."""
    from argsim.data.counterargs import load_counterargs

    return load_counterargs(data_dir)
