"""Counter-argument retrieval commands: `argsim rank counterargs`, `argsim eval counterargs`, `argsim train ltr`,
`train simple-sd`; and the neural counter-argument models of the Bipolar-encoder paper (the work is in
argsim.counter.neural): `argsim train bipolar`, `train counter-retriever`, `eval counter-neural`, `rank
counter-search`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from argsim.cli.groups import console, eval_app, rank_app, run_config, summary_table, train_app
from argsim.cli.params import (
    OUT_DIR,
    OUT_FILE,
    budget_options,
    choices,
    comma_choices,
    comma_positive_ints,
    config_options,
    model_option,
    out_file,
    placement,
)
from argsim.config import RunConfig, default_data_dir
from argsim.counter.core.evaluation import read_rankings, summarize
from argsim.counter.core.registry import get_ranker, load_rankers, ranker_options
from argsim.counter.core.run import RankRequest
from argsim.counter.lexical.feature_config import FeatureConfig
from argsim.counter.ltr.model import LTR_METHODS
from argsim.counter.neural.config import NeuralConfig, Table3Request
from argsim.counter.neural.data import PairSource
from argsim.data.counterargs import SETTINGS
from argsim.engine import engine_from_config
from argsim.errors import ArgsimError
from argsim.io import write_json, write_jsonl
from argsim.paths import under_workdir
from argsim.published import table2
from argsim.results import environment, result_rows, rows_from_specs, run_environment, write_results
from argsim.trainers.counter_bipolar import CrossValidation
from argsim.trainers.counter_retriever import RetrieverConfig
from argsim.training import is_main_process
from argsim.training.budget import Budget

Split = Literal["training", "validation", "test"]
Setting = Literal["sdoc", "sdc", "sdoa", "sda", "stc", "sta", "epc", "epa"]

SETTING_HELP = ("sdoc | sdc | sdoa | sda | stc | sta | epc | epa (same debate / same theme / entire portal; "
                "opposing counters / counters / opposing arguments / arguments); repeat for several")


@rank_app.command("counterargs")
@config_options(RankRequest, "request", exclude=("settings", "options"))
def rank_counterargs(
    ctx: typer.Context,
    request: RankRequest,
    setting: Annotated[list[str], typer.Option(
        "--setting", "-s", callback=choices(*SETTINGS), help=SETTING_HELP)] = ("sdoc",),
    model: Annotated[str | None, model_option(help="Encoder / model for rankers that need one (minilm, glove50, a "
                                     "folder, or a trained LTR model folder for logreg/xgboost).")] = None,
    opt: Annotated[list[str], typer.Option("--opt", help="Ranker option key=value, repeatable (e.g. "
                                  "weights=-0.1,-0.1,0,0.9,0,0,0,0.9, bm25_idf=okapi); bulk work runs on the "
                                  "global --engine.")] = (),
    out: Annotated[Path, typer.Option(
        callback=OUT_FILE, help="Ranking JSONL (one line per point).")] = Path("runs/counter/ranking.jsonl"),
    task: Annotated[str | None, typer.Option(help="Also merge accuracy@1 / MRR into "
                                                  "bench/results/<task>.json.")] = None,
    list_methods: Annotated[bool, typer.Option("--list", help="List the ranking methods and exit.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Keep the settings OUT already holds for this method and "
                                "split (written as each setting finished) and rank only the others.")] = False,
) -> None:
    """Rank each point's candidate pool and write the top-k counters per point as JSONL, with the rank of the
    true counter, then print accuracy@1 and MRR per setting beside the paper's Table 2. OUT is rewritten
    (atomically) after every finished setting, so an interrupted run keeps them; `--resume` continues it."""
    from argsim.counter.core.run import parse_options, rank_counterargs

    if list_methods:
        console.print(summary_table("counter-argument rankers", ["method", "what it does"],
                                    [[escape(n), escape(i.help)] for n, i in sorted(load_rankers().items())]))
        return
    if model in load_rankers():
        raise ArgsimError(f"-m / --model {model} names a ranking method, not a model: give it as --method {model}")
    options = parse_options(opt, allowed=ranker_options(get_ranker(request.method)), method=request.method)
    request = replace(request, settings=tuple(setting), options=options | ({"model": model} if model else {}))
    runs, records = rank_counterargs(request, run_config(ctx), out=out, resume=resume)
    ranked = {r.setting for r in runs}
    for s in [s for s in setting if resume and s not in ranked]:
        console.print(f"kept {sum(r['setting'] == s for r in records):,} ranked points of {s} from {out} (--resume)")
    _print_summary(records, {(r.method, r.setting, r.split): r for r in runs}, run_config(ctx), task, model=model)
    console.print(f"ranking of {len(records):,} points written to {out}")


@eval_app.command("counterargs")
def eval_counterargs(
    ctx: typer.Context,
    rankings: Annotated[list[Path], typer.Argument(help="Ranking JSONL file(s) written by `argsim rank counterargs`.")],
    ties: Annotated[Literal["expected", "pessimistic", "optimistic"], typer.Option(
        help="Ties with the true counter: expected (1/t credit), pessimistic, optimistic.")] = "expected",
    task: Annotated[str | None, typer.Option(help="Also merge the figures into bench/results/<task>.json.")] = None,
) -> None:
    """accuracy@1 and MRR per method and setting from ranking JSONL files, beside the paper's Table 2."""
    _print_summary(read_rankings(rankings), {}, run_config(ctx), task, ties)


