"""The Ray engine: tasks over blocks of items on a Ray cluster, attached by address (checked first:
`check_reachable`) or started locally (`ensure_ray`; an already initialised Ray session, a test fixture or a
notebook, is reused as it is). The shared object is put in the object store once per `map` call; items are grouped
into blocks (several per worker, so a slow block does not hold the rest back), each block one Ray task; results
come back in the items' order.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from argsim.engine.base import Engine
from argsim.errors import ArgsimError
from argsim.measure import usable_cores
from argsim.progress import progress_bar

#: seconds a --ray-address gets to accept a TCP connection before argsim gives up (one line, no Ray start-up)
CONNECT_SECONDS = 3.0


def check_reachable(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """ArgsimError (one line) when nothing accepts a TCP connection at `address` within `seconds`: Ray itself
    would retry for tens of seconds and print its own C++ logs before failing. Only a `host:port` or
    `ray://host:port` address is checked (not `auto`, `local` or one without a port)."""
    host, sep, port = address.split("://", 1)[-1].rpartition(":")
    if not sep or not port.isdigit():
        return
    target = (host.strip("[]") or "127.0.0.1", int(port))
    hint = "start it or drop --ray-address to run a local instance"
    try:
        socket.create_connection(target, timeout=seconds).close()
    except (OSError, ValueError) as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (getattr(exc, "strerror", None) or str(exc))
        raise ArgsimError(f"cannot reach the Ray cluster at {address}: {why} (checked for {seconds:g} s); "
                          f"{hint}") from None
    if "://" in address:
        return  # a Ray Client address: its server speaks another protocol
    # the head node's GCS asked for its cluster id by Ray's own client, in a child process stopped after `seconds`
    # + 7 s (Ray's client retries for longer and logs from C++ onto stderr); exit 0: it answered (or this Ray
    # version lacks that client)
    try:
        done = subprocess.run([sys.executable, "-c", _GCS_PROBE, f"{target[0]}:{target[1]}", str(seconds)],
                              capture_output=True, text=True, timeout=seconds + 7, stdin=subprocess.DEVNULL)
        problem = done.returncode and (done.stdout.strip() or f"probe exit code {done.returncode}")
    except subprocess.TimeoutExpired:
        problem = f"no answer within {seconds + 7:g} s"
    if problem:
        raise ArgsimError(f"cannot reach the Ray cluster at {address}: something listens there but it is not a "
                          f"Ray head node ({problem}); {hint}")


_GCS_PROBE = """
import sys
try:
    from ray._raylet import InnerGcsClient
except ImportError:
    sys.exit(0)
try:
    InnerGcsClient.standalone(sys.argv[1], None, int(float(sys.argv[2]) * 1000))
except TypeError:
    sys.exit(0)
except Exception as exc:
    print((str(exc).strip().splitlines() or [type(exc).__name__])[0][:160])
    sys.exit(3)
"""


def ensure_ray(address: str | None = None, num_cpus: int | None = None, quiet: bool = False):
    """Connect to (or start) Ray once per process; returns the `ray` module.

    An address is checked with a TCP connection first (`check_reachable`). A local instance advertises the
    loopback address (`_node_ip_address`), has no dashboard, takes `num_cpus` CPUs (default: the cores this
    process may use) and logs only warnings (errors under `quiet`); worker output never reaches the terminal."""
    try:
        import ray
    except ImportError:
        raise ArgsimError("--engine ray needs Ray: pip install 'argsim[ray]'") from None
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or None
    level = logging.ERROR if quiet else logging.WARNING
    try:
        if address:
            check_reachable(address)
            ray.init(address=address, logging_level=level, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus or usable_cores(), include_dashboard=False, logging_level=level,
                     log_to_driver=False, _node_ip_address="127.0.0.1")
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ArgsimError(f"cannot start or reach {where}: {first}") from None
    return ray


def _run_block(fn: Callable[[Any, Any], Any], shared: Any, block: list) -> list:
    return [fn(shared, item) for item in block]


class RayEngine(Engine):
    """Blocks of items as Ray tasks; the shared object travels once through the object store."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, quiet: bool = False) -> None:
        self.address, self.num_cpus, self.quiet = address, num_cpus, quiet
        self._remote = None

    def session(self):
        """The connected `ray` module (connecting on first use)."""
        return ensure_ray(self.address, self.num_cpus, self.quiet)

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
                (ref,), pending = ray.wait(pending, num_returns=1)
                with worker_errors(ray):
                    results[position[ref]] = ray.get(ref)
                bar.advance(len(blocks[position[ref]]))
        return [r for part in results for r in part]  # type: ignore[union-attr]

    def describe(self) -> dict:
        return super().describe() | {"ray": self.session().__version__,
                                     "address": self.address or os.environ.get("RAY_ADDRESS") or "local"}


@contextmanager
def worker_errors(ray, prefix: str = "") -> Iterator[None]:
    """An argsim error raised in a Ray worker re-raised here as itself, after `prefix` (one line, exit 2)."""
    try:
        yield
    except ray.exceptions.RayTaskError as exc:
        if isinstance(cause := getattr(exc, "cause", None), ArgsimError):
            raise ArgsimError(f"{prefix}{cause}") from None
        raise
