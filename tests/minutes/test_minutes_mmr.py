"""EmbedRank++ selection on small vectors with hand-derived orders, key size and the length cap."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.minutes.mmr import MMRWeights, compose, key_size, select_embedrank, select_paper
from argsim.minutes.summarize import MinutesItem, SummarizeOptions, summarize_items

# d0=(1,0), d1=(0.8,0.6), d2=(0,1); Q = unit(mean) = (0.7474, 0.6644)
# cos(., Q) = 0.7474, 0.9966, 0.6644; cos(d0,d1)=0.8, cos(d1,d2)=0.6, cos(d0,d2)=0
D = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])


def test_pure_mmr_order_is_hand_derived():
    # k=1, m=s=0. Step 1: d1 (0.5*0.9966). Step 2: d0: 0.3737-0.5*0.8=-0.0263; d2: 0.3322-0.5*0.6=0.0322 -> d2.
    chosen = select_paper(D, 3, weights=MMRWeights(mmr_weight=1.0, m=0.0, s=0.0))
    assert [i for i, _ in chosen] == [1, 2, 0]
    assert chosen[0][1] == pytest.approx(0.5 * 0.99658, abs=1e-4)
    assert chosen[1][1] == pytest.approx(0.5 * 0.66436 - 0.5 * 0.6, abs=1e-4)


def test_topic_terms_change_the_order():
    # k=0.2, m=1 with topic (1,0): d0: 0.1*0.7474+1=1.0747; d1: 0.0997+0.8; d2: 0.0664 -> d0 first;
    # then d1: 0.0997-0.1*0.8+0.8=0.8197 > d2: 0.0664-0.1*0+0 -> d1, then d2.
    chosen = select_paper(D, 3, topic_vec=np.array([1.0, 0.0]), weights=MMRWeights(mmr_weight=0.2, m=1.0, s=0.0))
    assert [i for i, _ in chosen] == [0, 1, 2]
    assert chosen[1][1] == pytest.approx(0.2 * (0.5 * 0.99658 - 0.5 * 0.8) + 0.8, abs=1e-4)
    # the subtopic weight acts the same way: subtopic (0,1) with s=1 puts d2 first
    chosen = select_paper(D, 1, subtopic_vec=np.array([0.0, 1.0]), weights=MMRWeights(mmr_weight=0.2, m=0.0, s=1.0))
    assert chosen[0][0] == 2


def test_length_cap_skips_overflowing_sentences():
    # pure MMR prefers d1 (60 chars) but only 50 fit: d0 (30) then d2 (20) are taken; d1 never fits.
    chosen = select_paper(D, 3, weights=MMRWeights(1.0, 0.0, 0.0), lengths=[30, 60, 20], budget=50)
    assert [i for i, _ in chosen] == [0, 2]
    sentences = ["a" * 30, "b" * 60, "c" * 20]
    assert compose(sentences, chosen, 50) == "a" * 30 + "c" * 20  # document order
    assert compose(sentences, [(1, 1.0), (0, 0.5)], 50) == ("a" * 30 + "b" * 60)[:50]
    assert compose(sentences, [], 10, fallback=1) == "b" * 10


def test_key_size_is_budget_over_50():
    assert [key_size(b) for b in (50, 100, 150, 200, 300, 30)] == [1, 2, 3, 4, 6, 1]


def test_normalised_embedrank_starts_from_document_centre_then_diversifies():
    chosen = select_embedrank(D, 3, beta=0.5)
    assert chosen[0][0] == 1  # highest cos to the document mean
    # second step: ncos(d0,Q) > ncos(d2,Q) but d0 is closer to d1 (0.8 vs 0.6); with beta=0 only diversity counts
    assert [i for i, _ in select_embedrank(D, 2, beta=0.0)] == [1, 2]
    assert [i for i, _ in select_embedrank(D, 2, beta=1.0)] == [1, 0]


class _Fixed:
    """A tiny fake encoder for the pure selection logic: fixed vectors per text."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode(self, texts, **_):
        return np.array([self.table[t] for t in texts], dtype=np.float32)


def test_summarize_items_respects_budget_and_document_order():
    item = MinutesItem("x", ["あ" * 30, "い" * 40, "う" * 20], "話題", "小話題", budget=50)
    enc = _Fixed({"あ" * 30: [1, 0], "い" * 40: [0.8, 0.6], "う" * 20: [0, 1], "話題": [1, 0], "小話題": [0, 1]})
    out = summarize_items([item], enc, SummarizeOptions())[0]
    assert len(out["summary"]) <= 50 and out["key_size"] == 1
    assert out["selected"][0]["rank"] == 1
    lead = summarize_items([MinutesItem("y", ["あ" * 30, "い" * 40, "う" * 20], budget=100)], None,
                           SummarizeOptions(method="lead"))[0]
    assert lead["summary"] == "あ" * 30 + "い" * 40  # key size 2, both fit


def test_random_baseline_walks_one_seeded_permutation_per_item():
    """The random baseline takes, per item, the next permutation of the seed's generator and picks its sentences in
    that order, skipping those that would overflow the budget (the lead baseline on a shuffled item), up to the key
    size; the summary joins them in document order."""
    sentences = ["あ" * 30, "い" * 40, "う" * 20, "え" * 50, "お" * 10, "か" * 25, "き" * 5]
    items = [MinutesItem(name, sentences, budget=100) for name in ("a", "b", "c")]
    out = summarize_items(items, None, SummarizeOptions(method="random", seed=5, chars_per_key=25), quiet=True)
    rng = np.random.default_rng(5)
    for rec in out:
        expected, used = [], 0
        for i in rng.permutation(len(sentences)):
            if len(expected) < 4 and used + len(sentences[i]) <= 100:
                expected.append(int(i))
                used += len(sentences[i])
        assert rec["key_size"] == 4
        assert [s["index"] for s in rec["selected"]] == expected
        assert rec["summary"] == "".join(sentences[i] for i in sorted(expected))
    assert len({tuple(s["index"] for s in rec["selected"]) for rec in out}) > 1  # each item its own draw
