"""Cross-encoder key point matcher: one transformer reads the (argument, key point) pair and outputs a match logit.

The approach of the KPA-2021 leaderboard's best system (RoBERTa-base cross-encoder; the MTS paper's section 2
lists it as the strongest Track 1 entry): sentence-transformers' `CrossEncoder` (one label, sigmoid at inference)
trained with `CrossEncoderTrainer` + `BinaryCrossEntropyLoss` on the labelled pairs.

Readings chosen where the sources leave it open:
- input: (argument, key point); `context` puts the topic (and the stance) in front of the argument with the
  tokenizer's separator: "topic [SEP] argument" / "topic [SEP] pro [SEP] argument" (RoBERTa: "</s>").
- optimizer: AdamW lr 2e-5, weight decay 0, 10% linear warm-up then linear decay to 0, clipping 1; batch 16, 96
  tokens per pair, 3 epochs.
- score: the sigmoid probability (ties as any score); the folder is a plain CrossEncoder folder, with
  `argsim_kpm_cross.json` (the input format) beside it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from argsim.backend.registry import load_cross_encoder
from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError
from argsim.kpm.scoring import CONTEXTS, CROSS_INFO, cross_predictions, format_argument
from argsim.measure import peak_memory_mb
from argsim.options import setting
from argsim.training import begin_run
from argsim.training.record import TRAIN_INFO, data_hash, run_info, save_run


@dataclass
class CrossConfig:
    """The settings of `train_cross` (one option of `argsim train kpm-cross` each); the defaults are the recommended
    recipe (`argsim models build kpm-cross`).

    Example:
        >>> CrossConfig().epochs, CrossConfig(context="topic").context
        (3.0, 'topic')
    """

    model: str = setting("minilm", "Backbone: minilm, mpnet, a transformers / sentence-transformers folder or a "
                         "Hugging Face id (e.g. FacebookAI/roberta-base).", model=True)
    context: Literal["none", "topic", "topic-stance"] = setting(
        "none", "What precedes the argument: none, topic ('topic [SEP] argument') or topic-stance "
        "('topic [SEP] pro [SEP] argument'); the key point side is the key point alone.")
    epochs: float = setting(3.0, "Epochs over the labelled pairs.", min=0.01)
    batch_size: int = setting(16, "Pairs per batch.", min=1)
    lr: float = setting(2e-5, "Peak learning rate (AdamW, linear warm-up then linear decay to 0).", min=0)
    warmup_ratio: float = setting(0.1, "Share of the planned steps spent warming up.", min=0, max=1)
    weight_decay: float = setting(0.0, "AdamW weight decay.", min=0)
    max_seq_length: int = setting(96, "Token limit of the (argument, key point) pair.", min=8,
                                  aliases=("--max-length",))
    eval_every: int = setting(0, "Score the evaluation split's official mAP every N steps and where the run ends, "
                              "and keep the best checkpoint, not the last (0: keep the last step).", min=0)
    seed: int = setting(13, "Random seed (the global --seed).", cli=False)


def pair_rows(data: KPMData, context: str = "none", sep: str = "[SEP]") -> dict[str, list]:
    """Columns (argument, key_point, label) of the labelled pairs, in the labels file's order."""
    s1, s2, y = [], [], []
    for (aid, kid), label in data.labels.items():
        a = data.arg_by_id[aid]
        s1.append(format_argument(a.text, a.topic, a.stance, context, sep))
        s2.append(data.kp_by_id[kid].text)
        y.append(float(label))
    if not s1:
        raise ArgsimError(f"{data.name}: no labelled pairs to train on")
    return {"argument": s1, "key_point": s2, "label": y}


def train_cross(train: KPMData, out: str | Path, cfg: CrossConfig, placement=None, budget=None,
                quiet: bool = False, dev: KPMData | None = None) -> dict:
    """Fine-tune a cross-encoder on the labelled pairs of `train`; save it at `out` (rank 0); the training info.
    With `cfg.eval_every` > 0 and `dev`, the official strict mAP on `dev` (`KPAMapEvaluator`) chooses the step."""
    return fit_cross(train, out, cfg, placement, budget, quiet, dev)[1]


def fit_cross(train: KPMData, out: str | Path, cfg: CrossConfig, placement=None, budget=None,
              quiet: bool = False, dev: KPMData | None = None) -> tuple[object, dict]:
    """`train_cross`, also returning the trained CrossEncoder in memory."""
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from argsim.training.trainer import fit

    if cfg.context not in CONTEXTS:
        raise ArgsimError(f"unknown context '{cfg.context}': choose {', '.join(CONTEXTS)}")
    run = begin_run(cfg, out, placement, budget, cfg.eval_every if dev is not None else 0, trainer="kpm-cross")
    model = load_cross_encoder(cfg.model, run.placement.device, cfg.max_seq_length, num_labels=1)
    sep = model.tokenizer.sep_token or "[SEP]"
    rows = pair_rows(train, cfg.context, sep)
    evaluator = None
    if cfg.eval_every and dev is not None:
        from argsim.evaluation.kpa_map import KPAMapEvaluator

        evaluator = KPAMapEvaluator(dev, name="dev",
                                    score=lambda m: cross_predictions(dev, m, context=cfg.context, sep=sep))
    trainer, rec = fit(model, rows, run, BinaryCrossEntropyLoss(model), evaluator=evaluator, select=SELECTION_METRIC,
                       eval_every=cfg.eval_every, disable_tqdm=quiet, dataloader_drop_last=False)
    seconds, steps = rec["seconds"], max(rec["steps"], 1)
    steps_per_epoch = math.ceil(len(rows["label"]) / (cfg.batch_size * run.budget.grad_accum * run.placement.processes))
    info = {"method": "kpm-cross", "config": asdict(cfg), "train": train.name, "pairs": len(rows["label"]),
            **run_info(run, rec), "seconds_per_step": round(seconds / steps, 3),
            "seconds_per_epoch": round(seconds * steps_per_epoch / steps, 1), "losses": rec["losses"]}
    metrics = None
    if evaluator is not None:
        best = rec["best"] or {}
        info |= {"dev": [e for e in rec["evals"] if SELECTION_METRIC in e], "best_step": best.get("step"),
                 "best_dev": best.get("value")}
        metrics = {SELECTION_METRIC: info["best_dev"], "best_step": info["best_step"]}
    if trainer.is_world_process_zero():
        info["peak_mb"] = peak_memory_mb()
        model.save(str(run.out))
        save_run(run, asdict(cfg), {train.name: data_hash(rows)}, rec, metrics, cfg.model,
                 {CROSS_INFO: {"context": cfg.context, "sep": sep, "max_length": cfg.max_seq_length}, TRAIN_INFO: info},
                 pipeline_tag="text-ranking")
    info.setdefault("peak_mb", 0.0)
    return model, info


SELECTION_METRIC = "eval_dev_strict_map"