def _print_summary(records: list[dict], runs: dict, config: RunConfig, task: str | None = None,
                   ties: str = "expected", model: str | None = None) -> None:
    env = run_environment(config)
    table_rows, rows = [], []
    for s in summarize(records, ties=ties):
        run = runs.get((s.method, s.setting, s.split))
        paper = table2(s.method, s.setting)
        table_rows.append([escape(s.method), s.split, s.setting, s.points, f"{s.mean_pool:,.1f}",
                           *(f"{v:.3f}" for v in (s.random_accuracy, s.accuracy_at_1)),
                           "" if paper is None else f"{paper:.3f}", "n/a" if s.mrr != s.mrr else f"{s.mrr:.3f}",
                           "" if run is None else f"{run.seconds:.1f}"])
        ev = s.evaluation()
        rows += result_rows(replace(ev, metrics={k: round(v, 4) for k, v in ev.items()}), method=s.method,
                            model=model, setting=s.setting, paper={"accuracy@1": paper},
                            seconds=None if run is None else run.seconds, peak_mb=None if run is None else run.peak_mb,
                            extra={"points": s.points} | ({"options": run.options} if run else {}), env=env)
    if not table_rows:  # a collection without gold counters: rankings, no accuracy
        console.print(f"no point has a gold counter: {len(records):,} rankings, no accuracy@1")
        return
    console.print(summary_table("best-counter retrieval: accuracy@1 (paper = Table 2 of the bipolar-encoder paper)",
                                ["method", "split", "setting", "points", "pool", "random", "acc@1", "paper", "MRR",
                                 "s"], table_rows))
    if task and rows:
        write_results(task, rows, merge=True)


