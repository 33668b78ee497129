"""Exact ranking by a learned score over the features without solving every WMD: bound, prune, solve the rest.

The search is generic over a `PoolScore`, anything that can bound its score from above over a box of the two WMD
similarities and score a candidate exactly: `LinearScore` below (Simple-SD; logistic regression, affine after its
scaler) and the tree ensembles' `argsim.counter.ltr.cascade.TreeScore` (XGBoost). Candidates are visited by
decreasing upper bound, tightened step by step (full premise RWMD, exact conclusion WMD, exact premise WMD) and
dropped, keeping their bound as score, once below the threshold. The bounds and the modes `rank` (the true
counter's rank exact), `top` (the top k exact) and `none` (every pair solved): docs/counterargs-ltr.md, Speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from argsim.counter.lexical.features import METRICS, FeatureSpace, aggregate, inverse_distance
from argsim.counter.lexical.wmd import PoolView, WMDEngine, pool_blocks

MODES = ("rank", "top", "none")


@dataclass
class PruneStats:
    pairs: int = 0
    solved_cl: int = 0
    solved_pr: int = 0

    @property
    def solved_share(self) -> float:
        return self.solved_pr / self.pairs if self.pairs else 0.0


class PoolScore:
    """A learned score of a point's candidates whose WMD block (x5..x8) is known only through bounds on the two
    WMD similarities s_cl, s_pr (`LinearScore`, `TreeScore`). `data` is the score's per-point part (the exact non-WMD
    features or their contribution), `rows` positions in the pool."""

    #: whether lower bounds of the similarities narrow the upper bound (else they are taken as 0)
    needs_lower: bool = True
    #: candidates tightened and solved together (1: the threshold moves after every solved candidate)
    batch: int = 1

    def upper(self, data: Any, rows: np.ndarray, s_cl_lo: np.ndarray, s_cl_hi: np.ndarray, s_pr_lo: np.ndarray,
              s_pr_hi: np.ndarray) -> np.ndarray:
        """An upper bound of the score of each row over the box s_cl in [s_cl_lo, s_cl_hi], s_pr in [...]."""
        raise NotImplementedError

    def exact(self, data: Any, rows: np.ndarray, d_cl: np.ndarray, d_pr: np.ndarray) -> np.ndarray:
        """The score of each row given its exact WMDs to the conclusion and the premise, as the search uses it
        for its threshold: the score itself or a lower bound of what `final` reports."""
        raise NotImplementedError

    def final(self, data: Any, rows: np.ndarray, d_cl: np.ndarray, d_pr: np.ndarray) -> np.ndarray:
        """The reported scores of the solved rows (once per point, at the end); by default `exact`."""
        return self.exact(data, rows, d_cl, d_pr)


@dataclass
class LinearScore(PoolScore):
    """base + w . agg(s_cl, s_pr): `data` = base, the exact non-WMD part of w . x."""

    w: np.ndarray  # the 4 WMD weights

    def __post_init__(self) -> None:
        self.needs_lower = bool(np.any(self.w < 0))  # similarity lower bounds matter only for negative weights

    def upper(self, data: np.ndarray, rows: np.ndarray, s_cl_lo: np.ndarray, s_cl_hi: np.ndarray,
              s_pr_lo: np.ndarray, s_pr_hi: np.ndarray) -> np.ndarray:
        w, lo, hi = self.w, aggregate(s_cl_lo, s_pr_lo), aggregate(s_cl_hi, s_pr_hi)
        return data[rows] + np.where(w >= 0, w * hi, w * lo).sum(axis=-1)  # monotone: each weight's best corner

    def exact(self, data: np.ndarray, rows: np.ndarray, d_cl: np.ndarray, d_pr: np.ndarray) -> np.ndarray:
        return data[rows] + (aggregate(inverse_distance(d_cl), inverse_distance(d_pr)) * self.w).sum(axis=-1)


@dataclass
class _Task:
    cl: int
    pr: int
    cands: np.ndarray  # engine text ids of the pool
    data: Any  # the score's per-point part (PoolScore)
    gold: int  # position of the true counter in the pool, -1 if unknown


def _rank_block(shared: tuple[WMDEngine, PoolScore, str, int], block: tuple[np.ndarray, list[_Task]]
                ) -> list[tuple[np.ndarray, int, int]]:
    """Rank the points of one (pool union, points) block: the pool view is built once for all of them."""
    union, tasks = block
    view = shared[0].pool_view(union) if len(union) else None
    return [_rank_point(shared, task, view) for task in tasks]


class _Search:
    """One point's search: its pool's similarity bounds; `score`, each candidate's bound `ub` until it is solved."""

    def __init__(self, engine: WMDEngine, model: PoolScore, task: _Task, view: PoolView | None) -> None:
        self.engine, self.model, self.task, n = engine, model, task, len(task.cands)
        self.s_cl_lo, self.s_pr_lo = (inverse_distance(engine.upper_bounds(text, task.cands)) if model.needs_lower
                                      else np.zeros(n) for text in (task.cl, task.pr))
        self.s_cl_hi = inverse_distance(engine.full_relaxed_bounds(task.cl, task.cands, view=view))
        s_pr_hi = inverse_distance(engine.relaxed_bounds(task.pr, task.cands, view=view))  # long premise: cheap half
        self.ub = model.upper(task.data, np.arange(n), self.s_cl_lo, self.s_cl_hi, self.s_pr_lo, s_pr_hi)
        self.score = self.ub.copy()
        self.solved_cl = self.solved_pr = 0
        self.done: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows, d_cl, d_pr) of solved candidates

    def _prune(self, js: np.ndarray, bound: np.ndarray, thr: float) -> np.ndarray:
        """Candidates js whose `bound` falls below thr keep it as their score; the mask of the others."""
        keep = bound >= thr
        self.score[js[~keep]] = bound[~keep]
        return keep

    def solve(self, js: np.ndarray, thr: float) -> np.ndarray:
        """Tighten candidates js step by step; return those that ended exact, the others are pruned below thr."""
        engine, model, task = self.engine, self.model, self.task
        cs = [int(task.cands[j]) for j in js]
        pr_hi, pr_lo, mats = np.empty(len(js)), np.empty(len(js)), []
        for k, (j, c) in enumerate(zip(js, cs, strict=True)):
            lb_pr, m_pr = engine.pair_bound(task.pr, c)  # full RWMD from the cost matrix the solver needs anyway
            pr_hi[k] = float(inverse_distance(lb_pr))
            lo_k = float(inverse_distance(engine.pair_upper(task.pr, c, m_pr))) if model.needs_lower else 0.0
            pr_lo[k] = max(lo_k, float(self.s_pr_lo[j]))
            mats.append(m_pr)
        keep = self._prune(js, model.upper(task.data, js, self.s_cl_lo[js], self.s_cl_hi[js], pr_lo, pr_hi), thr)
        js, pr_lo, pr_hi = js[keep], pr_lo[keep], pr_hi[keep]
        cs, mats = ([x for x, k in zip(xs, keep, strict=True) if k] for xs in (cs, mats))
        d_cl = np.array([engine.distance(task.cl, c) for c in cs], dtype=np.float64)
        self.solved_cl += len(js)
        s_cl = inverse_distance(d_cl)
        keep = self._prune(js, model.upper(task.data, js, s_cl, s_cl, pr_lo, pr_hi), thr)
        js, d_cl = js[keep], d_cl[keep]
        d_pr = np.array([engine.solve(task.pr, c, m) if m is not None else float("inf")
                         for c, m, k in zip(cs, mats, keep, strict=True) if k], dtype=np.float64)
        self.solved_pr += len(js)
        if len(js):
            self.score[js] = model.exact(task.data, js, d_cl, d_pr)
            self.done.append((js, d_cl, d_pr))
        return js


