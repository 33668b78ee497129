"""Scoring summaries of minutes items with ROUGE-1 (the `eval rouge` command's library side).

Input: the JSON `argsim summarize minutes` writes (`{"method", "model", "items", "summaries": [{summary, gold,
budget, ...}]}` or a bare list of such items), or a CSV/TSV/JSONL with columns summary, gold [, budget].
Items without a gold summary are skipped (they cannot be scored); a summary over its budget scores 0 unless
`no_limit` (the official PoliInfo-2 rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argsim.config import RunConfig
from argsim.errors import InputError
from argsim.io import read_json_as, read_records
from argsim.metrics.record import Evaluation
from argsim.metrics.rouge import rouge1_corpus
from argsim.schemas import Summaries, SummaryRecord, parse_count


@dataclass
class SummaryFile:
    """Scorable items of a summaries file and what it says about how they were made."""

    items: list[dict[str, Any]]
    method: str = "summaries"
    model: str | None = None
    data: str = ""


def read_summaries(path: Path) -> SummaryFile:
    """The items of a summaries file that have a gold summary; InputError naming the file otherwise."""
    if path.suffix == ".json":
        data = read_json_as(Summaries, path, what="a list of items with 'summary' and 'gold' (or "
                                                  "{'summaries': [...]})")
        rows, meta = (data["summaries"], data) if isinstance(data, dict) else (data, {})
        for n, r in enumerate(rows, start=1):
            if r.get("budget") not in (None, ""):
                r["budget"] = parse_count(r["budget"], path, n, "budget")
    else:
        rows, meta = read_records(path, SummaryRecord), {}  # budgets read as counts
    rows = [r for r in rows if str(r.get("gold") or "").strip()]
    if not rows:
        raise InputError(path, "no item has a gold summary")
    return SummaryFile(rows, method=meta.get("method", "summaries"), model=meta.get("model"),
                       data=str(meta.get("items", path.stem)))


def rouge_nlp(units: Sequence[str], config: RunConfig | None = None) -> Any:
    """The backend's GiNZA pipeline when a unit needs Sudachi tokens, else None."""
    if all(u == "char" for u in units):
        return None
    from argsim.backend import get_encoder

    return get_encoder("ginza", config=config).nlp


def score_summaries(summaries: SummaryFile, units: Sequence[str] = ("content", "char"), no_limit: bool = False,
                    nlp: Any = None) -> list[Evaluation]:
    """ROUGE-1 of the summaries against their gold summaries, one evaluation per unit.

    `nlp` defaults to `rouge_nlp(units)`; each evaluation's `details` holds the unit and the over-limit count."""
    items = summaries.items
    limits = None if no_limit else [int(r["budget"]) if r.get("budget") not in (None, "") else None for r in items]
    nlp = nlp if nlp is not None else rouge_nlp(units)
    cands, refs = [str(r["summary"]) for r in items], [str(r["gold"]) for r in items]
    return [rouge1_corpus(cands, refs, limits, u, nlp=nlp).evaluation(summaries.data) for u in units]
