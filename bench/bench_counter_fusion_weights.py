"""How `counter-fusion`'s weights were chosen: on the ArguAna replica's validation split (validation points over the
training and validation arguments, no test text), every weighting in {0, .25, .5, 1} of four rankers' per-query
standardised scores (counter-bi-encoder, counter-retriever, MiniLM, BM25; the largest weight 1), scored by nDCG@10;
the best weighting is then scored once on the test split beside each ranker alone.

    python bench/bench_counter_fusion_weights.py [--limit N]

Standardising each query's scores (minus their mean, over their standard deviation) puts the rankers on one scale;
for the two embedding models it ranks as the plain sum of cosines does (the measured best, 1:1, ships as that sum).
Prints the table; writes nothing.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from argsim.backend import get_encoder
from argsim.data.arguana import ArguAnaData, load_arguana
from argsim.evaluation.arguana import bm25_matrix, mteb_scores, top_k_run

RANKERS = ("counter-bi-encoder", "counter-retriever", "minilm", "bm25")
GRID = (0.0, 0.25, 0.5, 1.0)


def standardised_scores(data: ArguAnaData) -> dict[str, np.ndarray]:
    """Each ranker's (queries x documents) scores, standardised per query; a query's own id never ranks."""
    out = {}
    for name in RANKERS:
        if name == "bm25":
            scores = bm25_matrix(data).astype(np.float64)
        else:
            enc = get_encoder(name)
            q = enc.for_role("query").encode(list(data.queries.values()), normalize=True)
            d = enc.for_role("document").encode(list(data.corpus.values()), normalize=True)
            scores = (q @ d.T).astype(np.float64)
        column = {d: j for j, d in enumerate(data.corpus)}
        for row, qid in enumerate(data.queries):
            if qid in column:
                scores[row, column[qid]] = np.nan
        scores = (scores - np.nanmean(scores, 1, keepdims=True)) / np.nanstd(scores, 1, keepdims=True)
        out[name] = np.nan_to_num(scores, nan=-1e9)
    return out


def ndcg_at_10(data: ArguAnaData, scores: dict[str, np.ndarray], weights: dict[str, float]) -> float:
    """nDCG@10 (MTEB's scoring) of the weighted sum of the standardised scores."""
    total = sum(w * scores[name] for name, w in weights.items() if w)
    run = top_k_run(list(data.queries), list(data.corpus), lambda a, b: total[a:b], 1000)
    return float(mteb_scores(data.qrels, run)[0]["ndcg_at_10"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="the first N queries of each split only")
    args = ap.parse_args()
    val = load_arguana("validation").head(args.limit)
    scores = standardised_scores(val)
    grid = [dict(zip(RANKERS, w, strict=True)) for w in itertools.product(GRID, repeat=len(RANKERS)) if max(w) == 1]
    ranked = sorted(((ndcg_at_10(val, scores, w), w) for w in grid), key=lambda r: -r[0])
    print("validation nDCG@10, best weightings:")
    for value, w in ranked[:5]:
        print(f"  {value:.4f}  " + ", ".join(f"{k} {v:g}" for k, v in w.items()))
    best = ranked[0][1]
    test = load_arguana("test").head(args.limit)
    scores = standardised_scores(test)
    for name in RANKERS:
        print(f"test nDCG@10 {name} alone: {ndcg_at_10(test, scores, {name: 1.0}):.4f}")
    print(f"test nDCG@10 with the best validation weighting: {ndcg_at_10(test, scores, best):.4f}")


if __name__ == "__main__":
    main()
