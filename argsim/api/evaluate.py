"""`argsim.evaluate`: every task a model can do, zero-shot, as a DataFrame (the library function of
`argsim evaluate`, `argsim.benchmarks.evaluate.run_evaluate`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argsim.config import RunConfig


def evaluate(model_or_models: Any, tasks: Sequence[str] | None = None, limit: int | None = None,
             compare: Sequence[str] | None = None, n_boot: int = 1000, config: RunConfig | None = None,
             html: str | Path | None = None) -> Any:
    """Score one or several models on argsim's tasks, zero-shot, on the official test splits.

    Args:
        model_or_models: a registered or shipped name, a model folder, a Hugging Face id in the local cache,
            `"bm25"` (ArguAna only), a `SentenceTransformer` or `CrossEncoder` object; a list of them; or a
            {label: model} mapping naming them in the table.
        tasks: task names (kpa, counter, arguana, thematic, minutes, clustering, sick); None: all (a task
            whose data is missing is left out with a warning).
        limit: the first `limit` units of each task (a quick look).
        compare: two model labels A, B: paired tests of A - B per task (in `df.attrs["comparisons"]`).
        n_boot: bootstrap draws of each 95 % interval.
        config: run options (device, cache folder, data folder, backend, seed).
        html: also write the self-contained HTML report here.

    Returns:
        A DataFrame, one row per (model, task): `metric` (the task's primary one), `value`, `ci_low`,
        `ci_high` (95 % bootstrap interval), `n` (units), `seconds`, `data` (split), `reference` (the model's
        own MTEB figure, where published).

    Example:
        >>> import argsim
        >>> df = argsim.evaluate("minilm", tasks=["thematic"], limit=20, n_boot=200)
        >>> df[["model", "task", "metric", "n"]].values.tolist()
        [['minilm', 'thematic', 'accuracy', 20]]
        >>> bool(df["ci_low"][0] <= df["value"][0] <= df["ci_high"][0])
        True
    """
    from argsim.benchmarks.evaluate import run_evaluate
    from argsim.benchmarks.evaluate_view import write_outputs

    config = config or RunConfig()
    board = run_evaluate(model_or_models, tasks=tasks, limit=limit, config=config, compare=compare, n_boot=n_boot)
    if html is not None:
        write_outputs(board, config, html=Path(html))
    return board.frame()
