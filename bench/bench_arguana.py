"""ArguAna (BEIR / MTEB open-collection counter-argument retrieval) on argsim's replica, beside MTEB's figures.

    python bench/bench_arguana.py                         # bm25, minilm, counter-bi-encoder on all 1,406 queries
    python bench/bench_arguana.py --models minilm --limit 100

Each model is scored by `argsim.evaluation.ArguAnaEvaluator` (MTEB's retrieval scoring, identical ids ignored) on
the replica's test split; rows go to bench/results/arguana.json (merged: rows of other models are kept), each with
MTEB's published nDCG@10 of the same model as `paper` where the leaderboard has one (BM25: MTEB's bm25s).
"""

from __future__ import annotations

import argparse
import time

from argsim.backend import get_encoder
from argsim.evaluation.arguana import METRICS, ArguAnaEvaluator
from argsim.published import published
from argsim.results import environment, result_rows, write_results

#: argsim model name -> the model's name on the MTEB leaderboard
MTEB_NAMES = {"minilm": "all-MiniLM-L6-v2", "bm25": "bm25s", "mpnet": "all-mpnet-base-v2"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="bm25,minilm,counter-bi-encoder", help="comma list of model names")
    ap.add_argument("--limit", type=int, default=None, help="the first N queries only (the corpus stays whole)")
    ap.add_argument("--quick", action="store_true", help="the first 100 queries (make bench --quick)")
    args = ap.parse_args()
    limit = 100 if args.quick and args.limit is None else args.limit
    ev = ArguAnaEvaluator.from_dataset("test", limit=limit)
    rows = []
    for name in args.models.split(","):
        start = time.perf_counter()
        result = ev.evaluate(name)
        seconds = time.perf_counter() - start
        identity = "" if name == "bm25" else get_encoder(name).identity
        mteb = published("arguana", f"mteb/{MTEB_NAMES.get(name, name)}")
        env = environment(seed=None, device="cpu", models={name: identity} if identity else None)
        rows += result_rows(result, method="arguana-replica", model=name, split="test" if limit is None else
                            f"test[:{limit}]", setting=result.details["retrieval"], metrics=METRICS,
                            paper={"ndcg_at_10": mteb} if mteb is not None else None, seconds=seconds,
                            extra={"queries": result.n, "documents": result.details["documents"]}, env=env)
        print(f"{name}: " + ", ".join(f"{m} {result[m]:.4f}" for m in METRICS)
              + (f" (MTEB {mteb:.4f})" if mteb is not None else "")
              + f"  [{seconds:.0f}s, {result.details['retrieval']}]", flush=True)
    print(write_results("arguana", rows, merge=True))


if __name__ == "__main__":
    main()
