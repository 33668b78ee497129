"""`argsim embed`: encode a file of texts with any backend model and save the vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from argsim.cli.groups import console, root_command, run_config
from argsim.cli.params import config_options, out_file
from argsim.engine.embedding import EmbedSpec


def _is_folder(out: Path) -> bool:
    """A shard folder: a path without a suffix, or an existing folder whose suffix is no vector file's."""
    from argsim.io import VECTOR_SUFFIXES

    return out.suffix == "" or (out.is_dir() and out.suffix.lower() not in VECTOR_SUFFIXES)


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
    from argsim.engine.embedding import embed_folder
    from argsim.errors import ArgsimError

    if not _is_folder(out):
        raise ArgsimError(f"{out}: --engine ray writes sharded Parquet; give --out a new folder (no suffix)")
    manifest, seconds = embed_folder(input, out, spec, config)  # on the configured engine (local, or Ray Data actors)
    console.print(f"{manifest['rows']:,} texts -> {out}/ (dim {manifest['dim']}, {manifest['engine']} engine) "
                  f"in {seconds:.2f}s")
