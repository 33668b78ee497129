"""Key point matching beyond SBERT: `train kpm-cross` (cross-encoder), `eval kpm-folds` (model / ensemble
selection on topic folds) and `data kpm-folds` (the folds as ArgKP splits that every trainer reads)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from argsim.cli.commands.kpm import TRAIN_LABELS_HELP, TRAIN_SPLIT_HELP, train_and_score
from argsim.cli.groups import console, data_app, eval_app, run_config, summary_table, train_app
from argsim.cli.params import OUT_DIR, ArgkpInput, argkp_input, choices, config_options, finite_float, model_option
from argsim.cli.training_options import budget_options
from argsim.kpm.ensemble import COMBINES
from argsim.trainers.kpm_cross import CrossConfig
from argsim.training.budget import Budget


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
    eval_split: Annotated[str | None, typer.Option(help="ArgKP split to score after training ('' to skip).")] = "dev",
) -> None:
    """Fine-tune a cross-encoder key point matcher (BinaryCrossEntropyLoss on the labelled pairs); saves a
    CrossEncoder folder that `rank keypoints --model DIR` loads (alone or in an ensemble). The defaults are the
    recommended recipe."""
    from dataclasses import replace

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
    from argsim.data.argkp import load_argkp
    from argsim.errors import ArgsimError, warn
    from argsim.io import write_json
    from argsim.kpm.ensemble import check_weights, probability_models
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
        from argsim.results import rows_from_specs, run_environment, write_results

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
    from argsim.data.argkp import load_argkp
    from argsim.kpm.folds import write_fold_splits

    run = run_config(ctx)
    names = write_fold_splits(load_argkp("train", run.data_dir), load_argkp("dev", run.data_dir), folds, out)
    console.print(f"wrote {len(names)} splits ({names[0]} ... {names[-1]}) under {out}/argkp")
