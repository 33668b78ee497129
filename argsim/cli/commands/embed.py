"""`argsim embed`: encode a file of texts with any backend model and save the vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from argsim.cli.groups import console, run_config
from argsim.cli.params import model_option, out_file


def register(app: typer.Typer) -> None:
    app.command("embed")(embed)  # `argsim models` (listing these models too): argsim.cli.commands.models


def _is_folder(out: Path) -> bool:
    return out.is_dir() or out.suffix == ""


def _out_check(value: Path | None, ctx: typer.Context = None, param: typer.CallbackParam = None) -> Path | None:
    """A .npy/.csv/.parquet file, or a new (or empty) folder for shards: one line before any work otherwise."""
    from argsim.errors import ArgsimError

    if value is None or not _is_folder(value):
        return out_file(".npy", ".csv", ".parquet")(value, ctx, param)
    from argsim.engine.embedding import check_shard_out

    try:
        check_shard_out(value)
    except ArgsimError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


_out_check.argsim_output = "file"  # type: ignore[attr-defined]  # lets a test find every output option


def embed(
    ctx: typer.Context,
    input: Annotated[Path, typer.Argument(help="CSV/TSV (header row), JSONL/JSON (objects), or plain text "
                                           "(one text a line).")],
    column: Annotated[str, typer.Option(help="Column/field holding the text (CSV/JSONL).")] = "text",
    model: Annotated[str, model_option(help="Registry name (see `argsim models`) or a local model folder.")] = "minilm",
    pooling: Annotated[Literal["model", "mean", "cls", "cls-last4"] | None, typer.Option(
        help="Transformer pooling (default: the model's own).")] = None,
    max_seq_length: Annotated[int | None, typer.Option(min=1, help="Truncate inputs to this many tokens.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Texts per forward pass.")] = 64,
    normalize: Annotated[bool, typer.Option(help="L2-normalise the vectors.")] = False,
    role: Annotated[Literal["query", "document"] | None, typer.Option(
        help="What the texts are to a retrieval model: query (points seeking counters) or document (candidates). "
             "Needed by two-tower models (counter-bi-encoder: point / candidate tower); one-tower models ignore it "
             "or apply their own prompt for it.")] = None,
    id_column: Annotated[str | None, typer.Option(help="Column/field holding each text's id, written into .csv and "
                                         ".parquet outputs (default: the row number, 0-based).")] = None,
    out: Annotated[Path, typer.Option(
        callback=_out_check, help="Output file, format by suffix: .npy (float32, one row "
                                  "per text, input order), .csv (id, then one column per "
                                  "dimension), .parquet (columns id, vector); or a new "
                                  "folder (no suffix) for sharded Parquet (id, key, "
                                  "vector), which `--engine ray` always writes and "
                                  "`argsim embed-import` merges into the cache.")] = Path("vectors.npy"),
) -> None:
    """Embed texts and save a float32 matrix; a second run over the same texts reads the disk cache."""
    config = run_config(ctx)
    if config.engine == "ray" or _is_folder(out):
        return _embed_shards(input, out, config, column=column, id_column=id_column, model=model,
                             pooling=pooling, max_seq_length=max_seq_length, batch_size=batch_size,
                             normalize=normalize, role=role)

    from argsim.api.encode import embed_file

    r = embed_file(input, out, column=column, id_column=id_column, model=model, pooling=pooling,
                   max_seq_length=max_seq_length, batch_size=batch_size, normalize=normalize, config=config,
                   role=role)
    runtime = r.precision if config.backend == "torch" else (
        f"{config.backend} {config.quantize if config.quantize != 'none' else r.precision}")
    console.print(f"{r.texts:,} texts -> {r.out} {r.shape} with {r.model} on {r.device} ({runtime}) in "
                  f"{r.seconds:.2f}s")


def _embed_shards(input: Path, out: Path, config, **options) -> None:
    """`embed` into a shard folder, on the configured engine (local, or a Ray Data actor pool)."""
    import time

    from argsim.engine import engine_from_config
    from argsim.engine.embedding import EmbedSpec, check_input, embed_local, embed_ray
    from argsim.errors import ArgsimError

    if not _is_folder(out):
        raise ArgsimError(f"{out}: --engine ray writes sharded Parquet; give --out a new folder (no suffix)")
    spec = EmbedSpec(**options, precision=config.precision)
    check_input(input, spec)
    start = time.perf_counter()
    if config.engine == "ray":
        manifest = embed_ray(input, out, spec, engine_from_config(config), quiet=config.quiet)
    else:
        manifest = embed_local(input, out, spec, config=config)
    console.print(f"{manifest['rows']:,} texts -> {out}/ (dim {manifest['dim']}, {manifest['engine']} engine) "
                  f"in {time.perf_counter() - start:.2f}s")


def models() -> None:
    """List the named offline models and whether each is installed."""
    from rich.table import Table

    from argsim.backend import MODELS

    table = Table(title="argsim models")
    for col in ("name", "installed", "description"):
        table.add_column(col)
    for info in MODELS.values():
        table.add_row(info.name, "[green]yes[/]" if info.installed else "[dim]no[/]", info.description)
    console.print(table)
