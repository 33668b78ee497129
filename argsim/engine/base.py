"""The engine interface and the local engine (one process, no Ray)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from argsim.progress import track


class Engine:
    """Maps `fn(shared, item)` over items, results in item order (here: in this process, in order)."""

    name = "local"

    @property
    def workers(self) -> int:
        """How many items can run at once."""
        return 1

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None,
            description: str | None = None, block: int | None = None) -> list:
        """`[fn(shared, item) for item in items]`; `description` draws a progress bar."""
        return [fn(shared, item) for item in track(items, description or "working", enabled=description is not None)]

    def describe(self) -> dict:
        """What the engine is, for result rows."""
        return {"engine": self.name, "workers": self.workers}


LocalEngine = Engine  # the interface's own `map`: everything in this process, in order
