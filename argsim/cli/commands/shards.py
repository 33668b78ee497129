"""`argsim embed-import`: merge a folder of embedding shards (from `embed --out DIR`) into the embedding cache."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from argsim.cli.groups import console, root_command, run_config


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
    from argsim.backend.cache import check_cache_folder
    from argsim.config import default_cache_dir
    from argsim.engine.embedding import import_shards, read_manifest

    config = run_config(ctx)
    read_manifest(folder)
    cache_dir = check_cache_folder(config.cache_dir or default_cache_dir())
    rows, manifest = import_shards(folder, cache_dir, config=config, source=source)
    console.print(f"{rows:,} vectors of {manifest['model']} ({manifest['identity']}) -> cache {cache_dir}")
