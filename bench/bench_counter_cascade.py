"""The exact XGBoost cascade against scoring every pair, on a seeded sample of counterargs-18 test points.

    python bench/bench_counter_cascade.py --model models/counter/ltr/epa/xgboost-full -s epa --sample 20 --brute 4

One process (the local engine). Prints, per mode, the wall and CPU seconds per point (after the run's fixed set-up: word
vectors, term matrices, the model's bit tables), the share of conclusion / premise WMDs solved, and that the top-1
candidates equal those of every-pair scoring on the `--brute` first points of the sample.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from argsim.counter.core.run import dataset_points
from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
from argsim.counter.ltr.cascade import tree_scores
from argsim.counter.ltr.model import LTRModel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("-s", "--setting", default="epa")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--brute", type=int, default=4, help="points of the sample also scored pair by pair")
    ap.add_argument("--modes", default="top1,top10,rank", help="comma list of top1, top10, rank")
    args = ap.parse_args()
    ltr, meta = LTRModel.load(args.model)
    config = FeatureConfig.from_dict({"stopwords": "none"} | (meta.get("features_config") or {}))
    points, pools, gold = dataset_points("test", args.setting, sample=args.sample, seed=args.seed)
    space = FeatureSpace(points, pools, config)
    t0 = time.perf_counter()
    _ = space.engine, [space.dense_metric(m) for m in ("manhattan", "cosine", "bm25", "bert")[: 1 + 3 * (
        ltr.n_features > 8)]]
    setup = time.perf_counter() - t0
    out: dict = {"model": args.model, "setting": args.setting, "points": len(points), "setup_s": round(setup, 2)}
    modes = {"top1": dict(mode="top", top_k=1), "top10": dict(mode="top", top_k=10),
             "rank": dict(mode="rank", gold=gold)}
    names = args.modes.split(",")
    for name in names:
        t, c = time.perf_counter(), time.process_time()
        scores, stats = tree_scores(space, ltr, description=None, **modes[name])
        sec, cpu = time.perf_counter() - t, time.process_time() - c
        out[name] = {"s_per_point": round(sec / len(points), 3), "cpu_s_per_point": round(cpu / len(points), 3),
                     "solved_cl": round(stats.solved_cl / stats.pairs, 4),
                     "solved_pr": round(stats.solved_pr / stats.pairs, 4), "pairs": stats.pairs}
        out[name + "_scores"] = scores
    sub = points[: args.brute]
    if sub:
        brute_space = FeatureSpace(sub, {p.id: pools[p.id] for p in sub}, config)
        _ = brute_space.engine, [brute_space.dense_metric(m) for m in ("manhattan", "cosine", "bm25", "bert")[
            : 1 + 3 * (ltr.n_features > 8)]]
        t, c = time.perf_counter(), time.process_time()
        feats = brute_space.features(ltr.n_features)
        brute = {pid: ltr.decision_function(x) for pid, x in feats.items()}
        out["every_pair"] = {"s_per_point": round((time.perf_counter() - t) / len(sub), 3),
                             "cpu_s_per_point": round((time.process_time() - c) / len(sub), 3), "points": len(sub)}
        for name in names:
            sc = out[name + "_scores"]
            assert all(sc[p.id].max() == brute[p.id].max() and np.all(sc[p.id] >= brute[p.id]) for p in sub), name
        out["same_top1"] = True
    for name in names:
        del out[name + "_scores"]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
