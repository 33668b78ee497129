"""`argsim models publish NAME FOLDER`: put a trained adapter into the package as a shipped model, behind a gate.

A shipped model (`argsim/shipped/<name>/`, package data) is an adapter folder (`argsim.backend.adapters`) whose
card.json also records what it is and how well it does: task, the data it was trained on and that data's
licence, the training command and time, its figures on the task's own metric (from the training run's
train_config.json), and its figure on a fixed small slice of the evaluation split (`slice`), measured when
publishing through the same loader users get, so a test can check offline that the shipped file reproduces it.

The gate: a model replaces the shipped one only when its recorded figure (the task's primary metric) is at least
the shipped one's; otherwise nothing is written (ArgsimError, exit 2).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from argsim.errors import ArgsimError


@dataclass(frozen=True)
class ShippedTask:
    """What a shipped model of one task records and how its slice figure is measured."""

    name: str
    task: str  # bench/results/<task>.json
    description: str
    primary: str  # the train_config.json metric that gates publishing (higher is better)
    figures: tuple[str, ...]  # the train_config.json metrics copied into the card
    data: str
    licence: str
    slice_description: str
    slice_figures: Callable[[Path, object], dict[str, float]]  # (adapter folder, RunConfig) -> figures
    #: (trained folder, staging folder) -> card entries: writes the artifact that ships (None: the folder is a
    #: LoRA adapter and its files are copied); the slice is then measured on the written artifact
    pack: Callable[[Path, Path], dict] | None = None
    weights_file: str = "adapter_model.safetensors"  # the file whose hash and size the card and listing show


def kpm_slice(config=None):  # noqa: ANN001, ANN201
    """The fixed slice of ArgKP dev a shipped key point matcher is checked on: the first dev topic (file order),
    both stances, every argument and key point of it."""
    from argsim.data.argkp import load_argkp

    dev = load_argkp("dev", config.data_dir if config else None)
    return dev.subset(dev.topics[:1], name="argkp-dev[topic 1]")


def _kpm_slice_figures(folder: Path, config=None) -> dict[str, float]:  # noqa: ANN001
    from argsim.kpm.evaluate import map_of_folder

    _, result = map_of_folder(folder, kpm_slice(config), config)
    return {"strict_map": result.strict, "relaxed_map": result.relaxed}


ARGKP_LICENCE = ("ArgKP-2021 (IBM Debater ArgKP v1 and the KPA 2021 shared task), Community Data License "
                 "Agreement - Sharing 1.0 (https://cdla.io/sharing-1-0/); Bar-Haim et al., From Arguments to Key "
                 "Points: Towards Automatic Argument Summarization, ACL 2020")

MINUTES_TEST = "runs/minutes-triplets/test.jsonl"
MINUTES_SLICE = 300


def minutes_slice(config=None) -> list[dict]:  # noqa: ANN001
    """The fixed slice of the minutes test triplets a shipped political SBERT is checked on: the first 300 test
    triplets (file order) that `argsim data triplets minutes` wrote (runs/minutes-triplets/test.jsonl)."""
    from argsim.io import read_records
    from argsim.paths import under_workdir

    rows = read_records(under_workdir(MINUTES_TEST), required=["anchor", "positive", "negative"],
                        text=["anchor", "positive", "negative"])
    return [{k: str(r.get(k, "")) for k in ("anchor", "positive", "negative", "meeting", "negative_meeting")}
            for r in rows[:MINUTES_SLICE]]


def _minutes_slice_figures(folder: Path, config=None) -> dict:  # noqa: ANN001
    """The slice's accuracy through the shipped loader, and where its triplets are in the minutes (line numbers
    of `argsim.minutes.shipped.corpus`, not their text) with the texts' hash, so a test rebuilds it offline."""
    from argsim.minutes import shipped

    data_dir = config.data_dir if config else None
    rows = minutes_slice(config)
    pairs = shipped.locate_triplets(rows, data_dir)
    rebuilt = shipped.slice_triplets(pairs, data_dir)
    texts = [{k: r[k] for k in ("anchor", "positive", "negative")} for r in rows]
    if rebuilt != texts:
        raise ArgsimError(f"{MINUTES_TEST}: its triplets are not the ones the PoliInfo minutes rebuild")
    encoder = shipped.load_encoder(folder).configure(None, False, True)
    return {"accuracy": shipped.slice_accuracy(encoder, rebuilt), "triplets": len(rebuilt),
            "texts_sha256": shipped.slice_sha256(rebuilt), "lines": pairs}


def _minutes_pack(trained: Path, staging: Path) -> dict:
    from argsim.minutes.shipped import pack

    return pack(trained, staging, precision=MINUTES_PRECISION, delta_rows=MINUTES_DELTA_ROWS)


#: how the shipped minutes model stores its deltas (chosen by dev accuracy and size; docs/models.md)
MINUTES_PRECISION = "int8"
MINUTES_DELTA_ROWS: int | None = None
POLIINFO_LICENCE = ("PoliInfo (NTCIR-14 QA Lab-PoliInfo / NTCIR-15 QA Lab-PoliInfo-2): Tokyo Metropolitan "
                    "Assembly minutes, distributed by NTCIR for research use under its user agreement")

