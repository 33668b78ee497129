"""Exact ranking by a linear score over the features without solving every WMD: bound, prune, solve the rest.

For a linear scorer f(x) = w . x (Simple-SD; logistic regression after its scaler, which is affine) every feature
except the WMD block (x5..x8) is cheap and computed exactly for all pairs. The WMD block is a sum of
w_k * agg_k(s_cl, s_pr) with s = 1 / (1 + WMD) in [0, 1]; min, max, product and sum are non-decreasing in each
argument, so lower bounds on the two WMDs (word-centroid distance and relaxed WMD, `argsim.counter.lexical.wmd`) give an
upper bound on f for every candidate where the WMD weights are positive; a negative weight (logistic regression)
needs the similarity's lower bound, i.e. an upper bound on the WMD: the independent transport plan's cost, bounded
for a whole pool by sqrt(2 - 2 <centroid_i, centroid_j>) and computed exactly per pair from its cost matrix.
The first bounds are computed for the whole pool at once: the full
relaxed WMD for the short conclusion (`WMDEngine.full_relaxed_bounds`), the cheaper candidate-side RWMD and the
word-centroid distance for the long premise (`relaxed_bounds`). Candidates are visited by decreasing upper
bound; each is tightened step by step (full premise RWMD from the cost matrix the solver needs anyway, exact
conclusion WMD, exact premise WMD) and dropped as soon as its bound falls below the threshold:

- `mode="rank"` (default when the true counter is known): threshold = the true counter's exact score, so every
  candidate that could score >= it is exact; accuracy@1, ties and the true counter's rank (MRR) are exact;
- `mode="top"`: threshold = the best exact score so far (k = 1; or the k-th best with `top_k`); accuracy@1
  and ties are exact (the true counter is always solved), the rank below the top is not;
- `mode="none"`: every pair is solved exactly.
Candidates that were pruned keep their upper bound as score (always below the threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

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


def wmd_upper(w: np.ndarray, s_cl_lo, s_cl_hi, s_pr_lo, s_pr_hi) -> np.ndarray:  # noqa: ANN001
    """Upper bound of sum_k w_k agg_k(s_cl, s_pr) over the box [lo, hi]^2 (aggregations are monotone)."""
    lo = aggregate(s_cl_lo, s_pr_lo)
    hi = aggregate(s_cl_hi, s_pr_hi)
    return np.where(w >= 0, w * hi, w * lo).sum(axis=-1)


def wmd_exact(w: np.ndarray, d_cl: np.ndarray, d_pr: np.ndarray) -> np.ndarray:
    return (aggregate(inverse_distance(d_cl), inverse_distance(d_pr)) * w).sum(axis=-1)


@dataclass
class _Task:
    cl: int
    pr: int
    cands: np.ndarray  # engine text ids of the pool
    base: np.ndarray  # exact non-WMD part of the score
    gold: int  # position of the true counter in the pool, -1 if unknown


def _rank_block(shared: tuple[WMDEngine, np.ndarray, str, int], block: tuple[np.ndarray, list[_Task]]
                ) -> list[tuple[np.ndarray, int, int]]:
    """Rank the points of one (pool union, points) block: the pool view is built once for all of them."""
    union, tasks = block
    view = shared[0].pool_view(union) if len(union) else None
    return [_rank_point(shared, task, view) for task in tasks]


def _rank_point(shared: tuple[WMDEngine, np.ndarray, str, int], task: _Task, view: PoolView | None = None
                ) -> tuple[np.ndarray, int, int]:
    engine, w, mode, top_k = shared
    n = len(task.cands)
    if mode == "none" or not np.any(w):
        d_cl = np.array([engine.distance(task.cl, int(c)) for c in task.cands])
        d_pr = np.array([engine.distance(task.pr, int(c)) for c in task.cands]) if np.any(w) else d_cl
        return task.base + (wmd_exact(w, d_cl, d_pr) if np.any(w) else 0.0), n, n
    negative = bool(np.any(w < 0))
    if negative:  # similarity lower bounds matter only for negative weights
        s_cl_lo = inverse_distance(engine.upper_bounds(task.cl, task.cands))
        s_pr_lo = inverse_distance(engine.upper_bounds(task.pr, task.cands))
    else:
        s_cl_lo, s_pr_lo = np.zeros(n), np.zeros(n)
    s_cl_hi = inverse_distance(engine.full_relaxed_bounds(task.cl, task.cands, view=view))
    s_pr_hi = inverse_distance(engine.relaxed_bounds(task.pr, task.cands, view=view))  # long premise: cheap half
    ub = task.base + wmd_upper(w, s_cl_lo, s_cl_hi, s_pr_lo, s_pr_hi)
    score = ub.copy()
    solved_cl = solved_pr = 0

    def solve(j: int, thr: float) -> bool:
        """Tighten candidate j; True if it ended exact (score[j] exact), False if pruned below thr."""
        nonlocal solved_cl, solved_pr
        c = int(task.cands[j])
        lb_pr, m_pr = engine.pair_bound(task.pr, c)  # full RWMD from the cost matrix the solver needs anyway
        s_pr_hi_j = float(inverse_distance(lb_pr))
        s_pr_lo_j = float(inverse_distance(engine.pair_upper(task.pr, c, m_pr))) if negative else 0.0
        s_pr_lo_j = max(s_pr_lo_j, float(s_pr_lo[j]))
        bound = task.base[j] + wmd_upper(w, s_cl_lo[j], s_cl_hi[j], s_pr_lo_j, s_pr_hi_j)
        if bound < thr:
            score[j] = bound
            return False
        d_cl = engine.distance(task.cl, c)
        solved_cl += 1
        s_cl = float(inverse_distance(d_cl))
        bound = task.base[j] + wmd_upper(w, s_cl, s_cl, s_pr_lo_j, s_pr_hi_j)
        if bound < thr:
            score[j] = bound
            return False
        d_pr = engine.solve(task.pr, c, m_pr) if m_pr is not None else float("inf")
        solved_pr += 1
        score[j] = task.base[j] + wmd_exact(w, np.array([d_cl]), np.array([d_pr]))[0]
        return True

    exact: list[float] = []
    thr = -np.inf
    if task.gold >= 0:
        solve(task.gold, -np.inf)
        exact.append(score[task.gold])
        thr = score[task.gold]
    for j in np.argsort(-ub, kind="stable"):
        if j == task.gold:
            continue
        if ub[j] < thr:
            break
        if solve(int(j), thr):
            exact.append(score[j])
            if mode == "top" or task.gold < 0:
                k = 1 if task.gold >= 0 else top_k
                if len(exact) >= k:
                    thr = max(thr, float(np.sort(exact)[-k]))
    return score, solved_cl, solved_pr


def linear_scores(space: FeatureSpace, weights: np.ndarray, gold: dict[str, str | None] | None = None,
                  mode: str = "rank", top_k: int = 10,
                  description: str | None = "ranking") -> tuple[dict[str, np.ndarray], PruneStats]:
    """Scores w . x (x = the first len(weights) features) for every pool, solving only the WMDs that matter.

    Points are grouped into (pool union, points) blocks (`pool_blocks`); each block is one unit of work on the
    space's engine (`space.executor`), split further so that every worker has several blocks.
    """
    if mode not in MODES:
        raise ValueError(f"unknown pruning mode '{mode}': choose one of {', '.join(MODES)}")
    weights = np.asarray(weights, dtype=np.float64)
    n_metrics = (len(weights) + 3) // 4
    w = np.zeros(4 * n_metrics)
    w[: len(weights)] = weights
    base = {p.id: np.zeros(len(space.pools[p.id])) for p in space.points}
    for k, metric in enumerate(METRICS[:n_metrics]):
        wk = w[4 * k: 4 * k + 4]
        if metric == "wmd" or not np.any(wk):
            continue
        for pid, (cl, pr) in space.pooled_metric(metric).items():
            base[pid] += (aggregate(cl, pr) * wk).sum(axis=-1)
    w_wmd = w[4:8] if n_metrics >= 2 else np.zeros(4)
    stats = PruneStats(pairs=sum(len(v) for v in base.values()))
    if not np.any(w_wmd):
        return base, stats
    cl_ids, pr_ids, u_ids = space.text_ids
    tasks = []
    for i, p in enumerate(space.points):
        cols = space.index.columns[p.id]
        g = (gold or {}).get(p.id)
        pos = [c.id for c in space.pools[p.id]].index(g) if g is not None and mode != "none" else -1
        tasks.append(_Task(cl=int(cl_ids[i]), pr=int(pr_ids[i]), cands=u_ids[cols], base=base[p.id], gold=pos))
    items = []
    per_worker = 4 * space.executor.workers
    for union, members in pool_blocks([t.cands for t in tasks]):
        size = len(members) if space.executor.workers <= 1 else max(1, -(-len(tasks) // per_worker))
        items += [(union, [tasks[k] for k in members[a:a + size]]) for a in range(0, len(members), size)]
    done = space.executor.map(_rank_block, items, (space.engine, w_wmd, mode, top_k), description=description,
                              block=1)
    results = [r for part in done for r in part]  # blocks keep the points' order
    out = {}
    for p, (score, s_cl, s_pr) in zip(space.points, results, strict=True):
        out[p.id] = score
        stats.solved_cl += s_cl
        stats.solved_pr += s_pr
    return out, stats
