"""`--engine ray` on `rank keypoints` and `rank counter-search`, and the engine-aware `argsim.engine.encode` under
them: the same vectors and output files as `local`, new vectors merged into the cache, a second run encodes nothing.
All on the session's one local Ray (the `ray_session` fixture)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app

REPO = Path(__file__).resolve().parent.parent
KPM = REPO / "examples" / "kpm"
COUNTER = REPO / "examples" / "counter_neural"
runner = CliRunner()


def fresh_minilm(cache_dir: Path):  # noqa: ANN201
    """The shipped MiniLM (weights shared with the session's copy) on an empty cache folder."""
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    return get_encoder("minilm", device="cpu", config=RunConfig(cache_dir=cache_dir, quiet=True))


@pytest.fixture()
def no_ray_embedding(monkeypatch):  # noqa: ANN201
    """Fails any attempt to embed on Ray (what a run that should find everything cached must not do)."""
    from argsim.engine import embedding

    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("embedded on Ray although every text was cached")

    monkeypatch.setattr(embedding, "embed_texts_ray", refuse)


def test_ray_encode_equals_local_fills_the_cache_and_runs_once(ray_session, minilm, tmp_path, monkeypatch):
    from argsim.engine import encode, get_engine
    from argsim.engine.encoding import missing_texts

    with open(KPM / "arguments.csv", encoding="utf-8") as fh:
        texts = [r["argument"] for r in csv.DictReader(fh)]
    texts = texts + texts[:3]  # repeated texts are embedded once
    enc = fresh_minilm(tmp_path / "cache")
    local = minilm.encode(texts, use_cache=False)
    remote = encode(get_engine("ray"), enc, texts)
    np.testing.assert_allclose(remote, local, atol=1e-5)
    assert len(enc.cache()) == len(set(texts)) and missing_texts(enc, texts) == []

    from argsim.engine import embedding

    monkeypatch.setattr(embedding, "embed_texts_ray", None)  # a second run must not reach Ray at all
    np.testing.assert_array_equal(encode(get_engine("ray"), enc, texts), remote)
    assert len(enc.cache()) == len(set(texts))
    np.testing.assert_array_equal(encode(get_engine("local"), enc, texts[::-1]), remote[::-1])
    assert len(enc.cache()) == len(set(texts))
