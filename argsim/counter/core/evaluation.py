"""Scoring counter-argument rankings: ranking records (JSONL) with accuracy@1 / MRR, and accuracy@1/K (section 6.3 of
the bipolar-encoder paper: docs/counterargs-neural.md; ties go to the first stage's order).

A ranking record (one JSON line per point)::

    {"point": id, "method": ..., "setting": ..., "split": ..., "pool_size": n,
     "gold": id | null, "gold_score": s, "gold_better": k, "gold_tied": t,
     "top": [{"id": candidate id, "score": s}, ...]}            # the best `top_k`, best first

`gold_better`/`gold_tied` count the candidates scoring above / equal to the gold counter, so accuracy@1 and
MRR are exact for every pool size even though only the top k are stored. `exact_rank` is false when the
ranker pruned (scores below its top k are upper bounds): accuracy@1 is still exact, MRR is then not reported.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.data.counterargs import Argument
from argsim.errors import ArgsimError, InputError
from argsim.metrics.ranking import GoldRank, accuracy_from_ranks, gold_rank, mrr_from_ranks
from argsim.metrics.record import Evaluation


def ranking_records(points: list[Argument], pools: dict[str, list[Argument]], scores: dict[str, np.ndarray],
                    gold: dict[str, str | None], method: str, setting: str, split: str,
                    top_k: int = 10, exact_rank: bool = True) -> list[dict]:
    """One record per point (see the module docstring, `exact_rank` included)."""
    records = []
    for p in points:
        ids, s, g = [c.id for c in pools[p.id]], np.asarray(scores[p.id], dtype=np.float64), gold.get(p.id)
        if len(s) != len(ids):
            raise ValueError(f"ranker returned {len(s)} scores for the {len(ids)} candidates of {p.id}")
        order = np.argsort(-np.where(np.isnan(s), -np.inf, s), kind="stable")[:top_k]
        rec = {"point": p.id, "method": method, "setting": setting, "split": split, "pool_size": len(ids),
               "gold": g, "gold_score": None, "gold_better": None, "gold_tied": None,
               "top": [{"id": ids[j], "score": float(s[j])} for j in order], "exact_rank": exact_rank}
        if g is not None and (r := gold_rank((ids, s), g)).pool:
            rec.update(gold_score=float(s[ids.index(g)]), gold_better=r.better, gold_tied=r.tied)
        records.append(rec)
    return records


@dataclass(frozen=True)
class RankingSummary:
    method: str
    setting: str
    split: str
    points: int
    accuracy_at_1: float
    mrr: float
    random_accuracy: float
    mean_pool: float

    def evaluation(self) -> Evaluation:
        """The contract view: accuracy@1 (primary) and MRR (absent when the ranking was pruned: not exact)."""
        metrics = {"accuracy@1": self.accuracy_at_1} | ({"mrr": self.mrr} if self.mrr == self.mrr else {})
        return Evaluation("counter-ranking", metrics, "accuracy@1", data=self.split, n=self.points,
                          details={"random_accuracy": self.random_accuracy, "mean_pool": self.mean_pool})


def _count(value: object) -> int | None:
    """`value` as a count if it is a whole non-negative number (JSON 3 or 3.0), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not (math.isfinite(value) and value.is_integer())):
        return None
    return int(value) if value >= 0 else None


def check_ranking_records(records: Sequence[dict], path: str | Path | None = None) -> None:
    """Refuse (InputError naming file, row, column) ranking records whose fields have the wrong type or range:
    `pool_size` a whole number >= 1, `gold_better` / `gold_tied` whole numbers >= 0 with better + tied < pool
    (the gold is one of the pool), `method` / `setting` / `split` / `point` text, and no point ranked twice by
    one method in one setting and split. Such records would print accuracies outside [0, 1], or count twice.

    Args:
        records: the records, in file order (row = index + 1).
        path: the file (for messages).

    Example:
        >>> check_ranking_records([{"point": "p1", "method": "bm25", "setting": "sdoc", "pool_size": 3, "gold": "c",
        ...                         "gold_better": 0, "gold_tied": 0}])
    """
    from argsim.schemas import RankingRecord, validate

    seen: dict[tuple, int] = {}
    for row, r in enumerate(records, start=1):
        validate(RankingRecord, r, path, row=row)  # the types (text, numbers) first: a list is no key
        key = (r.get("method"), r.get("setting"), r.get("split"), r.get("point"))
        if key in seen:  # it would count twice in accuracy@1 and MRR
            where = f"{path}, row {row}" if path is not None else f"ranking record {row}"
            raise ArgsimError(f"{where}: point {key[3]!r} of {key[0]!r} ({key[1]}, {key[2]}) is ranked twice "
                              f"(first at {'row' if path is not None else 'record'} {seen[key]})")
        seen[key] = row
        pool = _count(r.get("pool_size"))
        if pool is None or pool < 1:
            raise InputError(path, f"pool_size must be a whole number >= 1, not {r.get('pool_size')!r}", row=row,
                             column="pool_size")
        if r.get("gold") is None or r.get("gold_better") is None:
            continue
        better, tied = _count(r.get("gold_better")), _count(r.get("gold_tied", 0))
        for col, value in (("gold_better", better), ("gold_tied", tied)):
            if value is None:
                raise InputError(path, f"{col} must be a whole number >= 0, not {r.get(col)!r}", row=row, column=col)
        if better + tied >= pool:
            raise InputError(path, f"gold_better + gold_tied = {better + tied} must be below pool_size {pool} (the "
                                   "gold counter is in the pool)", row=row, column="gold_better")