def _rank_point(shared: tuple[WMDEngine, PoolScore, str, int], task: _Task, view: PoolView | None = None
                ) -> tuple[np.ndarray, int, int]:
    engine, model, mode, top_k = shared
    if mode == "none":
        d_cl, d_pr = (np.array([engine.distance(text, int(c)) for c in task.cands]) for text in (task.cl, task.pr))
        return model.final(task.data, np.arange(len(task.cands)), d_cl, d_pr), len(task.cands), len(task.cands)
    search = _Search(engine, model, task, view)
    exact: list[float] = []
    thr = -np.inf
    if task.gold >= 0:
        search.solve(np.array([task.gold]), -np.inf)
        thr = search.score[task.gold]
        exact.append(thr)
    order = np.argsort(-search.ub, kind="stable")
    order = order[order != task.gold]
    step = max(1, int(model.batch))
    for start in range(0, len(order), step):
        js = order[start:start + step]
        js = js[search.ub[js] >= thr]  # decreasing: what is cut here ends the search
        if not len(js):
            break
        solved = search.solve(js, thr)
        exact.extend(search.score[solved].tolist())
        if len(solved) and (mode == "top" or task.gold < 0):
            k = 1 if task.gold >= 0 else top_k
            if len(exact) >= k:
                thr = max(thr, float(np.sort(exact)[-k]))
    if search.done:
        js, d_cl, d_pr = (np.concatenate(part) for part in zip(*search.done, strict=True))
        search.score[js] = model.final(task.data, js, d_cl, d_pr)
    return search.score, search.solved_cl, search.solved_pr


