"""`argsim embed`: encode a file of texts with any backend model and save the vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from argsim.cli.groups import console, run_config
from argsim.cli.params import out_file


def register(app: typer.Typer) -> None:
    app.command("embed")(embed)
    app.command("models")(models)


def embed(
    ctx: typer.Context,
    input: Path = typer.Argument(..., help="CSV/TSV (header row), JSONL/JSON (objects), or plain text "
                                           "(one text a line)."),
    column: str = typer.Option("text", help="Column/field holding the text (CSV/JSONL)."),
    model: str = typer.Option("minilm", help="Registry name (see `argsim models`) or a local model folder."),
    pooling: Literal["model", "mean", "cls", "cls-last4"] | None = typer.Option(
        None, help="Transformer pooling (default: the model's own)."),
    max_seq_length: int | None = typer.Option(None, min=1, help="Truncate inputs to this many tokens."),
    batch_size: int = typer.Option(64, min=1, help="Texts per forward pass."),
    normalize: bool = typer.Option(False, help="L2-normalise the vectors."),
    id_column: str | None = typer.Option(None, help="Column/field holding each text's id, written into .csv and "
                                         ".parquet outputs (default: the row number, 0-based)."),
    out: Path = typer.Option(Path("vectors.npy"), callback=out_file(".npy", ".csv", ".parquet"),
                             help="Output file, format by suffix: .npy (float32, one row per text, input order), "
                                  ".csv (id, then one column per dimension), .parquet (columns id, vector)."),
) -> None:
    """Embed texts and save a float32 matrix; a second run over the same texts reads the disk cache."""
    import time

    from argsim.backend import get_encoder
    from argsim.errors import InputError
    from argsim.io import read_records, read_texts, write_vectors

    texts = read_texts(input, column=column)
    ids = None
    if id_column is not None:
        if input.suffix.lower() not in (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json"):
            raise InputError(input, "--id-column needs a CSV/TSV/JSON/JSONL input (plain text has no columns)")
        ids = [str(r[id_column]) for r in read_records(input, required=[column, id_column])]
    encoder = get_encoder(model, pooling=pooling, max_seq_length=max_seq_length, batch_size=batch_size,
                          config=run_config(ctx))
    start = time.perf_counter()
    vectors = encoder.encode(texts, normalize=normalize)
    seconds = time.perf_counter() - start
    write_vectors(out, vectors, ids)
    console.print(f"{len(texts):,} texts -> {out} {tuple(vectors.shape)} with {encoder.name} on "
                  f"{encoder.device} in {seconds:.2f}s")


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
