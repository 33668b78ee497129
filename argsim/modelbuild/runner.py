"""`argsim models build`: run recipes in sequence, resumable, with one progress bar (docs/training.md).

State lives in the recipes' own folders: a recipe is finished when `OUT/models_build.json` says so for the same
command line, or trained when its `train_config.json` shows a run that no budget stopped; an interrupted one (a
checkpoint under OUT) continues with `--resume` (a run that finished but failed before its record, with no checkpoint
at its end, trains again: nothing to resume). Steps run as child processes (`python -m argsim.cli.app ...`, the same
global options), their output appended to the log; the bar advances by each recipe's estimated minutes.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argsim.errors import ArgsimError
from argsim.io import write_json
from argsim.metrics.record import Evaluation
from argsim.modelbuild.inventory import number, read_json_object
from argsim.modelbuild.recipes import RECIPES, Recipe, line
from argsim.progress import progress_bar
from argsim.results import result_rows, write_results
from argsim.training.run import finished_past

MARKER = "models_build.json"
BUDGET_STOPS = ("max_steps", "max_minutes")


def select(names: Sequence[str], recipes: Sequence[Recipe] = RECIPES) -> list[Recipe]:
    """The recipes named (all when none), in registry order, with the recipes they need."""
    by_name = {r.name: r for r in recipes}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ArgsimError(f"unknown recipe '{unknown[0]}': choose from {', '.join(by_name)}")
    wanted: set[str] = set()
    todo = list(names or by_name)
    while todo:
        if (name := todo.pop()) not in wanted:
            wanted.add(name)
            todo += by_name[name].needs
    return [r for r in recipes if r.name in wanted]


def read_figure(out: Path, spec: str) -> float | None:
    """The number at `file:dotted.key` under `out` (None when the file or key is missing)."""
    file, _, key = spec.partition(":")
    value = read_json_object(out / file)
    for part in key.split(".") if key else []:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return number(value)


def figures(recipe: Recipe, root: Path) -> dict[str, float]:
    return {m: v for m, spec in recipe.figures.items() if (v := read_figure(root / recipe.out, spec)) is not None}


def state(recipe: Recipe, root: Path) -> str:
    """finished | trained | interrupted | new."""
    out = root / recipe.out
    done = read_json_object(out / MARKER) or {}
    if done.get("finished") and done.get("train") == recipe.train_line:
        return "finished"
    config = read_json_object(out / "train_config.json") if recipe.train else None
    if config is not None and config.get("stopped_by") not in BUDGET_STOPS:
        return "trained"
    if (out / "checkpoints").is_dir() or (out / "checkpoint.pt").is_file():
        # a run that finished without its record (it failed after training) and no checkpoint at its end: --resume
        # would be refused (nothing to resume), so it trains again
        return "new" if finished_past(out) is not None else "interrupted"
    return "new"


@dataclass
class Plan:
    recipes: list[Recipe]
    states: dict[str, str]
    minutes: float = field(init=False)  # the estimated minutes of the recipes not finished: on 2 CPU cores
    gpu_minutes: float = field(init=False)  # and on one GPU

    def __post_init__(self) -> None:
        todo = [r for r in self.recipes if self.states[r.name] != "finished"]
        self.minutes, self.gpu_minutes = sum(r.cpu_minutes for r in todo), sum(r.gpu_minutes for r in todo)


def plan(names: Sequence[str], root: Path, recipes: Sequence[Recipe] = RECIPES) -> Plan:
    chosen = select(names, recipes)
    return Plan(chosen, {r.name: state(r, root) for r in chosen})


def with_budget(line: str, minutes: float) -> tuple[str, bool]:
    """`line` with `--max-minutes` at most `minutes` (floored to 0.01); True when the build's budget is the binding
    one, False when the line's own smaller limit stays."""
    parts = shlex.split(line)
    minutes = max(0.01, round(minutes, 2))
    for i, part in enumerate(parts):
        flag, joined, own = part.partition("=")
        if flag == "--max-minutes" and (joined or i + 1 < len(parts)):
            own, rest = (own, parts[i + 1:]) if joined else (parts[i + 1], parts[i + 2:])
            if float(own) <= minutes:
                return line, False
            return shlex.join([*parts[:i], "--max-minutes", f"{minutes:g}", *rest]), True
    return shlex.join([*parts, "--max-minutes", f"{minutes:g}"]), True


