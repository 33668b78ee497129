"""The start of a training run (`begin_run`) and its checkpoints under OUT/checkpoints: the one to resume from
(`resume_point`) and the refusals made before the data and the model load (`check_out`: another run training into
OUT; with --resume a finished run, other settings, a damaged checkpoint) (docs/training.md, "Budgets, checkpoints,
resume")."""

from __future__ import annotations

import json
import zipfile
from contextlib import nullcontext
from pathlib import Path

from argsim.errors import ArgsimError, warn
from argsim.io import folder_lock, read_json_as, write_json
from argsim.settings import seed_everything
from argsim.training.budget import Budget, check_cadence
from argsim.training.placement import Placement, TrainRun, is_main_process, resolve_placement
from argsim.training.policy import OptimPolicy
from argsim.training.record import check_trainer

CHECKPOINTS = "checkpoints"
IDENTITY = "run.json"  # beside the checkpoints and in each: the data, architecture and settings they were trained on
WEIGHTS = "model.safetensors"  # a custom network's checkpoint


def begin_run(config: object, out: str | Path, placement: Placement | None = None, budget: Budget | None = None,
              eval_every: int = 0, policy: dict | None = None, trainer: str | None = None,
              **defaults: object) -> TrainRun:
    """A trainer's `TrainRun`, every random generator seeded, the evaluation cadence and OUT (`check_out`) checked
    before any work.

    Args:
        config: the trainer's settings: its `seed` (then set to the placement's), `epochs`, `batch_size` and policy
            fields (`OptimPolicy.from_config`). out: the model folder.
        placement: None: the CPU, fp32, `config.seed`. budget: None: `Budget(**defaults)`.
        eval_every: the steps between evaluations (`check_cadence`).
        policy: `OptimPolicy.from_config`'s fixed values (what the trainer does not let the user set).
        trainer: the trainer's name in the records (`save_run`): an `out` holding another trainer's model is
            refused (`argsim.training.record.check_trainer`).

    Returns:
        the `TrainRun`.

    Example:
        >>> from types import SimpleNamespace
        >>> cfg = SimpleNamespace(seed=7, lr=1e-3)
        >>> run = begin_run(cfg, "out", max_steps=3)
        >>> run.placement.seed, cfg.seed, run.budget.max_steps, run.policy.lr
        (7, 7, 3, 0.001)
    """
    if trainer is not None:
        check_trainer(out, trainer)
    placement = placement or resolve_placement("cpu", "fp32", seed=config.seed)
    config.seed = placement.seed
    seed_everything(placement.seed)
    budget = budget or Budget(**defaults)
    check_cadence(eval_every, budget)
    run = TrainRun(Path(out), placement, budget, OptimPolicy.from_config(config, **(policy or {})),
                   getattr(config, "epochs", 1.0), getattr(config, "batch_size", 16), trainer)
    check_out(run)  # --resume's and OUT's refusals before the data and the model load
    return run


def last_checkpoint(out: Path) -> str | None:
    """The newest `checkpoint-N` folder under OUT/checkpoints whose `trainer_state.json` (a save's last file) reads
    (a save cut short leaves the one before it the last), else the newest, if any."""
    found = sorted((p for p in (Path(out) / CHECKPOINTS).glob("checkpoint-*") if p.is_dir() and p.name[11:].isdigit()),
                   key=lambda p: int(p.name[11:]), reverse=True)
    for path in found:
        try:
            json.loads((path / "trainer_state.json").read_text(encoding="utf-8"))
            return str(path)
        except (OSError, ValueError):
            continue
    return str(found[0]) if found else None


def finished_past(out: Path) -> int | None:
    """The steps of the finished run recorded in OUT/checkpoints/run.json when no checkpoint is at its end (`--resume`
    has nothing to continue: `argsim models build` trains such a recipe again), else None."""
    saved = Path(out) / CHECKPOINTS / IDENTITY
    finished = read_json_as(dict[str, object], saved).get("finished") if saved.is_file() else None
    newest = last_checkpoint(out)
    behind = finished is not None and (newest is None or int(newest.rsplit("-", 1)[1]) < int(finished))
    return int(finished) if behind else None


