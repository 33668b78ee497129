"""Render `bench/results/*.json` as markdown tables (for the README) and rich tables (for the terminal)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from argsim import markdown
from argsim.io import read_json, write_text
from argsim.paths import results_dir

START, END = "<!-- results:start -->", "<!-- results:end -->"
COLUMNS = ("method", "model", "split", "setting", "metric", "value", "paper", "seconds", "peak_mb")


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def load_all(folder: Path | None = None) -> list[dict[str, Any]]:
    """Every results file, sorted by task name."""
    folder = results_dir() if folder is None else folder
    return [read_json(p) for p in sorted(folder.glob("*.json"))]


def markdown_table(result: dict[str, Any]) -> str:
    """One task's rows as a markdown table, with the command that regenerates it."""
    rows = result.get("rows", [])
    cols = [c for c in COLUMNS if any(r.get(c) not in (None, "") for r in rows)]
    lines = [f"#### {result['task']}", "", markdown.table(cols, [[_fmt(r.get(c)) for c in cols] for r in rows])]
    commands = result.get("commands") or [result.get("command")]
    lines += ["", "Regenerate: " + "; ".join(f"`{c}`" for c in commands if c), ""]
    return "\n".join(lines)


#: the headline view of each task for the README: which metrics (and splits), and what becomes a column
HEADLINES: dict[str, dict[str, Any]] = {
    "embed": {"metrics": ["sentences_per_s", "throughput_ratio_vs_raw", "cached_speedup"], "columns": ("metric",)},
    "kpm": {"metrics": ["strict_mAP", "relaxed_mAP"], "columns": ("metric",)},
    "counterargs-ltr": {"metrics": ["accuracy@1"], "splits": ["test"], "columns": ("setting",)},
    "counterargs-neural": {"metrics": ["accuracy@1/10", "accuracy@1/30", "accuracy@1/50"], "splits": ["test"],
                           "columns": ("setting", "metric")},
    "thematic": {"metrics": ["accuracy", "AMI", "ARI", "pearson", "spearman"], "splits": ["test"],
                 "columns": ("setting", "metric"), "rows": ("model",)},
    "minutes": {"metrics": ["accuracy", "mean_diff", "rouge1-recall"],
                "splits": ["test-full", "test-sample500", "ntcir14-740", "ntcir14-60"],
                "columns": ("split", "setting", "metric")},
}
KEY_FIELDS = ("method", "model", "split", "setting", "metric")


def headline_table(result: dict[str, Any]) -> str:
    """A task's headline rows pivoted: one line per method/model, one column per setting/metric.

    Cells read `value (paper)` where a published figure exists.
    """
    spec = HEADLINES.get(result["task"])
    if spec is None:
        return markdown_table(result)
    rows = [r for r in result.get("rows", []) if r.get("metric") in spec["metrics"]
            and ("splits" not in spec or r.get("split") in spec["splits"])]
    col_fields = spec["columns"]
    row_fields = list(spec.get("rows", ())) or [f for f in KEY_FIELDS if f not in col_fields
                                                and len({str(r.get(f)) for r in rows}) > 1] or ["method"]
    columns: dict[tuple, None] = {}
    cells: dict[tuple, dict[tuple, str]] = {}
    for r in rows:
        ck = tuple(str(r.get(f)) for f in col_fields)
        rk = tuple(str(r.get(f) if r.get(f) is not None else "") for f in row_fields)
        columns.setdefault(ck, None)
        text = _fmt(r.get("value"))
        if r.get("paper") is not None:
            text += f" ({_fmt(r['paper'])})"
        cells.setdefault(rk, {})[ck] = text
    header = list(row_fields) + [" ".join(c for c in ck if c != "None") for ck in columns]
    lines = [f"#### {result['task']}", "",
             markdown.table(header, [list(rk) + [row.get(ck, "") for ck in columns] for rk, row in cells.items()])]
    commands = [c for c in (result.get("commands") or [result.get("command")]) if c]
    shown = "; ".join(f"`{c}`" for c in commands[:3])
    if len(commands) > 3:
        shown += f"; and {len(commands) - 3} more (docs/results.md)"
    lines += ["", f"Published figures in parentheses. Regenerate: {shown}", ""]
    return "\n".join(lines)


def render_markdown(folder: Path | None = None, headline: bool = True) -> str:
    render = headline_table if headline else markdown_table
    return "\n".join(render(r) for r in load_all(folder))


def published_table() -> str:
    """The published figures every `paper` cell comes from (`argsim.published`), one line per figure."""
    from argsim.published import PUBLISHED, SOURCES

    lines = ["## Published figures", "", "From `argsim/published.py`, the one table results, benchmarks and this "
             "report read (fractions).", ""]
    for task, figures in PUBLISHED.items():
        lines += [f"#### {task}", "", f"Source: {SOURCES.get(task, '')}", "",
                  markdown.table(["figure", "value"], [[name, _fmt(value)] for name, value in figures.items()]), ""]
    return "\n".join(lines)


def write_full_results(path: Path, folder: Path | None = None) -> Path:
    """Every row of every results file, as markdown (generated; the README shows the headline view), then the
    published figures."""
    head = ("# All results\n\nGenerated by `argsim report --readme README.md --full docs/results.md` from "
            "`bench/results/*.json`; do not edit by hand.\n\n")
    return write_text(path, head + render_markdown(folder, headline=False) + "\n" + published_table())


def update_readme(readme: Path, folder: Path | None = None) -> bool:
    """Replace the README's results block (between the markers); returns whether it changed."""
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ValueError(f"{readme}: no {START} ... {END} block")
    new = re.sub(re.escape(START) + r".*?" + re.escape(END),
                 lambda _: f"{START}\n{render_markdown(folder, headline=True)}\n{END}", text, flags=re.S)
    if new != text:
        write_text(readme, new)
    return new != text
