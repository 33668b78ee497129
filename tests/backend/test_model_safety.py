"""Models are data, not programs: LTR models round-trip through JSON (logistic regression) and XGBoost's own JSON
format exactly, and folders holding pickles are refused with one line before anything is unpickled."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.counter.ltr.model import LTRModel
from argsim.errors import ArgsimError, ModelError


@pytest.mark.parametrize("kind", ["logreg", "xgboost"])
def test_ltr_model_round_trips_without_pickle(tmp_path, kind):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 8))
    y = (x[:, 0] + 0.5 * x[:, 3] + rng.normal(scale=0.5, size=120) > 0).astype(int)
    model = LTRModel(kind, "part").fit(x, y)
    if kind == "xgboost":  # fewer trees than the appendix's 1000 keep the test fast; the format is the same
        model.pipeline[-1].set_params(n_estimators=20)
        model.fit(x, y)
    folder = model.save(tmp_path / kind, meta={"sampling": {}})
    assert not list(folder.glob("*.joblib")) and (folder / "model.json").is_file()
    loaded, _ = LTRModel.load(folder)
    np.testing.assert_array_equal(loaded.decision_function(x), model.decision_function(x))


def test_ltr_model_json_with_a_misshapen_coef_is_refused_when_loaded(tmp_path):
    """The regression's coef is (1, n_features): a flat list is an unreadable model, one line, at load (not a model
    that loads and scores)."""
    import json

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 8))
    folder = LTRModel("logreg", "part").fit(x, (x[:, 0] > 0).astype(int)).save(tmp_path / "m")
    params = json.loads((folder / "model.json").read_text())
    params["logreg"]["coef"] = params["logreg"]["coef"][0]
    (folder / "model.json").write_text(json.dumps(params))
    with pytest.raises(ArgsimError, match="unreadable LTR model"):
        LTRModel.load(folder)


def test_ltr_folder_with_only_a_pickle_is_refused(tmp_path):
    import json

    (tmp_path / "ltr.json").write_text(json.dumps({"model": "logreg", "features": "part"}))
    (tmp_path / "model.joblib").write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(ArgsimError, match="never loaded"):
        LTRModel.load(tmp_path)


def test_pickled_word_vectors_are_refused(tmp_path):
    from argsim.backend.words import load_word_vectors

    path = tmp_path / "vectors.kv"
    path.write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(ModelError, match="pickle"):
        load_word_vectors(str(path))
