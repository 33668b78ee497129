"""Learning-curve PNGs (matplotlib, Agg): validation accuracy@1/K and training loss against epochs/minutes."""

from __future__ import annotations

from pathlib import Path

from argsim.training.curve import pyplot, save_png


def learning_curves(runs: dict[str, list[dict]], path: str | Path, title: str = "validation accuracy@1/K") -> Path:
    """One line per run (label -> history rows with epoch, val, loss, seconds); x = epoch, twin axis = minutes."""
    fig, (ax, bx) = pyplot().subplots(1, 2, figsize=(11, 4))
    for label, hist in runs.items():
        ep = [h["epoch"] for h in hist]
        ax.plot(ep, [h["val"] for h in hist], marker=".", label=label)
        lossy = [h for h in hist if h.get("loss") is not None]
        bx.plot([h["epoch"] for h in lossy], [h["loss"] for h in lossy], label=label)
    ax.set(xlabel="epoch (0 = untrained)", ylabel="validation accuracy@1/K (epa)", title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    bx.set(xlabel="epoch", ylabel="training loss", title="training loss")
    bx.grid(alpha=0.3)
    fig.tight_layout()
    return save_png(fig, path)
