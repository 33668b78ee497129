"""`argsim train bipolar`, `argsim eval counter-neural`, `argsim rank counter-search`: the neural
counter-argument models of the Bipolar-encoder paper (thin CLI; the work is in argsim.counter.neural)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.cli.groups import console, eval_app, rank_app, run_config, summary_table, train_app
from argsim.cli.params import (
    OUT_DIR,
    OUT_FILE,
    comma_choices,
    comma_positive_ints,
    config_options,
    model_option,
    out_file,
)
from argsim.cli.training_options import budget_options, placement
from argsim.counter.neural.config import NeuralConfig, Table3Request
from argsim.counter.neural.data import PairSource
from argsim.data.counterargs import SETTINGS
from argsim.trainers.counter_bipolar import CrossValidation
from argsim.trainers.counter_retriever import RetrieverConfig
from argsim.training.budget import Budget


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

    from argsim.trainers.counter_bipolar import train_bipolar
    from argsim.training import is_main_process

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
    from argsim.training import is_main_process

    where = placement(ctx)
    stats = train_counter_retriever(replace(config, seed=where.seed), out, where, plan, quiet=run_config(ctx).quiet)
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
    split: Annotated[Literal["training", "validation", "test"], typer.Option(
        help="training | validation | test")] = Table3Request.split,
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
    from argsim.config import default_data_dir
    from argsim.counter.neural.table3 import run_table3
    from argsim.paths import under_workdir
    from argsim.results import environment, rows_from_specs, write_results

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
    from argsim.io import write_jsonl

    lines, info = search_files(model, candidates, queries, k, index, run_config(ctx))
    write_jsonl(out, lines)
    tops = [(line["results"] or [{"text": "-", "score": float("nan")}])[0] for line in lines[:10]]
    console.print(summary_table(f"{info['kind']}: {len(lines)} queries against {info['candidates']} candidates",
                                ["query", "top candidate", "score"],
                                [[line["query"][:70], top["text"][:70], f"{top['score']:.3f}"]
                                 for line, top in zip(lines, tops, strict=False)]))
    console.print(f"index {info['index_seconds']:.1f} s, ranking {info['rank_seconds']:.1f} s; wrote {out}")