@train_app.command("ltr")
@config_options(FeatureConfig)
def train_ltr_cmd(
    ctx: typer.Context,
    config: FeatureConfig,
    setting: Annotated[list[str], typer.Option(
        "--setting", "-s", callback=choices(*SETTINGS),
        help=SETTING_HELP + "; one model per setting, trained on the training split's pools of that setting.")] = (
        "sdoc",),
    method: Annotated[list[str], typer.Option(
        callback=choices(*LTR_METHODS), help="Which models to fit (share one feature extraction).")] = LTR_METHODS,
    neg_per_point: Annotated[int, typer.Option(
        min=0, help="False pairs sampled per training point from its pool (0 = all).")] = 10,
    input_file: Annotated[Path | None, typer.Option("--input", "-i", help="Train on your own arguments instead "
                                           "(JSONL/CSV/JSON with id, text, optional conclusion, kind point|counter "
                                           "and counter = the true counter's id); saved under OUT/user/.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Use a random sample of N training points.")] = None,
    out: Annotated[Path, typer.Option(
        callback=OUT_DIR, help="Models go to OUT/<setting>/<method>/.")] = Path("models/counter/ltr"),
) -> None:
    """Fit logistic-regression / XGBoost rankers (appendix B.1 hyper-parameters) pointwise on counterargs-18
    training pairs: each point's true counter plus sampled false candidates from its pool."""
    from argsim.counter.ltr.training import train_ltr_settings

    saved = train_ltr_settings(setting, tuple(method), config, run_config(ctx), neg_per_point=neg_per_point or None,
                               out_dir=out, limit=limit, input_file=input_file)
    rows = [[s["setting"], s["method"], s["sampling"]["pairs"], s["sampling"]["positives"], str(s["folder"]),
             f"{s['seconds']:.0f}"] for s in saved]
    console.print(summary_table("trained LTR models", ["setting", "method", "pairs", "positives", "folder", "s"], rows))


@train_app.command("simple-sd")
@config_options(FeatureConfig, exclude=("bert_model", "bert_pooling", "bm25_idf"))  # Simple-SD: x1..x8 only
def train_simple_sd(
    ctx: typer.Context,
    config: FeatureConfig,
    setting: Annotated[list[str], typer.Option(
        "--setting", "-s", callback=choices(*SETTINGS), help=SETTING_HELP)] = ("sdoc", "sda"),
    split: Annotated[Split, typer.Option(help="Split to compare / tune on.")] = "validation",
    limit: Annotated[int | None, typer.Option(min=1, help="Random sample of N points per setting (seeded).")] = None,
    tune: Annotated[bool, typer.Option("--tune", help="Also search the 8 weights by coordinate ascent (exact "
                              "features of every pair) on --tune-setting.")] = False,
    tune_setting: Annotated[Setting | None, typer.Option(help="Setting to tune on (default: sda if among --setting, "
                                            "else the first).")] = None,
    out: Annotated[Path, typer.Option(
        callback=OUT_FILE, help="JSON with the readings' accuracies and "
                                "the tuned weights (pass it to `rank "
                                "counterargs --opt weights=FILE`).")] = Path("models/counter/simple-sd.json"),
    task: Annotated[str | None, typer.Option(help="Also merge the figures into bench/results/<task>.json.")] = None,
) -> None:
    """Compare the readings of Simple-SD's weights (literal, interleaved, max-min, sum-min) by accuracy@1 on
    the validation split and, with --tune, search better weights there."""
    from argsim.counter.lexical.features import FEATURE_NAMES
    from argsim.counter.lexical.simplesd import READINGS, study_readings, study_row_specs

    cfg = run_config(ctx)
    report = study_readings(split, list(setting), limit=limit, tune=tune, tune_setting=tune_setting,
                            word_vectors=config.word_vectors, stopwords=config.stopwords,
                            engine=engine_from_config(cfg), seed=cfg.seed, data_dir=cfg.data_dir)
    console.print(summary_table(f"Simple-SD readings, accuracy@1 on {split}", ["setting", *READINGS],
                                [[s, *(f"{accs[n]:.3f}" for n in READINGS)] for s, accs in report["readings"].items()]))
    if "tuned" in report:
        t = report["tuned"]
        console.print(f"tuned on {split}/{t['setting']}: accuracy@1 {t['accuracy']:.3f} with weights "
                      + ", ".join(f"{FEATURE_NAMES[i]}={v:g}" for i, v in enumerate(t["weights"]) if v != 0))
    write_json(out, report)
    console.print(f"written to {out}")
    if task:
        write_results(task, rows_from_specs(study_row_specs(report), env=run_environment(cfg)), merge=True)


