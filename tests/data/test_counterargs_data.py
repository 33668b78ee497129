"""counterargs-18 loader and candidate pools on the real corpus."""

from __future__ import annotations

import pytest

from argsim.data.counterargs import (
    SETTING_FILES,
    SETTINGS,
    build_pools,
    load_counterargs,
    pool_type_counts,
    read_type_counts,
)


@pytest.fixture(scope="module")
def corpus(data_dir):
    return load_counterargs(data_dir)


def test_counts_match_source(corpus):
    assert len(corpus.arguments) == 13532
    assert [len(corpus.pairs(s)) for s in ("training", "validation", "test")] == [4065, 1287, 1401]
    assert len(corpus.all_points("test")) == 1406


def test_point_parts(corpus):
    p = corpus.by_id["test/culture/arts-human-rights-thbt-social-disgust-legitimate-grounds-restriction-artistic/"
                     "pro/pro01a-point.txt"]
    assert p.conclusion == "Just shock-tactics, at the cost of better art"
    assert p.premise.startswith("Sometimes artists go too far")
    assert p.text.startswith(p.conclusion) and p.text.endswith(p.premise)
    c = corpus.true_counter(p)
    assert c.id.endswith("pro/pro01b-counter.txt") and c.conclusion == "" and c.premise == c.text
    assert (p.argues, c.argues) == ("pro", "con")


def test_test_pools_reproduce_official_type_counts(corpus, data_dir):
    official = read_type_counts(data_dir / "counterargs18/03-pairs-best-counter-task/test/"
                                           "00-argument-pair-type-counts.tsv")
    assert len(official) == 8
    for setting in SETTINGS:
        assert pool_type_counts(corpus, "test", setting) == official[SETTING_FILES[setting]], setting


def test_pool_invariants(corpus):
    pools = build_pools(corpus, "test", "sdoc")
    for p in corpus.points("test"):
        gold = corpus.true_counter(p)
        ids = [c.id for c in pools[p.id]]
        assert gold.id in ids and p.id not in ids
        assert sum(c.text == gold.text for c in pools[p.id]) == 1
        assert all(c.kind == "counter" and c.argues != p.argues for c in pools[p.id])
