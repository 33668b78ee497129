"""The 20 point-candidate features of Table 1: agg[met(p_cl, c), met(p_pr, c)] for 5 metrics x 4 aggregations.

Order (the paper's): metric-major, aggregation m/x/p/s inside each metric, i.e.
x1..x4 = Manhattan {min, max, product, sum}, x5..x8 = WMD, x9..x12 = TF cosine, x13..x16 = BM25,
x17..x20 = BERT cosine. Simple-SD and the "part" models use x1..x8, the "full" models all 20.

Metrics (similarities; tokens without gensim's stop words by default, except for BM25; each defined in
docs/counterargs-ltr.md, Features): Manhattan and WMD as 1 / (1 + d) (WMD = inf, a text without a known word,
gives 0), TF cosine, BM25 with statistics from all distinct candidates of the run, and the cosine of MiniLM's
[CLS] vectors standing in for bert-base-uncased. A point without a conclusion (an empty first part) gets met =
that of an empty text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from argsim.backend import get_encoder
from argsim.backend.registry import options_apply
from argsim.counter.core.pools import PoolIndex
from argsim.counter.lexical.feature_config import FeatureConfig
from argsim.counter.lexical.textrep import BM25Index, cosine_similarity, manhattan_distance, shared_term_matrices
from argsim.counter.lexical.wmd import WMDEngine
from argsim.counter.lexical.wordvecs import word_vectors
from argsim.data.counterargs import Argument
from argsim.engine.base import Engine, LocalEngine

METRICS = ("manhattan", "wmd", "cosine", "bm25", "bert")
AGGREGATIONS = ("min", "max", "prod", "sum")
FEATURE_NAMES = tuple(f"{m}-{a}" for m in METRICS for a in AGGREGATIONS)
N_PART, N_FULL = 8, 20


def aggregate(cl: np.ndarray, pr: np.ndarray) -> np.ndarray:
    """Stack the four aggregations of two metric values in the paper's m/x/p/s order: (..., 4)."""
    cl, pr = np.asarray(cl, dtype=np.float64), np.asarray(pr, dtype=np.float64)
    return np.stack([np.minimum(cl, pr), np.maximum(cl, pr), cl * pr, cl + pr], axis=-1)