@train_app.command("bipolar")
@budget_options(max_minutes="Stop after the epoch that crosses this training-time budget (cross-encoder: at the "
                           "budget, with a checkpoint).")
@config_options(NeuralConfig)
@config_options(PairSource, "source")
@config_options(CrossValidation, "cross")
def train_bipolar_cmd(
    ctx: typer.Context,
    config: NeuralConfig,
    source: PairSource,
    cross: CrossValidation,
    plan: Budget,
    out: Annotated[Path, typer.Option("--out", "-o", callback=OUT_DIR, help="Model folder to write (config.json, "
                             "heads.safetensors, card.json, checkpoints/, history.json, learning_curve.png, "
                             "train_config.json, README.md).")],
    init: Annotated[Path | None, typer.Option("--init", help="Start from this trained model (a folder or a shipped "
                                     "model's name; same kind and width): its heads, e.g. heads trained on the frozen "
                                     "encoder before fine-tuning it, and with --lora-rank its LoRA tower adapters "
                                     "too (same rank, alpha and base), e.g. counter-bipolar.")] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed (default: the global --seed).")] = None,
) -> None:
    """Train a Bipolar-encoder (or Bi-encoder, Unipolar-ret/-cls, Cross-encoder, the |u-v| ablation).

    Data: counterargs-18 training pairs, validated on the validation split in the epa setting (every
    validation argument is a candidate), or your own --train/--val files of (point, counter) rows, where each
    file's other rows serve as negatives. Every epoch writes a checkpoint that --resume continues from; the
    best-validation model is kept in --out and loads with `--model OUT` everywhere.
    """
    import json

    from argsim.trainers.counter_bipolar import check_init, train_bipolar

    check_init(config, init)  # before the data is read
    run, where = run_config(ctx), placement(ctx)
    where = replace(where, seed=where.seed if seed is None else seed)
    data = source.load(run.data_dir, seed=where.seed)
    history = train_bipolar(config, data, out, init=init, cross=cross, placement=where, budget=plan, quiet=run.quiet,
                            log=lambda row: is_main_process() and console.print(json.dumps(row), highlight=False))
    if not is_main_process():
        return
    if config.kind == "cross-encoder":
        console.print(f"cross-encoder saved to {out} ({history[-1]['seconds']:.0f} s)")
        return
    best = max(history, key=lambda h: h["val"])
    console.print(summary_table(f"{config.kind} on {data.info.get('train_pairs')} pairs", [
        "epochs run", "untrained val @1/K", "best val @1/K", "best epoch", "train minutes"], [[
        history[-1]["epoch"], history[0]["val"], best["val"], best["epoch"], f"{history[-1]['seconds'] / 60:.1f}"]]))
    console.print(f"model saved to {out}")


@train_app.command("counter-retriever")
@budget_options()
@config_options(RetrieverConfig)
def train_counter_retriever_cmd(
    ctx: typer.Context,
    config: RetrieverConfig,
    plan: Budget,
    out: Annotated[Path, typer.Option("--out", "-o", callback=OUT_DIR, help="Adapter folder to write (loads with "
                                      "--model OUT everywhere; checkpoints/ for --resume).")],
) -> None:
    """Train a counter-argument retriever for an open collection (every argument a candidate, as BEIR's ArguAna).

    A LoRA adapter over MiniLM trained with cached MultipleNegativesRankingLoss on counterargs-18's training points,
    their counters and a hard negative of the same debate; the best validation-collection nDCG@10 (validation points
    over the training and validation arguments) is kept with --eval-every, and scored at the end."""
    from argsim.trainers.counter_retriever import train_counter_retriever

    run, where = run_config(ctx), placement(ctx)
    stats = train_counter_retriever(replace(config, seed=where.seed), out, where, plan, quiet=run.quiet,
                                    data_dir=run.data_dir)
    if where.processes == 1 or is_main_process():
        console.print(summary_table(f"trained counter-retriever -> {out}", ["statistic", "value"],
                                    [[k, v] for k, v in stats.items() if k not in ("losses", "evals")]))

