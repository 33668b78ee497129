"""Evaluation helpers shared by the CLI and the benchmark: clustering of the SCB and SICK relatedness."""

from __future__ import annotations

from pathlib import Path

from argsim.config import SEED, RunConfig
from argsim.metrics.clustering import averaged_scores
from argsim.thematic.cluster import cluster_groups
from argsim.thematic.sick_eval import SickScores, sick_relatedness


def clustering_eval(rows: list[dict], model: str, algorithm: str, seed: int = SEED,
                    linkage: str = "ward", config: RunConfig | None = None) -> tuple[dict[str, float], int]:
    """Cluster every article of `rows` (text, label, article) with `model` vectors; mean MI/AMI/RI/ARI.

    `config`: the run options of the encoder (device, cache, quiet)."""
    from argsim.backend import get_encoder

    vecs = get_encoder(model, config=config).encode([str(r["text"]) for r in rows])
    pred = cluster_groups(rows, vecs, algorithm, seed=seed, linkage=linkage)
    return averaged_scores([r.get("article", "") for r in rows], [r["label"] for r in rows], pred)


def sick_eval(model: str, folder: Path, config: RunConfig | None = None) -> SickScores:
    """SICK relatedness of a backend model's frozen vectors (`config`: the encoder's run options)."""
    from argsim.backend import get_encoder
    from argsim.data.sick import load_sick

    splits = [load_sick(folder, name) for name in ("train", "trial", "test")]  # bad input fails before the model
    enc = get_encoder(model, config=config)
    return sick_relatedness(enc.encode, *splits)
