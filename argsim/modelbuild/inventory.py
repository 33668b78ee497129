"""Which trained models exist under a folder, and the figure each reached (from its own records)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from argsim.errors import InputError, warn
from argsim.io import read_json_as
from argsim.schemas import TrainConfig

RECORDS = ("train_config.json", "models_build.json")


@dataclass
class TrainedModel:
    folder: Path
    trainer: str
    steps: int | None
    seconds: float | None
    stopped_by: str | None
    metrics: dict[str, float]


def read_json_object(path: Path, problems: list[str] | None = None) -> dict | None:
    """A JSON object a run wrote (train_config.json, the build's marker) checked against its schema; None when
    missing, and None with the problem appended to `problems` when unreadable or of another shape."""
    if not path.is_file():
        return None
    try:
        return read_json_as(TrainConfig if path.name == "train_config.json" else dict[str, object], path,
                            what="a JSON object")
    except InputError as exc:
        if problems is not None:
            problems.append(str(exc))
        return None


def _numbers(d: object) -> dict[str, float]:
    """The numbers of `d` when it is an object ({} else)."""
    return {k: v for k, value in d.items() if (v := number(value)) is not None} if isinstance(d, dict) else {}


def trained_models(root: Path, depth: int = 3) -> list[TrainedModel]:
    """Every folder under `root` (at most `depth` levels down) holding a train_config.json or a models_build.json:
    its trainer, steps, wall time, why it stopped, and the metrics measured at the end (the build's figures
    added). A folder reached twice (through a symlink) is listed once; records of another shape are left out
    with one warning giving their count and the first problem; `root` that exists but is not a folder is an
    InputError."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise InputError(root, "is a file; expected the folder that holds trained models")
    if not root.is_dir():
        return []
    found: dict[Path, TrainedModel] = {}
    problems: list[str] = []
    for path in (p for level in range(1, depth + 1) for rec in RECORDS
                 for p in sorted(root.glob("/".join(["*"] * level) + f"/{rec}"))):
        folder = path.parent
        if "checkpoints" in path.parts or folder.resolve() in found:
            continue
        config = read_json_object(folder / "train_config.json", problems) or {}
        build = read_json_object(folder / "models_build.json", problems) or {}
        if config or build:
            found[folder.resolve()] = TrainedModel(
                folder, config.get("trainer") or str(build.get("recipe") or "?"), config.get("steps"),
                config.get("seconds") or number(build.get("seconds")), config.get("stopped_by"),
                {**_numbers(config.get("metrics")), **_numbers(build.get("figures"))})
    problems = list(dict.fromkeys(problems))
    if problems:
        warn(f"{len(problems)} training record(s) under {root} could not be read and are left out ({problems[0]})")
    return sorted(found.values(), key=lambda m: str(m.folder))


def number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def redraw_curves(folders: list[Path]) -> list[Path | None]:
    """`argsim models curve`: every folder checked (`trained_folder`) before any is drawn, then each one's
    learning_curve.png redrawn from its records (a counter model: its history.json); None where no loss was logged."""
    from argsim.counter.neural.store import learning_curves, read_history
    from argsim.training.curve import CURVE, OWN_HISTORY, read_train_config, redraw, trained_folder

    for folder in folders:
        trained_folder(folder)
    return [learning_curves({read_train_config(folder).get("trainer", folder.name): read_history(folder)},
                            folder / CURVE) if (folder / OWN_HISTORY).is_file() else redraw(folder)
            for folder in folders]
