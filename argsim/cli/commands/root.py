"""The root's own commands: `argsim demo`, `distill`, `embed`, `evaluate`, `report` and `embed-import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from argsim.backend.cache import check_cache_folder
from argsim.backend.device import resolve_device
from argsim.backend.static import distill as distill_static
from argsim.benchmarks.evaluate import N_BOOT, TASKS
from argsim.cli.groups import console, root_command, run_config, summary_table
from argsim.cli.params import OUT_DIR, OUT_FILE, comma_choices, config_options, model_option, out_file
from argsim.config import default_cache_dir
from argsim.engine.embedding import EmbedSpec, check_shard_out, embed_folder, import_shards, read_manifest
from argsim.errors import ArgsimError
from argsim.io import VECTOR_SUFFIXES
from argsim.report import markdown_table, select_results, table_cells, update_readme, write_full_results


@root_command("demo")
def demo(ctx: typer.Context, model: Annotated[str | None, model_option(
        help="Backend model (default: the shipped key point matcher kpm, as `rank keypoints`).")] = None) -> None:
    """Match eight example arguments to four key points (cosine of embeddings) and print the table."""
    import time

    from argsim.backend.names import default_model
    from argsim.demo import match_examples

    model = model or default_model("kpm")
    start = time.perf_counter()
    matches = match_examples(model=model, config=run_config(ctx))
    console.print(summary_table(f"argsim demo: key point matching with {model} ({time.perf_counter() - start:.1f}s)",
                                ["arg", "argument", "best key point", "cosine"],
                                [[m.arg_id, m.argument, m.key_point if m.matched else
                                  f"none fits (best: {m.key_point})", f"{m.score:.3f}"] for m in matches]))
    console.print("Next: `argsim --help` (every command) and `argsim data check all` (the datasets under --data-dir).")


@root_command("distill")
def distill(
    ctx: typer.Context,
    *,
    model: Annotated[str, typer.Argument(help="Source transformer: a registry name or a sentence-transformers "
                                               "folder.")] = "minilm",
    out: Annotated[Path, typer.Option(callback=OUT_DIR, help="New folder for the static model.")],
    pca_dims: Annotated[int, typer.Option(min=0, help="PCA dimensions of the static vectors (0: no reduction).")] = 256,
) -> None:
    """Distill MODEL into static embeddings (model2vec: one pass over its vocabulary, PCA, SIF weights): tens of
    times faster than the transformer, at the cost in quality docs/backends.md measures. Use it anywhere with
    `--model OUT`."""
    r = distill_static(model, out, pca_dims=pca_dims or None, device=resolve_device(run_config(ctx).device))
    console.print(f"{model} -> {r.out}: {r.vocabulary:,} tokens x {r.dim} dimensions in {r.seconds:.0f}s "
                  f"(use --model {r.out})")


def _is_folder(out: Path) -> bool:
    """A shard folder: a path without a suffix, or an existing folder whose suffix is no vector file's."""
    return out.suffix == "" or (out.is_dir() and out.suffix.lower() not in VECTOR_SUFFIXES)


def _out_check(value: Path | None, ctx: typer.Context = None, param: typer.CallbackParam = None) -> Path | None:
    """A .npy/.csv/.parquet file, or a new (or empty) folder for shards: one line before any work otherwise."""
    if value is None or not _is_folder(value):
        return out_file(".npy", ".csv", ".parquet")(value, ctx, param)
    try:
        check_shard_out(value)
    except ArgsimError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


_out_check.argsim_output = "file"  # type: ignore[attr-defined]  # lets a test find every output option


@root_command("embed")
@config_options(EmbedSpec, "spec")
def embed(
    ctx: typer.Context,
    spec: EmbedSpec,
    input: Annotated[Path, typer.Argument(help="CSV/TSV (header row), JSONL/JSON (objects), or plain text "
                                           "(one text a line).")],
    out: Annotated[Path, typer.Option(callback=_out_check, help="Output file, format by suffix: .npy (float32, one "
                                      "row per text, input order), .csv (id, then one column per dimension), "
                                      ".parquet (columns id, vector); or a new folder (no suffix) for sharded "
                                      "Parquet (id, key, vector), which `--engine ray` always writes and `argsim "
                                      "embed-import` merges into the cache.")] = Path("vectors.npy"),
) -> None:
    """Embed texts and save a float32 matrix; a second run over the same texts reads the disk cache."""
    config = run_config(ctx)
    if config.engine != "ray" and not _is_folder(out):
        from argsim.api.encode import embed_file

        r = embed_file(input, out, spec, config=config)
        runtime = r.precision if config.backend == "torch" else (
            f"{config.backend} {config.quantize if config.quantize != 'none' else r.precision}")
        console.print(f"{r.texts:,} texts -> {r.out} {r.shape} with {r.model} on {r.device} ({runtime}) in "
                      f"{r.seconds:.2f}s")
        return
    if not _is_folder(out):
        raise ArgsimError(f"{out}: --engine ray writes sharded Parquet; give --out a new folder (no suffix)")
    manifest, seconds = embed_folder(input, out, spec, config)  # on the configured engine (local, or Ray Data actors)
    console.print(f"{manifest['rows']:,} texts -> {out}/ (dim {manifest['dim']}, {manifest['engine']} engine) "
                  f"in {seconds:.2f}s")


