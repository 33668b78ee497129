"""Retrieve, then rerank: faiss top-K by the retrieval head, reordered by the classification head (section 5.2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from argsim.backend import get_encoder
from argsim.backend.names import ENCODER_MANIFEST, MODELS, manifest_loader_name, shipped_folder
from argsim.config import RunConfig
from argsim.counter.core.evaluation import rerank_order
from argsim.counter.neural.heads import cls_probability
from argsim.counter.neural.index import build_index, check_index, search_excluding
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.store import load_model
from argsim.engine import Engine, engine_from_config
from argsim.errors import ModelError
from argsim.io import read_records, read_texts
from argsim.measure import timed
from argsim.schemas import CollectionRecord
from argsim.vectors import l2_normalize


class RetrieveRerank:
    """A candidate collection embedded once (base + retrieval embeddings) behind a faiss index: `rank` gives the
    retrieval head's top k, reranked by the classification head on the cached base embeddings. `engine` (None:
    this process) embeds the texts; the search and the rerank stay in this process (docs/scale.md)."""

    def __init__(self, model: CounterModel, texts: Sequence[str] | None = None, base: np.ndarray | None = None,
                 index_kind: str = "auto", engine: Engine | None = None, config: RunConfig | None = None) -> None:
        self.engine, self.config = engine, config
        if base is None and texts is None:
            raise ValueError("give the candidate texts or their base embeddings")
        check_index(index_kind, len(base) if base is not None else len(texts))  # before the embedding
        if base is None:
            base = model.embed_texts(list(texts), side="candidate", engine=engine, config=config)
        self.model, self.texts = model, list(texts) if texts is not None else None
        self.base = np.ascontiguousarray(base, dtype=np.float32)
        self.retrieval = model.retrieval_numpy(self.base, "candidate")
        self.index = build_index(self.retrieval, index_kind)
        # the query side's heads as plain numpy: no torch dispatch per query (what keeps one under a millisecond)
        head = model.ret_point
        self._ret_point = None if head is None else (head.linear.weight.detach().numpy().T.copy(),
                                                     head.linear.bias.detach().numpy().copy())
        self._normalize = model.config.normalize_retrieval
        self._cls = model.cls.params() if model.cls is not None else None
        self._by_text = _ids_by_text(self.texts or [])

    def rank(self, query_base: np.ndarray, k: int, exclude: list[set[int]] | None = None,
             rerank: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(ids (n, k), scores (n, k)) per query: retrieval top-k, reranked by the classifier when it exists."""
        query_base = np.atleast_2d(np.asarray(query_base, dtype=np.float32))
        q_ret = query_base
        if self._ret_point is not None:
            q_ret = query_base @ self._ret_point[0] + self._ret_point[1]
            q_ret = l2_normalize(q_ret) if self._normalize else q_ret
        scores, ids = search_excluding(self.index, q_ret.astype(np.float32), k, exclude)
        if not rerank or self._cls is None:
            return ids, scores
        for q, row in enumerate(ids):  # the padding (-1) stays last
            cand = row[row >= 0]
            p = cls_probability(self._cls, query_base[q], self.base[cand])
            order = rerank_order(p)
            ids[q, :len(cand)], scores[q, :len(cand)] = cand[order], p[order]
        return ids, scores

    def rank_texts(self, queries: Sequence[str], k: int, exclude_self: bool = True,
                   rerank: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Embed query texts and rank; a candidate with exactly the query's text is never returned."""
        base = self.model.embed_texts(list(queries), side="point", engine=self.engine, config=self.config)
        exclude = [set(self._by_text.get(q, ())) for q in queries] if exclude_self else None
        return self.rank(base, k, exclude, rerank=rerank)


def _ids_by_text(texts: Sequence[str]) -> dict[str, set[int]]:
    """Text -> the ids (positions) of the candidates with exactly that text."""
    by_text: dict[str, set[int]] = {}
    for i, t in enumerate(texts):
        by_text.setdefault(t, set()).add(i)
    return by_text


def _read_collection(path: Path) -> tuple[list[str], list[str]]:
    """(ids, texts) of a text file (one per line; ids 0, 1, ...) or a CSV/JSONL with a 'text' column (optional 'id')."""
    if path.suffix.lower() in (".txt", ".text"):
        texts = read_texts(path)
        return [str(i) for i in range(len(texts))], texts
    recs = read_records(path, CollectionRecord)
    return [str(r.get("id", i)) for i, r in enumerate(recs)], [r["text"] for r in recs]


def search_files(model: str | Path, candidates: Path, queries: Path, k: int = 10, index: str = "auto",
                 config: RunConfig | None = None) -> tuple[list[dict], dict]:
    """Rank the queries of one file against the candidates of another through faiss (`argsim rank counter-search`),
    a query never its own candidate: a trained counter model retrieves then reranks (`RetrieveRerank`); any other
    embedding model (the default, counter-fusion) ranks by the cosine of its query and document sides.

    Args:
        model: A trained counter model folder, a shipped model's name or any embedding model. candidates, queries:
            text files (one per line) or CSV/JSONL files with a 'text' column (and 'id'). k: candidates per query.
            index: the faiss index kind (`index.build_index`). config: the run's options (engine, cache, runtime).

    Returns:
        One dict per query (query_id, query, results: [{id, text, score}] best first), and the run's figures
        (kind, candidates, index_seconds, rank_seconds).

    Example:
        >>> lines, info = search_files("counter-fusion", Path("c.txt"), Path("q.txt"), k=3)  # doctest: +SKIP
    """
    (cand_ids, cand_texts), (q_ids, q_texts) = _read_collection(candidates), _read_collection(queries)  # first
    config = config or RunConfig()
    if _is_counter_model(model):
        m = load_model(model)
        with timed() as t_build:
            rr = RetrieveRerank(m, cand_texts, index_kind=index, engine=engine_from_config(config), config=config)
        with timed() as t_rank:
            ids, scores = rr.rank_texts(q_texts, k)
        kind = m.config.kind
    else:
        enc = get_encoder(str(model), config=config)
        check_index(index, len(cand_texts))  # before the embedding
        with timed() as t_build:
            faiss_index = build_index(enc.for_role("document").encode(cand_texts, normalize=True), index)
        with timed() as t_rank:
            by_text = _ids_by_text(cand_texts)
            q = enc.for_role("query").encode(q_texts, normalize=True)
            scores, ids = search_excluding(faiss_index, q, k, [by_text.get(t, set()) for t in q_texts])
        kind = f"{enc.name} (cosine)"
    lines = [{"query_id": qid, "query": qt,
              "results": [{"id": cand_ids[j], "text": cand_texts[j], "score": float(s)}
                          for j, s in zip(ids[i], scores[i], strict=True) if j >= 0]}
             for i, (qid, qt) in enumerate(zip(q_ids, q_texts, strict=True))]
    return lines, {"kind": kind, "candidates": len(cand_texts), "index_seconds": t_build["seconds"],
                   "rank_seconds": t_rank["seconds"]}


def _is_counter_model(model: str | Path) -> bool:
    """Whether `model` is for the trained counter models' path: a folder (shipped or not) whose manifest names the
    `counter-neural` loader, or one that no other loader takes (no argsim manifest naming one, no transformers
    config: its refusal is the counter model loader's one line); registry names and other model folders embed."""
    if str(model) in MODELS:
        return False
    folder = shipped_folder(str(model)) or Path(model).expanduser()
    if not folder.is_dir():
        return False
    if (folder / ENCODER_MANIFEST).is_file():
        try:
            return manifest_loader_name(folder) == "counter-neural"
        except ModelError:
            return True
    return not ((folder / "modules.json").is_file() or (folder / "config.json").is_file())
