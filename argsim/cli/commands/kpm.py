"""Key point matching commands: `eval map`, `rank keypoints`, `train sbert`, `train mts`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer
from rich.table import Table

from argsim.cli.groups import console, eval_app, rank_app, train_app
from argsim.cli.params import OUT_DIR, OUT_FILE

Formula = Literal["leaderboard", "2021-09"]
TieBreak = Literal["first", "random"]
MtsVariant = Literal["mts", "qa", "simakp"]

SPLIT_HELP = ("ArgKP-2021 split under --data-dir: train, dev, train+dev, or any split laid out the same way "
              "(arguments_<split>.csv, key_points_<split>.csv, labels_<split>.csv). Ignored with --arguments.")
ARGS_HELP = ("Your own arguments file (CSV/TSV/JSONL) with columns arg_id, argument, topic, stance (1 pro / "
             "-1 con). Use with --key-points.")
KPS_HELP = "Your own key points file with columns key_point_id, key_point, topic, stance."
LABELS_HELP = "Gold labels file with columns arg_id, key_point_id, label (1 match / 0 no match)."


def _print_map(result, title: str) -> None:  # noqa: ANN001
    table = Table(title=title)
    for col in ("topic", "stance", "args", "kept", "dummies", "undecided", "AP strict", "AP relaxed"):
        table.add_column(col, justify="left" if col == "topic" else "right")
    for g in result.groups:
        table.add_row(g.topic[:60], f"{g.stance:+d}", str(g.arguments), str(g.kept), str(g.dummies_kept),
                      str(g.undecided_kept), f"{g.ap_strict:.4f}", f"{g.ap_relaxed:.4f}")
    table.add_section()
    table.add_row(f"mAP ({result.formula})", "", str(result.arguments), "", str(result.dummies), "",
                  f"[bold]{result.strict:.4f}[/]", f"[bold]{result.relaxed:.4f}[/]")
    console.print(table)
    from argsim.errors import examples, warn

    if result.unknown_arguments:
        warn(f"{len(result.unknown_arguments)} predicted argument id(s) are no argument of the gold data and were "
             f"ignored ({examples(result.unknown_arguments)})")
    if result.invalid_key_points:
        warn(f"ignored {len(result.invalid_key_points)} key point id(s) not in the key points file "
             f"({examples(result.invalid_key_points)})")


@eval_app.command("map")
def eval_map(
    predictions: Path = typer.Argument(..., help="Predictions JSON in the shared-task format "
                                                 "{arg_id: {key_point_id: score}} (as `rank keypoints` writes)."),
    split: str = typer.Option("dev", help=SPLIT_HELP),
    arguments: Path | None = typer.Option(None, help=ARGS_HELP),
    key_points: Path | None = typer.Option(None, help=KPS_HELP),
    labels: Path | None = typer.Option(None, help=LABELS_HELP),
    formula: Formula = typer.Option("leaderboard", help="leaderboard = plain AP of the kept top half (all "
                                "published results); 2021-09 = the organisers' later fix, AP x positives/kept."),
    tie_break: TieBreak = typer.Option("first", help="An argument's best key point on tied scores: first (JSON "
                                  "order, as the official code) or random (seeded by --seed)."),
    seed: int = typer.Option(0, help="Seed of --tie-break random."),
    out: Path | None = typer.Option(None, callback=OUT_FILE,
                                    help="Write the result (both mAPs and the per-group table) as JSON."),
) -> None:
    """The official KPA-2021 Track 1 metric: strict and relaxed mAP over (topic, stance) groups.

    Each argument keeps its best key point; arguments without one count as dummy false positives;
    pairs absent from the labels (undecided) count as non-match (strict) or match (relaxed); AP is computed
    on the top half of each group by score. Prints a per-group table.
    """
    from argsim.data.argkp import load_kpm_input
    from argsim.io import write_json
    from argsim.metrics.kpa_map import evaluate_map, read_predictions

    gold = load_kpm_input(split, arguments, key_points, labels, need_labels=True)
    result = evaluate_map(read_predictions(predictions), gold, formula=formula, tie_break=tie_break, seed=seed)
    _print_map(result, f"KPA Track 1 mAP: {predictions.name} on {gold.name}")
    if out:
        write_json(out, {"predictions": str(predictions), "gold": gold.name, "tie_break": tie_break, "seed": seed,
                         **result.as_dict()})
        console.print(f"wrote {out}")


@rank_app.command("keypoints")
def rank_keypoints(
    model: list[str] = typer.Option(["minilm"], "--model", "-m", help="Backend model name (minilm, mpnet, ...) "
                                    "or a folder trained by `train sbert` / `train mts`. Repeat to average "
                                    "the scores of several models (ensemble)."),
    split: str = typer.Option("dev", help=SPLIT_HELP),
    arguments: Path | None = typer.Option(None, help=ARGS_HELP),
    key_points: Path | None = typer.Option(None, help=KPS_HELP),
    labels: Path | None = typer.Option(None, help=LABELS_HELP + " Optional: when given (or in the "
                                       "dataset split), the mAP is printed too."),
    kp_template: str = typer.Option("{text}", help="How a key point is shown to plain encoders: fields {text}, "
                                    "{topic}, {stance}; e.g. '{topic} {text}'. Context-aware models (MTS) "
                                    "take topic and stance as inputs and ignore templates."),
    arg_template: str = typer.Option("{text}", help="The same for arguments."),
    threshold: float = typer.Option(0.5, help="Score from which an argument counts towards its best key "
                                    "point's coverage."),
    out: Path = typer.Option(Path("out/kpm"), callback=OUT_DIR,
                             help="Output folder: predictions.json (eval map's input), "
                                  "best_keypoints.csv, coverage.csv, metrics.json."),
) -> None:
    """Score each argument against the key points of its topic and stance; write the predictions, each
    argument's best key point and the per-key-point coverage table."""
    from dataclasses import asdict

    from argsim.backend import get_encoder
    from argsim.data.argkp import load_kpm_input
    from argsim.io import write_csv, write_json
    from argsim.kpm.scoring import best_matches, coverage, ensemble_predictions, score_key_points
    from argsim.metrics.kpa_map import evaluate_map
    from argsim.results import timed

    data = load_kpm_input(split, arguments, key_points, labels)
    with timed() as t:
        parts = [score_key_points(data, get_encoder(m), arg_template, kp_template) for m in model]
    preds = parts[0] if len(parts) == 1 else ensemble_predictions(parts)
    matches = best_matches(data, preds)
    cover = coverage(data, matches, threshold)
    write_json(out / "predictions.json", preds)
    write_csv(out / "best_keypoints.csv", [asdict(m) for m in matches])
    write_csv(out / "coverage.csv", [asdict(c) for c in cover])
    table = Table(title=f"key point coverage on {data.name} (score >= {threshold})")
    for col in ("topic", "stance", "key point", "matched", "share"):
        table.add_column(col, justify="right" if col in ("matched", "share") else "left")
    for c in cover:
        table.add_row(c.topic[:40], f"{c.stance:+d}", c.key_point[:70], str(c.matched), f"{c.share:.1%}")
    console.print(table)
    summary = {"models": model, "data": data.name, "arguments": len(data.arguments),
               "key_points": len(data.key_points), "scored_arguments": len(preds), "seconds": t["seconds"]}
    if data.has_labels:
        res = {f: evaluate_map(preds, data, formula=f) for f in ("leaderboard", "2021-09")}
        summary["map"] = {f: {"strict": r.strict, "relaxed": r.relaxed} for f, r in res.items()}
        _print_map(res["leaderboard"], f"mAP of {', '.join(model)} on {data.name}")
    write_json(out / "metrics.json", summary)
    console.print(f"wrote {out}/predictions.json, best_keypoints.csv, coverage.csv, metrics.json "
                  f"({len(preds):,} arguments scored in {t['seconds']:.1f}s)")


