"""Sentence clustering on cosine similarity: k-means (on unit vectors) and agglomerative clustering (standing in
for the paper's IClust), with k = the number of gold sections by default.

Agglomerative linkage: 'ward' on unit vectors (squared Euclidean distance between unit vectors = 2 - 2 cos, so
this is cosine-based; default, because average linkage on cosine distance tends to leave one giant cluster and
singletons on these sentences), or 'average' / 'complete' on cosine distance."""

from __future__ import annotations

import numpy as np

from argsim.config import SEED
from argsim.errors import examples, warn
from argsim.vectors import l2_normalize

ALGORITHMS = ("kmeans", "agglomerative")
LINKAGES = ("ward", "average", "complete")


def cluster_vectors(vectors: np.ndarray, k: int, algorithm: str = "kmeans", seed: int = SEED,
                    linkage: str = "ward") -> np.ndarray:
    """Cluster labels (0..k-1) for the rows of `vectors`."""
    from sklearn.cluster import AgglomerativeClustering, KMeans

    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
    n = len(vectors)
    k = max(1, min(k, n))
    if n <= 1 or k == 1:
        return np.zeros(n, dtype=int)
    unit = l2_normalize(vectors)
    if algorithm == "kmeans":
        return KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(unit)
    if linkage not in LINKAGES:
        raise ValueError(f"linkage must be one of {', '.join(LINKAGES)}, not {linkage!r}")
    metric = "euclidean" if linkage == "ward" else "cosine"
    return AgglomerativeClustering(n_clusters=k, metric=metric, linkage=linkage).fit_predict(unit)


def cluster_groups(rows: list[dict], vectors: np.ndarray, algorithm: str = "kmeans", k: int | None = None,
                   seed: int = SEED, linkage: str = "ward") -> list[int]:
    """Cluster each group (`article`) of `rows` separately; k per group = its number of gold `label`s unless
    given."""
    groups: dict = {}
    for i, r in enumerate(rows):
        groups.setdefault(r.get("article", ""), []).append(i)
    out = np.zeros(len(rows), dtype=int)
    capped = [g for g, idx in groups.items() if k is not None and k > len(idx)]
    if capped:  # more clusters asked than sentences: each such group gets one cluster per sentence
        names = [g if g != "" else "(all)" for g in capped]  # rows without a group form one group, shown as (all)
        warn(f"k={k} exceeds the sentences of {len(capped)} of {len(groups)} group(s) ({examples(names)}); "
             "those get one cluster per sentence")
    for idx in groups.values():
        kk = k if k is not None else len({rows[i]["label"] for i in idx})
        out[idx] = cluster_vectors(vectors[idx], kk, algorithm, seed, linkage)
    return out.tolist()
