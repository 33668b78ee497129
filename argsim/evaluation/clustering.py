"""`ClusteringEvaluator`: thematic sentence clustering agreement (MI, AMI, RI, ARI) of an embedding model.

The sentence clustering benchmark of Ein Dor et al., "Learning Thematic Similarity Metric from Article Sections
Using Triplet Networks", ACL 2018, section 5.2: the sentences of each article are clustered by the cosine of their
vectors into as many clusters as the article has sections, and the partition is compared with the sections
(scikit-learn's MI, AMI, RI, ARI). Clustering as `argsim cluster sentences` clusters
(`argsim.thematic.cluster.cluster_groups`: k-means on unit vectors, 10 seeded restarts, by default); every
article's scores are averaged with equal weight (`argsim.metrics.clustering.averaged_scores`). Reading: the paper
does not say how it averages over articles; equal weight per article is argsim's.

Resampling unit: the article; every metric being an equal-weight mean over articles, the base class's
`resample_primary` of the articles' AMI (`unit_values`) is exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from argsim.config import SEED
from argsim.data.catalog import dataset_dir
from argsim.errors import ArgsimError
from argsim.evaluation.base import TaskEvaluator
from argsim.metrics.clustering import METRICS, group_scores, warn_one_section
from argsim.metrics.record import Evaluation
from argsim.thematic.build import first_scb_rows
from argsim.thematic.cluster import cluster_groups


class ClusteringEvaluator(TaskEvaluator):
    """Clustering agreement of an embedding model on sentences with gold sections, article by article.

    Args:
        rows: records with fields text, label (the gold section) and article (the group clustered on its own;
            rows without one form a single group).
        name: the metrics' prefix when called as a sentence-transformers evaluator (and the reported data).
        algorithm: ``"kmeans"`` or ``"agglomerative"`` (`argsim.thematic.cluster`).
        linkage: the agglomerative linkage (``"ward"``, ``"average"``, ``"complete"``).
        seed: the k-means seed.
        config: the run options of a model loaded by name (device, cache, quiet).
        batch_size: texts per forward pass of a model object.

    Returns (`evaluate`):
        An `Evaluation` with ``MI``, ``AMI`` (primary), ``RI``, ``ARI`` averaged over the articles.

    Example:
        >>> rows = [{"text": t, "label": i // 2, "article": "a"} for i, t in enumerate(
        ...     ["The team won the cup final.", "The striker scored twice.",
        ...      "Parliament passed the budget.", "The minister resigned over the vote."])]
        >>> ClusteringEvaluator(rows).evaluate("minilm")["ARI"]
        1.0
    """

    task: ClassVar[str] = "clustering"

    def __init__(self, rows: Sequence[Mapping[str, Any]], name: str = "test", algorithm: str = "kmeans",
                 linkage: str = "ward", seed: int = SEED, config: Any = None, batch_size: int = 64) -> None:
        super().__init__(name, "AMI", config, batch_size)
        self.rows = [dict(r) for r in rows]
        if not self.rows:
            raise ArgsimError(f"{name}: no sentences to cluster")
        if missing := [f for f in ("text", "label") if f not in self.rows[0]]:
            raise ArgsimError(f"{name}: clustering rows need the fields text and label (missing {', '.join(missing)})")
        self.algorithm, self.linkage, self.seed = algorithm, linkage, seed
        self.per_article: dict[Any, dict[str, float]] = {}
        warn_one_section([r.get("article", "") for r in self.rows], [r["label"] for r in self.rows])

    @classmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None) -> ClusteringEvaluator:
        """The sentence clustering benchmark of `split` (None: test) of the Wikipedia corpus, as
        `argsim data triplets wikipedia` writes `scb-<split>.jsonl`: its first `limit` articles."""
        split = split or "test"
        rows = first_scb_rows(dataset_dir("wikipedia", getattr(config, "data_dir", None)), limit, split=split)
        return cls(rows, name=name or split, seed=getattr(config, "seed", 13), config=config)

    def evaluate(self, model: Any) -> Evaluation:
        vectors = self._encoder(model).encode([str(r["text"]) for r in self.rows])
        predicted = cluster_groups(self.rows, vectors, self.algorithm, seed=self.seed, linkage=self.linkage)
        self.per_article = group_scores([r.get("article", "") for r in self.rows], [r["label"] for r in self.rows],
                                        predicted)
        scores = list(self.per_article.values())
        self.unit_values = np.array([s["AMI"] for s in scores], dtype=np.float64)
        metrics = {m: float(np.mean([s[m] for s in scores])) for m in METRICS}
        return Evaluation(self.task, metrics, "AMI", data=self.name, n=len(scores),
                          details={"sentences": len(self.rows), "algorithm": self.algorithm})

    def get_config_dict(self) -> dict:
        return {"sentences": len(self.rows), "algorithm": self.algorithm, "linkage": self.linkage}