def _training_inputs(data, eval_split: str | None):  # noqa: ANN001, ANN202 (KPMData)
    """Everything a training run needs, checked before the model loads: labelled pairs with at least one match,
    and the evaluation split (loaded now, so a missing one fails before the first step, not after the budget)."""
    from argsim.data.argkp import load_argkp
    from argsim.errors import ArgsimError

    if not data.has_labels:
        raise ArgsimError(f"{data.name}: training needs gold labels (give --labels)")
    if data.positives() == 0:
        raise ArgsimError(f"{data.name}: the labels hold no matching pair (label 1) to train on")
    if not eval_split:
        return None
    try:
        return load_argkp(eval_split)
    except ArgsimError as exc:
        raise ArgsimError(f"evaluation after training on ArgKP '{eval_split}': {exc} (pass --eval-split '' to "
                          "skip it)") from None


def _evaluate_folder(folder: Path, gold, info: dict) -> dict:  # noqa: ANN001 (KPMData | None)
    """Score the evaluation split `gold` with the freshly trained folder; add the mAPs to the training info."""
    if gold is None:
        return info
    from argsim.backend import get_encoder
    from argsim.io import write_json
    from argsim.kpm.scoring import score_key_points
    from argsim.metrics.kpa_map import evaluate_map

    split = gold.name.removeprefix("argkp-")
    preds = score_key_points(gold, get_encoder(str(folder)))
    write_json(folder / f"predictions_{split}.json", preds)
    info["eval"] = {}
    for formula in ("leaderboard", "2021-09"):
        r = evaluate_map(preds, gold, formula=formula)
        info["eval"][formula] = {"split": split, "data": gold.name, "strict": r.strict, "relaxed": r.relaxed}
    write_json(folder / "argsim_train.json", info)
    return info


