"""Where bulk work runs: `local` (this process, no Ray needed; the default) or `ray` (a Ray cluster; docs/scale.md).

An engine maps a function over items, `fn(shared, item)`, and returns the results in the items' order. `shared`
(e.g. a WMD engine with its word vectors) is handed to the workers once, not once per item. Both engines give the
same numbers; Ray only adds parallelism across the cluster's CPUs (no home-made process pools).
"""

from __future__ import annotations

from argsim.config import ENGINES
from argsim.engine.base import Engine, LocalEngine
from argsim.engine.encoding import encode
from argsim.engine.ray_engine import RayEngine
from argsim.errors import ArgsimError


def get_engine(name: str = "local", address: str | None = None, num_cpus: int | None = None,
               quiet: bool = False) -> Engine:
    """The engine `name`: `local`, or `ray` attached to `address` (else $RAY_ADDRESS, else a local instance with
    `num_cpus` CPUs, default the cores this process may use; `quiet`: Ray logs errors only)."""
    if name == "local":
        return LocalEngine()
    if name == "ray":
        return RayEngine(address=address, num_cpus=num_cpus, quiet=quiet)
    raise ArgsimError(f"unknown engine '{name}': choose one of {', '.join(ENGINES)}")


def engine_from_config(config) -> Engine:
    """The engine a command's `RunConfig` asks for (`--engine`, `--ray-address`)."""
    return LocalEngine() if config is None else get_engine(config.engine, address=config.ray_address,
                                                            num_cpus=config.threads, quiet=config.quiet)


__all__ = ["ENGINES", "Engine", "LocalEngine", "encode", "engine_from_config", "get_engine"]
