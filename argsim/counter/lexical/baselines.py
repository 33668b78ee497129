"""Single-score baselines: BM25, term-frequency cosine and embedding cosine of the whole point vs a candidate."""

from __future__ import annotations

import numpy as np

from argsim.backend import get_encoder
from argsim.backend.resolve import resolve_model
from argsim.counter.core.pools import PoolIndex
from argsim.counter.core.registry import register_ranker
from argsim.counter.lexical.textrep import BM25Index, cosine_similarity, shared_term_matrices
from argsim.data.counterargs import Argument


def bm25_scores(points: list[Argument], pools: dict[str, list[Argument]], stats: str = "universe",
                idf: str = "lucene", k1: float = 1.5, b: float = 0.75) -> dict[str, np.ndarray]:
    """BM25 of each candidate for the point's full text as the query; document frequencies and average length
    from all distinct candidates of the run (`stats="universe"`: on counterargs-18, the split) or each pool."""
    index = PoolIndex.build(points, pools)
    docs, queries = shared_term_matrices([a.text for a in index.universe], [p.text for p in points])
    if stats == "universe":
        return index.gather(BM25Index.fit(docs, k1=k1, b=b, idf=idf).scores(queries.counts))
    if stats != "pool":
        raise ValueError(f"unknown BM25 statistics '{stats}': choose universe or pool")
    return {p.id: BM25Index.fit(type(docs)(docs.vocab, docs.counts[index.columns[p.id]]), k1=k1, b=b, idf=idf)
            .scores(queries.counts[i])[0] for i, p in enumerate(points)}


@register_ranker("bm25", help="BM25 of the candidate for the whole point (opts: bm25_stats=universe|pool, "
                              "bm25_idf=lucene|okapi)")
def bm25_ranker(points, pools, bm25_stats: str = "universe", bm25_idf: str = "lucene", **_):
    return bm25_scores(points, pools, stats=bm25_stats, idf=bm25_idf)


@register_ranker("tf-cosine", help="cosine of the term-frequency vectors of the whole point and the candidate")
def tf_cosine_ranker(points, pools, **_):
    index = PoolIndex.build(points, pools)
    docs, queries = shared_term_matrices([a.text for a in index.universe], [p.text for p in points])
    return index.gather(cosine_similarity(queries.counts, docs.counts))


@register_ranker("emb-cosine", help="cosine of backend embeddings (opt model=minilm|glove50|<folder>, "
                                    "pooling=mean|cls) of the whole point and the candidate")
def emb_cosine_ranker(points, pools, model=None, pooling: str | None = None, config=None, **_):
    """`model`: a name or folder (with `pooling`), or any model `argsim.backend.resolve.resolve_model` takes (an
    `Encoder`, a `SentenceTransformer`); points are encoded as queries, candidates as documents."""
    index = PoolIndex.build(points, pools)
    enc = (get_encoder(str(model or "minilm"), pooling=pooling, config=config) if pooling is not None
           else resolve_model(model or "minilm", config, cross_encoder=False))
    role = getattr(enc, "for_role", lambda _role: enc)
    u = role("document").encode([a.text for a in index.universe], normalize=True)
    q = role("query").encode([p.text for p in points], normalize=True)
    return index.gather(q @ u.T)
