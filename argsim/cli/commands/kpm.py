"""Key point matching commands: `eval map`, `rank keypoints`, `train sbert`, `train mts`, `train kpm-cross`,
`eval kpm-folds` (model / ensemble selection on topic folds) and `data kpm-folds` (the folds as ArgKP splits that
every trainer reads)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.backend.names import default_model
from argsim.cli.groups import console, data_app, eval_app, rank_app, run_config, summary_table, train_app
from argsim.cli.params import (
    LABELS_HELP,
    OUT_DIR,
    OUT_FILE,
    SPLIT_HELP,
    ArgkpInput,
    argkp_input,
    budget_options,
    choices,
    config_options,
    finite_float,
    model_option,
    placement,
)
from argsim.data.argkp import load_argkp
from argsim.errors import ArgsimError, examples, warn
from argsim.io import write_json
from argsim.kpm.ensemble import COMBINES, check_threshold, check_weights, probability_models
from argsim.kpm.mts.config import MTSConfig
from argsim.results import result_rows, rows_from_specs, run_environment, write_results
from argsim.trainers.kpm_cross import CrossConfig
from argsim.trainers.kpm_sbert import SbertConfig
from argsim.training import is_main_process
from argsim.training.budget import Budget

Formula = Literal["leaderboard", "2021-09"]
TieBreak = Literal["first", "random"]

TRAIN_SPLIT_HELP = "Training split (" + SPLIT_HELP + ")"
TRAIN_LABELS_HELP = LABELS_HELP + " Required with --arguments."
#: the split a key point trainer scores after training (sbert, kpm-cross)
EvalSplit = Annotated[str | None, typer.Option(help="ArgKP split to score after training ('' to skip).")]


def _print_map(result, title: str) -> None:
    console.print(summary_table(title, ["topic", "stance", "args", "kept", "dummies", "undecided", "AP strict",
                                        "AP relaxed"],
                                [[g.topic[:60], f"{g.stance:+d}", g.arguments, g.kept, g.dummies_kept,
                                  g.undecided_kept, g.ap_strict, g.ap_relaxed] for g in result.groups],
                                [f"mAP ({result.formula})", "", result.arguments, "", result.dummies, "",
                                 f"[bold]{result.strict:.4f}[/]", f"[bold]{result.relaxed:.4f}[/]"]))
    if result.unknown_arguments:
        warn(f"{len(result.unknown_arguments)} predicted argument id(s) are no argument of the gold data and were "
             f"ignored ({examples(result.unknown_arguments)})")
    if result.invalid_key_points:
        warn(f"ignored {len(result.invalid_key_points)} key point id(s) not in the key points file "
             f"({examples(result.invalid_key_points)})")


@eval_app.command("map")
@argkp_input("dev")
def eval_map(
    ctx: typer.Context,
    source: ArgkpInput,
    predictions: Annotated[Path, typer.Argument(help="Predictions JSON in the shared-task format "
                                                 "{arg_id: {key_point_id: score}} (as `rank keypoints` writes).")],
    formula: Annotated[Formula, typer.Option(help="leaderboard = plain AP of the kept top half (all published "
                                             "results); 2021-09 = the organisers' later fix, AP x "
                                             "positives/kept.")] = "leaderboard",
    tie_break: Annotated[TieBreak, typer.Option(help="An argument's best key point on tied scores: first (JSON "
                                  "order, as the official code) or random (seeded by --seed).")] = "first",
    seed: Annotated[int, typer.Option(help="Seed of --tie-break random.")] = 0,
    out: Annotated[Path | None, typer.Option(
        callback=OUT_FILE, help="Write the result (both mAPs and the per-group table) as JSON.")] = None,
) -> None:
    """The official KPA-2021 Track 1 metric: strict and relaxed mAP over (topic, stance) groups.

    Each argument keeps its best key point; arguments without one count as dummy false positives;
    pairs absent from the labels (undecided) count as non-match (strict) or match (relaxed); AP is computed
    on the top half of each group by score. Prints a per-group table.
    """
    from argsim.api.metrics import map_result

    gold = source.load(run_config(ctx).data_dir, need_labels=True)
    result = map_result(predictions, gold, formula=formula, tie_break=tie_break, seed=seed)
    _print_map(result, f"KPA Track 1 mAP: {predictions.name} on {gold.name}")
    if out:
        write_json(out, {"predictions": str(predictions), "gold": gold.name, "tie_break": tie_break, "seed": seed,
                         **asdict(result)})
        console.print(f"wrote {out}")


@rank_app.command("keypoints")
@argkp_input("dev", labels_help=LABELS_HELP + " Optional: when given (or in the dataset split), the mAP is "
             "printed too.")
def rank_keypoints(
    ctx: typer.Context,
    source: ArgkpInput,
    model: Annotated[list[str], model_option(help="Backend model name: kpm (the shipped key point matcher, the "
                                    "default), minilm (zero-shot), mpnet, ...; or a folder trained by `train sbert` / "
                                    "`train mts` / `train kpm-cross` (a cross-encoder). Repeat to combine several "
                                    "models' scores (ensemble).")] = (),
    weight: Annotated[list[float], typer.Option("--weight", "-w", help="Ensemble weight of each --model, in order "
                                       "(default equal), e.g. --weight 0.7 --weight 0.3.")] = (),
    combine: Annotated[Literal["zscore", "zlogit", "mean"], typer.Option(
        help="zscore: standardise each model's scores over all scored pairs, then the weighted sum (models on "
             "different scales: cosine + cross-encoder); zlogit: the same with a cross-encoder's logit in place of "
             "its probability; mean: the weighted mean of the raw scores.")] = "zscore",
    kp_template: Annotated[str, typer.Option(help="How a key point is shown to plain encoders: fields {text}, "
                                    "{topic}, {stance}; e.g. '{topic} {text}'. Context-aware models (MTS) "
                                    "take topic and stance as inputs and ignore templates.")] = "{text}",
    arg_template: Annotated[str, typer.Option(help="The same for arguments.")] = "{text}",
    threshold: Annotated[float | None, typer.Option(
        help="Score from which an argument matches its best key point (below it: no key point fits, and it counts "
             "towards no coverage). Default: the model's own (recorded in its card or training record; else 0.5 "
             "for a cross-encoder, 0.7226 for a cosine; argsim.kpm.threshold).")] = None,
    out: Annotated[Path, typer.Option(callback=OUT_DIR, help="Output folder: predictions.json (eval map's input), "
                                  "best_keypoints.csv, coverage.csv, metrics.json.")] = Path("out/kpm"),
    task: Annotated[str | None, typer.Option(help="With gold labels: also merge the mAP rows into "
                                    "bench/results/<task>.json.")] = None,
) -> None:
    """Score each argument against the key points of its topic and stance; write the predictions, each
    argument's best key point and the per-key-point coverage table.

    With `--engine ray` the bi-encoder / SBERT / MTS embeddings that the cache lacks are computed on Ray's actor
    pool (and cached); scoring, and cross-encoder models, run in this process (see argsim.kpm.scoring)."""
    from argsim.kpm.rank import rank_keypoints as rank

    cfg = run_config(ctx)
    model = model or [default_model("kpm")]
    check_weights(model, weight)
    check_threshold(threshold, model, combine)
    data = source.load(cfg.data_dir)
    if task and not data.has_labels:
        warn(f"{data.name} has no gold labels; --task will write no rows")
    ranking = rank(data, model, weight, combine, cfg, arg_template, kp_template, threshold, out=out)
    matched = sum(m.matched for m in ranking.matches)
    console.print(summary_table(f"key point coverage on {data.name} (score >= {ranking.threshold:g}, "
                                f"{ranking.threshold_source}; {matched:,} of {len(ranking.matches):,} arguments "
                                "matched)", ["topic", "stance", "key point", "matched", "share"],
                                [[c.topic[:40], f"{c.stance:+d}", c.key_point[:70], c.matched, f"{c.share:.1%}"]
                                 for c in ranking.coverage]))
    if ranking.maps:
        _print_map(ranking.maps["leaderboard"], f"mAP of {', '.join(model)} on {data.name}")
    if ranking.maps and task:
        setting = (f"{combine} ensemble, weights {', '.join(f'{w:g}' for w in weight or [1.0] * len(model))}"
                   if len(model) > 1 else None)
        write_results(task, result_rows(ranking.maps["leaderboard"].evaluation(data.name), model=" + ".join(model),
                                        method="ensemble" if len(model) > 1 else "rank-keypoints", setting=setting,
                                        seconds=ranking.seconds, env=run_environment(cfg)), merge=True)
    console.print(f"wrote {out}/predictions.json, best_keypoints.csv, coverage.csv, metrics.json "
                  f"({len(ranking.predictions):,} arguments scored in {ranking.seconds:.1f}s)")


def train_and_score(ctx: typer.Context, source: ArgkpInput, eval_split: str | None, out: Path,
                    train: Callable[..., dict], needs_eval: str | None = None) -> None:
    """A key point trainer's command body: the labelled training data and the evaluation split (`needs_eval`: the
    option that requires one, refused without it), `train(data, gold, run, placement)`, the trained model scored
    on the split and printed."""
    from argsim.kpm.evaluate import evaluate_trained, training_inputs

    run = run_config(ctx)
    data = source.load(run.data_dir, need_labels=True)
    gold = training_inputs(data, eval_split, run)
    if needs_eval and gold is None:
        raise ArgsimError(f"{needs_eval} needs an evaluation split with labels (--eval-split)")
    info = evaluate_trained(out, gold, train(data, gold, run, placement(ctx)), run)
    if not is_main_process():
        return
    ev = info.get("eval", {}).get("leaderboard", {})
    on = f" on {ev.get('data', ev['split'])}" if ev else ""
    console.print(summary_table(f"trained {info['method']} -> {out}", [
        "train", "steps", "seconds", "s/epoch", "peak MB", f"strict mAP{on}", f"relaxed mAP{on}"], [[
        info["train"], info["steps"], *(f"{info[k]:.0f}" for k in ("seconds", "seconds_per_epoch", "peak_mb")),
        ev.get("strict", "-"), ev.get("relaxed", "-")]]))


@train_app.command("sbert")
@argkp_input("train", "Training split of ArgKP-2021 (" + SPLIT_HELP + ")", TRAIN_LABELS_HELP)
@budget_options()
@config_options(SbertConfig)
def train_sbert_cmd(
    ctx: typer.Context,
    source: ArgkpInput,
    config: SbertConfig,
    plan: Budget,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Output folder (a sentence-transformers model).")] = Path("models/kpm-sbert"),
    eval_split: EvalSplit = "dev",
) -> None:
    """Fine-tune a Siamese SBERT on labelled argument/key point pairs; saves a sentence-transformers folder
    that `rank keypoints --model DIR` loads. The defaults are the recommended recipe (contrastive loss)."""
    from argsim.trainers.kpm_sbert import train_sbert

    train_and_score(ctx, source, eval_split, out, lambda data, gold, run, where: train_sbert(
        data, out, replace(config, seed=where.seed, max_steps=plan.max_steps or -1), quiet=run.quiet,
        placement=where, budget=plan, eval_data=gold))


@train_app.command("mts")
@argkp_input("train", TRAIN_SPLIT_HELP, TRAIN_LABELS_HELP)
@budget_options()
@config_options(MTSConfig, exclude=("out_dim",))
def train_mts_cmd(
    ctx: typer.Context,
    source: ArgkpInput,
    config: MTSConfig,
    plan: Budget,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Output folder; with --folds > 1 one sub-folder per fold "
                               "(fold_1 ... fold_k) and an ensemble manifest in OUT "
                               "itself.")] = Path("models/kpm-mts"),
    out_dim: Annotated[int | None, typer.Option(min=1, help="D: final embedding size (256; with --identity-init the "
                                       "backbone's feature size).")] = None,
    log_every: Annotated[int, typer.Option(
        min=0, help="Print the running loss every N steps to stderr (0 = never).")] = 10,
    init: Annotated[Path | None, typer.Option(help="Continue training from this saved MTS folder (e.g. more epochs); "
                                     "the architecture options must match it.")] = None,
    folds: Annotated[int, typer.Option(min=1, help="Topic k-fold over train+dev (7 in the paper; fold 1 = "
                                                   "official split).")] = 1,
    fold: Annotated[list[int], typer.Option(
        min=1, help="Train only these folds (repeatable); others already trained under OUT are kept in the "
                    "ensemble.")] = (),
    eval_split: Annotated[str | None, typer.Option(help="With --folds 1: ArgKP split to score after training "
                                          "('' to skip). With folds: each fold model is scored on its held-out "
                                          "topics.")] = "dev",
    keep_best: Annotated[bool, typer.Option("--keep-best", help="With --folds 1: score the evaluation split's "
                                   "official mAP after every epoch and keep the best epoch, not the last (the "
                                   "printed figure is then the one that chose it).")] = False,
) -> None:
    """Train Matching The Statements (Phan et al. 2021): topic, statement and stance inputs, shared
    transformer with cls-last4 pooling, pseudo-label clusters in key-point-centred batches, tuplet margin +
    intra-pair variance loss with multi-similarity mining; cosine at inference. Saves a folder that
    `rank keypoints --model DIR` loads."""
    from argsim.kpm.evaluate import evaluate_folds, feature_size, fold_summary
    from argsim.kpm.mts.batches import topic_folds
    from argsim.trainers.mts import check_folds, train_folds, train_mts

    check_folds(folds, list(fold))
    if folds > 1 and source.arguments is not None:
        raise ArgsimError("--folds works on the ArgKP-2021 topics (train+dev); train on your own files with --folds 1")
    if keep_best and folds > 1:
        raise ArgsimError("--keep-best works with --folds 1 (each fold model is scored on its held-out topics)")
    run, where = run_config(ctx), placement(ctx)
    cfg = replace(config, seed=where.seed,
                  out_dim=out_dim or (feature_size(config.model, config.pooling) if config.identity_init else 256))
    if folds <= 1:
        train_and_score(ctx, source, eval_split, out, lambda data, gold, run, where: train_mts(
            data, out, cfg, quiet=run.quiet, log_every=log_every, init=init, placement=where, budget=plan,
            dev=gold if keep_best else None), needs_eval="--keep-best" if keep_best else None)
        return
    train, dev = load_argkp("train", run.data_dir), load_argkp("dev", run.data_dir)
    infos = train_folds(train, dev, out, cfg, folds, only=fold or None, quiet=run.quiet, log_every=log_every,
                        placement=where, budget=plan)
    if not is_main_process():
        return
    held = {i: h for i, (_, h) in enumerate(topic_folds(train, dev, folds), start=1)}
    scores = evaluate_folds(out, infos, held, run)
    summary = fold_summary(scores) if scores else None
    console.print(summary_table(f"MTS topic folds -> {out}", ["fold", "held-out topics", "s/epoch", "strict mAP",
                                                             "relaxed mAP"],
                                [[f.fold, f.held_out_topics, f"{f.seconds_per_epoch:.0f}", f.strict, f.relaxed]
                                 for f in scores],
                                summary and ["mean", "", "", *(f"{summary[m][0]:.4f} ± {summary[m][1]:.4f}"
                                                               for m in ("strict", "relaxed"))]))


@train_app.command("kpm-cross")
@argkp_input("train", TRAIN_SPLIT_HELP, TRAIN_LABELS_HELP)
@budget_options()
@config_options(CrossConfig)
def train_kpm_cross(
    ctx: typer.Context,
    source: ArgkpInput,
    config: CrossConfig,
    plan: Budget,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Output folder (a sentence-transformers CrossEncoder).")] = Path("models/kpm-cross"),
    eval_split: EvalSplit = "dev",
) -> None:
    """Fine-tune a cross-encoder key point matcher (BinaryCrossEntropyLoss on the labelled pairs); saves a
    CrossEncoder folder that `rank keypoints --model DIR` loads (alone or in an ensemble). The defaults are the
    recommended recipe."""
    from argsim.trainers.kpm_cross import train_cross

    train_and_score(ctx, source, eval_split, out, lambda data, gold, run, where: train_cross(
        data, out, replace(config, seed=where.seed), placement=where, budget=plan, quiet=run.quiet, dev=gold),
        needs_eval="--eval-every" if config.eval_every else None)


@eval_app.command("kpm-folds")
def eval_kpm_folds(
    ctx: typer.Context,
    model: Annotated[list[str], model_option(help="A model (name, folder, cross-encoder "
                                    "folder) or a per-fold pattern with {fold}, e.g. models/kpm-cross-f/fold{fold} "
                                    "(fold 1 = the official split). Repeat for an ensemble.")] = ("minilm",),
    weight: Annotated[list[float], typer.Option("--weight", "-w", help="Score only these ensemble weights (one per "
                                       "--model); default: search the grid of --weight-step.")] = (),
    weight_step: Annotated[float, typer.Option(min=0.01, max=1.0, parser=finite_float(0.01, 1.0),
                                               help="Grid step of the weight search.")] = 0.1,
    combine: Annotated[list[str], typer.Option(callback=choices(*COMBINES), help="How the models' scores combine: "
                                      "zscore, zlogit or mean (see rank keypoints); repeat to choose among "
                                      "several.")] = ("zscore",),
    folds: Annotated[int, typer.Option(min=1, help="Topic folds of train+dev (7 in the MTS paper).")] = 7,
    fold: Annotated[list[int], typer.Option(min=1, help="Score only these folds (repeatable).")] = (),
    kp_template: Annotated[str, typer.Option(help="Key point template of plain encoders (see rank "
                                                  "keypoints).")] = "{text}",
    top: Annotated[int, typer.Option(min=1, help="Weight vectors to print.")] = 5,
    out: Annotated[Path | None, typer.Option(callback=OUT_DIR, help="Write folds.json (every candidate's per-fold "
                                    "mAPs) into this folder.")] = None,
    task: Annotated[str | None, typer.Option(help="Merge rows into bench/results/TASK.json: the best "
                                                  "weights of each --combine and each model alone (mean "
                                                  "strict / relaxed mAP over the folds).")] = None,
) -> None:
    """Score a model or an ensemble on k topic folds of train+dev and choose ensemble weights on the mean over
    the folds (strict mAP, leaderboard formula), not on the 4 dev topics alone."""
    from argsim.kpm.folds import fold_model, in_sample_models, rank_candidates, score_folds, weight_grid

    run = run_config(ctx)
    check_weights(model, weight)
    if len(model) > 3 and not weight:
        raise ArgsimError("a weight search takes at most 3 models; give --weight for more")
    leaky = in_sample_models(model)
    if leaky and folds > 1:
        warn(f"{len(leaky)} trained model(s) given without {{fold}} ({', '.join(leaky)}): on folds 2..{folds} "
             "they score training topics they saw; train one model per fold (`argsim data kpm-folds`) for a fair "
             "selection")
    train, dev = load_argkp("train", run.data_dir), load_argkp("dev", run.data_dir)
    per_fold, golds = score_folds(model, train, dev, folds, run, fold or None, kp_template)
    grid = [tuple(weight)] if weight else weight_grid(len(model), weight_step)
    probability = probability_models([fold_model(m, fold[0] if fold else 1) for m in model])
    ranked = rank_candidates(per_fold, golds, grid, combine, probability_parts=probability)
    console.print(summary_table(f"{' + '.join(model)} on {len(golds)} topic fold(s)",
                                ["combine", "weights", *(g.name for g in golds), "mean strict", "mean relaxed"],
                                [[c.combine, " / ".join(f"{w:.2f}" for w in c.weights), *c.strict,
                                  f"[bold]{c.mean_strict:.4f}[/]", c.mean_relaxed] for c in ranked[:top]]))
    best = ranked[0]
    console.print("best: " + " ".join(f"--model {m} --weight {w:g}" for m, w in zip(model, best.weights,
                                                                                    strict=True))
                  + f" --combine {best.combine}")
    if out:
        write_json(out / "folds.json", {"models": model, "combine": combine, "folds": [g.name for g in golds],
                                        "candidates": [{**asdict(c), "mean_strict": c.mean_strict,
                                                        "mean_relaxed": c.mean_relaxed} for c in ranked]})
        console.print(f"wrote {out}/folds.json")
    if task:
        from argsim.kpm.folds import selection_specs

        write_results(task, rows_from_specs(selection_specs(ranked, model, golds, folds), env=run_environment(run)),
                      merge=True)


@data_app.command("kpm-folds")
def data_kpm_folds(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Folder that becomes a --data-dir: "
        "OUT/argkp/{arguments,key_points,labels}_fold<i>-{train,dev}.csv.")] = Path("runs/kpm-folds"),
    folds: Annotated[int, typer.Option(min=2, help="Topic folds of train+dev (fold 1 = the official split).")] = 7,
) -> None:
    """Lay the topic folds out as ArgKP splits, so any trainer trains a model per fold, e.g.
    `argsim --data-dir runs/kpm-folds train kpm-cross --split fold3-train --eval-split fold3-dev --out M/fold3`."""
    from argsim.kpm.folds import write_fold_splits

    run = run_config(ctx)
    names = write_fold_splits(load_argkp("train", run.data_dir), load_argkp("dev", run.data_dir), folds, out)
    console.print(f"wrote {len(names)} splits ({names[0]} ... {names[-1]}) under {out}/argkp")
