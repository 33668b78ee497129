"""`cluster_sentences`: thematic clustering of sentences (Ein Dor et al. 2018, the sentence clustering benchmark)
on the cosine of backend embeddings; `argsim cluster sentences` calls it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from argsim.config import RunConfig
from argsim.errors import ArgsimError, check_choice, check_count
from argsim.io import as_texts, canonical_columns


def cluster_sentences(sentences: Sequence[str], model: str | Path | Any = None, n_clusters: int | None = None,
                      algorithm: str = "kmeans", linkage: str = "ward", groups: Sequence[Any] | None = None,
                      labels: Sequence[Any] | None = None, config: RunConfig | None = None) -> np.ndarray:
    """Cluster sentences by theme: embed them (`argsim.encode`), then k-means or agglomerative clustering of the
    unit vectors, one group (e.g. article) at a time.

    Args:
        sentences: The sentences.
        model: A backend model name or folder (e.g. a thematic encoder trained by `argsim train thematic`), or a
            model object (an argsim `Encoder`, a `SentenceTransformer`); None:
            the shipped thematic encoder ``"thematic"`` where the package carries it, else ``"minilm"``
            (`argsim.backend.names.default_model`).
        n_clusters: Clusters per group; None: each group's number of distinct gold `labels`.
        algorithm: ``"kmeans"`` (10 seeded restarts) or ``"agglomerative"``.
        linkage: Agglomerative linkage: ``"ward"`` (on unit vectors), ``"average"`` or ``"complete"`` (cosine).
        groups: The group of each sentence (None: one group); each is clustered separately.
        labels: Gold section of each sentence, only to take the number of clusters from (n_clusters=None).
        config: The run options (device, seed of the clustering, cache); None: the defaults.

    Returns:
        An int array: the cluster of each sentence (numbered 0.. within its group).

    Example:
        >>> import argsim
        >>> argsim.cluster_sentences(["The team won the cup final.", "The striker scored twice.",
        ...                           "Parliament passed the budget.", "The minister resigned over the vote."],
        ...                          n_clusters=2).tolist()
        [1, 1, 0, 0]
    """
    from argsim.api.encode import encode
    from argsim.backend.names import default_model
    from argsim.thematic.cluster import ALGORITHMS, LINKAGES, cluster_groups

    config = config or RunConfig()
    texts = as_texts(sentences, "sentences")
    check_choice(algorithm, "algorithm", ALGORITHMS)
    for name, col in (("groups", groups), ("labels", labels)):
        if col is not None and len(col) != len(texts):
            raise ArgsimError(f"{name} has {len(col)} entries for {len(texts)} sentences")
    if n_clusters is None and labels is None:
        raise ArgsimError("give n_clusters, or the gold labels to take it from")
    if n_clusters is not None:
        check_count(n_clusters, "n_clusters")
    check_choice(linkage, "linkage", LINKAGES)
    rows = canonical_columns([{"article": "" if groups is None else groups[i],
                               **({} if labels is None else {"label": labels[i]})} for i in range(len(texts))],
                             "cluster_sentences", ("label", "article"))
    if not texts:
        return np.zeros(0, dtype=int)
    vectors = encode(texts, model=default_model("thematic") if model is None else model, config=config)
    return np.asarray(cluster_groups(rows, vectors, algorithm, k=n_clusters, seed=config.seed, linkage=linkage),
                      dtype=int)