def _print_training(info: dict, folder: Path) -> None:
    ev = info.get("eval", {}).get("leaderboard", {})
    on = f" on {ev.get('data', ev['split'])}" if ev else ""
    table = Table(title=f"trained {info['method']} -> {folder}")
    for col in ("train", "steps", "seconds", "s/epoch", "peak MB", f"strict mAP{on}", f"relaxed mAP{on}"):
        table.add_column(col, justify="right")
    table.add_row(info["train"], str(info["steps"]), f"{info['seconds']:.0f}", f"{info['seconds_per_epoch']:.0f}",
                  f"{info['peak_mb']:.0f}", f"{ev['strict']:.4f}" if ev else "-",
                  f"{ev['relaxed']:.4f}" if ev else "-")
    console.print(table)


@train_app.command("sbert")
def train_sbert_cmd(
    out: Path = typer.Option(Path("models/kpm-sbert"), callback=OUT_DIR,
                             help="Output folder (a sentence-transformers model)."),
    model: str = typer.Option("minilm", help="Base model: minilm, mpnet or a sentence-transformers folder."),
    split: str = typer.Option("train", help="Training split of ArgKP-2021 (" + SPLIT_HELP + ")"),
    arguments: Path | None = typer.Option(None, help=ARGS_HELP),
    key_points: Path | None = typer.Option(None, help=KPS_HELP),
    labels: Path | None = typer.Option(None, help=LABELS_HELP + " Required with --arguments."),
    loss: Literal["cosine", "contrastive"] = typer.Option("cosine",
        help="cosine = regression of the cosine towards --positive-target / "
             "--negative-target (the report's best); contrastive = ContrastiveLoss."),
    positive_target: float = typer.Option(1.0, help="Cosine target of matching pairs."),
    negative_target: float = typer.Option(0.5, help="Cosine target of non-matching pairs."),
    contrastive_margin: float = typer.Option(0.5, help="Margin (cosine distance) of the contrastive loss."),
    pooling: Literal["mean", "cls"] | None = typer.Option(None,
                                                          help="mean or cls; default keeps the model's own pooling."),
    epochs: float = typer.Option(1.0, min=0.01, help="Epochs over the labelled pairs (the report: >1 overfits)."),
    batch_size: int = typer.Option(16, min=1, help="Pairs per batch (the report used 16)."),
    lr: float = typer.Option(8e-6, help="Initial learning rate."),
    lr_end: float = typer.Option(1e-6, help="Final learning rate of the linear decay (= --lr for constant)."),
    max_seq_length: int = typer.Option(64, min=1, help="Token limit per sentence."),
    max_steps: int = typer.Option(-1, help="Stop after this many steps (-1 = full epochs)."),
    train_layers: int = typer.Option(0, min=0,
                                     help="Train only the top N transformer layers on cached lower-layer states "
                                          "(BERT-type models; ~3x faster on CPU). 0 = the sentence-transformers "
                                          "trainer on the whole model."),
    eval_split: str | None = typer.Option("dev", help="ArgKP split to score after training ('' to skip)."),
) -> None:
    """Fine-tune a Siamese SBERT on labelled argument/key point pairs; saves a sentence-transformers folder
    that `rank keypoints --model DIR` loads."""
    from argsim.data.argkp import load_kpm_input
    from argsim.kpm.sbert import SbertConfig, train_sbert
    from argsim.settings import RUNTIME

    data = load_kpm_input(split, arguments, key_points, labels, need_labels=True)
    gold = _training_inputs(data, eval_split)
    cfg = SbertConfig(model=model, loss=loss, positive_target=positive_target, negative_target=negative_target,
                      contrastive_margin=contrastive_margin, pooling=pooling, epochs=epochs, batch_size=batch_size,
                      lr=lr, lr_end=lr_end, max_seq_length=max_seq_length, seed=RUNTIME.seed, max_steps=max_steps,
                      train_layers=train_layers)
    info = train_sbert(data, out, cfg, quiet=RUNTIME.quiet)
    _print_training(_evaluate_folder(out, gold, info), out)


