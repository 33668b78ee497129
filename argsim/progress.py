"""Rich progress bars; the caller says whether to show one (`enabled=not quiet`), nothing global is read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

T = TypeVar("T")
console = Console(stderr=True)


class _NullBar:
    def advance(self, n: int = 1) -> None:  # noqa: D102
        pass


class _Bar:
    def __init__(self, progress: Progress, task_id: int) -> None:
        self._progress, self._task = progress, task_id

    def advance(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)


@contextmanager
def progress_bar(total: int, description: str, enabled: bool | None = True) -> Iterator[_Bar | _NullBar]:
    """A progress bar over `total` units on stderr; none when `enabled` is false (pass `not quiet`)."""
    if enabled is False:
        yield _NullBar()
        return
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True)
    with progress:
        yield _Bar(progress, progress.add_task(description, total=total))


def track(items: Iterable[T], description: str, total: int | None = None, enabled: bool = True) -> Iterator[T]:
    """Iterate with a progress bar (none when `enabled` is false)."""
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = 0
    with progress_bar(total, description, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.advance()
