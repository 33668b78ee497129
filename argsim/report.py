"""Render `bench/results/*.json` as markdown tables (for the README) and rich tables (for the terminal)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from argsim.io import read_json, write_text
from argsim.results import RESULTS_DIR

START, END = "<!-- results:start -->", "<!-- results:end -->"
COLUMNS = ("method", "model", "split", "setting", "metric", "value", "paper", "seconds", "peak_mb")


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def load_all(folder: Path = RESULTS_DIR) -> list[dict[str, Any]]:
    """Every results file, sorted by task name."""
    return [read_json(p) for p in sorted(folder.glob("*.json"))]


def markdown_table(result: dict[str, Any]) -> str:
    """One task's rows as a markdown table, with the command that regenerates it."""
    rows = result.get("rows", [])
    cols = [c for c in COLUMNS if any(r.get(c) not in (None, "") for r in rows)]
    lines = [f"#### {result['task']}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |")
    commands = result.get("commands") or [result.get("command")]
    lines += ["", "Regenerate: " + "; ".join(f"`{c}`" for c in commands if c), ""]
    return "\n".join(lines)


def render_markdown(folder: Path = RESULTS_DIR) -> str:
    return "\n".join(markdown_table(r) for r in load_all(folder))


def update_readme(readme: Path, folder: Path = RESULTS_DIR) -> bool:
    """Replace the README's results block (between the markers); returns whether it changed."""
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ValueError(f"{readme}: no {START} ... {END} block")
    new = re.sub(re.escape(START) + r".*?" + re.escape(END),
                 lambda _: f"{START}\n{render_markdown(folder)}\n{END}", text, flags=re.S)
    if new != text:
        write_text(readme, new)
    return new != text
