"""counterargs-18 loader and candidate pools on the real corpus."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from argsim.data.counterargs import SETTING_FILES, SETTINGS, CounterCorpus, build_pools, load_counterargs


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


def pool_type_counts(corpus: CounterCorpus, split: str, setting: str) -> dict[str, int]:
    """Counts of candidate types (the official labels, `true` for the own counter) over all pools."""
    counts: dict[str, int] = defaultdict(int)
    for pid, cands in build_pools(corpus, split, setting).items():
        point = corpus.by_id[pid]
        gold_id = corpus.true_counter(point).id
        for c in cands:
            if c.id == gold_id:
                counts["true"] += 1
            elif c.debate == point.debate and c.theme == point.theme:
                counts[f"debate-{'same' if c.stance == point.stance else 'oppo'}-{c.kind}"] += 1
            else:
                counts[f"{'theme' if c.theme == point.theme else 'portal'}-{c.kind}"] += 1
    return dict(counts)


def read_type_counts(path: str | Path) -> dict[str, dict[str, int]]:
    """Parse the ragged `00-argument-pair-type-counts.tsv`: file stem -> {type: count}."""
    out: dict[str, dict[str, int]] = {}
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        cells = [c for c in line.split("\t") if c.strip()]
        if not cells:
            continue
        name = cells[0].removesuffix(".zip").removesuffix(".tsv")
        counts = {}
        for cell in cells[1:]:
            label, _, num = cell.strip().rpartition(" ")
            counts[label] = int(num)
        out[name] = counts
    return out


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
