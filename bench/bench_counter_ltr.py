"""Benchmark of the counter-argument feature pipeline.

1. gensim `wmdistance` per pair vs argsim's WMD engine on the same sampled (point part, candidate) pairs of the
   epa test pools: pairs/s, ratio, max |difference|, projection to the full epa test split.
2. Cost curve: seconds per point of Simple-SD (exact search with pruning, and every pair solved) vs pool size
   for sdoc, sda, epc, epa, next to gensim's projected cost; PNG in docs/img/counter-cost-curve.png.
3. (without --quick) the goal: Simple-SD over the full epa test split (1,401 points, full pools), timed.

Writes rows into bench/results/counterargs-ltr.json (merge). Each row's `env["conditions"]` records the CPU, its
threads and the load average when the timing started.

    .venv/bin/python bench/bench_counter_ltr.py [--quick] [--pairs 300] [--points 16] [--engine local|ray]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
from argsim.counter.lexical.prune import linear_scores
from argsim.counter.lexical.simplesd import DEFAULT_READING, READINGS
from argsim.counter.lexical.stopwords import content_tokens
from argsim.counter.lexical.wordvecs import word_vectors
from argsim.data.counterargs import build_pools, load_counterargs
from argsim.evaluation import Evaluation
from argsim.measure import peak_memory_mb
from argsim.metrics.ranking import accuracy_at_1
from argsim.results import ResultRow, environment, result_rows, write_results

SETTINGS = ("sdoc", "sda", "epc", "epa")


def load() -> float:
    return round(os.getloadavg()[0], 1)


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (not Ray workers: with --engine ray
    the wall time is the figure to compare)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measured(method: str, setting: str, metric: str, value: float, prov: dict, **kw) -> list[ResultRow]:
    """The row of one measured figure (test split, GloVe 50-d), with the run's env and command (`prov`)."""
    return result_rows(Evaluation.single("counterargs-ltr-bench", metric, value, data="test"), method=method,
                       model="glove50", setting=setting, env=prov["env"], command=prov["command"], **kw)


def gensim_vs_argsim(corpus, n_pairs: int, engine, seed: int, prov: dict) -> tuple[list[ResultRow], dict]:
    kv = word_vectors("glove50")
    points = corpus.points("test")
    pools = build_pools(corpus, "test", "epa")
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n_pairs):
        p = points[rng.integers(len(points))]
        c = pools[p.id][rng.integers(len(pools[p.id]))]
        pairs += [(p.conclusion, c.text), (p.premise, c.text)]
    t0, c0 = time.perf_counter(), cpu_seconds()
    stop = FeatureConfig().stopwords  # the features' tokens: the same words for both
    ref = np.array([kv.wmdistance(content_tokens(a, stop), content_tokens(b, stop)) for a, b in pairs])
    t_gensim, cpu_gensim = time.perf_counter() - t0, cpu_seconds() - c0
    t0, c0 = time.perf_counter(), cpu_seconds()
    texts: dict[str, int] = {}
    idx = np.array([(texts.setdefault(a, len(texts)), texts.setdefault(b, len(texts))) for a, b in pairs])
    from argsim.counter.lexical.wmd import WMDEngine

    wmd = WMDEngine(kv, list(texts), stopwords=stop)
    ours = wmd.distances(idx)
    t_ours1, cpu_ours = time.perf_counter() - t0, cpu_seconds() - c0
    ours2 = wmd.distances(idx, engine=engine)  # the engine's path (from 2,000 pairs on) gives the same values
    finite = np.isfinite(ref)
    assert np.array_equal(finite, np.isfinite(ours)) and np.array_equal(ours, ours2)
    diff = float(np.max(np.abs(ref[finite] - ours[finite]))) if finite.any() else 0.0
    n_epa = sum(len(v) for v in pools.values())
    g_rate = len(pairs) / t_gensim
    o_rate = len(pairs) / t_ours1
    info = {"sampled_point_pairs": n_pairs, "wmd_calls": len(pairs), "max_abs_diff": diff, "load": load(),
            "epa_test_pairs": n_epa, "gensim_cpu_s": round(cpu_gensim, 2), "argsim_cpu_s": round(cpu_ours, 2),
            "gensim_wmd_per_cpu_second": round(len(pairs) / max(cpu_gensim, 1e-9), 1),
            "argsim_wmd_per_cpu_second": round(len(pairs) / max(cpu_ours, 1e-9), 1)}
    rows = (
        measured("bench:gensim-wmdistance", "epa", "wmd_per_second", round(g_rate, 1), prov,
                 seconds=round(t_gensim, 2), extra=info)
        + measured("bench:argsim-wmd-exact-1proc", "epa", "wmd_per_second", round(o_rate, 1), prov,
                   seconds=round(t_ours1, 2), extra=info)
        + measured("bench:argsim-vs-gensim", "epa", "speedup_same_pairs_1proc", round(o_rate / g_rate, 2), prov,
                   extra=info)
        + measured("bench:gensim-wmdistance", "epa", "projected_full_epa_hours_1core",
                   round(2 * n_epa / g_rate / 3600, 2), prov, extra=info)
        + measured("bench:gensim-wmdistance", "epa", "projected_full_epa_cpu_hours",
                   round(2 * n_epa / info["gensim_wmd_per_cpu_second"] / 3600, 2), prov, extra=info))
    return rows, info


