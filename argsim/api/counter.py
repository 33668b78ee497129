"""`CounterRetriever`: best-counter retrieval (Wachsmuth et al. 2018) with any ranker of `argsim rank counterargs
--list`, scoring with the call that command makes (`argsim.counter.core.run.score_pools`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from argsim.backend.resolve import resolve_model
from argsim.config import RunConfig
from argsim.counter.core.registry import get_ranker, ranker_options
from argsim.counter.core.run import dataset_points, score_pools
from argsim.counter.core.userdata import user_argument
from argsim.engine import engine_from_config
from argsim.errors import ArgsimError, check_count
from argsim.io import as_texts
from argsim.metrics.record import Evaluation

#: what `CounterRetriever()` ranks with: the shipped counter-fusion model's cosine (docs/counterargs-neural.md)
DEFAULT_RANKER, DEFAULT_MODEL = "emb-cosine", "counter-fusion"
RETRIEVE_COLUMNS = ["query", "rank", "candidate", "score", "query_id", "candidate_id"]


def _key(prefix: str, i: int, text: str) -> str:
    """An internal id that also names the text, so rankers' on-disk caches never mix two calls' texts."""
    return f"{prefix}{i}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}"


class CounterRetriever:
    """Index candidate arguments, then retrieve the best counter-arguments for queries.

    Args:
        ranker: None: the fused model that ships with argsim (``"emb-cosine"`` with ``"counter-fusion"``, with the
            Bi-encoder of Shi, Cao and Nguyen, "Revisiting the Role of Similarity and Dissimilarity in Best Counter
            Argument Retrieval", arXiv 2023; what it fuses and when another ranker is better: docs/python-api.md);
            or a registered ranker (``"bi-encoder"``, ``"emb-cosine"``, ``"bm25"``, ``"tf-cosine"``,
            ``"simple-sd"``, ``"logreg-part"``, ..., ``"feature:<name>"``; `argsim rank counterargs --list`).
        model: The encoder or model folder of rankers that need one (bi-encoder: the shipped
            ``"counter-bi-encoder"`` by default, or a folder of `argsim train bipolar --kind bi-encoder`;
            emb-cosine: minilm by default, or a model object (an argsim `Encoder`, a `SentenceTransformer`); the
            learning-to-rank and other neural rankers: their trained folder).
        options: The ranker's further options (as `--opt key=value`), e.g. ``{"bm25_idf": "okapi"}``.
        config: The run options (engine, precision, seed, data folder); None: the defaults.

    Example:
        >>> import argsim
        >>> r = argsim.CounterRetriever("bm25").index(
        ...     ["School uniforms do not stop bullying.", "Taxes fund public schools."])
        >>> r.retrieve(["School uniforms stop bullying."], k=1)[["rank", "candidate"]]
           rank                              candidate
        0     1  School uniforms do not stop bullying.
    """

    def __init__(self, ranker: str | None = None, model: str | Path | Any = None, options: dict | None = None,
                 config: RunConfig | None = None) -> None:
        if ranker is None:  # the default: the shipped fused model, cosine of its query and document sides
            ranker, model = DEFAULT_RANKER, DEFAULT_MODEL if model is None else model
        allowed = ranker_options(get_ranker(ranker))
        if options is not None and not isinstance(options, dict):
            raise ArgsimError(f"options: give a dict of the ranker's options (e.g. {{'bm25_idf': 'okapi'}}), not "
                              f"{type(options).__name__}")
        self.options = dict(options or {})
        if bad := [k for k in self.options if k not in allowed]:
            raise ArgsimError(f"'{bad[0]}' is not an option of {ranker}; valid keys: {', '.join(allowed) or 'none'}")
        if model is not None and not isinstance(model, (str, Path)):
            resolve_model(model, config, cross_encoder=False)  # an object argsim cannot use: one line, now
            if ranker != "emb-cosine":
                raise ArgsimError(f"a model object ranks with ranker='emb-cosine' (the cosine of its embeddings); "
                                  f"'{ranker}' takes a model name or trained folder")
        if model is not None:
            self.options["model"] = str(model) if isinstance(model, Path) else model
        self.ranker = ranker
        self.config = config or RunConfig()
        self.candidates: list[str] = []
        self.candidate_ids: list[str] = []

    def __repr__(self) -> str:
        return f"CounterRetriever(ranker={self.ranker!r}, candidates={len(self.candidates)})"

    def index(self, candidates: Sequence[str] | pd.DataFrame, ids: Sequence[str] | None = None) -> CounterRetriever:
        """Set the candidate arguments every query is ranked against.

        Args:
            candidates: Candidate texts, or a DataFrame with a ``text`` column (and an ``id`` column).
            ids: The candidates' ids (None: the frame's ``id`` column, else ``0, 1, ...``).

        Returns:
            self.
        """
        if hasattr(candidates, "columns"):
            if "text" not in candidates.columns:
                raise ArgsimError("the candidates frame needs a 'text' column")
            if ids is None and "id" in candidates.columns:
                ids = candidates["id"].astype(str).tolist()
            candidates = candidates["text"].tolist()
        texts = as_texts(candidates, "candidates")
        if not texts:
            raise ArgsimError("no candidates to index")
        ids = [str(i) for i in ids] if ids is not None else [str(i) for i in range(len(texts))]
        if len(ids) != len(texts):
            raise ArgsimError(f"{len(ids)} ids for {len(texts)} candidates")
        if len(set(ids)) != len(ids):
            raise ArgsimError("candidate ids must be unique")
        self.candidates, self.candidate_ids = texts, ids
        return self

    def retrieve(self, queries: str | Sequence[str], k: int = 10) -> pd.DataFrame:
        """The k best candidates for each query, best first; a candidate with the query's own text is never one of
        them (a query in the indexed collection is not its own counter).

        Args:
            queries: Query arguments (a point: a conclusion line, a blank line, then its premise; or plain text).
            k: Candidates kept per query (a count).

        Returns:
            A DataFrame, one row per (query, rank): ``query, rank (1 = best), candidate, score, query_id (the
            query's position), candidate_id (its index id)``. ``score`` is the ranker's, higher is better and
            comparable only among one query's candidates: a similarity for the lexical and embedding rankers
            (bm25, tf-cosine, emb-cosine: the default), a model's score for learning-to-rank, and for the neural
            rankers (bi-encoder, bipolar, the rerankers) the candidate's place counted from the bottom
            (the best of n candidates scores n, the worst 1), not a similarity.
        """
        check_count(k, "k")
        if not self.candidates:
            raise ArgsimError("index candidates first: CounterRetriever(...).index(texts)")
        queries = as_texts(queries, "queries")
        points = [user_argument(_key("q", i, q), q, "point", i) for i, q in enumerate(queries)]
        cands = [user_argument(_key("c", i, t), t, "counter", i) for i, t in enumerate(self.candidates)]
        pools = {p.id: [c for c in cands if c.text != p.text] for p in points}  # never the query itself
        scored = [p for p in points if pools[p.id]]
        scores = score_pools(self.ranker, scored, {p.id: pools[p.id] for p in scored}, self.options, top_k=k,
                             engine=engine_from_config(self.config), precision=self.config.precision,
                             config=self.config) if scored else {}
        rows = []
        for qi, p in enumerate(points):
            if p.id not in scores:
                continue
            s = np.asarray(scores[p.id], dtype=np.float64)
            for r, j in enumerate(np.argsort(-np.where(np.isnan(s), -np.inf, s), kind="stable")[:k], start=1):
                ci = pools[p.id][j].number
                rows.append((p.text, r, self.candidates[ci], float(s[j]), qi, self.candidate_ids[ci]))
        return pd.DataFrame(rows, columns=RETRIEVE_COLUMNS)

    def evaluate(self, split: str = "test", setting: str = "sdoc", limit: int | None = None,
                 sample: int | None = None, data_dir: str | Path | None = None) -> Evaluation:
        """accuracy@1 and MRR of this ranker on counterargs-18 (each point ranked against its pool of `setting`),
        as `argsim rank counterargs` reports them (`argsim.evaluation.CounterArgumentEvaluator` with this
        ranker). The index is not used: the pools come from the dataset.

        Args:
            split: ``"training"``, ``"validation"`` or ``"test"``.
            setting: The candidate pools: ``sdoc``, ``sdc``, ``sdoa``, ``sda``, ``stc``, ``sta``, ``epc``, ``epa``.
            limit: Rank only the first N points (id order).
            sample: Rank a seeded random sample of N points (the config's seed).
            data_dir: The dataset root (None: the config's, else ``$ARGSIM_DATA``).

        Returns:
            An `argsim.evaluation.Evaluation` (a mapping): ``accuracy_at_1`` (primary), ``mrr`` (NaN when the
            ranker's lower ranks are bounds), ``random_accuracy`` (a random ranker's on the same pools) and
            ``points`` (also its `n`).

        Example:
            >>> import argsim
            >>> scores = argsim.CounterRetriever("bm25").evaluate("test", "sdoc", limit=20)
            >>> round(scores["accuracy_at_1"], 3), scores.n
            (0.65, 20)
        """
        from argsim.evaluation.counter import CounterArgumentEvaluator

        if limit is not None:
            check_count(limit, "limit")
        pools = dataset_points(split, setting, limit=limit, sample=sample, seed=self.config.seed,
                               data_dir=data_dir if data_dir is not None else self.config.data_dir)
        options = dict(self.options)
        model = options.pop("model", None)
        ev = CounterArgumentEvaluator({setting: pools}, name=split, config=self.config, ranker=self.ranker,
                                      options=options).evaluate(model)
        return Evaluation(ev.task, {"accuracy_at_1": ev[f"{setting}_accuracy@1"], "mrr": ev[f"{setting}_mrr"],
                                    "random_accuracy": ev.details["random_accuracy"][setting], "points": ev.n},
                          "accuracy_at_1", data=f"{split}/{setting}", n=ev.n, details={"ranker": self.ranker})
