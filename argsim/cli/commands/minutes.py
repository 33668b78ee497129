"""Assembly minutes commands: `data triplets minutes`, `train minutes-sbert`, `summarize minutes`,
`eval rouge`. Thin wrappers over `argsim.minutes` and `argsim.metrics.rouge`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.cli.groups import console, eval_app, run_config, summarize_app, summary_table, train_app, triplets_app
from argsim.cli.params import (
    OUT_DIR,
    OUT_FILE,
    budget_options,
    choices,
    config_options,
    from_workdir,
    is_default,
    model_option,
    placement,
    refuse_given,
)
from argsim.data.catalog import dataset_dir
from argsim.io import write_json
from argsim.minutes.mining import MiningConfig
from argsim.minutes.summarize import SummarizeOptions
from argsim.results import environment, result_rows, write_results
from argsim.trainers.minutes_sbert import MinutesTrainConfig
from argsim.training import is_main_process
from argsim.training.budget import Budget


@triplets_app.command("minutes")
@config_options(MiningConfig)
def triplets_minutes(
    ctx: typer.Context,
    config: MiningConfig,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Folder for train.jsonl, dev.jsonl, test.jsonl "
                               "and counts.json.")] = Path("runs/minutes-triplets"),
    minutes: Annotated[list[Path], typer.Option("--minutes", help="Your own minutes JSON file(s) (PoliInfo layout: "
                                       "list of {Date, ProceedingTitle, Proceeding: [{Speaker, Utterance}]}); "
                                       "default: every file of the poliinfo dataset.")] = None,
    model: Annotated[str, model_option(help="Encoder that decides the thresholds (the paper: GiNZA).")] = "ginza",
) -> None:
    """Mine [target, positive, negative] triplets from assembly minutes (Shirafuji et al., Sec. 3.1).

    Each utterance is cut into lines; noise such as (拍手) and 〔「異議なし」と呼ぶ者あり〕, the roll block and
    procedural boilerplate are removed; a line's positive is the next line of the same speaker with cosine
    >= --pos-threshold; its negative a line of another meeting with cosine <= --neg-threshold (seeded by
    --seed). Meetings are split 80/10/10 first. Output: JSONL with fields anchor, positive, negative (+ split,
    meeting, date, speaker, cos_pos, cos_neg), ready for `argsim eval triplets` and `argsim train minutes-sbert`.
    """
    from argsim.data.poliinfo import load_meetings
    from argsim.minutes.mining import mine_minutes

    cfg = run_config(ctx)
    meetings = (load_meetings(Path("."), files=[p.resolve() for p in minutes]) if minutes
                else load_meetings(dataset_dir("poliinfo", cfg.data_dir)))
    summary = mine_minutes(meetings, out, replace(config, seed=cfg.seed), model=model, run=cfg)
    write_json(out / "counts.json", summary)
    console.print(summary_table(f"minutes triplets -> {out}", ["count", "value"],
                                [[k, v] for k, v in summary["counts"].items()]))


@train_app.command("minutes-sbert")
@budget_options()
@config_options(MinutesTrainConfig)
def train_minutes_sbert(
    ctx: typer.Context,
    config: MinutesTrainConfig,
    plan: Budget,
    train: Annotated[Path, typer.Option(callback=from_workdir, help="Training triplets (JSONL/CSV with anchor, "
                                        "positive, negative), e.g. from `argsim data triplets minutes`.")] = Path(
        "runs/minutes-triplets/train.jsonl"),
    dev: Annotated[Path | None, typer.Option(callback=from_workdir, help="Dev triplets scored after each epoch "
                                             "(TripletEvaluator); skipped when it is '' or when the default "
                                             "file does not exist.")] = Path("runs/minutes-triplets/dev.jsonl"),
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Output folder (sentence-transformers format).")] = Path("models/minutes-sbert"),
) -> None:
    """Train the political Sentence-BERT: a triplet network with mean pooling and TripletLoss.

    Saves a sentence-transformers model under --out (with argsim_encoder.json for the ginza backbone, so
    `--model models/minutes-sbert` works in every argsim command), train_log.json (config, seconds per
    epoch, dev accuracy per epoch), train_config.json and a model card README.md.
    """
    from argsim.trainers.minutes_sbert import train_minutes_sbert as run

    where = placement(ctx)
    config = replace(config, seed=where.seed)
    if dev is not None and (str(dev) == "." or (is_default(ctx, "dev") and not dev.is_file())):
        dev = None  # '' given, or the default file not made: a --dev given must be read (one line if it cannot)
    log = run(train, dev, out, config, placement=where, budget=plan, quiet=run_config(ctx).quiet)
    if not is_main_process():
        return
    rows = [["train triplets", log["train_triplets"]], ["seconds", log["seconds"]],
            ["seconds per epoch", ", ".join(str(s) for s in log["epoch_seconds"])]]
    rows += [[f"dev accuracy (epoch {d.get('epoch')})", next((v for k, v in d.items() if "accuracy" in k), "")]
             for d in log["dev"]]
    console.print(summary_table(f"minutes-sbert -> {out}", ["", "value"], rows))


@summarize_app.command("minutes")
@config_options(SummarizeOptions, "options", exclude=("seed",))
def summarize_minutes(
    ctx: typer.Context,
    options: SummarizeOptions,
    items: Annotated[Literal["ntcir14", "poliinfo2"], typer.Option(
        help="Dataset items: ntcir14 (740 NTCIR-14 items with Source and gold) or poliinfo2 "
             "(PoliInfo-2 segmented parts covered by NTCIR-14 Sources).")] = "ntcir14",
    input: Annotated[Path | None, typer.Option("--input", "-i", help="Your own CSV/TSV/JSONL/JSON of utterances "
                                      "with columns id, text, topic, subtopic [, length, summary]; rows with "
                                      "the same id form one item.")] = None,
    model: Annotated[str, model_option(help="Backend encoder (ginza, minutes: the shipped political SBERT, "
                              "e5-multilingual, minilm, a trained folder such as models/minutes-sbert).")] = "ginza",
    length: Annotated[int, typer.Option(min=1, help="Budget for --input rows without a length column.")] = 100,
    limit: Annotated[int | None, typer.Option(min=1, help="Summarise only the first N items.")] = None,
    out: Annotated[Path, typer.Option(callback=OUT_FILE, help="Output JSON.")] = Path("runs/minutes-summaries.json"),
) -> None:
    """Extractive summaries with EmbedRank++ (Shirafuji et al., Eq. 6): sentences picked greedily by
    k*(0.5*cos(D,Q) - 0.5*max cos(D,S)) + m*cos(D,topic) + s*cos(D,subtopic) (k: --mmr-weight), key size =
    budget/50, joined in document order within the character budget. Writes JSON: per item the selected
    sentences (index, score, rank), the summary and the gold summary when known."""
    from argsim.minutes.summarize import summarize_to_file

    if input:
        refuse_given(ctx, ["items"], "it picks the dataset's items, and --input gives your own")
    else:
        refuse_given(ctx, ["length"], "it is the budget of --input rows without a length column")
    results, seconds = summarize_to_file(out, model, options, run_config(ctx), items, input, length, limit)
    rows = [[r["id"], r["budget"], len(r["summary"]), r["summary"][:40]] for r in results[:5]]
    console.print(summary_table(f"{len(results)} summaries ({options.method}, {seconds:.1f}s) -> {out}",
                         ["id", "budget", "chars", "summary (first 5 items)"], rows))


@eval_app.command("rouge")
def eval_rouge(
    ctx: typer.Context,
    summaries: Annotated[Path, typer.Argument(help="JSON from `argsim summarize minutes` (fields summary, gold, budget "
                                     "per item), or CSV/JSONL with columns summary, gold [, budget].")],
    unit: Annotated[list[str], typer.Option(callback=choices("content", "surface", "char"), help="content "
                                            "(content-word lemmas), surface (all tokens) or char; repeat for "
                                            "several.")] = ("content", "char"),
    no_limit: Annotated[bool, typer.Option("--no-limit", help="Do not zero summaries longer than their "
                                                              "budget.")] = False,
    task: Annotated[str | None, typer.Option(help="Also merge the rows into bench/results/<task>.json.")] = None,
    out: Annotated[Path | None, typer.Option(callback=OUT_FILE, help="Write the scores as JSON here.")] = None,
) -> None:
    """ROUGE-1 recall, precision and F of summaries against gold summaries (macro-averaged; a summary over
    its character budget scores 0, as in the official PoliInfo-2 scoring). Japanese is tokenised offline
    with GiNZA/Sudachi."""
    from argsim.minutes.evaluate import read_summaries, rouge_nlp, score_summaries

    cfg = run_config(ctx)
    data = read_summaries(summaries)
    evaluations = score_summaries(data, unit, no_limit=no_limit, nlp=rouge_nlp(unit, config=cfg))
    payload = [{"unit": ev.details["unit"], "recall": ev["rouge1-recall"], "precision": ev["rouge1-precision"],
                "f": ev["rouge1-f"], "n": ev.n, "over_limit": ev.details["over_limit"]} for ev in evaluations]
    env = environment(seed=cfg.seed, device=cfg.device, data_files=[summaries])
    results = [row for ev in evaluations for row in result_rows(
        ev, method=data.method, model=data.model, setting=ev.details["unit"], metrics=["rouge1-recall", "rouge1-f"],
        env=env)]
    console.print(summary_table(f"ROUGE-1: {summaries.name}", ["unit", "recall", "precision", "F", "n", "over limit"],
                                [list(p.values()) for p in payload]))
    if out:
        write_json(out, {"summaries": str(summaries), "scores": payload})
    if task:
        write_results(task, results, merge=True)
