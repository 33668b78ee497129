"""Thematic similarity: section filters, triplet invariants, the paper's loss, clustering metrics, the BiLSTM
through the backend, SICK relatedness and the CLI on hand-written wikitext articles."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from argsim.data.wikipedia import parse_article
from argsim.metrics.clustering import averaged_scores, clustering_scores
from argsim.thematic.bilstm import softmax_triplet_loss
from argsim.thematic.cluster import cluster_vectors
from argsim.thematic.triplets import (
    PreparedArticle,
    clustering_benchmark,
    kept_sections,
    prepare,
    sentence_triplets,
    split_articles,
    title_triplets,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "thematic"


@pytest.fixture(scope="module")
def articles():
    return [parse_article(p.read_text(encoding="utf-8"), p.stem.replace("_", " "))
            for p in sorted(FIXTURES.glob("*.txt"))]


@pytest.fixture(scope="module")
def prepared(articles) -> list[PreparedArticle]:
    return prepare(articles)


def _solar(prepared) -> PreparedArticle:
    return next(a for a in prepared if a.title == "Solar power")


# ------------------------------------------------------------------ filters


def test_filters_drop_lead_background_and_list_sections(articles):
    solar = next(a for a in articles if a.title == "Solar power")
    kept = kept_sections(solar)
    assert [s.heading for s in kept] == ["History", "Technology", "Economics", "Environmental impact", "Policy",
                                         "Future"]
    # the level-3 "Early research" is merged into History; "Short one." (2 tokens) is filtered but its
    # paragraph still counts for paragraph distances
    history = kept[0]
    assert history.openers[3] is None and len(history.openers) == 5
    assert history.openers[4].startswith("Scientists in the nineteenth century")
    all_kept = " ".join(s for k in kept for s in k.sentences)
    assert "Short one" not in all_kept and "background section" not in all_kept and "see also" not in all_kept


def test_level_all_keeps_subsections_apart(articles):
    solar = next(a for a in articles if a.title == "Solar power")
    assert "Early research" in [s.heading for s in kept_sections(solar, level="all")]


def test_articles_need_five_sections(articles):
    assert {a.title for a in prepare(articles)} == {"Solar power", "Coffee"}
    assert {a.title for a in prepare(articles, min_sections=6)} == {"Solar power"}


# ------------------------------------------------------------------ triplets


def test_sentence_triplet_invariants(prepared):
    trips = sentence_triplets(prepared, seed=3)
    assert trips
    for art in prepared:
        headings = [s.heading for s in art.sections]
        where = {o: (i, p) for i, s in enumerate(art.sections) for p, o in enumerate(s.openers) if o}
        for t in (t for t in trips if t["article"] == art.title):
            (sa, pa), (sp, pp), (sn, _) = where[t["anchor"]], where[t["positive"]], where[t["negative"]]
            assert sa == sp and headings[sa] == t["section"]            # positive shares the pivot's section
            assert abs(pa - pp) <= 3 and t["anchor"] != t["positive"]   # at most three paragraphs apart
            assert abs(sn - sa) == 1 and headings[sn] == t["negative_section"]  # negative from an adjacent one
    pairs: dict = {}
    for t in trips:
        key = frozenset((t["anchor"], t["positive"]))
        pairs[key] = pairs.get(key, 0) + 1
    assert max(pairs.values()) <= 2
    # Solar power, History: openers at paragraphs 0,1,2,4 -> pairs within 3 paragraphs: 01 02 12 14 24 = 5
    # (0-4 is 4 apart); History is the first kept section, so one (next-section) triplet each
    assert sum(1 for t in trips if t["article"] == "Solar power" and t["section"] == "History") == 5
    assert sentence_triplets(prepared, seed=3) == trips  # seeded


def test_alternative_negatives(prepared):
    rs = sentence_triplets(prepared, negatives="random-section", seed=1)
    ra = sentence_triplets(prepared, negatives="random-article", seed=1)
    assert len(rs) == len(ra) == len(sentence_triplets(prepared, seed=1))
    assert all(t["negative_article"] == t["article"] and t["negative_section"] != t["section"] for t in rs)
    assert all(t["negative_article"] != t["article"] for t in ra)


def test_title_triplets(prepared):
    trips = title_triplets(prepared)
    solar = [t for t in trips if t["article"] == "Solar power"]
    first = solar[0]
    assert first["anchor"].startswith("The first solar cell") and first["positive"] == "Solar power History"
    assert first["negative"] == "Solar power Technology"
    assert len([t for t in solar if t["section"] == "Technology"]) == 2  # previous and next section titles


def test_split_is_disjoint_and_80_10_10():
    titles = [f"t{i}" for i in range(100)]
    s = split_articles(titles + titles[:5], seed=7)  # duplicates collapse
    assert [len(s[k]) for k in ("train", "dev", "test")] == [80, 10, 10]
    assert set(s["train"]) | set(s["dev"]) | set(s["test"]) == set(titles)
    assert not set(s["train"]) & set(s["test"])
    assert split_articles(titles, seed=7) == s and split_articles(titles, seed=8) != s


def test_clustering_benchmark_rows(prepared):
    rows = clustering_benchmark(prepared)
    solar = [r for r in rows if r["article"] == "Solar power"]
    assert len({r["label"] for r in solar}) == 6
    assert all(r["section"] != "See also" for r in rows)


# ------------------------------------------------------------------ loss and metrics


def test_softmax_loss_on_toy_distances():
    d_pos, d_neg = torch.tensor([0.0, 5.0, 1.0]), torch.tensor([0.0, 0.0, 1.0 + np.log(3)])
    # p(d+) = e^d+ / (e^d+ + e^d-): 0.5, ~0.9933, 0.25 ; loss = p+ + (1 - p-) = 2 p+
    expected = np.mean([1.0, 2 * np.exp(5) / (np.exp(5) + 1), 0.5])
    assert float(softmax_triplet_loss(d_pos, d_neg)) == pytest.approx(expected, rel=1e-6)
    assert float(softmax_triplet_loss(torch.tensor([0.0]), torch.tensor([30.0]))) < 1e-9


def test_clustering_metrics_on_known_partition():
    gold = [0, 0, 1, 1]
    perfect = clustering_scores(gold, [1, 1, 0, 0])
    assert perfect["RI"] == 1.0 and perfect["ARI"] == 1.0 and perfect["AMI"] == pytest.approx(1.0)
    assert perfect["MI"] == pytest.approx(np.log(2))
    split = clustering_scores(gold, [0, 1, 0, 1])
    assert split["RI"] == pytest.approx(2 / 6) and split["ARI"] == pytest.approx(-0.5) and split["MI"] == 0.0
    means, n = averaged_scores(["a"] * 4 + ["b"] * 4, gold + gold, [1, 1, 0, 0, 0, 1, 0, 1])
    assert n == 2 and means["RI"] == pytest.approx((1 + 2 / 6) / 2)


def test_cluster_vectors_separates_themes():
    rng = np.random.default_rng(0)
    centres = np.eye(3) * 5
    x = np.concatenate([c + rng.normal(0, 0.3, (10, 3)) for c in centres])
    gold = np.repeat([0, 1, 2], 10)
    for alg in ("kmeans", "agglomerative"):
        assert clustering_scores(gold, cluster_vectors(x, 3, alg))["ARI"] == 1.0


# ------------------------------------------------------------------ model, backend, SICK, CLI


def test_bilstm_trains_saves_and_loads_through_backend(prepared, tmp_path):
    from argsim.backend import get_encoder
    from argsim.metrics.triplets import triplet_scores
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    trips = sentence_triplets(prepared, seed=0)

    def scores(folder: Path):
        enc = get_encoder(str(folder))
        vecs = [enc.encode([t[f] for t in trips], use_cache=False) for f in ("anchor", "positive", "negative")]
        return triplet_scores(*vecs, distance="l1", ties="wrong")

    short = train_bilstm(trips, tmp_path / "m1",
                         ThematicTrainConfig(hidden=32, attention=16, batch_size=8, epochs=1, seed=0),
                         dev=trips, log=lambda *_: None)
    cfg = ThematicTrainConfig(hidden=32, attention=16, batch_size=8, epochs=6, seed=0)
    report = train_bilstm(trips, tmp_path / "m", cfg, dev=trips, log=lambda *_: None)
    assert report.steps == 6 * ((len(trips) + 7) // 8) and report.triplets_per_second > 0
    # the trainer's own dev accuracy (torch, L1, d+ < d-) equals the saved model's accuracy from the metric
    after_1, after_6 = scores(tmp_path / "m1"), scores(tmp_path / "m")
    assert short.dev_accuracy == pytest.approx(after_1.accuracy)
    assert report.dev_accuracy == pytest.approx(after_6.accuracy)
    # training moves the model: five more epochs widen the margin and fit every training triplet
    assert after_6.mean_diff > after_1.mean_diff and after_6.accuracy == 1.0
    assert json.loads((tmp_path / "m" / "argsim_encoder.json").read_text())["loader"] == "thematic-bilstm"
    enc = get_encoder(str(tmp_path / "m"))
    vecs = enc.encode(["Coffee prices rose.", "Solar panels are cheap now."], use_cache=False)
    assert vecs.shape == (2, 64) and np.isfinite(vecs).all()
    # a rerun into the same folder resumes from the finished checkpoint instead of training again
    again = train_bilstm(trips, tmp_path / "m", cfg, log=lambda *_: None)
    assert again.steps == report.steps


def test_time_limited_training_resumes(prepared, tmp_path):
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    trips = sentence_triplets(prepared, seed=0)[:32]
    cfg = ThematicTrainConfig(hidden=8, attention=4, batch_size=8, epochs=1, seed=2, max_minutes=1e-9)
    first = train_bilstm(trips, tmp_path / "m", cfg, log=lambda *_: None)
    assert first.stopped_by_time and first.steps == 1
    cfg.max_minutes = None
    rest = train_bilstm(trips, tmp_path / "m", cfg, log=lambda *_: None)
    assert not rest.stopped_by_time and rest.steps == (len(trips) + 7) // 8 and rest.triplets_seen == len(trips)


def test_concat_encoder(prepared, tmp_path):
    from argsim.backend import get_encoder
    from argsim.thematic.bilstm import save_concat
    from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

    trips = sentence_triplets(prepared, seed=0)[:8]
    for name in ("a", "b"):
        train_bilstm(trips, tmp_path / name, ThematicTrainConfig(hidden=8, attention=4, batch_size=8, seed=1),
                     log=lambda *_: None)
    save_concat(tmp_path / "ab", {"a": tmp_path / "a", "b": tmp_path / "b"})
    both = get_encoder(str(tmp_path / "ab")).encode(["a sentence"], use_cache=False)
    one = get_encoder(str(tmp_path / "a")).encode(["a sentence"], use_cache=False)
    assert both.shape == (1, 32) and np.allclose(both[0, :16], one[0])


def test_sick_relatedness_on_real_slice(data_dir):
    from argsim.backend import get_encoder
    from argsim.data.sick import load_sick
    from argsim.evaluation import SICKEvaluator

    folder = data_dir / "sick"
    s = SICKEvaluator(load_sick(folder, "train")[:300], load_sick(folder, "trial")[:60],
                      load_sick(folder, "test")[:200]).evaluate(get_encoder("glove50"))
    assert s.n == 200 and s["pearson"] > 0.5 and s["spearman"] > 0.4 and 0 < s["mse"] < 1.0


def test_cli_builds_triplets_and_clusters(tmp_path, minilm):
    from typer.testing import CliRunner

    from argsim.cli.app import app

    runner = CliRunner()
    res = runner.invoke(app, ["--quiet", "data", "triplets", "wikipedia", "--articles", str(FIXTURES),
                              "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    counts = json.loads((tmp_path / "counts.json").read_text())
    assert counts["train"]["eligible"] == 2 and counts["train"]["sen"] > 20
    rows = [json.loads(x) for x in (tmp_path / "triplets-sen-train.jsonl").read_text().splitlines()]
    assert {"anchor", "positive", "negative", "article", "section", "split"} <= set(rows[0])
    res = runner.invoke(app, ["--quiet", "eval", "clustering", str(tmp_path / "scb-train.jsonl"), "--model",
                              "minilm"])
    assert res.exit_code == 0, res.output
    assert "agglomerative" in res.output
    res = runner.invoke(app, ["--quiet", "cluster", "sentences", str(tmp_path / "scb-train.jsonl"), "--out",
                              str(tmp_path / "c.jsonl")])
    assert res.exit_code == 0, res.output
    clustered = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert len({r["cluster"] for r in clustered if r["article"] == "Coffee"}) == 5
    bad = runner.invoke(app, ["data", "triplets", "wikipedia", "--articles", str(tmp_path / "none.jsonl")])
    assert bad.exit_code == 2 and "none.jsonl" in bad.output


def test_sick_regression_is_fitted_to_convergence():
    """`argsim.evaluation.sick.fit_predict` gives the predictions of the same regression fitted to a far tighter
    tolerance (within 1e-3), which an early stop (tol 1e-3, 300 iterations: 0.035 away here) does not."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from argsim.evaluation.sick import _soft_targets, fit_predict

    rng = np.random.default_rng(13)
    w, x, x_eval = rng.normal(size=64), rng.normal(size=(600, 64)), rng.normal(size=(200, 64))
    y = np.clip(3 + x @ w / 8 + rng.normal(0, 0.3, 600), 1, 5)
    (got,) = fit_predict(x, y, [x_eval], 1.0)
    scaler = StandardScaler().fit(x)
    rows, classes, weights = _soft_targets(y)
    ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=20_000)
    ref.fit(scaler.transform(x)[rows], classes, sample_weight=weights)
    want = ref.predict_proba(scaler.transform(x_eval)) @ ref.classes_.astype(float)
    assert np.abs(got - want).max() < 1e-3
