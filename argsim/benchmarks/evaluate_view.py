"""The leaderboard of `argsim evaluate` as text cells (the terminal table), as one self-contained HTML page, and
the files a run writes (`write_outputs`: result rows, MTEB result files, the page)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from argsim import html
from argsim.benchmarks.evaluate import TASKS, Leaderboard, Task
from argsim.config import RunConfig
from argsim.io import write_text
from argsim.published import SOURCES
from argsim.results import run_environment, write_results
from argsim.version import __version__, command_line


def _f(v: float | None) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def score_cell(board: Leaderboard, model: str, task: Task) -> str:
    """`value [low, high]` (and `(MTEB x)` where the model's own published figure exists), `n/a` when the model
    cannot do the task."""
    s = board.score(model, task.key)
    if s is None:
        return "n/a"
    return f"{_f(s.value)} [{_f(s.low)}, {_f(s.high)}]" + (f" (MTEB {_f(s.reference.value)})" if s.reference else "")


def comparison_cell(board: Leaderboard, a: str, b: str, task: Task) -> str:
    """`delta [low, high] p=...` of A - B, with `*` where significant."""
    c = next((c for c in board.comparisons if c.task == task.key and (c.a, c.b) == (a, b)), None)
    if c is None:
        return ""
    p = c.p_mcnemar if c.p_mcnemar is not None else c.p_bootstrap
    return (f"{c.delta:+.3f} [{c.low:+.3f}, {c.high:+.3f}] "
            f"p{'(McNemar)' if c.p_mcnemar is not None else ''}{'<0.001' if p < 0.001 else f'={p:.3f}'}"
            f"{' *' if c.significant else ''}")


def leaderboard_cells(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the terminal leaderboard: one row per model, one per comparison (`A - B`)."""
    header = ["model"] + [f"{t.title} {_metric(board, t)}".strip() for t in board.tasks]
    rows = [[m] + [score_cell(board, m, t) for t in board.tasks] for m in board.models]
    for a, b in dict.fromkeys((c.a, c.b) for c in board.comparisons):
        rows.append([f"{a} - {b}"] + [comparison_cell(board, a, b, t) for t in board.tasks])
    return header, rows


def _metric(board: Leaderboard, task: Task) -> str:
    return next((s.metric for s in board.scores if s.task == task.key), "")


def references_text(board: Leaderboard) -> list[str]:
    """One line per task with published figures: `task: label value; ...`."""
    return [f"{t.title}: " + "; ".join(f"{r.label} {r.value:.3f}" for r in refs) for t in board.tasks
            if (refs := TASKS.get(t.key, t).reference_figures())]


def leaderboard_html(board: Leaderboard, meta: str = "") -> str:
    """One self-contained HTML page: the leaderboard table, then a bar chart per task (bars with their 95 %
    interval as whiskers, the papers' and MTEB's figures as labelled dashed lines)."""
    header, rows = leaderboard_cells(board)
    classes = ["" for _ in board.models] + ["compare" for _ in rows[len(board.models):]]
    cells = [[escape(r[0])] + [_cell_html(c) for c in r[1:]] for r in rows]
    body = [f"<h2>Leaderboard</h2><p>Zero-shot, official test splits (dev where the test labels are not public); "
            f"each figure with its 95 % bootstrap interval over the task's units ({board.n_boot:,} draws, the same "
            "draws for every model). Rows <em>A - B</em>: paired differences; <span class=\"sig\">*</span> marks "
            "a significant one (paired interval excludes 0; McNemar's p &lt; 0.05 where outcomes are 0/1).</p>",
            html.table([escape(h) for h in header], cells, classes), "<h2>Tasks</h2>"]
    for t in board.tasks:
        task = TASKS.get(t.key, t)
        bars = [(s.model, s.value, s.low, s.high) for m in board.models if (s := board.score(m, t.key))]
        refs = [(r.label, r.value, "mteb" if r.label.startswith("MTEB") else "paper") for r in task.reference_figures()]
        source = SOURCES.get(task.published_task or task.key, "") if refs else ""
        caption = f"{task.title}: {task.about} ({_metric(board, t)}).{f' Reference lines: {source}.' if source else ''}"
        body.append(f"<figure><h3>{escape(task.title)}</h3>{html.bar_chart(t.key, bars, refs)}"
                    f"<figcaption>{escape(caption)}</figcaption></figure>")
    return html.page("argsim evaluate", "".join(body), meta)


def _cell_html(text: str) -> str:
    if " [" not in text:
        return escape(text)
    head, _, rest = text.partition(" [")
    ci, _, tail = rest.partition("]")
    sig = tail.endswith(" *")
    tail = tail.removesuffix(" *").strip()
    tail_html = f" <span class=\"ref\">{escape(tail)}</span>" if tail else ""
    cls = ' class="sig"' if sig else ""
    return f"<span{cls}>{escape(head)}{'*' if sig else ''}</span> <span class=\"ci\">[{escape(ci)}]</span>{tail_html}"


def results_html(results: Sequence[Mapping[str, Any]]) -> str:
    """`argsim report --html`: the leaderboard of every `evaluate` results file's rows, then every other results
    file as a table of its rows."""
    from argsim.report import table_cells

    body = []
    for res in results:
        rows = res.get("rows", [])
        if any(r.get("method") == "evaluate" for r in rows):
            page = leaderboard_html(Leaderboard.from_rows(rows))
            body.append(f"<h2>{escape(res['task'])}</h2>" + page.split("</h1>", 1)[1].rsplit("</body>", 1)[0])
            continue
        cols, cells = table_cells(res)
        body.append(f"<h2>{escape(res['task'])}</h2>" + html.table(cols, [[escape(c) for c in r] for r in cells]))
    return html.page("argsim results", "".join(body), "Every results file (bench/results/*.json).")


#: `argsim evaluate`'s task -> the task of `argsim.evaluation.mteb_tasks` its figures are written as
MTEB_TASKS = {"arguana": "arguana"}


def variant_label(config: RunConfig) -> str:
    """How rows name the run's numeric variant after the model: '' for torch at the default precision, else e.g.
    ' [openvino int8]' or ' [torch bf16]'.

    Example:
        >>> variant_label(RunConfig(backend="onnx", quantize="int8"))
        ' [onnx int8]'
    """
    extra = [v for v, default in ((config.quantize, "none"), (config.precision, "auto")) if v != default]
    return f" [{' '.join([config.backend, *extra])}]" if config.backend != "torch" or extra else ""


def write_outputs(board: Leaderboard, config: RunConfig, out: Path | None = None, record: bool = False,
                  mteb_out: Path | None = None, html: Path | None = None, command: str | None = None) -> list[str]:
    """Write what was asked: the rows to `out` (a results JSON) and, with `record`, merged into
    `bench/results/evaluate.json`; MTEB result files under `mteb_out`
    (`argsim.evaluation.mteb_tasks.write_mteb_result`: `<mteb_out>/<model>/no_revision_available/<task>.json`); the
    HTML page `html`. Returns one line per output written."""
    lines = []
    if out is not None or record:
        rows = board.rows(env=run_environment(config), command=command, variant=variant_label(config))
        if out is not None:
            lines.append(f"{write_results('evaluate', rows, path=out, command=command)}: {len(rows)} rows")
        if record:
            lines.append(f"{write_results('evaluate', rows, merge=True, command=command)}: {len(rows)} rows merged")
    if mteb_out is not None:  # MTEB's result JSON of every score whose task has an MTEB task with the same main score
        from argsim.evaluation.mteb_tasks import write_mteb_result

        written = [write_mteb_result(s.model, MTEB_TASKS[s.task], "test" if s.data in (None, "test") else s.data,
                                     s.mteb_scores or s.metrics, mteb_out, evaluation_time=s.seconds)
                   for s in board.scores if s.task in MTEB_TASKS]
        lines.append(f"{mteb_out}: {len(written)} MTEB result file(s)"
                     + ("" if written else f" (MTEB tasks with argsim's figures: {', '.join(MTEB_TASKS)})"))
    if html is not None:
        meta = f"{command or command_line()} (argsim {__version__}, {time.strftime('%Y-%m-%d %H:%M %Z')})"
        lines.append(f"{write_text(html, leaderboard_html(board, meta=meta))}: written")
    return lines
