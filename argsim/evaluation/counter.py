"""`CounterArgumentEvaluator`: best-counter retrieval on counterargs-18 (accuracy@1, MRR, accuracy@1/K).

Wachsmuth, Syed and Stein, "Retrieval of the Best Counterargument without Prior Topic Knowledge", ACL 2018, section 5:
each point's candidates are the pool of a setting (`argsim.data.counterargs`); a ranking is scored by accuracy@1 and
MRR, exactly for every pool size, ties at their expectation (`argsim.counter.core.evaluation`). accuracy@1/K (Shi, Cao
and Nguyen, "Revisiting the Role of Similarity and Dissimilarity in Best Counter Argument Retrieval", arXiv 2023,
section 6.3): the first stage's top K is reranked by a second stage, a hit when the best of those K is the true counter
(`argsim.counter.core.evaluation.at1_over_k_hits`, via `argsim.counter.neural.pipeline`).

How a model ranks a pool:
- an embedding model (a name, folder, argsim `Encoder` or `SentenceTransformer`): the cosine of the point's and the
  candidate's vectors (the `emb-cosine` ranker of `argsim rank counterargs`);
- a trained counter model folder or shipped counter model (`counter-bi-encoder`, `counter-bipolar`): its
  retrieval head ranks, its classification head (where it has one) reranks the top K (the `bipolar` /
  `bi-encoder` rankers);
- a counter cross-encoder folder, or a `CrossEncoder` object: BM25 ranks, the cross-encoder reranks the top K
  (the `cross-encoder` ranker).
A model that reranks is scored at depth `k`, and by accuracy@1/K for every K of `ks`; with `ranker`, a registered
ranker ranks instead (`argsim.counter.core.run.run_ranker`, the function `argsim rank counterargs` calls).

Resampling unit: the point of the primary setting (its expected hit@1, 1/(ties + 1) when the true counter ties
for first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from argsim.backend.encoder import Encoder
from argsim.backend.resolve import PairScorer, kept_mode, resolve_model
from argsim.counter.core.evaluation import ranking_records, summarize
from argsim.counter.core.registry import get_ranker
from argsim.counter.core.run import dataset_points, run_ranker
from argsim.counter.neural.config import is_cross_folder
from argsim.counter.neural.pipeline import hits_over_k_pools, load_stage, run_stages, scores_for_k
from argsim.counter.neural.store import is_model_folder
from argsim.counter.neural.validation import at1_over_k, embed_needed, heads_on_cpu
from argsim.engine import engine_from_config
from argsim.errors import ArgsimError
from argsim.evaluation.base import TaskEvaluator
from argsim.metrics.ranking import GoldRank
from argsim.metrics.record import Evaluation

#: the settings the evaluator reports by default (the paper's Table 2 columns that differ most)
SETTINGS = ("sdoc", "sda", "epc", "epa")
#: rerank depths reported for a model that reranks (1: its first stage alone)
KS = (1, 10, 30)

Pools = tuple[list, dict[str, list], dict[str, str | None]]  # points, pools, gold counter ids


class CounterArgumentEvaluator(TaskEvaluator):
    """accuracy@1 and MRR per setting, and accuracy@1/K where the model reranks, on counterargs-18 pools.

    Args:
        pools: setting -> (points, their pools, gold counter id per point), as
            `argsim.counter.core.run.dataset_points` returns them.
        name: the metrics' prefix when called as a sentence-transformers evaluator (and the reported data).
        primary_setting: the setting of the primary metric (None: epa where given, else the first).
        k: the rerank depth of a reranking model's ranking (the rankers' default, 30).
        ks: the depths of the reported accuracy@1/K.
        config: the run options of a model loaded by name (device, precision, cache, quiet).
        batch_size: texts or pairs per forward pass of a model object.
        ranker: a registered ranker that ranks the pools, given the model as its `model` option (None: the model
            ranks as the module docstring says).
        options: the ranker's further options (`--opt key=value`).

    Returns (`evaluate`):
        An `Evaluation` with ``<setting>_accuracy@1`` and ``<setting>_mrr`` per setting, and
        ``<setting>_accuracy@1/<K>`` for a reranking model; primary ``epa_accuracy@1``.

    Example:
        >>> ev = CounterArgumentEvaluator.from_dataset("test", limit=20, settings=["sdoc"])
        >>> round(ev.evaluate("minilm")["sdoc_accuracy@1"], 2)  # doctest: +SKIP
        0.6
    """

    task: ClassVar[str] = "counter"
    accepts_cross_encoder: ClassVar[bool] = True
    takes_roles: ClassVar[bool] = True

    def __init__(self, pools: Mapping[str, Pools], name: str = "test", primary_setting: str | None = None,
                 k: int = 30, ks: Sequence[int] = KS, config: Any = None, batch_size: int = 64,
                 ranker: str | None = None, options: Mapping[str, Any] | None = None) -> None:
        self.pools = dict(pools)
        if not self.pools:
            raise ArgsimError("give at least one setting's pools")
        primary_setting = primary_setting or ("epa" if "epa" in self.pools else next(iter(self.pools)))
        if primary_setting not in self.pools:
            raise ArgsimError(f"primary setting '{primary_setting}' is not among {', '.join(self.pools)}")
        super().__init__(name, f"{primary_setting}_accuracy@1", config, batch_size)
        self.primary_setting, self.k, self.ks = primary_setting, int(k), tuple(int(x) for x in ks)
        self.ranker, self.options = ranker, dict(options or {})
        if ranker is not None:
            get_ranker(ranker)  # an unknown name fails now, in one line
        self.records: dict[str, list[dict]] = {}
        self.pairs, self.base = None, None  # `from_pairs`

    @classmethod
    def from_dataset(cls, split: str | None = None, limit: int | None = None, config: Any = None,
                     name: str | None = None, settings: Sequence[str] = SETTINGS) -> CounterArgumentEvaluator:
        """counterargs-18 `split` (None: test), the first `limit` points (id order) in each of `settings`."""
        split = split or "test"
        data_dir = getattr(config, "data_dir", None)
        pools = {s: dataset_points(split, s, limit=limit, data_dir=data_dir) for s in settings}
        return cls(pools, name=name or split, config=config)

    @classmethod
    def from_pairs(cls, data: Any, k: int = 30, name: str = "val",
                   base: np.ndarray | None = None) -> CounterArgumentEvaluator:
        """The counter trainers' validation (section 6.3): accuracy@1/`k` of a `CounterModel` on index pairs. Every
        validation point is a query against the whole validation collection, itself masked (the epa setting of the
        validation split); the retrieval head ranks, the classification head (where the model has one) reranks the
        top `k`, and a hit is the point's own counter first (`argsim.counter.neural.validation.at1_over_k`, on
        `argsim.counter.core.evaluation.at1_over_k_hits`, as the pools' @1/K). A model without a classification
        head scores its retrieval accuracy@1.

        Args:
            data: the `argsim.counter.neural.data.PairData` whose `val_pairs` and `val_collection` are scored.
            k: K, the reranked depth (the trainer's `k_val`).
            name: the metrics' prefix.
            base: the base embeddings of `data.texts` where training does not change them (a frozen encoder); None:
                the model embeds the texts validation reads at each call.

        Returns:
            the evaluator; its primary metric `at1_over_<k>` (NaN without validation pairs), one unit per point.

        Example:
            >>> ev = CounterArgumentEvaluator.from_pairs(data, k=10)  # doctest: +SKIP
            >>> ev(model)  # doctest: +SKIP
            {'val_at1_over_10': 0.41}
        """
        evaluator = cls({"epa": ([], {}, {})}, name=name, k=k, ks=(k,))
        evaluator.pairs, evaluator.base = data, base
        evaluator.primary = evaluator.primary_metric = f"at1_over_{k}"
        return evaluator

    def _evaluate_pairs(self, model: Any) -> Evaluation:
        """`from_pairs`' figure of `model` (the heads score on the CPU; `evaluate` keeps the model's mode)."""
        data, hits = self.pairs, np.zeros(0, dtype=bool)
        if len(data.val_pairs):
            base = self.base if self.base is not None else embed_needed(model, data, self.name)
            with heads_on_cpu(model):
                hits = at1_over_k(model, base, data.val_pairs[:, 0], data.val_pairs[:, 1], data.val_collection,
                                  ks=(self.k,))[self.k]
        self.unit_values = hits.astype(np.float64)
        return Evaluation(self.task, {self.primary: float(hits.mean()) if len(hits) else float("nan")}, self.primary,
                          data=self.name, n=len(hits), details={"settings": ["epa"], "k": self.k})

    def _stages(self, model: Any) -> tuple[Any, Any]:
        """(first stage, second stage or None) of a reranking model; (Encoder, None) of an embedding model."""
        if isinstance(model, (str, Path)):
            precision = getattr(self.config, "precision", "auto")
            if is_cross_folder(model):
                return "bm25", load_stage(str(model), precision, self.config)
            if is_model_folder(model):
                stage = load_stage(str(model), precision, self.config)
                return stage, (stage if stage.cls is not None else None)
        scorer = resolve_model(model, self.config, batch_size=self.batch_size)
        return ("bm25", scorer) if isinstance(scorer, PairScorer) else (scorer, None)

    def _rank(self, first: Any, second: Any, points: list, pools: dict[str, list]
              ) -> tuple[dict[str, np.ndarray], Any]:
        """Pool-aligned scores of the model's ranking, and the stage result (None without a second stage)."""
        if isinstance(first, Encoder):
            return get_ranker("emb-cosine").fn(points, pools, model=first, config=self.config), None
        result = run_stages(points, pools, first, second, kmax=max(self.k, *self.ks))
        return (scores_for_k(result, 1), None) if second is None else (scores_for_k(result, self.k), result)

    def evaluate(self, model: Any) -> Evaluation:
        metrics: dict[str, float] = {}
        random: dict[str, float] = {}
        with kept_mode(model):
            if self.pairs is not None:
                return self._evaluate_pairs(model)
            first, second = (None, None) if self.ranker is not None else self._stages(model)
            for setting, (points, pools, gold) in self.pools.items():
                staged = None
                if self.ranker is not None:  # the registered ranker, `model` as its model option
                    records = run_ranker(self.ranker, points, pools, gold, setting=setting, split=self.name,
                                         options=self.options | ({"model": model} if model is not None else {}),
                                         engine=engine_from_config(self.config) if self.config is not None else None,
                                         precision=getattr(self.config, "precision", "auto"),
                                         config=self.config).records
                else:
                    scores, staged = self._rank(first, second, points, pools)
                    records = ranking_records(points, pools, scores, gold, method="model", setting=setting,
                                              split=self.name)
                (summary,) = summarize(records)
                metrics |= {f"{setting}_accuracy@1": summary.accuracy_at_1, f"{setting}_mrr": summary.mrr}
                random[setting] = summary.random_accuracy
                if staged is not None:
                    hits = hits_over_k_pools(staged, pools, gold, self.ks)
                    metrics |= {f"{setting}_accuracy@1/{k}": float(h.mean()) for k, h in hits.items()}
                self.records[setting] = records
                if setting == self.primary_setting:
                    self.unit_values = np.array(
                        [GoldRank(r["gold_better"], r["gold_tied"], r["pool_size"]).accuracy_at_1()
                         if r.get("gold_better") is not None else 0.0 for r in records], dtype=np.float64)
        return Evaluation(self.task, metrics, self.primary, data=self.name,
                          n=len(self.records[self.primary_setting]),
                          details={"settings": list(self.pools), "random_accuracy": random,
                                   "ranker": self.ranker, "k": self.k if second is not None else None})

    def get_config_dict(self) -> dict:
        return {"settings": list(self.pools), "points": {s: len(p[0]) for s, p in self.pools.items()},
                "k": self.k, "ks": list(self.ks)}