def inverse_distance(d: np.ndarray) -> np.ndarray:
    """Similarity 1 / (1 + d); d = inf gives 0."""
    d = np.asarray(d, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(np.isinf(d), 0.0, 1.0 / (1.0 + np.where(np.isinf(d), 0.0, d)))


def feature_count(kind: str) -> int:
    if kind not in ("part", "full"):
        raise ValueError("features must be 'part' (x1..x8) or 'full' (x1..x20)")
    return N_PART if kind == "part" else N_FULL


@dataclass
class FeatureSpace:
    """Points, their pools and the per-text representations from which every feature is computed."""

    points: list[Argument]
    pools: dict[str, list[Argument]]
    config: FeatureConfig = field(default_factory=FeatureConfig)
    #: where the bulk work (exact WMD, pruned ranking) runs: an `argsim.engine` engine (default: this process)
    executor: Engine = field(default_factory=LocalEngine)

    def __post_init__(self) -> None:
        self.index = PoolIndex.build(self.points, self.pools)
        self.cl_texts = [p.conclusion for p in self.points]
        self.pr_texts = [p.premise or p.text for p in self.points]
        self._dense: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        texts: dict[str, int] = {}  # the distinct texts (conclusions, premises, candidates) of the WMD engine
        #: engine text index of each point's conclusion, premise, and of each universe candidate
        self.text_ids = tuple(np.fromiter((texts.setdefault(t, len(texts)) for t in group), dtype=np.int64,
                                          count=len(group))
                              for group in (self.cl_texts, self.pr_texts, [a.text for a in self.index.universe]))
        self._texts = list(texts)

    def dense_metric(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """(cl, pr) similarity matrices of shape (n_points, n_universe) for a non-WMD metric."""
        if metric in self._dense:
            return self._dense[metric]
        universe = [a.text for a in self.index.universe]
        if metric in ("manhattan", "cosine", "bm25"):
            stopwords = "none" if metric == "bm25" else self.config.stopwords
            docs, cl, pr = shared_term_matrices(universe, self.cl_texts, self.pr_texts, stopwords=stopwords)
            if metric == "manhattan":
                out = tuple(inverse_distance(manhattan_distance(q.l1(), docs.l1())) for q in (cl, pr))
            elif metric == "cosine":
                out = tuple(cosine_similarity(q.counts, docs.counts) for q in (cl, pr))
            else:
                bm25 = BM25Index.fit(docs, idf=self.config.bm25_idf)
                out = tuple(bm25.scores(q.counts) for q in (cl, pr))
        elif metric == "bert":
            model = self.config.bert_model  # the paper's BERT pooling, or an argsim model's own
            enc = get_encoder(model, pooling=self.config.bert_pooling if options_apply(model)[0] else None)
            u = enc.encode(universe, normalize=True)
            out = tuple(np.where(np.asarray([bool(t) for t in texts])[:, None],  # an empty part: 0
                                 enc.encode([t or " " for t in texts], normalize=True) @ u.T, 0.0).astype(np.float64)
                        for texts in (self.cl_texts, self.pr_texts))
        else:
            raise ValueError(f"'{metric}' is not a dense metric")
        self._dense[metric] = out
        return out

    def pooled_metric(self, metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Point id -> its pool's (cl, pr) similarities for `metric` (WMD: exact, `wmd_distances`)."""
        if metric == "wmd":
            return {pid: (inverse_distance(cl), inverse_distance(pr)) for pid, (cl, pr) in self.wmd_distances().items()}
        cl, pr = map(self.index.gather, self.dense_metric(metric))
        return {pid: (cl[pid], pr[pid]) for pid in cl}

    @cached_property
    def engine(self) -> WMDEngine:
        """One WMD engine over the distinct texts (conclusions, premises, candidates), built on first use."""
        return WMDEngine(word_vectors(self.config.word_vectors), self._texts, stopwords=self.config.stopwords)

    def wmd_distances(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Exact WMD(p_cl, c) and WMD(p_pr, c) for every pool pair (distinct text pairs solved once)."""
        cl_ids, pr_ids, u_ids = self.text_ids
        pairs = []  # per point: its (conclusion, candidate) pairs, then its (premise, candidate) pairs
        for i, p in enumerate(self.points):
            c = u_ids[self.index.columns[p.id]]
            pairs += [np.stack([np.full(len(c), cl_ids[i]), c], 1), np.stack([np.full(len(c), pr_ids[i]), c], 1)]
        allpairs = np.concatenate(pairs) if pairs else np.zeros((0, 2), int)
        uniq, inverse = np.unique(allpairs, axis=0, return_inverse=True)
        dist = self.engine.distances(uniq, engine=self.executor)[inverse.ravel()]
        dist = np.split(dist, np.cumsum([len(x) for x in pairs])[:-1])
        return {p.id: (dist[2 * i], dist[2 * i + 1]) for i, p in enumerate(self.points)}

    def features(self, n_features: int = N_FULL, first: int = 0, wmd: bool = True) -> dict[str, np.ndarray]:
        """Point id -> (pool size, n_features - first) matrix of features x[first+1..n_features] (`first` a multiple
        of 4) in Table 1's order, all exact; with `wmd=False` the WMD block is 0, for a search that bounds it."""
        zero = {p.id: (np.zeros(len(self.pools[p.id])),) * 2 for p in self.points}  # the WMD block left to a search
        metrics = METRICS[first // 4: (n_features + 3) // 4]
        pooled = [self.pooled_metric(m) if wmd or m != "wmd" else zero for m in metrics]
        return {p.id: np.concatenate([aggregate(*metric[p.id]) for metric in pooled], axis=1)[:, : n_features - first]
                for p in self.points}
