"""Counter-argument retrieval on both protocols, side by side: the open collection (argsim's ArguAna replica, test:
1,406 points as queries over 8,676 points and counters, nDCG@10 by MTEB's scoring) and counterargs-18's own pools
(test, setting epa: each point against every argument of the test split, accuracy@1).

    python bench/bench_counter_retriever.py [--models counter-fusion,counter-retriever,counter-bi-encoder,minilm]
        [--limit N] [--protocols arguana,epa]

Two-tower models encode points as queries and candidates as documents (`Encoder.for_role`); `counter-bipolar`
is scored with its own ranker on the pools (retrieval head top 30 reranked by its classification head) and by its
retrieval tower on ArguAna. Rows go to bench/results/counter-retriever.json (merged: rows of other models stay).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from argsim.backend import get_encoder
from argsim.evaluation import Evaluation
from argsim.evaluation.arguana import METRICS, ArguAnaEvaluator
from argsim.results import environment, result_rows, write_results

TASK = "counter-retriever"
#: the pools' ranker of a model: a counter model's own (bipolar: retrieve then rerank), else cosine of its
#: query and document embeddings
POOL_RANKERS = {"counter-bipolar": "bipolar", "counter-bi-encoder": "bi-encoder"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="counter-fusion,counter-retriever,counter-bi-encoder,minilm",
                    help="comma list of models")
    ap.add_argument("--protocols", default="arguana,epa", help="arguana, epa or both")
    ap.add_argument("--limit", type=int, default=None, help="the first N queries / points only")
    args = ap.parse_args()
    import argsim

    command = "python " + shlex.join(["bench/bench_counter_retriever.py", *sys.argv[1:]])
    protocols = args.protocols.split(",")
    arguana = ArguAnaEvaluator.from_dataset("test", limit=args.limit) if "arguana" in protocols else None
    rows = []
    for name in args.models.split(","):
        label = Path(name).name  # a trained folder is reported by its folder name
        env = environment(seed=13, device="cpu", models={label: get_encoder(name).identity})
        if arguana is not None:
            start = time.perf_counter()
            result = arguana.evaluate(name)
            seconds = time.perf_counter() - start
            rows += result_rows(result, method="arguana-replica", model=label,
                                split="test" if args.limit is None else f"test[:{args.limit}]",
                                setting=result.details["retrieval"], metrics=METRICS, seconds=seconds,
                                extra={"queries": result.n, "documents": result.details["documents"]}, env=env,
                                command=command)
            print(f"{label} arguana: " + ", ".join(f"{m} {result[m]:.4f}" for m in METRICS) + f" [{seconds:.0f}s]",
                  flush=True)
        if "epa" in protocols:
            ranker = POOL_RANKERS.get(name, "emb-cosine")
            start = time.perf_counter()
            got = argsim.CounterRetriever(ranker, model=name).evaluate("test", "epa", limit=args.limit)
            seconds = time.perf_counter() - start
            ev = Evaluation(TASK, {"accuracy_at_1": got["accuracy_at_1"], "mrr": got["mrr"]}, "accuracy_at_1",
                            data="test", n=got["points"])
            rows += result_rows(ev, method=f"counterargs-pools ({ranker})", model=label, setting="epa",
                                split="test" if args.limit is None else f"test[:{args.limit}]", seconds=seconds,
                                extra={"points": got["points"]}, env=env, command=command)
            print(f"{label} epa ({ranker}): accuracy@1 {got['accuracy_at_1']:.4f}, mrr {got['mrr']:.4f} "
                  f"[{seconds:.0f}s]", flush=True)
    print(write_results(TASK, rows, merge=True))


if __name__ == "__main__":
    main()