def build(the_plan: Plan, root: Path, log: Path,
          global_options: Callable[[Sequence[str]], Sequence[str]] = lambda args: (), quiet: bool = False,
          echo: Callable[[str], None] = print, max_minutes: float | None = None) -> list[dict]:
    """Run the plan's unfinished recipes in order; returns one summary per recipe (status skipped, built, stopped
    or pending). A failed step stops the build (ArgsimError naming the recipe and the log) after recording what
    finished; `max_minutes` bounds the build (see the module docstring); `global_options(args)`: the global options
    an `argsim` step with those arguments takes."""
    log.parent.mkdir(parents=True, exist_ok=True)
    summaries = []

    def note(text: str) -> None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {text}\n")
        echo(text)

    deadline = None if max_minutes is None else time.monotonic() + max_minutes * 60
    spent = False
    with progress_bar(max(1, round(the_plan.minutes * 60)), "models build", enabled=not quiet) as bar:
        for recipe in the_plan.recipes:
            status = the_plan.states[recipe.name]
            if status == "finished":
                note(f"{recipe.name}: finished already ({root / recipe.out}), skipped")
                summaries.append({"recipe": recipe.name, "status": "skipped", **figures(recipe, root)})
                continue
            spent = spent or (deadline is not None and time.monotonic() >= deadline)
            if spent:
                note(f"{recipe.name}: not started, the build's --max-minutes is spent; rerun to continue")
                summaries.append({"recipe": recipe.name, "status": "pending"})
                continue
            note(f"{recipe.name}: {status}, ~{recipe.cpu_minutes:g} min on 2 CPU cores ({recipe.description})")
            began = time.perf_counter()
            stopped, used = _run_steps(recipe, status, root, log, global_options, deadline, note, bar)
            if stopped:
                spent = True
                note(f"{recipe.name}: stopped by the build's --max-minutes with a checkpoint; rerun "
                     "`argsim models build` to resume it")
                summaries.append({"recipe": recipe.name, "status": "stopped"})
                continue
            seconds = round(time.perf_counter() - began, 1)
            bar.advance(max(0, round(recipe.cpu_minutes * 60 - used)))
            got = figures(recipe, root)
            finish(recipe, root, seconds, got)
            note(f"{recipe.name}: done in {seconds / 60:.1f} min" + "".join(f", {k} {v:.4f}" for k, v in got.items()))
            summaries.append({"recipe": recipe.name, "status": "built", "seconds": seconds, **got})
    return summaries


def _run_steps(recipe: Recipe, status: str, root: Path, log: Path, global_options: Callable,
               deadline: float | None, note: Callable[[str], None], bar: Any) -> tuple[bool, int]:
    """Run what the recipe still has to run: the data it lacks, its training unless trained (resumed when interrupted,
    bounded by the build's deadline), its scoring. (Whether the training stopped at the deadline with a checkpoint,
    the seconds `bar` advanced); ArgsimError naming the recipe and the log when a step fails."""
    used = 0
    steps = [(line(command), False) for command, creates in recipe.prepare if not (root / creates).exists()]
    if recipe.train and status != "trained":
        steps.append((recipe.train_line + (" --resume" if status == "interrupted" else ""), True))
    for text, is_training in steps + [(line(command), False) for command in recipe.score]:
        bounded = False
        if is_training and deadline is not None:
            text, bounded = with_budget(text, (deadline - time.monotonic()) / 60)
        note(f"{recipe.name}: {text}")
        cmd = shlex.split(text)  # `argsim ...` runs this argsim with the build's global options, the rest as written
        if cmd and cmd[0] == "argsim":
            cmd = [sys.executable, "-m", "argsim.cli.app", *global_options(cmd[1:]), *cmd[1:]]
        with open(log, "a", encoding="utf-8") as fh:  # the step's output appended to the log
            fh.write(f"$ {shlex.join(cmd)}\n")
            fh.flush()
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=root)
            while proc.poll() is None:
                time.sleep(1.0)
                if used + 1 < recipe.cpu_minutes * 60:  # never run past the recipe's share of the bar
                    used += 1
                    bar.advance(1)
        if (rc := proc.returncode) != 0:
            note(f"{recipe.name}: failed (exit {rc}); see {log}; rerun `argsim models build` to continue")
            raise ArgsimError(f"recipe {recipe.name}: `{text}` exited {rc} (log: {log})")
        if bounded and (read_json_object(root / recipe.out / "train_config.json") or {}).get(
                "stopped_by") == "max_minutes":
            return True, used
    return False, used


def finish(recipe: Recipe, root: Path, seconds: float, got: dict[str, float]) -> None:
    """Mark the recipe finished (OUT/models_build.json) and merge its figures into bench/results/<task>.json."""
    out = root / recipe.out
    write_json(out / MARKER, {"recipe": recipe.name, "train": recipe.train_line, "finished": True, "seconds": seconds,
                              "figures": got, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S")})
    if got and recipe.method:
        # the row's command is the training command, so its seconds are that run's own (train_config.json; a
        # model trained before this build, or resumed, keeps its real training time); the build's wall time
        # (prepare + train + score) is in OUT/models_build.json
        trained = read_figure(out, "train_config.json:seconds")
        evaluation = Evaluation(recipe.task, dict(got), next(iter(got)), data=recipe.split or None)
        rows = result_rows(evaluation, method=recipe.method, model=recipe.out, setting=recipe.setting or None,
                           seconds=trained if trained is not None else seconds, command=recipe.train_line)
        write_results(recipe.task, rows, merge=True)
