"""Feature metrics on hand-checked toy texts, aggregation order, ranking metrics, BM25 against rank-bm25."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.counter.lexical.features import AGGREGATIONS, FEATURE_NAMES, aggregate, inverse_distance
from argsim.counter.lexical.textrep import BM25Index, cosine_similarity, manhattan_distance, shared_term_matrices
from argsim.counter.lexical.wmd import WMDEngine
from argsim.metrics.ranking import GoldRank, accuracy_at_1, gold_rank, mrr


@pytest.fixture(scope="module")
def glove():
    from argsim.counter.lexical.wordvecs import word_vectors

    return word_vectors("glove50")


def _tf(a: str, b: str):
    x, y = shared_term_matrices([a], [b])
    return x, y


def test_manhattan_and_cosine_on_toy_texts():
    same = _tf("the cat sat", "the cat sat")
    assert manhattan_distance(same[0].l1(), same[1].l1())[0, 0] == pytest.approx(0.0)
    assert cosine_similarity(same[0].counts, same[1].counts)[0, 0] == pytest.approx(1.0)
    disjoint = _tf("red apples", "blue cars")
    assert manhattan_distance(disjoint[0].l1(), disjoint[1].l1())[0, 0] == pytest.approx(2.0)
    assert cosine_similarity(disjoint[0].counts, disjoint[1].counts)[0, 0] == 0.0
    # "a a b" vs "a c": l1 vectors (2/3, 1/3, 0) and (1/2, 0, 1/2): |1/6| + 1/3 + 1/2 = 1
    half = _tf("a a b", "a c")
    assert manhattan_distance(half[0].l1(), half[1].l1())[0, 0] == pytest.approx(1.0)
    assert cosine_similarity(half[0].counts, half[1].counts)[0, 0] == pytest.approx(2 / (np.sqrt(5) * np.sqrt(2)))
    empty = _tf("", "words here")
    assert manhattan_distance(empty[0].l1(), empty[1].l1())[0, 0] == pytest.approx(1.0)
    assert cosine_similarity(empty[0].counts, empty[1].counts)[0, 0] == 0.0


def test_inverse_distance():
    assert inverse_distance(np.array([0.0, 1.0, np.inf])).tolist() == [1.0, 0.5, 0.0]


def test_wmd_toy_texts_match_gensim(glove):
    texts = ["the cat sat on the mat", "the cat sat on the mat", "stock markets fell sharply",
             "zzqxv qqzzk", "", "cat", "cat cat"]
    eng = WMDEngine(glove, texts)
    assert eng.distance(0, 1) == 0.0
    assert eng.distance(5, 6) == 0.0
    assert eng.distance(0, 3) == np.inf and eng.distance(4, 0) == np.inf  # nothing known after OOV removal
    tok = [t.split() for t in texts]
    for i, j in [(0, 2), (2, 5), (0, 5)]:
        d = eng.distance(i, j)
        assert d > 0.5
        assert d == pytest.approx(glove.wmdistance(tok[i], tok[j]), abs=1e-9)
        assert eng.centroid_bounds(i, np.array([j]))[0] <= d
        assert eng.relaxed_bounds(i, np.array([j]))[0] <= d
        assert eng.pair_bound(i, j)[0] <= d
        assert eng.pair_upper(i, j, eng.pair_bound(i, j)[1]) >= d  # the independent plan's cost
        assert eng.upper_bounds(i, np.array([j]))[0] >= eng.pair_upper(i, j, eng.pair_bound(i, j)[1]) - 1e-5
    assert glove.wmdistance(tok[0], tok[3]) == np.inf


def test_aggregation_order_is_min_max_product_sum():
    assert AGGREGATIONS == ("min", "max", "prod", "sum")
    assert aggregate(np.array(0.2), np.array(0.5)).tolist() == pytest.approx([0.2, 0.5, 0.1, 0.7])
    assert aggregate(np.array(0.5), np.array(0.2)).tolist() == pytest.approx([0.2, 0.5, 0.1, 0.7])
    assert FEATURE_NAMES[:8] == ("manhattan-min", "manhattan-max", "manhattan-prod", "manhattan-sum",
                                 "wmd-min", "wmd-max", "wmd-prod", "wmd-sum")
    assert FEATURE_NAMES[16:] == ("bert-min", "bert-max", "bert-prod", "bert-sum")


def test_bm25_okapi_equals_rank_bm25_and_lucene_guards_tiny_pools():
    from rank_bm25 import BM25Okapi

    docs = ["the cat sat on the mat", "dogs chase cats", "the stock market fell", "cats and dogs are pets"]
    query = "the cat and the dog"
    dm, qm = shared_term_matrices(docs, [query])
    ours = BM25Index.fit(dm, idf="okapi").scores(qm.counts)[0]
    ref = BM25Okapi([d.split() for d in docs]).get_scores(query.split())
    assert ours == pytest.approx(ref, abs=1e-12)
    # two documents, the query word in one of them: Okapi idf = log(1.5/1.5) = 0 -> no ranking signal
    dm, qm = shared_term_matrices(["cats purr", "dogs bark"], ["cats"])
    assert BM25Index.fit(dm, idf="okapi").scores(qm.counts)[0].tolist() == [0.0, 0.0]
    lucene = BM25Index.fit(dm, idf="lucene").scores(qm.counts)[0]
    assert lucene[0] > 0 and lucene[1] == 0


def test_ranking_metrics_with_ties():
    scored = {"p1": [("a", 0.9), ("b", 0.5)], "p2": [("a", 0.4), ("b", 0.8), ("c", 0.1)],
              "p3": [("a", 0.7), ("b", 0.7)]}
    gold = {"p1": "a", "p2": "a", "p3": "a"}
    assert gold_rank(scored["p2"], "a") == GoldRank(better=1, tied=0, pool=3)
    assert accuracy_at_1(scored, gold) == pytest.approx((1 + 0 + 0.5) / 3)
    assert accuracy_at_1(scored, gold, ties="pessimistic") == pytest.approx(1 / 3)
    assert accuracy_at_1(scored, gold, ties="optimistic") == pytest.approx(2 / 3)
    assert mrr(scored, gold) == pytest.approx((1 + 0.5 + 0.75) / 3)
    aligned = {"p1": (["a", "b"], np.array([0.1, 0.2]))}
    assert accuracy_at_1(aligned, {"p1": "b"}) == 1.0


def test_stop_words_are_dropped_for_bag_of_words_metrics(glove):
    from argsim.counter.lexical.stopwords import content_tokens

    assert content_tokens("The cat is on the mat", "gensim") == ["cat", "mat"]
    assert content_tokens("The cat is on the mat", "none") == ["the", "cat", "is", "on", "the", "mat"]
    # only stop words differ: identical after removal, different with them
    x, y = shared_term_matrices(["the cat sat on a mat"], ["a cat sat upon the mat"], stopwords="gensim")
    assert manhattan_distance(x.l1(), y.l1())[0, 0] == pytest.approx(0.0)
    x, y = shared_term_matrices(["the cat sat on a mat"], ["a cat sat upon the mat"], stopwords="none")
    assert manhattan_distance(x.l1(), y.l1())[0, 0] > 0.3
    texts = ["the cat sat on a mat", "a cat sat upon the mat", "it is what it is"]
    assert WMDEngine(glove, texts, stopwords="gensim").distance(0, 1) == 0.0
    assert WMDEngine(glove, texts, stopwords="none").distance(0, 1) > 0.1
    assert WMDEngine(glove, texts, stopwords="gensim").distance(0, 2) == np.inf  # nothing left after removal
    with pytest.raises(ValueError, match="stop-word list"):
        content_tokens("x", "french")
