"""The one markdown table renderer (README, docs/results.md, benchmark tables)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def cell(value: object) -> str:
    """A table cell: the text with `|` escaped (it would end the cell)."""
    return str(value).replace("|", "\\|")


def table(header: Sequence[object], rows: Iterable[Sequence[object]], align: Sequence[str] | None = None) -> str:
    """A GitHub markdown table; `align` per column: "" (default), "right" or "left"."""
    marks = {"": "---", "left": ":---", "right": "---:"}
    align = list(align) if align is not None else [""] * len(header)
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
