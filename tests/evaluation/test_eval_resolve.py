"""The one model resolver: objects are models (cached under their weights' digest), anything else is one line."""

from __future__ import annotations

import numpy as np
import pytest

import argsim
import argsim.evaluation
from argsim.backend.resolve import ObjectEncoder, PairScorer, resolve_model, weights_digest
from argsim.errors import ModelError

TEXTS = ["School uniforms stop bullying.", "Uniforms cost families money.", "Whaling is cruel."]


@pytest.fixture()
def tiny_st(tiny_bert):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(tiny_bert), device="cpu")


def test_in_memory_model_gives_its_folders_vectors_and_keeps_its_mode(tiny_bert, tiny_st, tmp_path):
    config = argsim.RunConfig(cache_dir=tmp_path / "cache")
    tiny_st.train()
    from_object = argsim.encode(TEXTS, model=tiny_st, config=config)
    assert tiny_st.training, "encoding must not leave a model under training in eval mode"
    from_folder = argsim.encode(TEXTS, model=str(tiny_bert), config=config)
    np.testing.assert_allclose(from_object, from_folder, atol=1e-6)
    enc = resolve_model(tiny_st, config)
    assert isinstance(enc, ObjectEncoder) and enc.identity == resolve_model(tiny_st, config).identity


def test_changed_weights_never_read_stale_cache_rows(tiny_st, tmp_path):
    import torch

    config = argsim.RunConfig(cache_dir=tmp_path / "cache")
    before = resolve_model(tiny_st, config).encode(TEXTS)  # cached under the first weights
    digest = weights_digest(tiny_st)
    torch.manual_seed(1)
    with torch.no_grad():  # a training step's worth of change to every weight
        for param in tiny_st.parameters():
            param.add_(0.1 * torch.randn_like(param))
    assert weights_digest(tiny_st) != digest
    after = resolve_model(tiny_st, config).encode(TEXTS)
    fresh = tiny_st.encode(TEXTS, convert_to_numpy=True)
    np.testing.assert_allclose(after, fresh, atol=1e-6)
    assert not np.allclose(before, after, atol=1e-4)


def test_a_cross_encoder_object_is_a_pair_scorer_where_pairs_are_scored(tiny_bert):
    from sentence_transformers import CrossEncoder

    ce = CrossEncoder(str(tiny_bert), num_labels=1, device="cpu")
    scorer = resolve_model(ce)
    assert isinstance(scorer, PairScorer)
    pairs = [(TEXTS[0], TEXTS[1]), (TEXTS[1], TEXTS[2])]
    ce.train()
    scores = scorer.probability(pairs)
    assert ce.training, "scoring must not leave a model under training in eval mode"
    np.testing.assert_allclose(scores, ce.predict(pairs), atol=1e-6)
    np.testing.assert_allclose(scorer.score(pairs), np.log(scores), atol=1e-6)
    with pytest.raises(ModelError, match="scores pairs, not single texts"):
        resolve_model(ce, cross_encoder=False)


class FixedLogits:
    """A cross-encoder export stand-in: `logits(pairs)` from a table, in float32 as a model computes them."""

    def __init__(self, table: dict) -> None:
        self.table = table

    def logits(self, pairs, batch_size: int = 32) -> np.ndarray:
        return np.asarray([self.table[p] for p in pairs], dtype=np.float32)


@pytest.mark.parametrize("table", [
    {("q", "a"): [18.0], ("q", "b"): [40.0], ("q", "c"): [0.0], ("q", "d"): [-800.0]},
    {("q", "a"): [-9.0, 9.0], ("q", "b"): [-20.0, 20.0], ("q", "c"): [0.0, 0.0], ("q", "d"): [400.0, -400.0]},
], ids=["one label", "two labels"])
def test_pair_scores_never_tie_by_saturation(table):
    """Pairs whose positive logit leads by 18 and by 40: a float32 sigmoid / softmax rounds both to 1.0 (a tie);
    the pair scorer's score is log P(last label) in float64, which keeps every pair apart in the logits' order and
    equals the closed form -log(1 + e^-d) (d: the positive label's lead)."""
    import math

    import torch

    pairs, logits = list(table), torch.tensor(list(table.values()), dtype=torch.float32)
    f32 = torch.sigmoid(logits[:, 0]) if logits.shape[1] == 1 else torch.softmax(logits, -1)[:, -1]
    assert f32[0] == f32[1] == 1.0  # the saturation this scorer avoids
    scorer = PairScorer(FixedLogits(table), name="fixed")
    scores = scorer.score(pairs)
    assert scores.dtype == np.float64 and scores[1] > scores[0] > scores[2] > scores[3]
    lead = [v[-1] - (v[0] if len(v) > 1 else 0.0) for v in table.values()]
    expected = [-(math.log1p(math.exp(-d)) if d > -700 else -d) for d in lead]
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(scorer.probability(pairs)[2], 0.5)


@pytest.mark.parametrize("call", [
    lambda bad: argsim.encode(TEXTS, model=bad),
    lambda bad: argsim.KeyPointMatcher(bad),
    lambda bad: argsim.CounterRetriever("emb-cosine", model=bad),
    lambda bad: argsim.cluster_sentences(TEXTS, model=bad, n_clusters=2),
    lambda bad: argsim.evaluation.TripletEvaluator([dict(anchor="a", positive="b", negative="c")]).evaluate(bad),
], ids=["encode", "KeyPointMatcher", "CounterRetriever", "cluster_sentences", "evaluator"])
def test_a_bad_model_object_is_one_clear_line(call):
    with pytest.raises(ModelError) as err:
        call(object())
    message = str(err.value)
    assert "\n" not in message and "object" in message and "SentenceTransformer" in message
    assert "empty" not in message and "File name too long" not in message
