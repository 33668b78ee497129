"""ArguAna (BEIR / MTEB open-collection counter-argument retrieval) on argsim's replica, beside MTEB's figures.

    python bench/bench_arguana.py                         # every model below, all 1,406 queries
    python bench/bench_arguana.py --models minilm --limit 100
    python bench/bench_arguana.py --models bm25,bm25:stop,bm25:stop+porter    # what BM25's text processing adds

Each model is scored by `argsim.evaluation.ArguAnaEvaluator` (MTEB's retrieval scoring, identical ids ignored) on
the replica's test split; rows go to bench/results/arguana.json (merged: rows of other models are kept), each with
MTEB's published nDCG@10 of the same model as `paper` where the leaderboard has one (BM25: MTEB's bm25s).
`bm25:stop` and `bm25:stop+porter` are argsim's BM25 on texts without gensim's English stop words, and also
Porter-stemmed (gensim's stemmer): the text processing MTEB's bm25s applies (its own stop-word list, a Snowball
stemmer) and argsim's BM25 does not.
"""

from __future__ import annotations

import argparse
import sys
import time

from argsim.backend import get_encoder
from argsim.data.arguana import ArguAnaData
from argsim.evaluation.arguana import METRICS, ArguAnaEvaluator
from argsim.published import published
from argsim.results import environment, result_rows, write_results


def processed(data: ArguAnaData, steps: str) -> ArguAnaData:
    """The replica with texts reduced to their tokens without stop words (`stop`), Porter-stemmed (`porter`)."""
    from gensim.parsing.porter import PorterStemmer

    from argsim.counter.lexical.stopwords import content_tokens

    stem = PorterStemmer().stem if "porter" in steps else (lambda t: t)

    def text(t: str) -> str:
        return " ".join(stem(w) for w in content_tokens(t, "gensim" if "stop" in steps else "none"))

    return ArguAnaData(data.split, {q: text(t) for q, t in data.queries.items()},
                       {d: text(t) for d, t in data.corpus.items()}, data.qrels)


#: argsim model name -> the model's name on the MTEB leaderboard
MTEB_NAMES = {"minilm": "all-MiniLM-L6-v2", "bm25": "bm25s", "mpnet": "all-mpnet-base-v2"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="bm25,bm25:stop,bm25:stop+porter,minilm,counter-bi-encoder",
                    help="comma list of model names")
    ap.add_argument("--limit", type=int, default=None, help="the first N queries only (the corpus stays whole)")
    ap.add_argument("--quick", action="store_true", help="the first 100 queries (make bench --quick)")
    args = ap.parse_args()
    limit = 100 if args.quick and args.limit is None else args.limit
    ev = ArguAnaEvaluator.from_dataset("test", limit=limit)
    rows = []
    for name in args.models.split(","):
        start = time.perf_counter()
        model, _, steps = name.partition(":")
        result = (ArguAnaEvaluator(processed(ev.data, steps)) if steps else ev).evaluate(model)
        seconds = time.perf_counter() - start
        identity = "" if model == "bm25" else get_encoder(name).identity
        mteb = published("arguana", f"mteb/{MTEB_NAMES.get(model, model)}")
        env = environment(seed=None, device="cpu", models={name: identity} if identity else None)
        setting = result.details["retrieval"] + (f"; texts: {steps}" if steps else "")
        rows += result_rows(result, method="arguana-replica", model=name, split="test" if limit is None else
                            f"test[:{limit}]", setting=setting, metrics=METRICS,
                            paper={"ndcg_at_10": mteb} if mteb is not None else None, seconds=seconds,
                            extra={"queries": result.n, "documents": result.details["documents"]}, env=env)
        print(f"{name}: " + ", ".join(f"{m} {result[m]:.4f}" for m in METRICS)
              + (f" (MTEB {mteb:.4f})" if mteb is not None else "")
              + f"  [{seconds:.0f}s, {result.details['retrieval']}]", flush=True)
    command = "python bench/bench_arguana.py" + "".join(f" {a}" for a in sys.argv[1:])
    print(write_results("arguana", [r.as_dict() | {"command": command} for r in rows], merge=True, command=command))


if __name__ == "__main__":
    main()
