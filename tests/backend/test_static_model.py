"""model2vec static models: a distilled folder loads through the registry as data (safetensors only), its vectors
are the token-vector means model2vec defines, whatever the backend option."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("model2vec")


@pytest.fixture(scope="module")
def static_folder(tmp_path_factory):
    """A small model2vec folder over MiniLM's tokenizer with seeded random token vectors (no distillation run)."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from argsim.backend import model_path

    tokenizer = Tokenizer.from_file(str(model_path("minilm") / "tokenizer.json"))
    tokenizer.no_padding()  # MiniLM's file pads to 128 tokens; model2vec tokenizes without padding
    tokenizer.no_truncation()
    vectors = np.random.default_rng(13).normal(size=(tokenizer.get_vocab_size(), 16)).astype(np.float32)
    folder = tmp_path_factory.mktemp("static") / "minilm-static"
    StaticModel(vectors, tokenizer, normalize=False).save_pretrained(str(folder))
    return folder, vectors, tokenizer


def test_registry_loads_a_model2vec_folder_as_token_means(static_folder, tmp_path):
    from argsim.backend import get_encoder
    from argsim.backend.static import Model2VecEncoder, is_model2vec_folder
    from argsim.config import RunConfig

    folder, vectors, tokenizer = static_folder
    assert is_model2vec_folder(folder)
    enc = get_encoder(str(folder), config=RunConfig(cache_dir=tmp_path, backend="onnx"))  # no export: not a transformer
    assert isinstance(enc, Model2VecEncoder) and enc.identity.startswith("model2vec:")
    text = "We should ban fast food"
    ids = [i for i in tokenizer.encode(text, add_special_tokens=False).ids]
    expected = vectors[ids].mean(axis=0)  # model2vec: the mean of the text's token vectors (unknown ids dropped)
    got = enc.encode([text])[0]
    assert np.allclose(got, expected, atol=1e-5)


def test_a_static_folder_with_a_pickle_is_refused(static_folder, tmp_path):
    import shutil

    from argsim.backend import get_encoder
    from argsim.errors import ModelError

    folder = tmp_path / "bad-static"
    shutil.copytree(static_folder[0], folder)
    (folder / "extra.pkl").write_bytes(b"\x80\x04N.")
    with pytest.raises(ModelError, match="pickle"):
        get_encoder(str(folder))


def test_distill_refuses_an_existing_folder(tmp_path):
    from argsim.backend.static import distill
    from argsim.errors import ModelError

    with pytest.raises(ModelError, match="already exists"):
        distill("minilm", tmp_path)
