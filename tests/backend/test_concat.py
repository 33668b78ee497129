"""The composite "concatenation of normalised parts" encoder (`argsim.backend.concat`): its vectors against the
closed form computed from the parts themselves, its inner product against the sum of the parts' cosines, and its
roles (a two-tower part makes it two-tower: refused without a role, as the part is)."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.backend import get_encoder
from argsim.backend.concat import ConcatEncoder, save_composite
from argsim.errors import InputError, ModelError

POINTS = ["School uniforms stop bullying.", "Fast food should be banned in schools."]
CANDIDATES = ["Uniforms do nothing against bullying; children find other targets.",
              "A ban takes away the freedom of students to choose what they eat.", "The sky is blue."]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_two_tower_composite_vectors_are_the_weighted_concatenation_of_normalised_parts(tmp_path) -> None:
    folder = save_composite(tmp_path / "fused", ["counter-bi-encoder", "minilm"], weights=[1.0, 0.25])
    fused = get_encoder(str(folder))
    bi, mini = get_encoder("counter-bi-encoder"), get_encoder("minilm")
    assert fused.roles == bi.roles
    with pytest.raises(ModelError, match="two towers"):
        fused.encode(POINTS)
    q = fused.for_role("query").encode(POINTS, use_cache=False)
    d = fused.for_role("document").encode(CANDIDATES, use_cache=False)
    parts_q = [_unit(bi.for_role("query").encode(POINTS)), _unit(mini.encode(POINTS))]
    parts_d = [_unit(bi.for_role("document").encode(CANDIDATES)), _unit(mini.encode(CANDIDATES))]
    np.testing.assert_allclose(q, np.hstack([parts_q[0], 0.5 * parts_q[1]]), atol=1e-6)
    np.testing.assert_allclose(d, np.hstack([parts_d[0], 0.5 * parts_d[1]]), atol=1e-6)
    # the inner product is the weighted sum of the parts' cosines (score fusion)
    np.testing.assert_allclose(q @ d.T, parts_q[0] @ parts_d[0].T + 0.25 * (parts_q[1] @ parts_d[1].T), atol=1e-5)
    assert fused.for_role("query") is fused.for_role("query")
    assert len({fused.for_role("query").cache_key, fused.for_role("document").cache_key}) == 2


def test_the_identity_names_parts_normalisation_and_weights() -> None:
    mini, glove = get_encoder("minilm"), get_encoder("glove50")
    raw, norm = ConcatEncoder("a", [mini, glove]), ConcatEncoder("a", [mini, glove], normalize=True)
    weighted = ConcatEncoder("a", [mini, glove], normalize=True, weights=[1, 0.5])
    assert raw.identity == f"concat:{mini.identity}+{glove.identity}"  # the thematic concatenations' key, as it was
    assert len({raw.identity, norm.identity, weighted.identity, ConcatEncoder("a", [glove, mini]).identity}) == 4
    assert ConcatEncoder("a", [mini, glove], True, [1, 1]).identity == norm.identity
    assert raw.roles is None and raw.for_role("query") is raw
    v = raw.encode(POINTS, use_cache=False)
    np.testing.assert_allclose(v, np.hstack([mini.encode(POINTS), glove.encode(POINTS)]), atol=1e-6)


def test_a_folder_names_only_parts_it_holds_or_known_models(tmp_path) -> None:
    save_composite(tmp_path / "bad", ["minilm", "/etc"])
    with pytest.raises(ModelError, match="part '/etc' is neither a folder under parts/ nor"):
        get_encoder(str(tmp_path / "bad"))
    save_composite(tmp_path / "neg", ["minilm", "glove50"], weights=[1.0, -1.0])
    with pytest.raises(InputError, match="config.json"):
        get_encoder(str(tmp_path / "neg"))