def check_checkpoint(folder: str) -> None:
    """Refuse in one line a checkpoint to resume whose state or weights are missing, or whose JSON, safetensors or
    torch files do not read whole (a save cut short), before any of it is loaded."""
    from safetensors import SafetensorError, safe_open

    files = sorted(p for p in Path(folder).rglob("*") if p.suffix in {".json", ".safetensors", ".pt", ".pth", ".bin"})
    weights = [p for p in files if p.suffix == ".safetensors" or p.name.endswith("model.bin")]
    for path in [Path(folder) / "trainer_state.json", *([] if weights else [Path(folder) / WEIGHTS]), *files]:
        try:
            if path.suffix == ".json":
                json.loads(path.read_text(encoding="utf-8"))
            elif path.suffix == ".safetensors":
                safe_open(str(path), "pt").keys()
            elif not zipfile.is_zipfile(path):
                raise ValueError("not a whole torch file")
        except (OSError, ValueError, SafetensorError) as exc:
            why = "missing" if not path.is_file() else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ArgsimError(f"--resume: {path} is damaged ({why}); remove {folder} or drop --resume") from None


def check_out(run: TrainRun) -> None:
    """`run_trainer`'s refusals that need neither the data nor the model (another run training into OUT; with
    --resume a finished run, other settings, a damaged checkpoint), made before they are loaded (`begin_run`)."""
    folder = Path(run.out) / CHECKPOINTS
    if folder.is_dir():  # every process refuses alike; the main one probes the lock
        with out_lock(run.out):
            resume_point(folder / IDENTITY, run.budget, run_settings(run), early=True)


def run_settings(run: TrainRun) -> dict:
    """The settings a resumed run must share with its checkpoint (besides its data and architecture)."""
    return {"seed": run.placement.seed, "learning rate": run.policy.lr,
            "effective batch": run.batch_size * run.budget.grad_accum * run.placement.processes}


def out_lock(out: Path):
    """OUT/checkpoints locked by the main process: a second run training into OUT at the same time is refused."""
    busy = f"{out}: another run is training into it now; wait for it to end or use another --out"
    return folder_lock(Path(out) / CHECKPOINTS, busy) if is_main_process() else nullcontext()


def resume_point(saved: Path, budget: Budget, ident: dict, early: bool = False) -> str | None:
    """The checkpoint to resume (None: from the beginning), its run's record (`saved`) checked against `ident`'s
    keys; records `ident` for this run (`early`: checks only, no warning, nothing written; under DDP rank 0 warns and
    writes)."""
    from transformers.trainer_utils import get_last_checkpoint

    out, main = saved.parent.parent, is_main_process() and not early  # `main`: the one process that warns and writes
    resume_from = last_checkpoint(out) if budget.resume else None
    if budget.resume and (finished := finished_past(out)) is not None:
        raise ArgsimError(f"--resume: {out} holds a finished run ({finished} steps) and no checkpoint at its end: "
                          "nothing to resume; drop --resume to train it again")
    if main and resume_from is not None and resume_from != (newest := get_last_checkpoint(str(saved.parent))):
        warn(f"--resume: {newest} is incomplete (its save was cut short), so the run continues from {resume_from}")
    if main and budget.resume and resume_from is None:
        warn(f"--resume: no checkpoint under {saved.parent}, so the training starts from the beginning")
    if resume_from is not None:
        # the checkpoint's own run's record, else (a checkpoint of an older argsim) the one beside the checkpoints
        record = next((p for p in (Path(resume_from) / IDENTITY, saved) if p.is_file()), None)
        recorded = read_json_as(dict[str, object], record) if record else {}
        if differs := [f"on other {k}" if k in ("data", "architecture") else f"with {k} {v} (now {ident[k]})"
                       for k, v in recorded.items() if k in ident and ident[k] != v]:  # an older record: no settings
            raise ArgsimError(f"--resume: {resume_from} was trained {' and '.join(differs)}; "
                              "use another --out or drop --resume")
        check_checkpoint(resume_from)
    if main:
        write_json(saved, ident)
    return resume_from
