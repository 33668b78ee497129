"""Speed of neural counter-argument retrieval: per-query latency with cached candidates (epa test,
retrieval head + exact faiss top-K + classification-head rerank) at K = 10 and 30, the Cross-encoder reranking
the same K as a ratio, embedding throughput, and a synthetic 1,000,000-candidate faiss test.

    python bench/bench_counter_neural.py [--quick] [--model models/counter_neural/bipolar-ft2]
        [--cross models/counter_neural/cross-encoder-full] [--threads 2]

Writes latency rows into bench/results/counterargs-neural.json (merged with the accuracy rows).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from argsim.config import default_data_dir
from argsim.evaluation import Evaluation
from argsim.results import ResultRow, environment, result_rows, write_results
from argsim.vectors import l2_normalize

TASK = "counterargs-neural"


def percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.median(ms)), float(np.percentile(ms, 95))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer queries, 100k synthetic candidates")
    ap.add_argument("--model", default="models/counter_neural/bipolar-ft2", help="trained Bipolar-encoder folder "
                    "(an untrained one of the same shape is timed when it is missing: same cost)")
    ap.add_argument("--cross", default="models/counter_neural/cross-encoder-full", help="cross-encoder folder")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--throughput-texts", type=int, default=200, help="texts of the test split embedded without "
                    "cache for the throughput figure (the split has ~2,600 distinct texts)")
    args = ap.parse_args()

    import faiss
    import torch

    torch.set_num_threads(args.threads)
    faiss.omp_set_num_threads(args.threads)
    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.index import build_index, search_excluding
    from argsim.counter.neural.model import CounterModel
    from argsim.counter.neural.rerank import RetrieveRerank
    from argsim.counter.neural.store import is_model_folder, load_model
    from argsim.data.counterargs import load_counterargs

    trained = is_model_folder(args.model)
    model = load_model(args.model) if trained else CounterModel(NeuralConfig(kind="bipolar"), dim=384)
    model_label = args.model if trained else "untrained bipolar (same cost)"
    corpus = load_counterargs(default_data_dir())
    cands = [a for a in corpus.split("test") if a.kind == "counter" or corpus.true_counter(a) is not None]
    points = corpus.points("test")
    n_q = 100 if args.quick else 500
    rng = np.random.default_rng(13)
    queries = [points[i] for i in rng.choice(len(points), size=min(n_q, len(points)), replace=False)]
    rows: list[ResultRow] = []
    prov = {"env": environment(seed=13, device="cpu", models={"bipolar": model_label}),
            "command": "python bench/bench_counter_neural.py" + (" --quick" if args.quick else "")}

    def measured(method: str, model: str, split: str | None, setting: str | None, metric: str, value: float,
                 extra: dict) -> None:
        rows.extend(result_rows(Evaluation.single(TASK, metric, value, data=split), method=method, model=model,
                                setting=setting, extra=extra, **prov))

    load_at_start = round(os.getloadavg()[0], 1)  # the row's env["conditions"] (argsim.results.CONDITION_KEYS)

    # ---- embedding throughput (the split's distinct texts, cache off)
    texts = sorted({a.text for a in cands})
    sample = texts[: 100 if args.quick else args.throughput_texts]
    from argsim.counter.neural.towers import frozen_encoder

    enc = frozen_encoder(model.config.base_model, model.config.pooling, model.config.max_seq_length)
    t0 = time.perf_counter()
    enc.encode(sample, use_cache=False)
    tput = len(sample) / (time.perf_counter() - t0)
    measured("embedding throughput", model.config.base_model, "test", None, "texts_per_second", round(tput, 1),
             extra={"texts": len(sample), "split_texts": len(texts),
                    "split_minutes_at_this_rate": round(len(texts) / tput / 60, 1), "load_at_start": load_at_start})
    print(f"embedding throughput: {tput:.1f} texts/s over {len(sample)} texts")

    # ---- per-query latency with cached candidates
    rr = RetrieveRerank(model, [a.text for a in cands], base=model.embed_texts([a.text for a in cands]))
    q_base = model.embed_texts([p.text for p in queries], side="point")
    by_id = {a.id: i for i, a in enumerate(cands)}
    latency = {}
    faiss.omp_set_num_threads(1)  # one query = one thread (queries run in parallel across the cores)
    for k in (10, 30):
        ms = []
        for i, p in enumerate(queries):
            t = time.perf_counter()
            rr.rank(q_base[i][None, :], k, exclude=[{by_id[p.id]}])
            ms.append((time.perf_counter() - t) * 1000)
        med, p95 = percentiles(ms)
        latency[k] = med
        print(f"bipolar retrieve+rerank K={k}: median {med:.2f} ms, p95 {p95:.2f} ms ({len(cands)} candidates)")
        for metric, value in (("latency_ms_median", med), ("latency_ms_p95", p95)):
            measured("Bipolar-encoder retrieve+rerank (cached candidates)", model_label, "test", "epa",
                     f"{metric}@K={k}", round(value, 3),
                     extra={"candidates": len(cands), "queries": len(queries), "load_at_start": load_at_start})
    faiss.omp_set_num_threads(args.threads)
    # query encoding (not cached: a new point)
    ms = []
    for p in queries[:20]:
        t = time.perf_counter()
        enc.encode([p.text], use_cache=False)
        ms.append((time.perf_counter() - t) * 1000)
    med, p95 = percentiles(ms)
    print(f"encoding one new query: median {med:.1f} ms, p95 {p95:.1f} ms")
    measured("query encoding (one new point)", model.config.base_model, "test", "epa", "latency_ms_median",
             round(med, 2), extra={"p95": round(p95, 2), "load_at_start": load_at_start})

    # ---- cross-encoder reranking the same K
    from argsim.counter.neural.config import is_cross_folder
    from argsim.counter.neural.pipeline import load_stage

    if is_cross_folder(args.cross):
        scorer = load_stage(args.cross)  # the backend's pair scorer, as the rankers load it
        n_cross = 3 if args.quick else 5
        for k in (10, 30):
            ms = []
            for i, p in enumerate(queries[:n_cross]):
                ids, _ = rr.rank(q_base[i][None, :], k, exclude=[{by_id[p.id]}], rerank=False)
                pairs = [(p.text, cands[j].text) for j in ids[0]]
                t = time.perf_counter()
                scorer.score(pairs)
                ms.append((time.perf_counter() - t) * 1000)
            med, p95 = percentiles(ms)
            print(f"cross-encoder rerank K={k}: median {med:.0f} ms ({med / latency[k]:.0f}x the bipolar query)")
            measured("Cross-encoder rerank of the same K", args.cross, "test", "epa", f"latency_ms_median@K={k}",
                     round(med, 2), extra={"p95": round(p95, 2), "ratio_to_bipolar": round(med / latency[k], 1),
                                           "queries": n_cross, "load_at_start": load_at_start})
    else:
        print(f"no cross-encoder at {args.cross}: train one with `argsim train bipolar --kind cross-encoder`")

    # ---- synthetic scale test through the same faiss path
    n = 100_000 if args.quick else 1_000_000
    gen = np.random.default_rng(0)
    vecs = gen.standard_normal((n, model.dim), dtype=np.float32)
    vecs = l2_normalize(vecs)
    qs = model.retrieval_numpy(q_base[:50], "point")
    for kind in ("flat", "ivf"):
        t = time.perf_counter()
        index = build_index(vecs, kind, nprobe=16)
        build_s = time.perf_counter() - t
        ms = []
        found = []
        for i in range(len(qs)):
            t = time.perf_counter()
            _, ids = search_excluding(index, qs[i:i + 1], 30)
            ms.append((time.perf_counter() - t) * 1000)
            found.append(ids[0])
        med, p95 = percentiles(ms)
        if kind == "flat":
            exact = found
        recall = float(np.mean([len(set(a) & set(b)) / 30 for a, b in zip(found, exact, strict=True)]))
        print(f"synthetic {n:,} candidates, {kind}: build {build_s:.1f} s, top-30 median {med:.2f} ms, "
              f"p95 {p95:.2f} ms, recall@30 vs exact {recall:.3f}")
        measured(f"synthetic faiss {kind} top-30", "random unit vectors", None, f"{n} candidates",
                 "latency_ms_median", round(med, 3),
                 extra={"p95": round(p95, 3), "build_seconds": round(build_s, 1),
                        "recall@30_vs_exact": round(recall, 3), "load_at_start": load_at_start})
    write_results(TASK, rows, command=prov["command"], merge=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
