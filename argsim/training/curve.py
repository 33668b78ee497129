"""The learning curve of a training run, drawn from its `train_config.json` as `learning_curve.png` beside it:
left the logged losses against optimizer steps (a moving average past 40 points), right the evaluations logged
during training (else the end-of-run `metrics`); the title names the trainer, steps, time and stop reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argsim.errors import InputError
from argsim.extras import need
from argsim.io import atomic_path, describe_path, read_json_as
from argsim.schemas import TrainConfig

CURVE = "learning_curve.png"
OWN_HISTORY = "history.json"  # trainers with a per-epoch validation history draw CURVE from it themselves


def loss_points(config: dict) -> tuple[list[float], list[float]]:
    """(steps, losses): the logged losses at the steps they were logged (evenly spread when not recorded)."""
    losses = [float(v) for v in config.get("losses") or []]
    steps = config.get("loss_steps")
    if steps and len(steps) == len(losses):
        return [float(s) for s in steps], losses
    total = float(config.get("steps") or len(losses))
    return [total * (i + 1) / len(losses) for i in range(len(losses))], losses


def moving_average(values: list[float], window: int) -> list[float]:
    """Trailing mean over the last `window` values (shorter at the start)."""
    sums = np.cumsum([0.0, *values])
    return [float(sums[i + 1] - sums[max(0, i + 1 - window)]) / min(i + 1, window) for i in range(len(values))]


def eval_series(config: dict) -> dict[str, tuple[list[float], list[float]]]:
    """metric -> (steps, values) from the run's `evals` rows (numbers only; runtimes left out)."""
    series: dict[str, tuple[list[float], list[float]]] = {}
    for row in config.get("evals") or []:
        step = row.get("step")
        for key, value in row.items():
            if step is not None and key != "step" and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and not key.endswith(("runtime", "per_second", "epoch")):
                xs, ys = series.setdefault(key, ([], []))
                xs.append(float(step))
                ys.append(float(value))
    return series


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed); without matplotlib, one line naming its extra."""
    need("matplotlib", "learning-curve plots").use("Agg")
    return need("matplotlib.pyplot", "learning-curve plots")


def save_png(fig, path: str | Path) -> Path:
    """Write a figure as a PNG atomically (parents created) and close it."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    pyplot().close(fig)
    return Path(path)


def draw_learning_curve(config: dict, path: str | Path) -> Path | None:
    """Write the PNG for one run's config; None (nothing written) when the run logged no loss."""
    steps, losses = loss_points(config)
    if not losses:
        return None
    fig, (ax, bx) = pyplot().subplots(1, 2, figsize=(11, 4))
    ax.plot(steps, losses, color="0.7" if len(losses) > 40 else "C0", lw=0.8, label="logged loss")
    if len(losses) > 40:
        ax.plot(steps, moving_average(losses, max(5, len(losses) // 20)), color="C0", label="moving average")
    ax.set(xlabel="optimizer step", ylabel="training loss")
    minutes, stop = (config.get("seconds") or 0) / 60, config.get("stopped_by")
    ax.set_title(f"{config.get('trainer', '?')}: {config.get('steps', '?')} steps, {minutes:.1f} min"
                 + (f", stopped by {stop}" if stop else ""), fontsize=10)
    series = eval_series(config)
    for name, (xs, ys) in series.items():
        bx.plot(xs, ys, marker="o", label=name)
    for axis in (ax, bx) if series else (ax,):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    if series:
        bx.set_xlabel("optimizer step")
        bx.set_title("evaluated during training", fontsize=10)
    else:
        text = "\n".join(f"{k} = {v:.4f}" for k, v in (config.get("metrics") or {}).items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool)) or "no metric recorded"
        bx.axis("off")
        bx.text(0.02, 0.95, "measured at the end:\n" + text, va="top", family="monospace", fontsize=9)
    fig.tight_layout()
    return save_png(fig, path)


def redraw(folder: str | Path) -> Path | None:
    """(Re)draw FOLDER/learning_curve.png from FOLDER/train_config.json (models trained before the PNG existed)."""
    return draw_learning_curve(read_train_config(folder), Path(folder) / CURVE)


def trained_folder(folder: str | Path) -> Path:
    """`folder` if it is a folder holding a `train_config.json`, else one InputError saying what it is: a file (for
    a `train_config.json` itself, naming its folder), nothing, or a folder argsim did not train.

    Example:
        >>> trained_folder("README.md")  # doctest: +SKIP
        InputError: README.md: is a file; expected a trained model folder
    """
    folder = Path(folder)
    if folder.is_file():
        hint = f" (its folder {folder.parent})" if folder.name == "train_config.json" else ""
        raise InputError(folder, f"is a file; expected a trained model folder{hint}")
    if not folder.is_dir():
        raise InputError(folder, (describe_path(folder) or "not a folder").replace("file not", "folder not"))
    if not (folder / "train_config.json").is_file():
        raise InputError(folder, "no train_config.json here (not a folder argsim trained)")
    return folder


def read_train_config(folder: str | Path) -> dict:
    """FOLDER/train_config.json, validated (`argsim.schemas.TrainConfig`: another shape is one InputError)."""
    return read_json_as(TrainConfig, Path(folder) / "train_config.json", what="a training record (a JSON object)")
