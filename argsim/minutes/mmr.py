"""EmbedRank++ sentence selection (Shirafuji et al., Eq. 6) and the original normalised MMR.

Eq. (6): argmax over unselected D_i of
    k * (0.5 * cos(D_i, Q) - 0.5 * max_{D_j in S} cos(D_i, D_j)) + m * cos(D_i, MT) + s * cos(D_i, ST)
with Q the mean of all sentence vectors, MT / ST the main topic and subtopic vectors (k=0.2, m=0.3, s=0.5;
the max term is 0 while S is empty). The original EmbedRank++ (Bennani-Smires et al., 2018) normalises the
similarities first (divide by the maximum, then 0.5 + (x - mean) / std; pairwise ones per column, as the
authors' reference implementation does) and selects by beta * ncos(D_i, Q) - (1 - beta) * max ncos(D_i, D_j).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from argsim.options import setting
from argsim.vectors import l2_normalize


@dataclass(frozen=True)
class MMRWeights:
    """The weights of Eq. (6) (the paper's values are the defaults): the paper's k is `mmr_weight` (a weight, where
    argsim's `k` is always a count)."""

    mmr_weight: float = setting(0.2, "Eq. 6 weight k of the MMR part.", min=0)
    m: float = setting(0.3, "Eq. 6 weight of cos(sentence, main topic).", min=0)
    s: float = setting(0.5, "Eq. 6 weight of cos(sentence, subtopic).", min=0)


def _unit(x: np.ndarray) -> np.ndarray:
    return l2_normalize(np.asarray(x, dtype=np.float64))


def key_size(budget: int, chars_per_key: int = 50) -> int:
    """Number of sentences to extract: budget / 50 (Eq. 7), at least 1."""
    return max(1, int(budget) // chars_per_key)


def select_paper(sent_vecs: np.ndarray, n: int, topic_vec: np.ndarray | None = None,
                 subtopic_vec: np.ndarray | None = None, weights: MMRWeights = MMRWeights(),
                 lengths: Sequence[int] | None = None, budget: int | None = None) -> list[tuple[int, float]]:
    """Greedy Eq. (6) selection of up to `n` sentences; returns (index, score) in selection order.

    With `lengths` and `budget`, a sentence that would overflow the remaining budget is skipped."""
    d = _unit(sent_vecs)
    q = _unit(d.mean(axis=0)) if len(d) else d.mean(axis=0)
    rel_q, pair = d @ q, d @ d.T
    topical = np.zeros(len(d))  # the topic part m * cos(D, MT) + s * cos(D, ST)
    for vec, weight in ((topic_vec, weights.m), (subtopic_vec, weights.s)):
        if vec is not None and weight:
            topical += weight * (d @ _unit(vec))

    def score(i: int, sel: list[int]) -> float:  # the max term is 0 while nothing is selected
        return weights.mmr_weight * (0.5 * rel_q[i] - 0.5 * max(pair[i, sel], default=0.0)) + topical[i]

    return _greedy(len(d), n, score, lengths, budget)


def select_embedrank(sent_vecs: np.ndarray, n: int, beta: float = 0.5, lengths: Sequence[int] | None = None,
                     budget: int | None = None) -> list[tuple[int, float]]:
    """Original EmbedRank++ normalised MMR (no topic terms)."""
    d = _unit(sent_vecs)
    if len(d) == 0:
        return []
    doc_sim = d @ _unit(d.mean(axis=0))
    doc_norm = doc_sim / max(doc_sim.max(), 1e-12)
    std = doc_norm.std()
    doc_norm = 0.5 + (doc_norm - doc_norm.mean()) / (std if std > 0 else 1.0)
    pair = d @ d.T
    if len(d) > 1:
        np.fill_diagonal(pair, np.nan)
        pair = pair / np.maximum(np.nanmax(pair, axis=0), 1e-12)
        col_std = np.nanstd(pair, axis=0)
        pair = 0.5 + (pair - np.nanmean(pair, axis=0)) / np.where(col_std > 0, col_std, 1.0)
        np.fill_diagonal(pair, 0.0)

    def score(i: int, sel: list[int]) -> float:
        if not sel:
            return float(doc_sim[i])  # the reference code starts from the most document-similar candidate
        return float(beta * doc_norm[i] - (1 - beta) * max(pair[i, sel]))

    return _greedy(len(d), n, score, lengths, budget)


def _greedy(count: int, n: int, score, lengths, budget) -> list[tuple[int, float]]:
    remaining = list(range(count))
    chosen: list[tuple[int, float]] = []
    used = 0
    while remaining and len(chosen) < n:
        sel = [i for i, _ in chosen]
        scored = sorted(((score(i, sel), i) for i in remaining), key=lambda t: (-t[0], t[1]))
        pick = next(((i, float(sc)) for sc, i in scored
                     if budget is None or lengths is None or used + lengths[i] <= budget), None)
        if pick is None:
            break
        chosen.append(pick)
        remaining.remove(pick[0])
        used += lengths[pick[0]] if lengths is not None else 0
    return chosen


def compose(sentences: Sequence[str], chosen: Sequence[tuple[int, float]], budget: int,
            fallback: int | None = None) -> str:
    """Join the chosen sentences in document order, cut at `budget` characters (cap `fit`: the selection already
    respects the budget; cap `truncate`: the joined text is cut); if nothing was chosen, the best sentence
    (`fallback`) is cut to the budget."""
    order = sorted(i for i, _ in chosen)
    if not order and fallback is not None:
        return sentences[fallback][:budget]
    return "".join(sentences[i] for i in order)[:budget]
