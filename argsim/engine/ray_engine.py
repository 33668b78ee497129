"""The Ray engine: tasks over blocks of items on a Ray cluster (attached by address, or started locally).

`RayEngine(address)` attaches to `address` (a `ray://` or `host:port` address, or `auto`); without one it starts
a local Ray instance with this machine's cores (dashboard off). An already initialised Ray session (a test
fixture, a notebook) is reused as it is. The shared object is put in the object store once per `map` call;
items are grouped into blocks (several per worker, so a slow block does not hold the rest back) and each block
is one Ray task; results come back in the items' order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from argsim.engine.base import Engine
from argsim.errors import ArgsimError
from argsim.progress import progress_bar


def import_ray():  # noqa: ANN201
    """The `ray` module, or one clear line telling how to install it."""
    try:
        import ray
    except ImportError:
        raise ArgsimError("--engine ray needs Ray: pip install 'argsim[ray]'") from None
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None):  # noqa: ANN201
    """Connect to (or start) Ray once per process; returns the `ray` module."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address:
            ray.init(address=address, logging_level="warning", log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False, logging_level="warning",
                     log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ArgsimError(f"cannot start or reach {where}: {str(exc).splitlines()[0]}") from None
    return ray


def _run_block(fn: Callable[[Any, Any], Any], shared: Any, block: list) -> list:
    return [fn(shared, item) for item in block]


class RayEngine(Engine):
    """Blocks of items as Ray tasks; the shared object travels once through the object store."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self.address, self.num_cpus = address, num_cpus
        self._remote = None

    def session(self):  # noqa: ANN201
        """The connected `ray` module (connecting on first use)."""
        return ensure_ray(self.address, self.num_cpus)

    @property
    def workers(self) -> int:
        return max(1, int(self.session().cluster_resources().get("CPU", 1)))

    def gpus(self) -> int:
        """GPUs in the cluster (0 on CPU-only clusters)."""
        return int(self.session().cluster_resources().get("GPU", 0))

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None,
            description: str | None = None, block: int | None = None) -> list:
        items = list(items)
        if not items:
            return []
        ray = self.session()
        if self._remote is None:
            self._remote = ray.remote(_run_block)
        block = block or max(1, -(-len(items) // (4 * self.workers)))
        blocks = [items[i:i + block] for i in range(0, len(items), block)]
        shared_ref = ray.put(shared)
        refs = [self._remote.remote(fn, shared_ref, b) for b in blocks]
        position = {ref: k for k, ref in enumerate(refs)}
        results: list[list | None] = [None] * len(refs)
        pending = list(refs)
        with progress_bar(len(items), description or "working", enabled=description is not None) as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    k = position[ref]
                    results[k] = _get(ray, ref)
                    bar.advance(len(blocks[k]))
        return [r for part in results for r in part]  # type: ignore[union-attr]

    def describe(self) -> dict:
        ray = self.session()
        return {"engine": self.name, "workers": self.workers, "ray": ray.__version__,
                "address": self.address or os.environ.get("RAY_ADDRESS") or "local"}


def _get(ray, ref):  # noqa: ANN001, ANN202
    """`ray.get`, re-raising an argsim error from a worker as itself (one line, exit 2)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, ArgsimError):
            raise ArgsimError(str(cause)) from None
        raise