@eval_app.command("counter-neural")
def eval_counter_neural(
    ctx: typer.Context,
    bipolar: Annotated[Path | None, typer.Option(help="Bipolar-encoder folder, or counter-bipolar (the one "
                                        "that ships with argsim).")] = None,
    bipolar_nodiff: Annotated[Path | None, typer.Option("--bipolar-nodiff", help="Bipolar w/o |u-v| folder.")] = None,
    bi_encoder: Annotated[Path | None, typer.Option("--bi-encoder", help="Bi-encoder folder, or counter-bi-encoder "
                                           "(the one that ships with argsim).")] = None,
    unipolar_ret: Annotated[Path | None, typer.Option("--unipolar-ret", help="Unipolar-ret folder.")] = None,
    unipolar_cls: Annotated[Path | None, typer.Option("--unipolar-cls", help="Unipolar-cls folder.")] = None,
    cross_encoder: Annotated[Path | None, typer.Option("--cross-encoder", help="Cross-encoder folder.")] = None,
    split: Annotated[Split, typer.Option(help="training | validation | test")] = Table3Request.split,
    settings: Annotated[str, typer.Option(
        callback=comma_choices(*SETTINGS), help="Comma-separated settings (sdoc, sda, epc, epa, ...).")
    ] = ",".join(Table3Request.settings),
    ks: Annotated[str, typer.Option(
        callback=comma_positive_ints, help="Comma-separated rerank depths K of @1/K.")
    ] = ",".join(map(str, Table3Request.ks)),
    bipolar_settings: Annotated[str | None, typer.Option(
        "--bipolar-settings", callback=comma_choices(*SETTINGS),
        help="Extra settings for the Bipolar-encoder row only (e.g. sdoc,sda,epc).")] = None,
    cross_limit: Annotated[int | None, typer.Option(
        "--cross-limit", min=0, help="Evaluate rows with a cross-encoder on a seeded random subset of N "
                                     "points (CPU cost); 0 = all.")] = Table3Request.cross_limit,
    base_model: Annotated[str, model_option(help="Model of the zero-shot cosine row.")] = Table3Request.base_model,
    base_model_alias: Annotated[str | None, typer.Option(
        "--base-model", hidden=True)] = None,  # the option's older name
    task: Annotated[str, typer.Option(help="Merge the rows into bench/results/<task>.json.")] = "counterargs-neural",
    budget: Annotated[Path | None, typer.Option(
        help="JSON file: method -> training budget text, stored with the rows.")] = None,
    curves: Annotated[Path | None, typer.Option(callback=out_file(".png"), help="Also plot the given models' "
                                       "learning curves (history.json) into this PNG.")] = None,
) -> None:
    """The paper's Table 3: @1/K (accuracy@1 after reranking the first stage's top K) for every row whose model
    is given, beside the published figures; writes bench/results/<task>.json. An interrupted run keeps its
    finished rows (runs/counter-neural/<task>.partial.json): the same command continues it."""
    from argsim.counter.neural.table3 import run_table3

    cfg, k_list = run_config(ctx), tuple(int(k) for k in ks.split(","))
    models = {"bipolar": bipolar, "bipolar-nodiff": bipolar_nodiff, "bi-encoder": bi_encoder,
              "unipolar-ret": unipolar_ret, "unipolar-cls": unipolar_cls, "cross-encoder": cross_encoder}
    request = Table3Request(models, split, tuple(settings.split(",")), k_list, base_model_alias or base_model,
                            tuple(bipolar_settings.split(",")) if bipolar_settings else (), cross_limit)
    results, specs = run_table3(request, budget, curves, cfg,
                                state=under_workdir(f"runs/counter-neural/{task}.partial.json"))
    if curves:
        console.print(f"learning curves: {curves}")
    rows = []
    for r in results:
        acc, last = r.score.acc, r.versus.get(k_list[-1])
        rows.append([r.row.method, r.setting, len(r.score.ids), *(acc[k] for k in (1, *k_list)),
                     " / ".join(f"{r.paper[k]:.4f}" for k in k_list if k in r.paper) or "-",
                     f"{last['delta']:+.4f} [{last['ci95'][0]:+.4f}, {last['ci95'][1]:+.4f}]" if last else "-",
                     f"{r.seconds:.0f}"])
    console.print(summary_table(f"counterargs-18 {split}: @1/K", ["method", "setting", "points", "stage-1 @1", *(
        f"@1/{k}" for k in k_list), "paper", f"Δ@1/{k_list[-1]} vs zero-shot [95% CI]", "seconds"], rows))
    data_dir = cfg.data_dir or default_data_dir()
    env = environment(seed=cfg.seed, device="cpu", precision="fp32",  # the counter models score on the CPU in fp32
                      data_files=[data_dir / "counterargs18" / "03-pairs-best-counter-task" / "test"
                                  / "00-argument-pair-type-counts.tsv"] if data_dir else [],
                      models={k: str(v) for k, v in models.items() if v})
    write_results(task, rows_from_specs(specs, env=env), merge=True)


