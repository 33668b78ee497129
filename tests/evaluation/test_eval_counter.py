"""CounterArgumentEvaluator against a hand computation on a tiny pool, and the reranking model's @1/K."""

from __future__ import annotations

import numpy as np
import pytest
from eval_helpers import TableEncoder

from argsim.data.counterargs import Argument
from argsim.evaluation import CounterArgumentEvaluator


def _arg(aid: str, kind: str) -> Argument:
    return Argument(id=aid, split="test", theme="t", debate="d", stance="pro", kind=kind, number=1,
                    conclusion="", premise=aid, text=aid)


def _tiny() -> tuple[dict, TableEncoder]:
    """p1 ranks its true counter c1 first (cos .995 vs .447, .6); p2 second (c2 .894 > c3 .8 > c1 .0995); p3's
    true counter c1 ties with c4 (same vector): expected credit 1/2 for accuracy@1, (1 + 1/2) / 2 for RR."""
    vectors = {"p1": [1, 0], "p2": [0, 1], "p3": [1, 0], "c1": [1, 0.1], "c2": [0.5, 1], "c3": [0.6, 0.8],
               "c4": [1, 0.1]}
    p = {k: _arg(k, "point") for k in ("p1", "p2", "p3")}
    c = {k: _arg(k, "counter") for k in ("c1", "c2", "c3", "c4")}
    pools = {"p1": [c["c1"], c["c2"], c["c3"]], "p2": [c["c1"], c["c2"], c["c3"]], "p3": [c["c4"], c["c1"]]}
    gold = {"p1": "c1", "p2": "c3", "p3": "c1"}
    return {"sdoc": (list(p.values()), pools, gold)}, TableEncoder(vectors)


def test_accuracy_and_mrr_by_hand_with_an_expected_tie():
    pools, encoder = _tiny()
    ev = CounterArgumentEvaluator(pools, name="tiny")
    result = ev.evaluate(encoder)
    assert result.primary_metric == "sdoc_accuracy@1"
    assert result["sdoc_accuracy@1"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert result["sdoc_mrr"] == pytest.approx((1 + 1 / 2 + (1 + 1 / 2) / 2) / 3)
    np.testing.assert_allclose(ev.unit_values, [1.0, 0.0, 0.5])
    assert ev.resample_primary(np.arange(3)[None])[0] == pytest.approx(result.primary)
    assert ev.resample_primary(np.array([[0, 0, 2]]))[0] == pytest.approx((1 + 1 + 0.5) / 3)
    assert result.details["random_accuracy"]["sdoc"] == pytest.approx((1 / 3 + 1 / 3 + 1 / 2) / 3)


def test_a_registered_ranker_ranks_with_the_model_as_its_option():
    pools, encoder = _tiny()
    by_ranker = CounterArgumentEvaluator(pools, ranker="emb-cosine").evaluate(encoder)
    assert dict(by_ranker) == pytest.approx(dict(CounterArgumentEvaluator(pools).evaluate(encoder)))


def test_in_memory_model_equals_its_name_on_real_pools(data_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    from argsim.backend import model_path
    from argsim.config import RunConfig

    ev = CounterArgumentEvaluator.from_dataset("validation", limit=8, settings=["sdoc"],
                                               config=RunConfig(cache_dir=tmp_path / "cache"))
    st = SentenceTransformer(str(model_path("minilm")), device="cpu")
    assert dict(ev.evaluate(st)) == pytest.approx(dict(ev.evaluate("minilm")), abs=1e-9)
    assert ev.n_units == 8


def test_a_reranking_model_reports_at1_over_k_and_ranks_at_its_depth(data_dir):
    """The shipped Bipolar-encoder: its accuracy@1 is its ranking at depth k (= the `bipolar` ranker's), its
    accuracy@1/k the same figure, and accuracy@1/1 its retrieval head alone (the `bi-encoder`-style first stage)."""
    from argsim.backend.names import shipped_models
    from argsim.counter.core.evaluation import summarize
    from argsim.counter.core.run import dataset_points, run_ranker

    if "counter-bipolar" not in shipped_models():
        pytest.skip("counter-bipolar is not shipped in this checkout")
    points, pools, gold = dataset_points("validation", "sdoc", limit=10, data_dir=data_dir)
    result = CounterArgumentEvaluator({"sdoc": (points, pools, gold)}, k=10, ks=(1, 10)).evaluate("counter-bipolar")
    (ranker,) = summarize(run_ranker("bipolar", points, pools, gold, "sdoc", "validation", {"k": 10}).records)
    assert result["sdoc_accuracy@1"] == pytest.approx(ranker.accuracy_at_1)
    assert result["sdoc_accuracy@1/10"] == pytest.approx(ranker.accuracy_at_1)
    assert {"sdoc_accuracy@1/1", "sdoc_mrr"} <= set(result)
