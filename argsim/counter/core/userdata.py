"""A user's own arguments (JSONL/CSV/JSON) as `Argument`s and pools for `argsim rank counterargs --input`.

Fields: `id` and `text`; optional `conclusion` (see `user_argument`), `kind` (`point`/`counter`: points are the
queries, every other record, or with `candidates='counters'` every counter, a candidate; without `kind` every
record is a query) and `counter` (the id of the point's true counter, enables accuracy@1).
"""

from __future__ import annotations

from pathlib import Path

from argsim.data.counterargs import Argument, split_point_text
from argsim.errors import InputError
from argsim.io import read_numbered_records
from argsim.schemas import UserArgumentRecord


def user_argument(aid: str, text: str, kind: str, number: int, conclusion: str = "", **meta: str) -> Argument:
    """A user's text as an `Argument` (split "user"): with a `conclusion`, `text` is its premise; else a point's
    first line is its conclusion when a blank line follows it (as in counterargs-18). `meta`: theme, debate, stance.

    Example:
        >>> a = user_argument("p1", "They stop bullying.", "point", 0, conclusion="Uniforms work.")
        >>> a.conclusion, a.premise
        ('Uniforms work.', 'They stop bullying.')
    """
    text = str(text).strip()
    if conclusion:
        conclusion, premise, text = conclusion.strip(), text, f"{conclusion.strip()}\n\n{text}"
    elif kind == "point" and "\n\n" in text:
        conclusion, premise = split_point_text(text)
    else:
        conclusion, premise = "", text
    return Argument(id=aid, split="user", kind=kind, number=number, conclusion=conclusion, premise=premise, text=text,
                    **{"theme": "", "debate": "", "stance": "", **meta})


def load_user_arguments(path: str | Path, candidates: str = "all"
                        ) -> tuple[list[Argument], dict[str, list[Argument]], dict[str, str | None]]:
    """(query points, pools, gold counter ids) from a user's argument file; `candidates="all"`: every other record,
    `"counters"`: only records of kind `counter`."""
    if candidates not in ("all", "counters"):
        raise ValueError("candidates must be 'all' or 'counters'")
    numbered = read_numbered_records(path, UserArgumentRecord)
    args: list[Argument] = []
    gold: dict[str, str | None] = {}  # every id read so far: its true counter's id or None
    has_kind = any(r.get("kind") for _, r in numbered)
    for row, r in numbered:
        rid = str(r["id"])
        if rid in gold:
            raise InputError(path, f"duplicate id '{rid}'", row=row, column="id")
        kind = str(r.get("kind") or ("point" if not has_kind else "counter"))
        if kind not in ("point", "counter"):
            raise InputError(path, f"kind must be 'point' or 'counter', not '{kind}'", row=row, column="kind")
        args.append(user_argument(rid, r["text"], kind, row, str(r.get("conclusion") or ""),
                                  **{k: str(r.get(k) or "") for k in ("theme", "debate", "stance")}))
        gold[rid] = str(r["counter"]) if r.get("counter") not in (None, "") else None
    for a in args:  # a.number: its row
        if gold[a.id] is not None and gold[a.id] not in gold:
            raise InputError(path, f"counter '{gold[a.id]}' of '{a.id}' is not an id in the file", row=a.number,
                             column="counter")
        if gold[a.id] == a.id:
            raise InputError(path, f"'{a.id}' names itself as its counter (a point is never its own candidate)",
                             row=a.number, column="counter")
    points = [a for a in args if a.kind == "point"]
    if not points:
        raise InputError(path, "no points to rank counters for (no record has kind 'point')")
    pools = {p.id: [c for c in args if c.id != p.id and (candidates == "all" or c.kind == "counter")] for p in points}
    if empty := [pid for pid, cands in pools.items() if not cands]:
        raise InputError(path, f"point '{empty[0]}' has no candidates")
    # a true counter outside its point's pool could only be scored as a miss: refused, not scored
    if outside := [p for p in points if gold[p.id] is not None and all(c.id != gold[p.id] for c in pools[p.id])]:
        p = outside[0]
        raise InputError(path, f"{len(outside)} point(s) have a true counter that cannot be among their candidates "
                               f"(e.g. '{p.id}': its counter '{gold[p.id]}' is of kind 'point', and with candidates "
                               "'counters' only counters are candidates)", row=p.number, column="counter")
    return points, pools, {p.id: gold[p.id] for p in points}