@rank_app.command("counter-search")
def counter_search(
    ctx: typer.Context,
    *,
    model: Annotated[str, model_option(help="An embedding model (the default: counter-fusion, the shipped sum of "
                              "counter-bi-encoder's and counter-retriever's cosines), ranked by cosine, points as "
                              "queries, candidates as documents; or a trained counter model (argsim train bipolar, "
                              "counter-bi-encoder, counter-bipolar): retrieve, then rerank.")] = "counter-fusion",
    candidates: Annotated[Path, typer.Option(help="Candidate arguments: a text file (one per line) or CSV/JSONL with a "
                                    "'text' column (and optional 'id').")],
    queries: Annotated[Path, typer.Option(help="Query points: same formats.")],
    k: Annotated[int, typer.Option(min=1, help="Candidates returned per query (retrieved top k, reranked).")] = 10,
    index: Annotated[Literal["auto", "flat", "hnsw", "ivf", "ivfsq8", "ivfpqfs"], typer.Option(
        help="faiss index: auto (flat up to 50,000 candidates, ivf above: 4,096 lists, 128 probed at "
             "1M) | flat (exact inner product) | hnsw | ivf | ivfsq8 (8-bit codes, exact re-score) | "
             "ivfpqfs (4-bit fast-scan PQ, exact re-score).")] = "auto",
    out: Annotated[Path, typer.Option(
        "--out", "-o", callback=OUT_FILE, help="JSONL: one line per query with its ranked candidates.")],
) -> None:
    """Counter-argument search over your own collection through faiss: candidates are embedded once (backend
    cache); an embedding model (the default, counter-fusion) ranks them by cosine with the query, a trained counter
    model's retrieval head picks the top k and its classification head reranks them; a query found in the
    collection is never its own candidate.

    With `--engine ray` a trained counter model's candidate and query embeddings that the cache lacks are computed
    on Ray's actor pool (and cached); the faiss search and the rerank run in this process (see
    argsim.counter.neural.rerank)."""
    from argsim.counter.neural.rerank import search_files

    lines, info = search_files(model, candidates, queries, k, index, run_config(ctx))
    write_jsonl(out, lines)
    tops = [(line["results"] or [{"text": "-", "score": float("nan")}])[0] for line in lines[:10]]
    console.print(summary_table(f"{info['kind']}: {len(lines)} queries against {info['candidates']} candidates",
                                ["query", "top candidate", "score"],
                                [[line["query"][:70], top["text"][:70], f"{top['score']:.3f}"]
                                 for line, top in zip(lines, tops, strict=False)]))
    console.print(f"index {info['index_seconds']:.1f} s, ranking {info['rank_seconds']:.1f} s; wrote {out}")
