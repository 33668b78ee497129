"""A model2vec static model's word vectors as a word-vector source: a word's vector is the static model's encoding
of the word (checked against the token vectors and tokenizer read here, not through argsim), and WMD over them is
gensim's `wmdistance` on the same KeyedVectors. Sentences from counterargs-18 (idebate.org, training split)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("model2vec")

POINT = ("The 'space race' fuels nationalistic sentiment and antagonism. Sending humans into space or to other "
         "planets so that they can erect the flag of a particular nation is a distinctly nationalistic act.")
COUNTER = ("Since the historic handshake in space when a US Apollo and Soviet Soyuz capsules docked in 1975, the two "
           "countries have in fact grown increasingly close.")
OTHER = ("This relationship involves sharing technology, scientific knowledge and working side-by-side to build and "
         "support the ISS.")
TEXTS = [POINT, COUNTER, OTHER, "vaccination and counterarguments"]


@pytest.fixture(scope="module")
def static_folder(tmp_path_factory):
    """A model2vec folder over MiniLM's WordPiece tokenizer with seeded random token vectors, normalising its
    outputs as `argsim distill` writes it (no distillation run)."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from argsim.backend import model_path

    tokenizer = Tokenizer.from_file(str(model_path("minilm") / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    vectors = np.random.default_rng(7).normal(size=(tokenizer.get_vocab_size(), 12)).astype(np.float32)
    folder = tmp_path_factory.mktemp("static-words") / "minilm-static"
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(folder))
    return folder, vectors, tokenizer


def _expected(word: str, vectors: np.ndarray, tokenizer) -> np.ndarray:
    """model2vec's definition, computed here: the mean of the word's WordPiece token vectors, L2-normalised."""
    ids = tokenizer.encode(word, add_special_tokens=False).ids
    mean = vectors[ids].mean(axis=0)
    return mean / np.linalg.norm(mean)


def test_a_words_vector_is_the_static_models_encoding_of_the_word(static_folder):
    from model2vec import StaticModel

    from argsim.backend import load_word_vectors
    from argsim.backend.static_words import StaticWordVectors, cover_words

    folder, vectors, tokenizer = static_folder
    kv = load_word_vectors(str(folder))
    assert isinstance(kv, StaticWordVectors) and kv.vector_size == 12
    model = StaticModel.from_pretrained(str(folder))
    # a whole-word token of the vocabulary: there from the start, its row normalised
    assert tokenizer.encode("space", add_special_tokens=False).ids == [tokenizer.token_to_id("space")]
    assert "space" in kv.key_to_index and kv.key_to_index["space"] < kv.vocabulary_size
    np.testing.assert_allclose(kv["space"], _expected("space", vectors, tokenizer), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(kv["space"], model.encode(["space"])[0], rtol=1e-5, atol=1e-6)
    assert not any(w.startswith("##") or w in ("[CLS]", "[SEP]", "[PAD]") for w in kv.index_to_key)
    # words WordPiece splits: composed on request, the mean of their pieces' vectors
    for word in ("nationalistic", "counterarguments", "vaccination"):
        assert len(tokenizer.encode(word, add_special_tokens=False).ids) > 1
        assert word not in kv.key_to_index
    cover_words(kv, ["nationalistic", "counterarguments", "vaccination", "\u2603"])
    for word in ("nationalistic", "counterarguments", "vaccination"):
        np.testing.assert_allclose(kv[word], _expected(word, vectors, tokenizer), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(kv[word], model.encode([word])[0], rtol=1e-5, atol=1e-6)
    assert "\u2603" not in kv.key_to_index  # only unknown tokens: unknown, as GloVe drops an unknown word


def test_wmd_over_static_word_vectors_equals_gensims_wmdistance(static_folder):
    from argsim.backend.static_words import static_word_vectors
    from argsim.counter.lexical.stopwords import content_tokens
    from argsim.counter.lexical.wmd import WMDEngine

    kv = static_word_vectors(static_folder[0])
    kv.fill_norms()  # norms cached before words are added: they must be recomputed for the new rows
    engine = WMDEngine(kv, TEXTS, stopwords="gensim")
    assert "nationalistic" in kv.key_to_index  # composed by the engine
    for i in range(len(TEXTS)):
        for j in range(len(TEXTS)):
            reference = kv.wmdistance(content_tokens(TEXTS[i], "gensim"), content_tokens(TEXTS[j], "gensim"))
            got = engine.distance(i, j)
            assert math.isclose(got, reference, rel_tol=1e-9, abs_tol=1e-9), (i, j, got, reference)
    assert engine.distance(0, 1) > 0


def test_bilstm_vocabulary_takes_composed_words_and_the_models_whole_words(static_folder):
    from argsim.backend.static_words import static_word_vectors
    from argsim.thematic.bilstm import build_vocabulary

    folder, vectors, tokenizer = static_folder
    kv = static_word_vectors(folder)
    kv.add_words(["antagonism", "zeppelinesque"])  # composed before: must not change the top words taken
    vocab, matrix = build_vocabulary([POINT], kv, top_words=100)
    assert vocab.words[:100] == kv.index_to_key[:100]
    row = vocab.index["nationalistic"]
    np.testing.assert_allclose(matrix[row], _expected("nationalistic", vectors, tokenizer), rtol=1e-5, atol=1e-6)
    assert "zeppelinesque" not in vocab.index


def test_simple_sd_ranks_with_static_word_vectors(static_folder, tmp_path):
    """The ranker option takes the folder; its WMD similarities are gensim's, so the one true counter that
    shares the point's words is ranked first."""
    import json

    from typer.testing import CliRunner

    from argsim.cli.app import app

    records = [{"id": "p1", "text": POINT, "kind": "point", "counter": "c1"},
               {"id": "c1", "text": "Nationalistic sentiment about space is not the flag of a nation; "
                                    "space programs build trust, not antagonism.", "kind": "counter"},
               {"id": "c2", "text": OTHER, "kind": "counter"},
               {"id": "c3", "text": "Vaccination should be compulsory for schoolchildren.", "kind": "counter"}]
    data = tmp_path / "args.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "ranking.jsonl"
    res = CliRunner().invoke(app, ["--quiet", "rank", "counterargs", "--input", str(data), "--method", "simple-sd",
                                   "--candidates", "counters", "--opt", f"word_vectors={static_folder[0]}",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["gold_better"] == 0, first  # no candidate above the true counter


def test_a_folder_that_is_not_a_static_model_is_one_line(tmp_path):
    from argsim.backend import load_word_vectors
    from argsim.errors import ModelError

    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="not a model2vec static model folder") as err:
        load_word_vectors(str(tmp_path))
    assert "\n" not in str(err.value)
