"""Thematic similarity commands: `data triplets wikipedia`, `train thematic`, `cluster sentences`,
`eval clustering`, `eval sick`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.cli.groups import cluster_app, console, eval_app, run_config, summary_table, train_app, triplets_app
from argsim.cli.params import OUT_DIR, OUT_FILE, budget_options, choices, config_options, model_option, placement
from argsim.data.catalog import dataset_dir
from argsim.errors import ArgsimError
from argsim.io import canonical_columns, read_records, write_jsonl
from argsim.results import evaluate_models, run_environment, write_results
from argsim.schemas import LabelledSentenceRecord, SentenceRecord
from argsim.thematic.config import ThematicTrainConfig
from argsim.training import is_main_process
from argsim.training.budget import Budget

Algorithm = Literal["kmeans", "agglomerative"]
Linkage = Literal["ward", "average", "complete"]


@triplets_app.command("wikipedia")
def triplets_wikipedia(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Output folder for the JSONL files.")] = Path("runs/thematic/data"),
    articles: Annotated[Path | None, typer.Option(help="Your own articles instead of the dataset: a folder of "
                                                    "wikitext files (*.txt/*.wiki, title = file name) or a "
                                                    "JSONL/CSV with columns title, text.")] = None,
    negatives: Annotated[Literal["adjacent", "random-section", "random-article"], typer.Option(
        help="Third sentence of triplets-sen: adjacent (paper: previous/next section), "
             "random-section (same article) or random-article.")] = "adjacent",
    level: Annotated[Literal["top", "all"], typer.Option(
        help="Sections: 'top' (level-2 headings, sub-sections merged in) or 'all' (every heading its own "
             "section).")] = "top",
    min_sections: Annotated[int, typer.Option(
        min=1, help="Articles need at least this many sections after filtering.")] = 5,
) -> None:
    """Build the weakly labelled thematic data of Ein Dor et al. (2018) from Wikipedia articles.

    Splits the distinct articles 80/10/10 (seeded by --seed) before anything else, then writes to --out:
    split.json, triplets-sen-{train,dev,test}.jsonl (fields anchor, positive, negative, article, section,
    negative_section, split), triplets-titles-*.jsonl and the sentence clustering benchmark scb-*.jsonl
    (article, section, label, text; articles with 5-12 sections). Prints the counts per split.
    """
    from argsim.data.wikipedia import load_articles
    from argsim.thematic.build import build_datasets, read_user_articles

    cfg = run_config(ctx)
    docs = read_user_articles(articles, quiet=cfg.quiet) if articles else load_articles(
        dataset_dir("wikipedia", cfg.data_dir), use_cache=cfg.use_cache, cache_dir=cfg.resolved_cache_dir(),
        quiet=cfg.quiet)
    counts = build_datasets(docs, out, negatives=negatives, level=level, seed=cfg.seed,
                            min_sections=min_sections)
    cols = list(next(iter(counts.values())))
    console.print(summary_table(f"thematic data ({negatives} negatives, {level} sections) -> {out}\n(sen/titles = "
                         "triplets-sen/-titles; scb = clustering benchmark)", ["split", *cols],
                         [[s, *c.values()] for s, c in counts.items()]))


@train_app.command("thematic")
@budget_options()
@config_options(ThematicTrainConfig)
def train_thematic(
    ctx: typer.Context,
    config: ThematicTrainConfig,
    plan: Budget,
    triplets: Annotated[Path, typer.Argument(help="Training triplets JSONL/CSV (anchor, positive, negative), e.g. "
                                              "runs/thematic/data/triplets-sen-train.jsonl.")],
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Model folder to write (loads with --model DIR everywhere).")],
    dev: Annotated[Path | None, typer.Option(help="Dev triplets: a sample of them chooses the saved model (MiniLM: "
                                               "every --eval-every steps; the BiLSTM: every --eval-every steps when "
                                               "given, else after every epoch); the saved model's accuracy on all "
                                               "of them is printed. Without it nothing is scored and OUT holds "
                                               "the last model.")] = None,
) -> None:
    """Train a thematic sentence encoder on triplets (--resume continues from OUT/checkpoints).

    The defaults are the recommended recipe, the shipped `thematic` model: a LoRA adapter (rank 16) over MiniLM,
    TripletLoss margin 0.3, lr 1e-4, batch 16, with --dev the best of its dev evaluations every 250 steps.
    --arch bilstm trains the paper's BiLSTM with the paper's values (Adam 1e-3, batch 64)."""
    from argsim.trainers.thematic import train_thematic as train

    config = config.checked(has_dev=dev is not None, budget=plan)
    where = placement(ctx, threads=config.threads or None)
    stats = train(triplets, out, config, where, plan, dev=dev, quiet=run_config(ctx).quiet, log=console.print)
    if where.processes == 1 or is_main_process():
        console.print(summary_table(f"trained {config.arch} -> {out}", ["statistic", "value"],
                                    [[k, v] for k, v in stats.items()]))


@cluster_app.command("sentences")
def cluster_sentences(
    ctx: typer.Context,
    sentences: Annotated[Path, typer.Argument(help="JSONL/CSV with a column `text`; optional `article` (cluster each "
                                               "article separately) and `label` (gold section; sets k).")],
    model: Annotated[str | None, model_option(help="Backend model name or folder (default: the shipped thematic "
                                                "encoder `thematic`; `--model minilm` for zero-shot MiniLM).")] = None,
    algorithm: Annotated[Algorithm, typer.Option(help="kmeans or agglomerative.")] = "kmeans",
    linkage: Annotated[Linkage, typer.Option(help="Agglomerative linkage: ward (on unit vectors), average or complete "
                                             "(on cosine distance).")] = "ward",
    k: Annotated[int | None, typer.Option(
        min=1, help="Clusters per article (default: its number of gold labels).")] = None,
    out: Annotated[Path, typer.Option(
        callback=OUT_FILE, help="Output JSONL: the input rows + cluster.")] = Path("runs/thematic/clusters.jsonl"),
) -> None:
    """Cluster sentences by theme on cosine similarity, one article (group) at a time."""
    from argsim.api.thematic import cluster_sentences as cluster
    from argsim.backend.names import default_model

    cfg = run_config(ctx)
    model = model or default_model("thematic")
    rows = read_records(sentences, SentenceRecord)
    canonical_columns(rows, sentences, ("label", "article"))
    if k is None and any("label" not in r for r in rows):
        raise ArgsimError(f"{sentences}: no `label` column to take k from; pass --k")
    groups = [r.get("article", "") for r in rows]
    labels = cluster([str(r["text"]) for r in rows], model, k, algorithm, linkage, groups=groups,
                     labels=None if k is not None else [r["label"] for r in rows], config=cfg).tolist()
    write_jsonl(out, [{**r, "cluster": c} for r, c in zip(rows, labels, strict=True)])
    console.print(summary_table(f"{algorithm} clusters ({model}) -> {out}", ["group", "sentences", "clusters"],
                                [[g or "(all)", n, len({c for a, c in zip(groups, labels, strict=True) if a == g})]
                                 for g, n in list(Counter(groups).items())[:15]]))


@eval_app.command("clustering")
def eval_clustering(
    ctx: typer.Context,
    sentences: Annotated[Path, typer.Argument(help="JSONL/CSV with text, label (gold section) and article; e.g. "
                                               "runs/thematic/data/scb-test.jsonl, or the output of `argsim "
                                               "cluster sentences` (then its `cluster` column is scored).")],
    model: Annotated[list[str], model_option(help="Models to compare (repeatable); ignored when "
                                                  "the file has `cluster`.")] = ("minilm",),
    algorithm: Annotated[list[str], typer.Option(
        callback=choices("kmeans", "agglomerative"), help="Algorithms (repeatable).")] = ("kmeans", "agglomerative"),
    linkage: Annotated[Linkage, typer.Option(help="Agglomerative linkage: ward, average or complete.")] = "ward",
    task: Annotated[str | None, typer.Option(help="Also merge the rows into bench/results/<task>.json.")] = None,
) -> None:
    """MI, AMI, RI and ARI of the clustering against the gold sections, averaged over articles."""
    from argsim.evaluation import ClusteringEvaluator
    from argsim.metrics.clustering import averaged_scores, warn_one_section

    cfg = run_config(ctx)
    env = run_environment(cfg, data_files=[sentences])
    rows = read_records(sentences, LabelledSentenceRecord)
    canonical_columns(rows, sentences, ("label", "article", "cluster"))
    groups = [r.get("article", "") for r in rows]
    gold = [r["label"] for r in rows]
    warn_one_section(groups, gold)
    table_rows, results = [], []
    if all("cluster" in r for r in rows):
        s, n = averaged_scores(groups, gold, [r["cluster"] for r in rows])
        table_rows.append(["(file)", "(file)", n, *s.values()])
    else:
        for m in model:
            for alg in algorithm:
                evaluator = ClusteringEvaluator(rows, sentences.stem, alg, linkage, cfg.seed, cfg)
                [(_, ev, _)], found = evaluate_models(evaluator, [m], env, method="thematic-clustering",
                                                      setting=alg if alg == "kmeans" else f"{alg}-{linkage}")
                table_rows.append([m, alg, ev.n, *ev.metrics.values()])
                results += found
    console.print(summary_table(f"clustering: {sentences.name}", ["model", "algorithm", "articles", "MI", "AMI", "RI",
                                                             "ARI"], table_rows))
    if task and results:
        write_results(task, results, merge=True)


@eval_app.command("sick")
def eval_sick(
    ctx: typer.Context,
    model: Annotated[list[str], model_option(help="Models to compare (repeatable).")] = ("minilm",),
    folder: Annotated[Path | None, typer.Option(help="A folder laid out like SICK (SICK_train.txt, SICK_trial.txt, "
                                                  "SICK_test_annotated.txt); default: the `sick` dataset.")] = None,
    task: Annotated[str | None, typer.Option(help="Also merge the rows into bench/results/<task>.json.")] = None,
) -> None:
    """SICK relatedness: logistic regression on [|u-v|, u*v] from the training pairs (C picked on trial);
    Pearson r, Spearman rho and MSE on the test pairs."""
    from argsim.data.sick import load_sick
    from argsim.evaluation import SICKEvaluator

    cfg = run_config(ctx)
    root = folder or dataset_dir("sick", cfg.data_dir)
    env = run_environment(cfg, data_files=[Path(root) / "SICK_test_annotated.txt"])
    evaluator = SICKEvaluator(*(load_sick(root, s) for s in ("train", "trial", "test")), config=cfg)
    scored, results = evaluate_models(evaluator, model, env, method="sick-relatedness", setting="logreg")
    table_rows = [[m, *s.metrics.values(), s.details["c"], seconds] for m, s, seconds in scored]
    console.print(summary_table("SICK relatedness (test)",
                                ["model", "pearson r", "spearman rho", "MSE", "C", "seconds"], table_rows))
    if task:
        write_results(task, results, merge=True)