def pruned_scores(space: FeatureSpace, model: PoolScore, data: dict[str, Any],
                  gold: dict[str, str | None] | None = None, mode: str = "rank", top_k: int = 10,
                  description: str | None = "ranking") -> tuple[dict[str, np.ndarray], PruneStats]:
    """The exact search for any `PoolScore` (`data[point id]`: its per-point part): scores of every pool, solving
    only the WMDs that matter, in (pool union, points) blocks (`pool_blocks`) on the space's engine."""
    if mode not in MODES:
        raise ValueError(f"unknown pruning mode '{mode}': choose one of {', '.join(MODES)}")
    cl_ids, pr_ids, u_ids = space.text_ids
    tasks = []
    for i, p in enumerate(space.points):
        g = (gold or {}).get(p.id)
        pos = [c.id for c in space.pools[p.id]].index(g) if g is not None and mode != "none" else -1
        tasks.append(_Task(cl=int(cl_ids[i]), pr=int(pr_ids[i]), cands=u_ids[space.index.columns[p.id]],
                           data=data[p.id], gold=pos))
    items = []
    for union, members in pool_blocks([t.cands for t in tasks]):  # every worker gets several blocks
        size = len(members) if space.executor.workers <= 1 else max(1, -(-len(tasks) // (4 * space.executor.workers)))
        items += [(union, [tasks[k] for k in members[a:a + size]]) for a in range(0, len(members), size)]
    done = space.executor.map(_rank_block, items, (space.engine, model, mode, top_k), description=description, block=1)
    results = [r for part in done for r in part]  # blocks keep the points' order
    stats = PruneStats(pairs=sum(len(space.pools[p.id]) for p in space.points),
                       solved_cl=sum(r[1] for r in results), solved_pr=sum(r[2] for r in results))
    return {p.id: r[0] for p, r in zip(space.points, results, strict=True)}, stats


def linear_scores(space: FeatureSpace, weights: np.ndarray, gold: dict[str, str | None] | None = None,
                  mode: str = "rank", top_k: int = 10,
                  description: str | None = "ranking") -> tuple[dict[str, np.ndarray], PruneStats]:
    """Scores w . x (x = the first len(weights) features) for every pool, solving only the WMDs that matter."""
    if mode not in MODES:
        raise ValueError(f"unknown pruning mode '{mode}': choose one of {', '.join(MODES)}")
    w = np.pad(np.asarray(weights, dtype=np.float64), (0, -len(weights) % 4))  # whole metrics of 4 aggregations
    n_metrics = len(w) // 4
    base = {p.id: np.zeros(len(space.pools[p.id])) for p in space.points}
    for k, metric in enumerate(METRICS[:n_metrics]):
        wk = w[4 * k: 4 * k + 4]
        if metric != "wmd" and np.any(wk):
            for pid, (cl, pr) in space.pooled_metric(metric).items():
                base[pid] += (aggregate(cl, pr) * wk).sum(axis=-1)
    w_wmd = w[4:8] if n_metrics >= 2 else np.zeros(4)
    if not np.any(w_wmd):
        return base, PruneStats(pairs=sum(len(v) for v in base.values()))
    return pruned_scores(space, LinearScore(w_wmd), base, gold=gold, mode=mode, top_k=top_k, description=description)
