"""Run a ranker over pools, turn its scores into ranking records (JSONL), and score rankings.

A ranking record (one JSON line per point)::

    {"point": id, "method": ..., "setting": ..., "split": ..., "pool_size": n,
     "gold": id | null, "gold_score": s, "gold_better": k, "gold_tied": t,
     "top": [{"id": candidate id, "score": s}, ...]}            # the best `top_k`, best first

`gold_better`/`gold_tied` count the candidates scoring above / equal to the gold counter, so accuracy@1 and
MRR are exact for every pool size even though only the top k are stored. `exact_rank` is false when the
ranker pruned (scores below its top k are upper bounds): accuracy@1 is still exact, MRR is then not reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from argsim.data.counterargs import Argument
from argsim.metrics.ranking import GoldRank, accuracy_from_ranks, gold_rank, mrr_from_ranks

# Table 2 of the bipolar-encoder paper (accuracy@1, test split), as fractions; Simple-SD is Wachsmuth et al.'s.
PAPER_TABLE2: dict[str, dict[str, float]] = {
    "simple-sd": {"sdoc": 0.745, "sda": 0.441, "epc": 0.500, "epa": 0.324},
    "simple-sd-reimpl": {"sdoc": 0.724, "sda": 0.418, "epc": 0.447, "epa": 0.310},
    "logreg-part": {"sdoc": 0.737, "sda": 0.423, "epc": 0.454, "epa": 0.300},
    "logreg-full": {"sdoc": 0.736, "sda": 0.430, "epc": 0.449, "epa": 0.310},
    "xgboost-part": {"sdoc": 0.776, "sda": 0.434, "epc": 0.442, "epa": 0.313},
    "xgboost-full": {"sdoc": 0.797, "sda": 0.475, "epc": 0.473, "epa": 0.337},
}


def paper_figure(method: str, setting: str) -> float | None:
    """Table 2's figure for a method label (a `[variant]` suffix is ignored: simple-sd[max-min] -> simple-sd)."""
    return PAPER_TABLE2.get(method.split("[", 1)[0], {}).get(setting)


def ranking_records(points: list[Argument], pools: dict[str, list[Argument]], scores: dict[str, np.ndarray],
                    gold: dict[str, str | None], method: str, setting: str, split: str,
                    top_k: int = 10) -> list[dict]:
    """One record per point (see the module docstring)."""
    records = []
    for p in points:
        cands = pools[p.id]
        s = np.asarray(scores[p.id], dtype=np.float64)
        if len(s) != len(cands):
            raise ValueError(f"ranker returned {len(s)} scores for the {len(cands)} candidates of {p.id}")
        order = np.argsort(-np.where(np.isnan(s), -np.inf, s), kind="stable")[:top_k]
        rec = {"point": p.id, "method": method, "setting": setting, "split": split, "pool_size": len(cands),
               "gold": gold.get(p.id), "gold_score": None, "gold_better": None, "gold_tied": None,
               "top": [{"id": cands[j].id, "score": float(s[j])} for j in order]}
        g = gold.get(p.id)
        if g is not None:
            r = gold_rank(([c.id for c in cands], s), g)
            if r.pool:
                rec.update(gold_score=float(s[[c.id for c in cands].index(g)]), gold_better=r.better,
                           gold_tied=r.tied)
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


def summarize(records: Iterable[dict], ties: str = "expected") -> list[RankingSummary]:
    """accuracy@1 and MRR per (method, setting, split) over the records that have a gold counter."""
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in records:
        if r.get("gold") is not None:
            groups[(r.get("method", "?"), r.get("setting", "?"), r.get("split", "?"))].append(r)
    out = []
    for (method, setting, split), recs in groups.items():
        ranks = [GoldRank(better=r["gold_better"], tied=r["gold_tied"], pool=r["pool_size"])
                 if r.get("gold_better") is not None else GoldRank(1 << 30, 0, 0) for r in recs]
        pools = [r["pool_size"] for r in recs]
        exact = all(r.get("exact_rank", True) for r in recs)
        out.append(RankingSummary(method, setting, split, len(recs), accuracy_from_ranks(ranks, ties),
                                  mrr_from_ranks(ranks, ties) if exact else float("nan"),
                                  float(np.mean([1 / n for n in pools])), float(np.mean(pools))))
    return out
