"""Query and document roles (`Encoder.for_role`, `argsim.encode(role=...)`, `argsim embed --role`): a two-tower
model encodes only with a role, a one-tower model ignores it or applies its own prompt for it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import argsim
from argsim.backend import get_encoder, model_path
from argsim.backend.names import manifest_roles, write_manifest
from argsim.cli.app import app
from argsim.errors import ModelError

TEXTS = ["School uniforms stop bullying.", "Uniforms do nothing against bullying; children find other targets."]


def test_a_two_tower_model_is_refused_without_a_role_and_encodes_each_side_with_its_tower(tmp_path) -> None:
    config = argsim.RunConfig(cache_dir=tmp_path)
    with pytest.raises(ModelError, match="two towers .*query: its point tower, document: its candidate tower"):
        argsim.encode(TEXTS, model="counter-bi-encoder", config=config)
    q = argsim.encode_query(TEXTS, model="counter-bi-encoder", config=config)
    d = argsim.encode(TEXTS, model="counter-bi-encoder", config=config, role="document")
    assert q.shape == d.shape == (2, 384) and not np.allclose(q, d, atol=1e-3)
    np.testing.assert_array_equal(argsim.encode_document(TEXTS, model="counter-bi-encoder", config=config), d)
    with pytest.raises(ModelError, match="unknown role 'point'"):
        argsim.encode(TEXTS, model="counter-bi-encoder", role="point", config=config)


def test_embed_role_on_the_command_line(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    runner = CliRunner()
    refused = runner.invoke(app, ["embed", "texts.txt", "--model", "counter-bi-encoder", "--out", "v.npy"])
    assert refused.exit_code == 2 and "give a role" in refused.output and not (tmp_path / "v.npy").exists()
    ok = runner.invoke(app, ["embed", "texts.txt", "--model", "counter-bi-encoder", "--role", "query",
                             "--out", "q.npy"])
    assert ok.exit_code == 0, ok.output
    np.testing.assert_allclose(np.load(tmp_path / "q.npy"), argsim.encode_query(TEXTS, model="counter-bi-encoder"),
                               atol=1e-6)


def test_a_one_tower_model_ignores_the_role_unless_it_has_a_prompt_for_it(minilm) -> None:
    from argsim.backend.models import SentenceTransformerEncoder

    assert minilm.for_role("query") is minilm and minilm.for_role(None) is minilm
    enc = SentenceTransformerEncoder(model_path("minilm"), "minilm-prompts", "cpu")
    enc.model.prompts = {"query": "query: ", "document": ""}
    query = enc.for_role("query")
    assert enc.for_role("document") is enc and query.cache_key != enc.cache_key
    want = enc.model.encode(["query: " + t for t in TEXTS], convert_to_numpy=True)
    np.testing.assert_allclose(query.encode(TEXTS, use_cache=False), want, atol=1e-5)


def test_the_manifest_names_the_towers_per_role(tmp_path) -> None:
    roles = {"query": "point", "document": "candidate"}
    assert json.loads(write_manifest(tmp_path / "two", "counter-neural", roles).read_text()) == {
        "loader": "counter-neural", "roles": roles}
    assert json.loads(write_manifest(tmp_path / "one", "counter-neural").read_text()) == {"loader": "counter-neural"}
    (tmp_path / "argsim_encoder.json").write_text(json.dumps({"loader": "counter-neural", "roles": {"query": "x"}}))
    with pytest.raises(ModelError, match="argsim_encoder.json: 'roles' must map query and document"):
        manifest_roles(tmp_path)
    assert get_encoder("counter-bipolar").roles is None  # one tower and one retrieval head: no role needed
