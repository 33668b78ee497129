"""`argsim train thematic`: a thematic sentence encoder trained on triplet files, either architecture
(`ThematicTrainConfig.arch`: the MiniLM adapter of `thematic_minilm`, the paper's BiLSTM of `thematic_bilstm`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from argsim.thematic.config import ThematicTrainConfig
from argsim.training import Budget, Placement


def train_thematic(triplets: Path, out: Path, config: ThematicTrainConfig, placement: Placement, budget: Budget,
                   dev: Path | None = None, quiet: bool = False, log: Callable[[str], object] = print) -> dict:
    """Train on the (anchor, positive, negative) records of `triplets` (`dev`: dev triplets choosing the saved
    model) and save the model to `out`; `config` as `ThematicTrainConfig.checked` returns it. Returns the run's
    statistics by name (triplets, steps, seconds, dev accuracy, ...)."""
    from argsim.io import read_records
    from argsim.schemas import TripletRecord

    rows = read_records(triplets, TripletRecord)
    dev_rows = read_records(dev, TripletRecord) if dev else None
    if config.arch != "bilstm":
        from argsim.trainers.thematic_minilm import finetune_sentence_transformer

        return finetune_sentence_transformer(rows, out, config, placement=placement, budget=budget, quiet=quiet,
                                             dev=dev_rows)
    from argsim.trainers.thematic_bilstm import train_bilstm

    cfg = replace(config, seed=placement.seed, threads=placement.threads)
    rep = train_bilstm(rows, out, cfg, dev=dev_rows, log=log, placement=placement, budget=budget)
    return {"triplets": rep.train_triplets, "seen": rep.triplets_seen, "steps": rep.steps, "seconds": rep.seconds,
            "triplets/s": rep.triplets_per_second,
            "dev accuracy (L1)": rep.dev_accuracy if rep.dev_accuracy is not None else "-",
            "best step": rep.best_step if rep.best_step is not None else "-", "stopped by": rep.stopped_by or "-"}
