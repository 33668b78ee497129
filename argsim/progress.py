"""Rich progress bars; the caller says whether to show one (`enabled=not quiet`). When stderr is not a terminal (a
log file) the bar writes a plain line instead, "description: n/total (p%) elapsed, ~left", at most every
ARGSIM_PROGRESS_SECONDS seconds (default 60), and a last one at the end when it wrote any (docs/usage.md)."""

from __future__ import annotations

import logging
import math
import os
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sized
from contextlib import closing, contextmanager
from functools import partial
from types import SimpleNamespace
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

T = TypeVar("T")
console = Console(stderr=True)


class _LogBar:
    """Plain progress lines for a non-terminal stderr, at most one per `every` seconds (none when it is inf)."""

    def __init__(self, total: int, description: str, every: float) -> None:
        self.total, self.description, self.every, self.done, self.wrote = total, description, every, 0, False
        self.start = self.last = time.monotonic()

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            self.write(now)

    def write(self, now: float) -> None:
        elapsed = now - self.start
        share = self.done / self.total if self.total else 0.0
        left = f", ~{_clock(elapsed / share - elapsed)} left" if 0 < share < 1 else ""
        of = f"/{self.total} ({share:.0%})" if self.total else ""
        console.print(f"{self.description}: {self.done}{of} {_clock(elapsed)} elapsed{left}", highlight=False,
                      markup=False)
        self.wrote = True

    def close(self) -> None:
        if self.wrote:
            self.write(time.monotonic())


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


@contextmanager
def progress_bar(total: int, description: str, enabled: bool | None = True) -> Iterator[SimpleNamespace | _LogBar]:
    """A progress bar over `total` units on stderr; none when `enabled` is false (pass `not quiet`), or when
    ARGSIM_QUIET=1 (what `argsim --quiet` sets for the run, so a bar deep in a library call stays off too)."""
    off = enabled is False or os.environ.get("ARGSIM_QUIET") == "1"
    if off or not console.is_terminal:
        try:  # seconds between two plain progress lines
            every = math.inf if off else max(0.0, float(os.environ.get("ARGSIM_PROGRESS_SECONDS", "60")))
        except ValueError:
            every = 60.0
        with closing(_LogBar(total, description, every)) as bar:
            yield bar
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=True) as progress:
        yield SimpleNamespace(advance=partial(progress.advance, progress.add_task(description, total=total)))


def track(items: Iterable[T], description: str, enabled: bool = True) -> Iterator[T]:
    """Iterate with a progress bar over `len(items)` (an unsized iterable: 0; none when `enabled` is false)."""
    with progress_bar(len(items) if isinstance(items, Sized) else 0, description, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.advance()


#: loggers of the libraries argsim drives (model loading, training, indexes, Ray): warnings and above only, errors
#: only under --quiet; their own progress bars (tqdm) are off under --quiet
LIBRARY_LOGGERS = ("transformers", "sentence_transformers", "huggingface_hub", "datasets", "accelerate", "faiss",
                   "faiss.loader", "sklearn", "gensim", "torch", "ray", "ray.data", "urllib3", "filelock",
                   "safetensors", "peft", "onnxruntime", "openvino", "nncf", "numexpr", "matplotlib")


#: environment variables `library_output(quiet=True)` sets (the CLI restores them when the command ends)
QUIET_ENV = ("ARGSIM_QUIET", "TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS",
             "TRANSFORMERS_VERBOSITY")


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """`warnings.showwarning` replacement: a library's warning as argsim's one line (no source line)."""
    text = str(message).strip().splitlines()
    print(f"warning: {category.__name__}: {text[0] if text else ''}", file=file or sys.stderr, flush=True)


def library_output(quiet: bool) -> None:
    """What the libraries argsim uses may print, set once by the CLI from --quiet: Python warnings become one line
    each (`warning: Category: first line`), or are not shown under `quiet`; library loggers report warnings, or
    errors only under `quiet`; tqdm, huggingface and transformers progress bars are off under `quiet`.

    Args:
        quiet: --quiet.

    Example:
        >>> library_output(quiet=True)  # doctest: +SKIP
    """
    warnings.showwarning = _one_line_warning
    if quiet:
        warnings.simplefilter("ignore")
        os.environ.update({var: "error" if var == "TRANSFORMERS_VERBOSITY" else "1" for var in QUIET_ENV})
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR if quiet else logging.WARNING)
    if quiet and "transformers" in sys.modules:  # already imported (a library caller): its own switches
        import transformers.utils.logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
