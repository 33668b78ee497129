"""`argsim demo`: a short end-to-end run on the demo files that ship with argsim, with the default model."""

from __future__ import annotations

from typing import Annotated

import typer

from argsim.cli.groups import console, root_command, run_config, summary_table
from argsim.cli.params import model_option


@root_command("demo")
def demo(ctx: typer.Context, model: Annotated[str | None, model_option(
        help="Backend model (default: the shipped key point matcher kpm, as `rank keypoints`).")] = None) -> None:
    """Match eight example arguments to four key points (cosine of embeddings) and print the table."""
    import time

    from argsim.demo import match_examples
    from argsim.kpm.scoring import default_model

    model = model or default_model()
    start = time.perf_counter()
    matches = match_examples(model=model, config=run_config(ctx))
    console.print(summary_table(f"argsim demo: key point matching with {model} ({time.perf_counter() - start:.1f}s)",
                                ["arg", "argument", "best key point", "cosine"],
                                [[m.arg_id, m.argument, m.key_point if m.matched else
                                  f"none fits (best: {m.key_point})", f"{m.score:.3f}"] for m in matches]))
    console.print("Next: `argsim --help` (every command) and `argsim data check all` (the datasets under --data-dir).")
