"""argsim.counter.core: the one accuracy@1/K, the rerank order and the ranker registry, on hand-built cases."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.counter.core.evaluation import RowScore, at1_over_k_hits, rerank_order, reranked_best


def test_rerank_order_is_stable_on_ties() -> None:
    assert rerank_order(np.array([0.2, 0.9, 0.2, 0.9])).tolist() == [1, 3, 0, 2]


def test_at1_over_k_on_a_hand_built_case() -> None:
    # point 1: first stage a > b > c, head prefers b (0.9), then c (0.5); gold b
    # point 2: no second stage (retrieval only): every K is the first stage's top; gold x
    # point 3: head ties a and b: the earlier (first-stage) one wins; gold b -> miss at every K
    # point 4: empty top list: a miss
    ranked = [(["a", "b", "c"], np.array([0.1, 0.9, 0.5])), (["x", "y"], None),
              (["a", "b"], np.array([0.5, 0.5])), ([], None)]
    hits = at1_over_k_hits(ranked, ["b", "x", "b", "z"], ks=(1, 2, 3, 10))
    assert {k: h.tolist() for k, h in hits.items()} == {1: [False, True, False, False], 2: [True, True, False, False],
                                                        3: [True, True, False, False], 10: [True, True, False, False]}
    # K beyond the list is the whole list; K = 1 ignores the head
    assert reranked_best(np.array([7, 8, 9]), np.array([0.0, 0.0, 1.0]), 1) == 7
    assert reranked_best(np.array([7, 8, 9]), np.array([0.0, 0.0, 1.0]), 50) == 9
    score = RowScore(["p1", "p2", "p3", "p4"], hits)
    assert score.acc == {1: 0.25, 2: 0.5, 3: 0.5, 10: 0.5}
    assert score.aligned(2, ["p2", "p1"]).tolist() == [True, True]


def test_feature_rankers_register_as_a_family() -> None:
    from argsim.counter.core.registry import RANKER_FAMILIES, get_ranker
    from argsim.errors import ArgsimError

    assert get_ranker("feature:wmd-sum").name == "feature:wmd-sum" and "feature" in RANKER_FAMILIES
    with pytest.raises(ArgsimError, match="unknown feature"):
        get_ranker("feature:nope")
    with pytest.raises(ArgsimError, match="unknown ranking method"):
        get_ranker("nope")


def test_run_ranker_records_whether_ranks_below_the_top_k_are_exact(monkeypatch) -> None:
    """Every ranking record carries `exact_rank`: the ranker's `ScoreDict.exact_rank` (False when the scores below
    its top k are bounds), True for a ranker that returns a plain dict; the ranker's pruning stats go to the
    run's options."""
    from argsim.counter.core.registry import RANKERS, RankerInfo, ScoreDict
    from argsim.counter.core.run import run_ranker
    from argsim.data.counterargs import Argument

    def arg(i: str, kind: str) -> Argument:
        return Argument(i, "test", "t", "d", "pro", kind, 1, "", i, i)

    points = [arg("p1", "point"), arg("p2", "point")]
    pools = {p.id: [arg(f"{p.id}-c{j}", "counter") for j in range(3)] for p in points}
    gold = {"p1": "p1-c0", "p2": "p2-c2"}
    scores = {p.id: np.array([0.3, 0.2, 0.1]) for p in points}
    for name, fn, exact in (("test-bounds", lambda *a, **k: ScoreDict(scores, exact_rank=False, stats={"pruned": 4}),
                             False),
                            ("test-plain", lambda *a, **k: dict(scores), True)):
        monkeypatch.setitem(RANKERS, name, RankerInfo(name, fn, ""))
        run = run_ranker(name, points, pools, gold, setting="sdoc", split="test", top_k=2)
        assert [r["exact_rank"] for r in run.records] == [exact, exact], name
        assert [r["gold_better"] for r in run.records] == [0, 2] and [len(r["top"]) for r in run.records] == [2, 2]
        assert run.options.get("stats") == ({"pruned": 4} if not exact else None), name
