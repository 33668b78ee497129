"""A trained model explains itself (docs/training.md): `train_config.json`, the card `README.md` and
`learning_curve.png` beside the weights. Only rank 0 writes (the callers check)."""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict
from pathlib import Path

from argsim.errors import ArgsimError
from argsim.io import read_json_as, sha256_file, widen_private_files, write_json, write_text
from argsim.measure import peak_memory_mb
from argsim.schemas import TrainRecord
from argsim.training.curve import CURVE, OWN_HISTORY, draw_learning_curve, read_train_config
from argsim.version import __version__, command_line, git_commit, package_versions

TRAIN_CONFIG = "train_config.json"
TRAIN_INFO = "argsim_train.json"  # the key point trainers' own record (threshold, dev rows, timings)
CARD = "README.md"
LIBRARIES = ("torch", "transformers", "sentence-transformers", "accelerate", "datasets", "huggingface-hub",
             "numpy", "pytorch-metric-learning")
CARD_MARK = "<!-- argsim training -->"


def check_trainer(out: str | Path, trainer: str) -> None:
    """One line when OUT holds another trainer's model (the `trainer` of its train_config.json, `read_train_config`):
    training there would overwrite that model's files."""
    if (Path(out) / TRAIN_CONFIG).is_file() and (other := read_train_config(out).get("trainer")) not in (None, trainer):
        raise ArgsimError(f"--out {out} holds a {other} model (its {TRAIN_CONFIG}); training {trainer} there would "
                          "overwrite its files: choose another --out")


def data_hash(rows: object) -> str:
    """sha256 (first 16 hex digits) of a data split: JSON of its rows in order, or a file's bytes."""
    if isinstance(rows, (str, Path)) and Path(rows).is_file():
        return sha256_file(rows)[:16]
    text = json.dumps(rows, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_info(run, rec: dict) -> dict:
    """What every trainer's own info file repeats of its run (`rec`: `argsim.training.trainer.run_trainer`'s
    record): steps, seconds (rounded to 0.1), the stop reason, device and precision.

    Example:
        >>> from types import SimpleNamespace
        >>> run = SimpleNamespace(placement=SimpleNamespace(device="cpu", precision="fp32"))
        >>> run_info(run, {"steps": 4, "seconds": 1.26, "stopped_by": None})
        {'steps': 4, 'seconds': 1.3, 'stopped_by': None, 'device': 'cpu', 'precision': 'fp32'}
    """
    return {"steps": rec["steps"], "seconds": round(rec["seconds"], 1), "stopped_by": rec.get("stopped_by"),
            "device": run.placement.device, "precision": run.placement.precision}


def save_run(run, options: dict, data: dict, rec: dict, metrics: dict | None = None,
             base_model: str | None = None, files: dict | None = None,
             pipeline_tag: str = "sentence-similarity") -> None:
    """Rank 0, the model saved: `files` ({name: JSON content}) in OUT, then the card and train_config.json: the
    `TrainRun`, the trainer's `options`, data hashes, `rec`, end `metrics`, the peak resident memory (MiB) and, on
    CUDA, the peak allocated GPU memory (MiB)."""
    import torch

    for name, content in (files or {}).items():
        write_json(Path(run.out) / name, content)
    placement, peak = run.placement, {"cpu_rss_mb": peak_memory_mb()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        peak["cuda_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    write_records(run.out, {
        "trainer": run.trainer, "command": command_line(), "base_model": base_model, "seed": placement.seed,
        "git_commit": git_commit(),
        "versions": {"argsim": __version__, "python": platform.python_version(), **package_versions(LIBRARIES)},
        "device": placement.device, "precision": placement.precision, "processes": placement.processes,
        "threads": placement.threads, "options": options, "budget": asdict(run.budget),
        "optimizer": {"optimizer": "AdamW", **asdict(run.policy)}, "data": data, **rec, "peak_memory": peak,
        "metrics": metrics or {}}, pipeline_tag)


def _argsim_section(config: dict) -> str:
    """The card's section on the run, with a table of the metrics measured at the end."""
    flat = {k: v for k, v in config.get("metrics", {}).items()
            if isinstance(v, (int, float, str)) and not isinstance(v, bool)}
    rows = "\n".join(f"| {k} | {v:.4f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in flat.items())
    table = f"| metric | value |\n|---|---|\n{rows}\n" if flat else "No metric was measured at the end of this run.\n"
    return (f"\n{CARD_MARK}\n## argsim training run\n\n"
            f"Trained with `{config['command']}` (trainer `{config['trainer']}`, seed {config['seed']}, "
            f"device {config['device']}, precision {config['precision']}, {config['processes']} process(es), "
            f"{config.get('steps', '?')} optimizer steps, {config.get('seconds', '?')} s"
            + (f", stopped by {config['stopped_by']}" if config.get("stopped_by") else "") + ").\n\n"
            "Metrics measured at the end:\n\n" + table
            + f"\nEverything else (versions, git commit, data hashes, budgets, optimizer): `{TRAIN_CONFIG}`.\n")


def write_records(out: str | Path, config: dict, pipeline_tag: str = "sentence-similarity") -> None:
    """Write OUT/train_config.json and OUT/README.md (appending to sentence-transformers' own card)."""
    out = Path(out)
    write_json(out / TRAIN_CONFIG, config)
    card = out / CARD
    if card.is_file() and card.read_text(encoding="utf-8").startswith("---"):
        text = card.read_text(encoding="utf-8").split(CARD_MARK)[0].rstrip() + "\n"
    else:
        base = f"base_model: {config['base_model']}\n" if config.get("base_model") else ""
        text = (f"---\nlibrary_name: argsim\n{base}tags:\n- argsim\n- {config['trainer']}\n"
                f"pipeline_tag: {pipeline_tag}\n---\n# argsim {config['trainer']} model\n")
    write_text(card, text + _argsim_section(config))
    if not (out / OWN_HISTORY).is_file():  # the counter trainers draw their validation curve from it themselves
        draw_learning_curve(config, out / CURVE)
    widen_private_files(out)  # the weights safetensors wrote as 0600, the checkpoints included


def add_metrics(out: str | Path, metrics: dict) -> None:
    """Record metrics measured after training (e.g. a dev-set evaluation) in train_config.json and the card."""
    path = Path(out) / TRAIN_CONFIG
    if not path.is_file():
        return
    config = read_json_as(TrainRecord, path, what="a training record (a JSON object naming its trainer)")
    config["metrics"] = {**(config.get("metrics") or {}), **metrics}
    write_records(out, config)