@train_app.command("mts")
def train_mts_cmd(
    out: Path = typer.Option(Path("models/kpm-mts"), callback=OUT_DIR,
                             help="Output folder; with --folds > 1 one sub-folder per "
                                  "fold (fold_1 ... fold_k) and an ensemble manifest in OUT itself."),
    model: str = typer.Option("minilm", help="Backbone: minilm, mpnet or a transformers folder."),
    variant: MtsVariant = typer.Option("mts", help="mts (the paper's model), qa ('topic [SEP] statement' inputs, "
                                "section 5.4) or simakp (pair-wise contrastive baseline, section 5.4)."),
    split: str = typer.Option("train", help="Training split (" + SPLIT_HELP + ")"),
    arguments: Path | None = typer.Option(None, help=ARGS_HELP),
    key_points: Path | None = typer.Option(None, help=KPS_HELP),
    labels: Path | None = typer.Option(None, help=LABELS_HELP + " Required with --arguments."),
    pooling: Literal["cls-last4", "cls", "mean"] = typer.Option("cls-last4", help="cls-last4 (paper), cls or mean."),
    stance_dim: int = typer.Option(32, min=1, help="N: stance embedding size."),
    out_dim: int | None = typer.Option(None, min=1, help="D: final embedding size (256; with --identity-init the "
                                       "backbone's feature size)."),
    identity_init: bool = typer.Option(False, help="Initialise the projection to pass the statement's own "
                                       "embedding through (topic/stance blocks zero), so training starts from "
                                       "the zero-shot encoder; use with --pooling mean for sentence encoders."),
    epochs: int = typer.Option(2, min=1, help="Epochs (each = one batch per key point)."),
    lr: float = typer.Option(3e-5, help="Learning rate of the transformer (linear decay after warm-up)."),
    head_lr: float = typer.Option(1e-3, help="Learning rate of the stance and projection layers."),
    max_pos: int = typer.Option(30, min=1, help="Matching arguments per key-point batch."),
    max_neg: int = typer.Option(90, min=0, help="Non-matching (but matched elsewhere) arguments per batch."),
    max_unmatched: int = typer.Option(15, min=0, help="Arguments matching no key point per batch (own clusters)."),
    pair_batch_size: int = typer.Option(32, min=1, help="Pairs per batch for --variant simakp."),
    tuplet_margin_deg: float = typer.Option(5.73, help="Tuplet margin beta IN DEGREES (pytorch-metric-learning "
                                            "converts to radians; 5.73 deg = 0.1 rad)."),
    tuplet_scale: float = typer.Option(64.0, help="Tuplet scale s."),
    ipv_weight: float = typer.Option(0.5, help="Weight of the intra-pair variance loss."),
    miner_epsilon: float = typer.Option(0.2, help="Multi-similarity miner epsilon (cosine)."),
    freeze_layers: int = typer.Option(0, min=0, help="Freeze embeddings + the first N transformer layers (CPU speed)."),
    train_layers: int = typer.Option(0, min=0, help="Train only the top N transformer layers, caching the frozen lower "
                                     "layers' states once per text (BERT-type backbones; ~3x faster on CPU). "
                                     "0 = fine-tune everything (the paper)."),
    frozen_backbone: bool = typer.Option(False, help="Train only the stance and projection layers on the frozen "
                                         "backbone's features (encoded once through the backend cache)."),
    max_batches: int = typer.Option(0, min=0, help="Batches per epoch (0 = all): for quick runs."),
    log_every: int = typer.Option(10, min=0, help="Print the running loss every N steps to stderr (0 = never)."),
    init: Path | None = typer.Option(None, help="Continue training from this saved MTS folder (e.g. more epochs); "
                                     "the architecture options must match it."),
    folds: int = typer.Option(1, min=1, help="Topic k-fold over train+dev (7 in the paper; fold 1 = official split)."),
    fold: list[int] = typer.Option([], min=1, help="Train only these folds (repeatable); others already trained under "
                                   "OUT are kept in the ensemble."),
    eval_split: str | None = typer.Option("dev", help="With --folds 1: ArgKP split to score after training "
                                          "('' to skip). With folds: each fold model is scored on its held-out "
                                          "topics."),
) -> None:
    """Train Matching The Statements (Phan et al. 2021): topic, statement and stance inputs, shared
    transformer with cls-last4 pooling, pseudo-label clusters in key-point-centred batches, tuplet margin +
    intra-pair variance loss with multi-similarity mining; cosine at inference. Saves a folder that
    `rank keypoints --model DIR` loads."""
    from argsim.data.argkp import load_argkp, load_kpm_input
    from argsim.kpm.mts_model import MTSConfig
    from argsim.kpm.mts_train import train_folds, train_mts
    from argsim.settings import RUNTIME

    if folds > 1 and arguments is not None:
        from argsim.errors import ArgsimError

        raise ArgsimError("--folds works on the ArgKP-2021 topics (train+dev); train on your own files with --folds 1")
    data = gold = None
    if folds <= 1:
        data = load_kpm_input(split, arguments, key_points, labels, need_labels=True)
        gold = _training_inputs(data, eval_split)
    cfg = MTSConfig(model=model, variant=variant, pooling=pooling, stance_dim=stance_dim,
                    out_dim=out_dim or (_feature_size(model, pooling) if identity_init else 256),
                    identity_init=identity_init,
                    epochs=epochs, lr=lr, head_lr=head_lr, max_pos=max_pos, max_neg=max_neg,
                    max_unmatched=max_unmatched, pair_batch_size=pair_batch_size,
                    tuplet_margin_deg=tuplet_margin_deg, tuplet_scale=tuplet_scale, ipv_weight=ipv_weight,
                    miner_epsilon=miner_epsilon, freeze_layers=freeze_layers, train_layers=train_layers,
                    frozen_backbone=frozen_backbone, max_batches=max_batches,
                    seed=RUNTIME.seed)
    if folds <= 1:
        info = train_mts(data, out, cfg, quiet=RUNTIME.quiet, log_every=log_every, init=init)
        _print_training(_evaluate_folder(out, gold, info), out)
        return
    from argsim.kpm.mts_data import topic_folds

    train, dev = load_argkp("train"), load_argkp("dev")
    infos = train_folds(train, dev, out, cfg, folds, only=fold or None, quiet=RUNTIME.quiet,
                        log_every=log_every)
    held = {i: h for i, (_, h) in enumerate(topic_folds(train, dev, folds), start=1)}
    _evaluate_folds(out, infos, held)