@root_command("evaluate")
def evaluate(
    ctx: typer.Context,
    models: Annotated[list[str], typer.Argument(
        help="Models: a registered or shipped name (`argsim models`), a model folder (sentence-transformers, or "
             "trained by argsim), a Hugging Face id in the local cache, or bm25 (ArguAna only).")],
    tasks: Annotated[str | None, typer.Option(callback=comma_choices(*TASKS),
                                              help=f"Comma list of tasks (default all): {', '.join(TASKS)}.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Score only the first N units of each task (a quick "
                                                          "look).")] = None,
    compare: Annotated[tuple[str, str] | None, typer.Option(
        help="Two of the models, A B: paired tests of A - B on every task (paired bootstrap; McNemar for 0/1 "
             "outcomes); significant differences marked *.")] = None,
    n_boot: Annotated[int, typer.Option(min=100, help="Bootstrap draws of each interval and paired test.")] = N_BOOT,
    out: Annotated[Path | None, typer.Option(callback=OUT_FILE, help="Write the rows (argsim's results format) to "
                                                                     "this JSON file.")] = None,
    record: Annotated[bool, typer.Option("--record", help="Also merge the rows into bench/results/evaluate.json "
                                                          "(the work folder's).")] = False,
    mteb_out: Annotated[Path | None, typer.Option(callback=OUT_DIR, help="Write MTEB result JSON files here (one "
                                                                         "folder per model, a file per task).")] = None,
    html: Annotated[Path | None, typer.Option(callback=out_file(".html"), help="Write the leaderboard and a chart "
                                              "per task as one self-contained HTML page.")] = None,
) -> None:
    """Score models on every task they can do (bi-encoders: all; cross-encoders: the ranking tasks), zero-shot, on
    the official test splits, with 95 % bootstrap intervals and the papers' and MTEB's figures beside them."""
    from argsim.benchmarks.evaluate import run_evaluate
    from argsim.benchmarks.evaluate_view import leaderboard_cells, references_text, write_outputs

    cfg = run_config(ctx)
    chosen = [t.strip() for t in tasks.split(",") if t.strip()] if tasks is not None else None
    board = run_evaluate(models, tasks=chosen, limit=limit, config=cfg, compare=compare, n_boot=n_boot,
                         log=lambda line: None if cfg.quiet else console.print(line, markup=False, highlight=False))
    header, rows = leaderboard_cells(board)
    rows = [[escape(c) if isinstance(c, str) else c for c in r] for r in rows]  # 'minilm [onnx int8]' is no markup
    console.print(summary_table(f"argsim evaluate: value [95 % interval]{f', first {limit} units' if limit else ''}",
                                header, rows))
    for line in references_text(board):
        console.print(f"published - {line}", markup=False, highlight=False)
    for line in write_outputs(board, cfg, out=out, record=record, mteb_out=mteb_out, html=html):
        console.print(line, markup=False, highlight=False)


@root_command("report")
def report(
    task: Annotated[str | None, typer.Option(help="Only this task (file name without .json).")] = None,
    readme: Annotated[Path | None, typer.Option(
        callback=OUT_FILE, help="Rewrite the block between <!-- results:start --> and <!-- results:end "
                                "--> in this markdown file.")] = None,
    full: Annotated[Path | None, typer.Option(
        callback=OUT_FILE, help="Also write every row of every task as markdown here (e.g. "
                                "docs/results.md).")] = None,
    markdown: Annotated[bool, typer.Option(help="Print markdown instead of rich tables.")] = False,
    conditions: Annotated[bool, typer.Option(help="Add a column with each row's timing conditions (CPU, its flags, "
                                                "cores, threads, load average; the row's env).")] = False,
    html: Annotated[Path | None, typer.Option(
        callback=out_file(".html"), help="Also write the results as one self-contained HTML page (`argsim evaluate` "
                                         "rows as its leaderboard and charts, other tasks as tables).")] = None,
) -> None:
    """Render the committed results files (the one schema shared by every benchmark and evaluation)."""
    results = select_results(task, required=readme is None and full is None)  # nothing to do: says why, exit 2
    for res in results:
        if markdown:
            console.print(markdown_table(res, conditions=conditions), markup=False, highlight=False)
        else:
            console.print(summary_table(res["task"], *table_cells(res, conditions), caption=res.get("command")))
    if readme is not None:
        console.print(f"{readme}: {'updated' if update_readme(readme) else 'already up to date'}")
    if full is not None:
        console.print(f"{write_full_results(full)}: written")
    if html is not None:
        from argsim.benchmarks.evaluate_view import results_html
        from argsim.io import write_text

        console.print(f"{write_text(html, results_html(results))}: written")


@root_command("embed-import")
def embed_import(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="A shard folder written by `argsim embed ... --out DIR` "
                                            "(part-*.parquet + _argsim_embeddings.json).")],
    source: Annotated[Path | None, typer.Option(help="The file the shards were embedded from, when it is no longer "
                                       "where the manifest says: a sample of rows is embedded again from it and "
                                       "compared before anything enters the cache.")] = None,
) -> None:
    """Store the vectors of a shard folder in the embedding cache of their model, so later runs read them. The
    model the manifest names is loaded and a seeded sample of rows is embedded again and compared first."""
    config = run_config(ctx)
    read_manifest(folder)
    cache_dir = check_cache_folder(config.cache_dir or default_cache_dir())
    rows, manifest = import_shards(folder, cache_dir, config=config, source=source)
    console.print(f"{rows:,} vectors of {manifest['model']} ({manifest['identity']}) -> cache {cache_dir}")
