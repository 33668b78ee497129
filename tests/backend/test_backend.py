"""The embedding backend on the real default model: equivalence, pooling, order, cache behaviour."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
import torch

from argsim.backend import get_encoder, load_transformer, resolve_device
from argsim.backend.cache import EmbeddingCache
from argsim.config import RunConfig
from argsim.errors import ArgsimError, ModelError

TEXTS = ["Social media should be regulated.", "Homeschooling harms children's social skills.",
         "We should ban whaling.", "Social media should be regulated.", "A much longer sentence " * 20]


def test_matches_sentence_transformers_directly(minilm):
    vecs = minilm.encode(TEXTS, use_cache=False)
    direct = minilm.model.encode(TEXTS, convert_to_numpy=True)
    assert vecs.dtype == np.float32 and vecs.shape == (5, 384)
    np.testing.assert_allclose(vecs, direct, atol=1e-5)
    np.testing.assert_array_equal(vecs[0], vecs[3])  # duplicates computed once, returned twice


def test_output_order_does_not_depend_on_batching(minilm):
    a = minilm.encode(TEXTS, batch_size=2, use_cache=False)
    b = minilm.encode(list(reversed(TEXTS)), batch_size=64, use_cache=False)[::-1]
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_normalize_gives_unit_rows(minilm):
    vecs = minilm.encode(TEXTS[:3], normalize=True)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_poolings_follow_their_definitions():
    tok, model = load_transformer("minilm")
    batch = tok(["We should ban whaling."], return_tensors="pt")
    with torch.inference_mode():
        out = model(**batch, output_hidden_states=True)
    last4 = torch.cat([h[:, 0] for h in out.hidden_states[-4:]], dim=-1).numpy()
    cls = out.last_hidden_state[:, 0].numpy()
    mean = out.last_hidden_state.mean(dim=1).numpy()
    for pooling, expected in (("cls-last4", last4), ("cls", cls), ("mean", mean)):
        got = get_encoder("minilm", pooling=pooling, device="cpu").encode(["We should ban whaling."],
                                                                          use_cache=False)
        np.testing.assert_allclose(got, expected, atol=1e-4)
    assert last4.shape == (1, 4 * 384)
    # the embedding layer (hidden_states[0]) is not part of cls-last4
    assert not np.allclose(last4[:, :384], out.hidden_states[0][:, 0].numpy())


def test_cache_hit_returns_identical_vectors(minilm, tmp_path, monkeypatch):
    enc = get_encoder("minilm", pooling="mean", device="cpu", batch_size=8,
                      config=RunConfig(cache_dir=tmp_path, quiet=True))
    assert enc.cache_dir == tmp_path and enc.use_cache
    first = enc.encode(TEXTS)
    calls = []
    monkeypatch.setattr(enc, "_encode_batch", lambda texts: calls.append(texts) or 1 / 0)
    second = enc.encode(TEXTS)  # must come from disk: _encode_batch would raise
    np.testing.assert_array_equal(first, second)
    assert calls == [] and len(enc.cache()) == 4
    enc._cache.close()
    enc._cache = None


def test_cache_from_another_model_is_rebuilt(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-A")
    cache.put_many(["x"], np.ones((1, 3), dtype=np.float32))
    cache.close()
    # same file name, different identity recorded inside: simulate a swapped file
    other = EmbeddingCache(tmp_path, "model-B")
    other.close()
    con = sqlite3.connect(other.path)
    con.execute("UPDATE meta SET value='model-A' WHERE key='identity'")
    con.commit()
    con.close()
    reopened = EmbeddingCache(tmp_path, "model-B")
    assert reopened.rebuilt_reason == "built for another model identity"
    assert reopened.get_many(["x"]) == {} and len(reopened) == 0


def test_corrupt_cache_is_rebuilt_not_used(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-C")
    cache.put_many(["x"], np.ones((1, 3), dtype=np.float32))
    path = cache.path
    cache.close()
    for suffix in ("-wal", "-shm"):
        (tmp_path / (path.name + suffix)).unlink(missing_ok=True)
    path.write_bytes(b"this is not a sqlite database" * 100)
    reopened = EmbeddingCache(tmp_path, "model-C")
    assert reopened.rebuilt_reason is not None and reopened.rebuilt_reason.startswith("unreadable")
    assert reopened.get_many(["x"]) == {}
    reopened.put_many(["x"], np.full((1, 3), 2, dtype=np.float32))
    np.testing.assert_array_equal(reopened.get_many(["x"])["x"], [2, 2, 2])


def test_vectors_of_wrong_dimension_are_ignored(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-D")
    cache.put_many(["x"], np.ones((1, 3), dtype=np.float32))
    cache._conn.execute("UPDATE vectors SET v=?", (np.ones(2, dtype=np.float32).tobytes(),))
    assert cache.get_many(["x"]) == {}


def test_static_vectors_mean_and_unknown_words():
    enc = get_encoder("glove50")
    kv = enc.kv
    vecs = enc.encode(["cat dog", "qqqzzzxx"], use_cache=False)
    np.testing.assert_allclose(vecs[0], (kv["cat"] + kv["dog"]) / 2, atol=1e-6)
    np.testing.assert_array_equal(vecs[1], np.zeros(50, dtype=np.float32))


def test_device_resolution_and_errors():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda", "mps")
    with pytest.raises(ArgsimError):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ArgsimError, match="CUDA is not available"):
            resolve_device("cuda")
    with pytest.raises(ModelError, match="unknown model 'no-such-model'"):
        get_encoder("no-such-model")
    with pytest.raises(ModelError, match="unknown pooling"):
        get_encoder("minilm", pooling="max")


def test_run_options_come_from_the_config_not_a_global(tmp_path):
    """Two configs give two cache folders and cache switches on the same weights; importing changes nothing."""
    a = get_encoder("minilm", device="cpu", config=RunConfig(cache_dir=tmp_path / "a", quiet=True))
    b = get_encoder("minilm", device="cpu", config=RunConfig(cache_dir=tmp_path / "b", use_cache=False))
    assert (a.cache_dir, a.use_cache, a.quiet) == (tmp_path / "a", True, True)
    assert (b.cache_dir, b.use_cache, b.quiet) == (tmp_path / "b", False, False)
    assert a.model is b.model  # weights loaded once
    b.encode(["not cached"])
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("size", [0, -3, 8193, 10**11, 2.5, True])
def test_a_batch_size_out_of_range_is_refused_before_any_model_loads(size):
    from argsim.backend import get_encoder
    from argsim.errors import BackendError

    with pytest.raises(BackendError, match="batch size .* out of range"):
        get_encoder("no-such-model-is-loaded", batch_size=size)


def test_encode_refuses_a_batch_size_out_of_range_even_when_every_text_is_cached(minilm):
    from argsim.errors import BackendError

    minilm.encode(["We should ban whaling."])  # cached now: nothing left to compute
    with pytest.raises(BackendError, match="batch size 100000 is out of range"):
        minilm.encode(["We should ban whaling."], batch_size=100_000)
