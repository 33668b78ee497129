"""The political SBERT on a real slice: mined from one committee file, built from GiNZA vectors, trained."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.minutes.mining import MiningConfig


@pytest.fixture(scope="module")
def bank_triplets(data_dir, tmp_path_factory):
    from argsim.data.poliinfo import load_meetings
    from argsim.minutes.pipeline import mine_minutes

    folder = data_dir / "poliinfo"
    out = tmp_path_factory.mktemp("bank")
    meetings = load_meetings(folder, files=[folder / "minutes/committees/utterances_tokyo_bank.json"])
    summary = mine_minutes(meetings, out, MiningConfig(boilerplate_min_count=3))
    return out, summary


def test_bank_mining_counts(bank_triplets):
    out, summary = bank_triplets
    c = summary["counts"]
    assert c["meetings"] == 14 and c["utterances"] == 483
    assert c["triplets"] == sum(c.get(f"triplets {s}", 0) for s in ("train", "dev", "test")) > 100
    import json

    rows = [json.loads(x) for x in (out / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["cos_pos"] >= 0.5 and r["cos_neg"] <= 0.9 and r["negative_meeting"] != r["meeting"] for r in rows)


def test_untrained_ginza_model_reproduces_ginza_cosines():
    from argsim.backend import get_encoder
    from argsim.minutes.sbert import build_ginza_model, segment

    texts = ["都は帰宅困難者対策を進めてまいります。", "保育所の整備を加速すべきです。",
             "帰宅困難者の一時滞在施設を確保します。"]
    model = build_ginza_model()
    ours = model.encode(segment(texts))
    ginza = get_encoder("ginza").encode(texts)

    def cos(x: np.ndarray) -> np.ndarray:
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        return x @ x.T

    np.testing.assert_allclose(cos(ours), cos(ginza), atol=1e-4)


def test_training_saves_a_backend_loadable_model(bank_triplets, tmp_path):
    from argsim.backend import get_encoder
    from argsim.minutes.train import TrainConfig, train_minutes_sbert

    out, _ = bank_triplets
    log = train_minutes_sbert(out / "train.jsonl", out / "dev.jsonl", tmp_path / "m",
                              TrainConfig(epochs=1, max_train=64, max_dev=32, lr=1e-3))
    assert log["train_triplets"] == 64 and len(log["epoch_seconds"]) == 1 and log["dev"]
    for name in ("modules.json", "argsim_encoder.json", "train_log.json"):
        assert (tmp_path / "m" / name).is_file()
    enc = get_encoder(str(tmp_path / "m"))
    vecs = enc.encode(["都は帰宅困難者対策を進めてまいります。", "保育所の整備を加速すべきです。"], use_cache=False)
    assert vecs.shape == (2, 300) and np.isfinite(vecs).all() and not np.allclose(vecs[0], vecs[1])