TASKS: dict[str, ShippedTask] = {
    "kpm": ShippedTask("kpm", "kpm", "key point matching bi-encoder: LoRA adapter over MiniLM, contrastive loss",
                       primary="dev_strict_map", figures=("dev_strict_map", "dev_relaxed_map"),
                       data="ArgKP-2021 train (5,583 arguments, 207 key points, 20,635 labelled pairs)",
                       licence=ARGKP_LICENCE,
                       slice_description="ArgKP-2021 dev, first topic (both stances), leaderboard mAP",
                       slice_figures=_kpm_slice_figures),
    "minutes": ShippedTask("minutes", "minutes", "political Sentence-BERT (Shirafuji et al.): GiNZA word vectors "
                           "with own word vectors + dense layer, triplet loss; a sparse delta over GiNZA's table",
                           primary="eval_dev_cosine_accuracy", figures=("eval_dev_cosine_accuracy",),
                           data="triplets mined from the PoliInfo Tokyo Metropolitan Assembly minutes "
                                "(`argsim data triplets minutes`: 42,130 train, 5,046 dev, split by meeting)",
                           licence=POLIINFO_LICENCE,
                           slice_description=f"the first {MINUTES_SLICE} test triplets of `argsim data triplets "
                                             "minutes`, triplet accuracy by cosine",
                           slice_figures=_minutes_slice_figures, pack=_minutes_pack,
                           weights_file="minutes_delta.safetensors"),
}


def shipped_card(name: str) -> dict | None:
    """The card of the shipped model `name` (None when none ships)."""
    from argsim.backend.adapters import read_card, shipped_models

    folder = shipped_models().get(name)
    return read_card(folder) if folder else None


def publish(name: str, folder: Path, config=None, dest: Path | None = None) -> dict:  # noqa: ANN001
    """Copy the adapter in `folder` into the package as the shipped model `name` when its recorded primary figure
    is at least the shipped one's; returns the card written. ArgsimError (nothing written) otherwise.

    Args:
        name: a shipped model name of `TASKS` (e.g. "kpm").
        folder: an adapter folder trained with `--lora-rank` (its train_config.json holds the figures).
        config: the RunConfig (data folder for the slice, device).
        dest: the shipped models' folder (default: the package's `argsim/shipped`).

    Returns:
        The card.json written.

    Example:
        >>> publish("kpm", Path("models/kpm-lora"))["figures"]["dev_strict_map"]  # doctest: +SKIP
        0.83...
    """
    from argsim.backend.adapters import (
        ADAPTER_CONFIG,
        ADAPTER_WEIGHTS,
        SHIPPED_DIR,
        is_adapter_folder,
        is_shipped_folder,
        read_card,
        sha256_file,
    )
    from argsim.io import write_json
    from argsim.modelbuild.inventory import read_json_object

    if name not in TASKS:
        raise ArgsimError(f"unknown shipped model '{name}': choose from {', '.join(TASKS)}")
    spec = TASKS[name]
    folder = Path(folder)
    if spec.pack is None and not is_adapter_folder(folder):
        raise ArgsimError(f"{folder}: not an adapter folder (train with --lora-rank; it holds "
                          f"{ADAPTER_WEIGHTS} and card.json)")
    record = read_json_object(folder / "train_config.json") or {}
    metrics = record.get("metrics") or {}
    missing = [m for m in spec.figures if not isinstance(metrics.get(m), (int, float))]
    if missing:
        raise ArgsimError(f"{folder / 'train_config.json'}: no {missing[0]} recorded (train with the evaluation "
                          "split, e.g. --eval-split dev)")
    figures = {m: float(metrics[m]) for m in spec.figures}
    dest = Path(dest) if dest else SHIPPED_DIR
    target = dest / name
    current = read_card(target) if is_shipped_folder(target) else None
    if current is not None:
        have = (current.get("figures") or {}).get(spec.primary)
        if isinstance(have, (int, float)) and figures[spec.primary] < have:
            raise ArgsimError(f"{folder}: {spec.primary} {figures[spec.primary]:.4f} is below the shipped '{name}' "
                              f"({have:.4f}); nothing was published")
    staging = dest / f".{name}.publishing"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    if spec.pack is None:
        card = read_card(folder)
        for file in (ADAPTER_WEIGHTS, ADAPTER_CONFIG, "argsim_encoder.json"):
            shutil.copyfile(folder / file, staging / file)
    else:
        card = spec.pack(folder, staging)
    card.update({
        "name": name, "task": spec.task, "description": spec.description, "data": spec.data,
        "data_licence": spec.licence, "command": record.get("command"), "seed": record.get("seed"),
        "steps": record.get("steps"), "training_seconds": record.get("seconds"),
        "training_device": record.get("device"), "training_threads": record.get("threads"),
        "git_commit": record.get("git_commit"), "figures": figures,
        "published_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    })
    if spec.pack is None:
        card["adapter_sha256"] = sha256_file(folder / ADAPTER_WEIGHTS)
        card["slice"] = {"data": spec.slice_description, **spec.slice_figures(folder, config)}
    else:  # measured on the artifact written, through the loader users get
        write_json(staging / "card.json", card)
        card["slice"] = {"data": spec.slice_description, **spec.slice_figures(staging, config)}
    write_json(staging / "card.json", card)
    if target.exists():
        old = dest / f".{name}.replaced"
        if old.exists():
            shutil.rmtree(old)
        target.rename(old)
        staging.rename(target)
        shutil.rmtree(old)
    else:
        staging.rename(target)
    return card


def shipped_summaries() -> list[dict]:
    """One line per shipped model for `argsim models`: name, task, base, adapter size, figures, slice figures."""
    from argsim.backend.adapters import read_card, shipped_models

    rows = []
    for name, folder in shipped_models().items():
        card = read_card(folder)
        weights = folder / (TASKS[name].weights_file if name in TASKS else "adapter_model.safetensors")
        rows.append({"name": name, "task": card.get("task", "?"), "base": card["base"],
                     "description": card.get("description", ""),
                     "megabytes": round(weights.stat().st_size / 2**20, 2),
                     "figures": card.get("figures") or {}, "slice": card.get("slice") or {},
                     "command": card.get("command"), "training_seconds": card.get("training_seconds")})
    return rows
