"""Retrieve-then-rerank over the candidate pools of `argsim.data.counterargs.build_pools` (any setting).

First stage: BM25 or a model's retrieval head (dot product; a classification-only model: the base-embedding
cosine); second stage: a model's classification head on the base embeddings (once per distinct text) or a
cross-encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from argsim.backend.resolve import PairScorer, pair_scorer
from argsim.backend.safety import check_model_folder, model_files
from argsim.config import RunConfig
from argsim.counter.core.evaluation import at1_over_k_hits, rerank_order
from argsim.counter.core.pools import PoolIndex
from argsim.counter.lexical.baselines import bm25_scores
from argsim.counter.neural.config import CROSS_MARKER, NeuralConfig, is_cross_folder
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.store import is_model_folder, load_model, read_config, resolve_folder
from argsim.data.counterargs import Argument
from argsim.errors import ModelError
from argsim.io import read_json_as
from argsim.schemas import CounterCrossMarker
from argsim.vectors import l2_normalize


@dataclass
class StageResult:
    """Per point: pool positions ranked by the first stage (top `kmax`), and second-stage scores of those."""

    top: dict[str, np.ndarray]
    second: dict[str, np.ndarray | None]
    first_full: dict[str, np.ndarray]


def check_stage(folder: str | Path, option: str = "model") -> None:
    """Before any work: `folder` is a trained counter model or cross-encoder folder (or a shipped counter model's
    name) that is data (the one model folder check) with a readable config; ModelError (one line) otherwise."""
    folder = resolve_folder(folder)
    if not (is_model_folder(folder) or is_cross_folder(folder)):
        raise ModelError(f"{option} {folder}: not a trained counter-argument model or cross-encoder folder (train "
                         "one with `argsim train bipolar`)")
    check_model_folder(folder)
    if is_model_folder(folder):
        with model_files(folder, "counter-argument model"):
            read_config(folder)


def load_stage(spec: str | Path | None, precision: str = "auto", config=None):
    """'bm25', a CounterModel folder (or a shipped counter model's name), 'cosine:<model>' (an untrained
    Unipolar-ret, identity head: the model's cosine) or a cross-encoder folder -> the stage object (None stays
    None). A cross-encoder scores on the CPU in `precision` (auto = fp32), CounterModel stages in fp32; their
    transformers run in `config`'s runtime (None: PyTorch)."""
    if spec in (None, "none", "bm25"):
        return "bm25" if spec == "bm25" else None
    if is_cross_folder(spec):  # the backend's pair scorer, on the CPU, at the token limit its marker file names
        with model_files(spec, "cross-encoder"):
            max_length = int(read_json_as(CounterCrossMarker, Path(spec) / CROSS_MARKER).get("max_length", 256))
        return pair_scorer(spec, replace(config or RunConfig(), device="cpu", precision=precision), max_length,
                           batch_size=32)
    model = (CounterModel(NeuralConfig(kind="unipolar-ret", base_model=str(spec).split(":", 1)[1]))
             if str(spec).startswith("cosine:") else load_model(spec))
    model.run_config = config
    return model


def _bases(model, points: list[Argument], index: PoolIndex, cache: dict) -> tuple[np.ndarray, np.ndarray]:
    key = id(model)
    if key not in cache:
        cache[key] = (model.embed_texts([a.text for a in index.universe], side="candidate"),
                      model.embed_texts([p.text for p in points], side="point"))
    return cache[key]


def run_stages(points: list[Argument], pools: dict[str, list[Argument]], first, second,
               kmax: int, show_progress: bool = False) -> StageResult:
    """First-stage scores over each whole pool; second-stage scores for the first stage's top `kmax`."""
    index = PoolIndex.build(points, pools)
    cache: dict = {}
    if first == "bm25":
        first_full = bm25_scores(points, pools)
    else:  # the retrieval head's dot product
        u, q = _bases(first, points, index, cache)
        ret_c, ret_q = first.retrieval_numpy(u, "candidate"), first.retrieval_numpy(q, "point")
        if first.ret_point is None:  # classification-only model: cosine of the base embeddings
            ret_c, ret_q = l2_normalize(ret_c), l2_normalize(ret_q)
        first_full = {p.id: ret_c[index.columns[p.id]] @ ret_q[i] for i, p in enumerate(points)}
    top = {pid: np.argsort(-s, kind="stable")[:kmax] for pid, s in first_full.items()}
    second_scores: dict[str, np.ndarray | None] = {p.id: None for p in points}
    if isinstance(second, PairScorer):
        pairs = [(p.text, pools[p.id][j].text) for p in points for j in top[p.id]]
        flat = second.score(pairs, show_progress=show_progress)
        ends = np.cumsum([len(top[p.id]) for p in points])
        second_scores = {p.id: flat[end - len(top[p.id]):end] for p, end in zip(points, ends, strict=True)}
    elif second is not None:
        u, q = _bases(second, points, index, cache)
        second_scores = {p.id: second.cls_scores_numpy(q[i][None, :], u[index.columns[p.id][top[p.id]]])
                         for i, p in enumerate(points)}
    return StageResult(top=top, second=second_scores, first_full=first_full)


def scores_for_k(result: StageResult, k: int) -> dict[str, np.ndarray]:
    """Pool-aligned scores that reproduce the order (best = n, worst = 1): the first stage's top k reordered by the
    second stage, then the rest."""
    out = {}
    for pid, first in result.first_full.items():
        order = np.argsort(-first, kind="stable")
        if (sec := result.second[pid]) is not None and k > 1:
            head = rerank_order(sec[:k])
            order[:len(head)] = order[head]
        out[pid] = (len(order) - np.argsort(order)).astype(np.float64)
    return out


def hits_over_k_pools(result: StageResult, pools: dict[str, list[Argument]], gold: dict[str, str],
                      ks: Sequence[int]) -> dict[int, np.ndarray]:
    """Per point (in `result.top` order), for every K: is the best of the first stage's top K (by the second
    stage) the gold counter? (`argsim.counter.core.evaluation.at1_over_k_hits`)"""
    ranked = (([pools[pid][j].id for j in top], result.second[pid]) for pid, top in result.top.items())
    return at1_over_k_hits(ranked, [gold[pid] for pid in result.top], ks)
