"""ROUGE-1 on hand-computed cases: clipping, recall/precision/F, units, the length limit, macro averaging."""

from __future__ import annotations

import pytest

from argsim.metrics.rouge import char_units, rouge1, rouge1_corpus, token_units
from argsim.minutes.evaluate import rouge_nlp


def ginza_nlp():
    return rouge_nlp(["content"])


def test_rouge1_clips_counts():
    # reference a a b c (4), candidate a b b d (4): overlap min(1,2)+min(2,1)... = a:1, b:1 -> 2
    s = rouge1(["a", "b", "b", "d"], ["a", "a", "b", "c"])
    assert s.recall == pytest.approx(2 / 4) and s.precision == pytest.approx(2 / 4) and s.f == pytest.approx(0.5)
    s = rouge1(["a"], ["a", "b", "c", "d"])
    assert (s.recall, s.precision) == (pytest.approx(0.25), 1.0) and s.f == pytest.approx(2 * 0.25 / 1.25)
    assert rouge1([], ["a"]).recall == 0.0 and rouge1(["a"], []).f == 0.0


def test_char_units_drop_punctuation_and_enumeration():
    assert char_units("〔1〕都は、対策を。") == ["都", "は", "対", "策", "を"]
    assert char_units("２０２０年") == ["2", "0", "2", "0", "年"]  # NFKC


def test_char_corpus_macro_average_and_length_limit():
    # item 1: ref 都政運営 (4 chars), cand 都政 -> recall 2/4; item 2: candidate over its limit -> 0
    rep = rouge1_corpus(["都政", "防災対策を強化"], ["都政運営", "防災対策"], limits=[10, 5], unit="char")
    assert rep.over_limit == 1 and rep.n == 2
    assert rep.recall == pytest.approx((0.5 + 0.0) / 2)
    free = rouge1_corpus(["都政", "防災対策を強化"], ["都政運営", "防災対策"], limits=None, unit="char")
    assert free.recall == pytest.approx((0.5 + 1.0) / 2)
    assert free.precision == pytest.approx((1.0 + 4 / 7) / 2)


def test_content_words_use_sudachi_lemmas():
    units = token_units(["被災地の復興を支援する。", "被災地を支援した"], ginza_nlp(), "content")
    assert units[0] == ["被災地", "復興", "支援"]  # particles and the light verb する (AUX) are not content
    # 被災地を支援した -> 被災地, 支援: 2 of the 3 reference content words
    s = rouge1(units[1], units[0])
    assert units[1] == ["被災地", "支援"] and s.recall == pytest.approx(2 / 3) and s.precision == 1.0
    rep = rouge1_corpus(["被災地を支援した"], ["被災地の復興を支援する。"], unit="content", nlp=ginza_nlp())
    assert rep.recall == pytest.approx(2 / 3)


def test_token_units_need_a_tokenizer():
    with pytest.raises(ValueError, match="needs a tokenizer"):
        rouge1_corpus(["a"], ["a"], unit="content")