def read_rankings(paths: Sequence[str | Path]) -> list[dict]:
    """The ranking records of JSONL files (`argsim eval counterargs`), each file checked by `check_ranking_records`;
    a file where no point has a gold counter is refused (nothing to score)."""
    from argsim.io import read_records
    from argsim.schemas import RankingRecord

    records = []
    for path in paths:
        found = read_records(path, RankingRecord)
        check_ranking_records(found, path)
        if not any(r.get("gold") is not None for r in found):
            raise InputError(path, "no point has a gold counter (every 'gold' is null): nothing to score")
        records += found
    return records


def summarize(records: Iterable[dict], ties: str = "expected") -> list[RankingSummary]:
    """accuracy@1 and MRR per (method, setting, split) over the records that have a gold counter (checked by
    `check_ranking_records` first)."""
    records = list(records)
    check_ranking_records(records)
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in records:
        if r.get("gold") is not None:
            groups[(r.get("method", "?"), r.get("setting", "?"), r.get("split", "?"))].append(r)
    out = []
    for (method, setting, split), recs in groups.items():
        ranks = [GoldRank(better=int(r["gold_better"]), tied=int(r.get("gold_tied") or 0), pool=int(r["pool_size"]))
                 if r.get("gold_better") is not None else GoldRank(1 << 30, 0, 0) for r in recs]
        pools = [int(r["pool_size"]) for r in recs]
        exact = all(r.get("exact_rank", True) for r in recs)
        out.append(RankingSummary(method, setting, split, len(recs), accuracy_from_ranks(ranks, ties),
                                  mrr_from_ranks(ranks, ties) if exact else float("nan"),
                                  float(np.mean([1 / n for n in pools])), float(np.mean(pools))))
    return out


def rerank_order(second: np.ndarray) -> np.ndarray:
    """Positions of a first-stage top list reordered by second-stage scores, best first; ties keep the first
    stage's order (a stable sort)."""
    return np.argsort(-np.asarray(second, dtype=np.float64), kind="stable")


def reranked_best(top: np.ndarray, second: np.ndarray | None, k: int) -> int:
    """The candidate chosen at depth K: the first of `top` (first-stage order) when there is no second stage or
    K = 1, else the one of `top[:K]` with the highest second-stage score (`second` aligned with `top`)."""
    if second is None or k <= 1 or len(top) <= 1:
        return top[0]
    return top[rerank_order(second[:min(k, len(top))])[0]]


def at1_over_k_hits(ranked: Iterable[tuple[np.ndarray, np.ndarray | None]], gold: Sequence,
                    ks: Sequence[int]) -> dict[int, np.ndarray]:
    """Per point and K, whether `reranked_best` is the gold candidate: `ranked` yields per point (the first stage's
    top candidate ids, best first; their second-stage scores, or None), `gold` the true counter ids in the same
    order. A point with an empty top list is a miss."""
    ks = tuple(ks)
    rows = [[bool(len(top)) and reranked_best(top, second, k) == g for k in ks]
            for (top, second), g in zip(ranked, gold, strict=True)]
    return {k: np.asarray([row[i] for row in rows], dtype=bool) for i, k in enumerate(ks)}


@dataclass
class RowScore:
    """@1/K of one row: per-point hits for every K (K = 1 is the first stage alone) and the points' ids."""

    ids: list[str]
    hits: dict[int, np.ndarray]

    @property
    def acc(self) -> dict[int, float]:
        return {k: float(h.mean()) if len(h) else 0.0 for k, h in self.hits.items()}

    def evaluation(self, data: str | None = None) -> Evaluation:
        """The contract view: accuracy@1 (the first stage alone, K = 1) and accuracy@1/K for every other K;
        the primary metric is the deepest rerank's @1/K."""
        metrics = {("accuracy@1" if k == 1 else f"accuracy@1/{k}"): v for k, v in sorted(self.acc.items())}
        return Evaluation("counter-rerank", metrics, list(metrics)[-1], data=data, n=len(self.ids))

    def aligned(self, k: int, ids: list[str]) -> np.ndarray:
        """Hits at K for the given point ids (a subset of this row's points)."""
        pos = {pid: i for i, pid in enumerate(self.ids)}
        return self.hits[k][[pos[pid] for pid in ids]]
