"""`argsim distill`: a static-embedding (model2vec) model distilled from a transformer, for `--model DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from argsim.cli.groups import console, root_command, run_config
from argsim.cli.params import OUT_DIR


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
    from argsim.backend.device import resolve_device
    from argsim.backend.static import distill as run

    device = resolve_device(run_config(ctx).device)
    r = run(model, out, pca_dims=pca_dims or None, device=device)
    console.print(f"{model} -> {r.out}: {r.vocabulary:,} tokens x {r.dim} dimensions in {r.seconds:.0f}s "
                  f"(use --model {r.out})")