def _feature_size(model: str, pooling: str) -> int:
    import json

    from argsim.backend import model_path

    hidden = json.loads((model_path(model) / "config.json").read_text())["hidden_size"]
    return hidden * (4 if pooling == "cls-last4" else 1)


def _evaluate_folds(out: Path, infos: list[dict], held: dict) -> None:
    """Score each trained fold model on its held-out topics; print the mean +- std as the paper does."""
    import numpy as np

    from argsim.backend import get_encoder
    from argsim.io import write_json
    from argsim.kpm.scoring import score_key_points
    from argsim.metrics.kpa_map import evaluate_map

    table = Table(title=f"MTS topic folds -> {out}")
    for col in ("fold", "held-out topics", "s/epoch", "strict mAP", "relaxed mAP"):
        table.add_column(col, justify="right")
    strict, relaxed = [], []
    for info in infos:
        i = info["fold"]
        folder = out / f"fold_{i}"
        r = evaluate_map(score_key_points(held[i], get_encoder(str(folder))), held[i])
        info["eval"] = {"leaderboard": {"split": held[i].name, "strict": r.strict, "relaxed": r.relaxed}}
        write_json(folder / "argsim_train.json", info)
        strict.append(r.strict)
        relaxed.append(r.relaxed)
        table.add_row(str(i), str(len(held[i].topics)), f"{info['seconds_per_epoch']:.0f}", f"{r.strict:.4f}",
                      f"{r.relaxed:.4f}")
    if strict:
        table.add_section()
        table.add_row("mean", "", "", f"{np.mean(strict):.4f} ± {np.std(strict):.4f}",
                      f"{np.mean(relaxed):.4f} ± {np.std(relaxed):.4f}")
    console.print(table)