def cost_curve(corpus, n_points: int, engine, seed: int, gensim_rate: float,
               prov: dict) -> tuple[list[ResultRow], dict]:
    w = READINGS[DEFAULT_READING]
    rng = np.random.default_rng(seed)
    allp = corpus.points("test")
    chosen = [allp[i] for i in sorted(rng.choice(len(allp), size=n_points, replace=False))]
    curve, rows = {}, []
    for setting in SETTINGS:
        pools_all = build_pools(corpus, "test", setting)
        pools = {p.id: pools_all[p.id] for p in chosen}
        gold = {p.id: corpus.true_counter(p).id for p in chosen}
        mean_pool = float(np.mean([len(v) for v in pools.values()]))
        res = {}
        for mode in ("top", "none"):
            pts = chosen if (mode == "top" or mean_pool < 100) else chosen[: max(2, n_points // 8)]
            sub = {p.id: pools[p.id] for p in pts}
            t0, c0 = time.perf_counter(), cpu_seconds()
            space = FeatureSpace(pts, sub, FeatureConfig(), executor=engine)
            scores, stats = linear_scores(space, w, mode=mode, top_k=1, description=None)
            secs, cpu = time.perf_counter() - t0, cpu_seconds() - c0
            acc = accuracy_at_1({p.id: ([c.id for c in sub[p.id]], scores[p.id]) for p in pts},
                                {p.id: gold[p.id] for p in pts})
            res[mode] = {"points": len(pts), "seconds_per_point": secs / len(pts), "solved_share": stats.solved_share,
                         "accuracy@1": acc, "cpu_seconds_per_point": cpu / len(pts)}
            rows += measured(f"bench:simple-sd-{'pruned' if mode == 'top' else 'all-pairs'}", setting,
                             "seconds_per_point", round(secs / len(pts), 4), prov, seconds=round(secs, 2),
                             extra={"points": len(pts), "mean_pool": mean_pool, "load": load(),
                                    "solved_premise_share": round(stats.solved_share, 4), **engine.describe(),
                                    "cpu_seconds_per_point": round(cpu / len(pts), 4),
                                    "projected_full_test_minutes_on_2_idle_cores":
                                        round(cpu / len(pts) * 1401 / 2 / 60, 1)})
        res["gensim_seconds_per_point"] = 2 * mean_pool / gensim_rate  # CPU seconds, 2 WMDs per pair
        res["mean_pool"] = mean_pool
        curve[setting] = res
        rows += measured("bench:gensim-projected", setting, "seconds_per_point",
                         round(res["gensim_seconds_per_point"], 4), prov, extra={"mean_pool": mean_pool})
    plot_curve(curve, REPO / "docs" / "img" / "counter-cost-curve.png")
    return rows, curve


def plot_curve(curve: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [curve[s]["mean_pool"] for s in SETTINGS]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, [curve[s]["gensim_seconds_per_point"] for s in SETTINGS], "o--", label="gensim wmdistance per pair "
            "(projected, 1 core)")
    ax.plot(xs, [curve[s]["none"]["cpu_seconds_per_point"] for s in SETTINGS], "s-", label="argsim, every pair exact")
    ax.plot(xs, [curve[s]["top"]["cpu_seconds_per_point"] for s in SETTINGS], "^-",
            label="argsim, exact top-1 (pruned)")
    for s, x in zip(SETTINGS, xs, strict=True):
        ax.annotate(s, (x, curve[s]["top"]["cpu_seconds_per_point"]), textcoords="offset points", xytext=(4, -12))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("candidates per point (mean pool size)")
    ax.set_ylabel("CPU seconds per point (Simple-SD)")
    ax.set_title("Simple-SD feature cost vs pool size (test split)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def full_epa(corpus, engine, prov: dict) -> list[ResultRow]:
    points = corpus.points("test")
    pools = build_pools(corpus, "test", "epa")
    gold = {p.id: corpus.true_counter(p).id for p in points}
    t0, c0 = time.perf_counter(), cpu_seconds()
    space = FeatureSpace(points, pools, FeatureConfig(), executor=engine)
    scores, stats = linear_scores(space, READINGS[DEFAULT_READING], mode="top", top_k=1, description="epa")
    secs, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    acc = accuracy_at_1({p.id: ([c.id for c in pools[p.id]], scores[p.id]) for p in points}, gold)
    extra = {"points": len(points), "pairs": stats.pairs, "solved_premise_share": round(stats.solved_share, 4),
             **engine.describe(), "load": load(), "reading": DEFAULT_READING, "cpu_seconds": round(cpu, 1)}
    return measured("bench:simple-sd-full-epa", "epa", "seconds", round(secs, 1), prov, seconds=round(secs, 1),
                    peak_mb=peak_memory_mb(), extra=extra | {"accuracy@1": acc})


def markdown_table(path: Path = REPO / "bench" / "results" / "counterargs-ltr.json") -> str:
    """accuracy@1 per method x setting (test split) beside the paper's Table 2, from the results JSON."""
    import json

    rows = json.loads(path.read_text())["rows"]
    acc = {}
    for r in rows:
        if r["metric"] == "accuracy@1" and r["split"] == "test" and not r["method"].startswith("bench:"):
            acc[(r["method"], r["setting"])] = r
    from argsim.markdown import table

    methods = sorted({m for m, _ in acc}, key=lambda m: (m not in ("simple-sd",), m))
    lines = []
    for m in methods:
        cells = [m]
        for s in SETTINGS:
            r = acc.get((m, s))
            if r is None:
                cells.append("")
                continue
            pts = (r.get("extra") or {}).get("points")
            note = f" (n={pts})" if pts and pts != 1401 else ""
            paper = f" [paper {r['paper']:.3f}]" if r.get("paper") is not None else ""
            secs = f", {r['seconds']:.0f} s" if r.get("seconds") else ""
            cells.append(f"{r['value']:.3f}{paper}{note}{secs}")
        lines.append(cells)
    return table(["method", *SETTINGS], lines, align=["", *["right"] * len(SETTINGS)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small samples, no full-epa run")
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--points", type=int, default=16)
    ap.add_argument("--engine", choices=("local", "ray"), default="local", help="where the WMD work runs")
    ap.add_argument("--ray-address", default=None, help="Ray cluster (default $RAY_ADDRESS, else a local one)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--table", action="store_true", help="print the markdown results table and exit")
    ap.add_argument("--full-only", action="store_true", help="only the full-epa Simple-SD run")
    args = ap.parse_args()
    if args.table:
        print(markdown_table())
        return
    if args.quick:
        args.pairs, args.points, args.skip_full = 60, 6, True
    corpus = load_counterargs()
    from argsim.engine import get_engine

    engine = get_engine(args.engine, address=args.ray_address)
    cmd = " ".join([".venv/bin/python bench/bench_counter_ltr.py", *sys.argv[1:]])
    prov = {"env": environment(seed=args.seed, device="cpu"), "command": cmd}
    if args.full_only:
        full = full_epa(corpus, engine, prov)
        print(f"full epa Simple-SD: {full[0].value} s, acc@1 {full[0].extra['accuracy@1']:.3f}, "
              f"CPU {full[0].extra['cpu_seconds']} s")
        write_results("counterargs-ltr", full, command=cmd, merge=True)
        return
    rows, info = gensim_vs_argsim(corpus, args.pairs, engine, args.seed, prov)
    print(f"WMD same pairs: gensim {rows[0].value}/s, argsim {rows[1].value}/s (x{rows[2].value}), "
          f"max |diff| {info['max_abs_diff']:.2e}, gensim full epa projected {rows[3].value} h (load {info['load']})")
    curve_rows, curve = cost_curve(corpus, args.points, engine, args.seed, info["gensim_wmd_per_cpu_second"],
                                   prov)
    for s, r in curve.items():
        print(f"{s:5s} pool {r['mean_pool']:7.1f}: pruned {r['top']['seconds_per_point']:.3f} s/pt "
              f"({r['top']['cpu_seconds_per_point']:.3f} CPU s/pt) "
              f"(solved {r['top']['solved_share']:.3%}), all pairs {r['none']['seconds_per_point']:.3f} s/pt, "
              f"gensim {r['gensim_seconds_per_point']:.3f} s/pt")
    rows += curve_rows
    if not args.skip_full:
        full = full_epa(corpus, engine, prov)
        print(f"full epa Simple-SD: {full[0].value} s, acc@1 {full[0].extra['accuracy@1']:.3f}")
        rows += full
    write_results("counterargs-ltr", rows, command=cmd, merge=True)
    print(f"peak memory {peak_memory_mb()} MiB")


if __name__ == "__main__":
    main()
