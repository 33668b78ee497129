"""The open-collection counter-argument models that ship: `counter-retriever` (a LoRA adapter over MiniLM) and
`counter-fusion` (a config over two shipped models: the sum of counter-bi-encoder's and counter-retriever's cosines,
as one two-tower model). Each loads by name offline and reproduces its card's figures on both protocols' fixed
slices (counterargs-18 validation pools, setting sda; the ArguAna replica's validation split, one theme); the
fused model is the default of `CounterRetriever()`."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import argsim
from argsim.backend import get_encoder
from argsim.backend.adapters import base_sha256, sha256_file
from argsim.backend.names import ADAPTER_WEIGHTS, read_card, shipped_models
from argsim.cli.app import app
from argsim.evaluation.arguana import ArguAnaEvaluator
from argsim.modelbuild.publish import COUNTER_SLICE, arguana_slice


def test_the_retriever_ships_its_adapter_and_the_fusion_only_its_config():
    retriever, fusion = shipped_models()["counter-retriever"], shipped_models()["counter-fusion"]
    card = read_card(retriever)
    assert card["base_sha256"] == base_sha256("minilm") and card["adapter_sha256"] == sha256_file(
        retriever / ADAPTER_WEIGHTS)
    assert (retriever / ADAPTER_WEIGHTS).stat().st_size < 4 * 2**20
    assert card["figures"]["validation_ndcg_at_10"] == pytest.approx(0.518)
    assert sorted(p.name for p in fusion.iterdir()) == ["argsim_encoder.json", "card.json", "config.json"]
    card = read_card(fusion)
    assert card["artifact"] == "composite" and card["weights_sha256"] == sha256_file(fusion / "config.json")
    assert card["parts"] == ["counter-bi-encoder", "counter-retriever"] and card["normalize_parts"]
    # the fused model beats the Bi-encoder (0.563 / 0.434) on both protocols' test figures
    assert card["figures"]["test_ndcg_at_10"] > 0.563 and card["figures"]["test_epa_accuracy_at_1"] > 0.434
    listed = CliRunner().invoke(app, ["models"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and "counter-retriever" in listed.output and "counter-fusion" in listed.output


@pytest.mark.slow  # embeds an ArguAna slice with each tower: most of a cold run
@pytest.mark.parametrize("name", ["counter-retriever", "counter-fusion"])
def test_loads_by_name_and_reproduces_its_slice_figures(name, data_dir):
    card = read_card(shipped_models()[name])
    # the default of `CounterRetriever()` is the fused model: the cosine of its query and document sides
    retriever = argsim.CounterRetriever() if name == "counter-fusion" else argsim.CounterRetriever("emb-cosine",
                                                                                                  model=name)
    assert (retriever.ranker, retriever.options) == ("emb-cosine", {"model": name})
    got = retriever.evaluate(
        COUNTER_SLICE["split"], COUNTER_SLICE["setting"], limit=COUNTER_SLICE["limit"], data_dir=data_dir)
    assert got["points"] == card["slice"]["points"] == COUNTER_SLICE["limit"]
    assert got["accuracy_at_1"] == pytest.approx(card["slice"]["accuracy_at_1"], abs=1e-9)
    assert got["mrr"] == pytest.approx(card["slice"]["mrr"], abs=1e-4)
    data = arguana_slice()
    assert (len(data.queries), len(data.corpus)) == (card["slice"]["arguana_queries"],
                                                     card["slice"]["arguana_documents"]) == (47, 417)
    result = ArguAnaEvaluator(data).evaluate(name)
    assert result["ndcg_at_10"] == pytest.approx(card["slice"]["arguana_ndcg_at_10"], abs=1e-4)


def test_the_fusion_is_the_sum_of_its_parts_cosines():
    """Points through the query side, candidates through the document side: the fused inner product is the
    Bi-encoder's cosine (point tower against candidate tower) plus the retriever's cosine (one tower)."""
    fusion = get_encoder("counter-fusion", device="cpu")
    assert fusion.roles == {"query": "point", "document": "candidate"}
    points = ["School uniforms stop bullying."]
    candidates = ["Uniforms do nothing against bullying.", "Taxes fund public schools."]
    q, d = fusion.for_role("query").encode(points), fusion.for_role("document").encode(candidates)
    bi, ret = get_encoder("counter-bi-encoder", device="cpu"), get_encoder("counter-retriever", device="cpu")
    want = (bi.for_role("query").encode(points, normalize=True) @ bi.for_role("document").encode(
        candidates, normalize=True).T + ret.encode(points, normalize=True) @ ret.encode(candidates, normalize=True).T)
    np.testing.assert_allclose(q @ d.T, want, atol=1e-5)


def test_counter_search_defaults_to_the_fused_model(tmp_path):
    """`argsim rank counter-search` without --model ranks by the fused cosine (points as queries, candidates as
    documents); a query found among the candidates is never its own."""
    import json

    candidates = ["School uniforms stop bullying.", "Uniforms do nothing against bullying.",
                  "Taxes fund public schools.", "A ban on fast food takes away a free choice."]
    (tmp_path / "c.txt").write_text("\n".join(candidates) + "\n", encoding="utf-8")
    (tmp_path / "q.txt").write_text(candidates[0] + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["rank", "counter-search", "--candidates", str(tmp_path / "c.txt"), "--queries",
                                   str(tmp_path / "q.txt"), "--k", "3", "--out", str(tmp_path / "hits.jsonl")],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    (line,) = [json.loads(x) for x in (tmp_path / "hits.jsonl").read_text().splitlines()]
    fusion = get_encoder("counter-fusion", device="cpu")
    q = fusion.for_role("query").encode(candidates[:1], normalize=True)
    d = fusion.for_role("document").encode(candidates[1:], normalize=True)
    want = [candidates[1 + j] for j in np.argsort(-(q @ d.T)[0])]
    assert [r["text"] for r in line["results"]] == want
    np.testing.assert_allclose([r["score"] for r in line["results"]], np.sort(q @ d.T)[0][::-1], atol=1e-5)


def test_the_fused_model_is_known_as_two_tower_before_loading():
    """`argsim evaluate` and the other entry points decide from the folder alone whether a model has towers: the
    composite names none in its manifest, so they come from its parts."""
    from argsim.backend.names import manifest_roles, shipped_folder
    from argsim.benchmarks.evaluate import model_kind

    assert manifest_roles(shipped_folder("counter-fusion")) == manifest_roles(shipped_folder("counter-bi-encoder"))
    assert model_kind("counter-fusion") == "two-tower" and model_kind("counter-retriever") == "bi"
