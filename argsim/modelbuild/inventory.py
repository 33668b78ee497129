"""Which trained models exist under a folder, and the figure each reached (from its own records)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

RECORDS = ("train_config.json", "models_build.json")


@dataclass
class TrainedModel:
    folder: Path
    trainer: str
    steps: int | None
    seconds: float | None
    stopped_by: str | None
    metrics: dict[str, float]


def read_json_object(path: Path) -> dict | None:
    """A JSON object a run wrote (train_config.json, the build's marker); None when missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _numbers(d: dict) -> dict[str, float]:
    return {k: float(v) for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def trained_models(root: Path, depth: int = 3) -> list[TrainedModel]:
    """Every folder under `root` (at most `depth` levels down) holding a train_config.json or a models_build.json:
    its trainer, steps, wall time, why it stopped, and the metrics measured at the end (the build's figures
    added)."""
    root = Path(root)
    if not root.is_dir():
        return []
    found: dict[Path, TrainedModel] = {}
    for level in range(1, depth + 1):
        for rec in RECORDS:
            for path in sorted(root.glob("/".join(["*"] * level) + f"/{rec}")):
                if "checkpoints" in path.parts:
                    continue
                folder = path.parent
                config = read_json_object(folder / "train_config.json") or {}
                build = read_json_object(folder / "models_build.json") or {}
                found[folder] = TrainedModel(folder, config.get("trainer") or build.get("recipe", "?"),
                                             config.get("steps"), config.get("seconds") or build.get("seconds"),
                                             config.get("stopped_by"),
                                             {**_numbers(config.get("metrics") or {}),
                                              **_numbers(build.get("figures") or {})})
    return sorted(found.values(), key=lambda m: str(m.folder))
