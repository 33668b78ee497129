"""TripletEvaluator, ClusteringEvaluator and SICKEvaluator against scikit-learn / SciPy on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from eval_helpers import TableEncoder

from argsim.evaluation import ClusteringEvaluator, SICKEvaluator, TripletEvaluator


def test_triplet_accuracy_is_sklearns_cosine_comparison_with_ties_wrong():
    from sklearn.metrics.pairwise import cosine_similarity

    rng = np.random.default_rng(0)
    texts = [f"t{i}" for i in range(30)]
    table = {t: rng.normal(size=5).tolist() for t in texts}
    table["tie"] = table["t0"]  # a negative identical to the positive: an exact tie
    rows = [{"anchor": texts[i], "positive": texts[i + 1], "negative": texts[i + 2]} for i in range(0, 27, 3)]
    rows.append({"anchor": "t1", "positive": "t0", "negative": "tie"})
    enc = TableEncoder(table)
    ev = TripletEvaluator(rows)
    result = ev.evaluate(enc)

    def cos(a: str, b: str) -> float:
        return float(cosine_similarity([table[a]], [table[b]])[0, 0])

    margins = np.array([cos(r["anchor"], r["positive"]) - cos(r["anchor"], r["negative"]) for r in rows])
    assert result["accuracy"] == pytest.approx(np.mean(margins > 1e-9))  # the tie counts wrong
    assert result["mean_diff"] == pytest.approx(margins.mean(), abs=1e-6)
    assert result.details["ties"] == 1 and ev.unit_values[-1] == 0.0
    assert ev.resample_primary(np.arange(ev.n_units)[None])[0] == pytest.approx(result.primary)
    assert TripletEvaluator(rows, ties="correct").evaluate(enc)["accuracy"] == pytest.approx(np.mean(margins > -1e-9))


def test_wikipedia_triplets_from_the_dataset_and_an_in_memory_model(data_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    from argsim.backend import model_path
    from argsim.config import RunConfig

    ev = TripletEvaluator.from_dataset(limit=20, config=RunConfig(cache_dir=tmp_path / "cache"))
    assert len(ev.triplets) == 20 and ev.name == "test"
    st = SentenceTransformer(str(model_path("minilm")), device="cpu")
    assert dict(ev.evaluate(st)) == pytest.approx(dict(ev.evaluate("minilm")), abs=1e-6)


def test_clustering_is_sklearns_ami_and_ari_per_article_averaged():
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

    rng = np.random.default_rng(1)
    centres = rng.normal(size=(3, 6)) * 3
    rows, table = [], {}
    for art in ("A", "B"):
        for i in range(18):
            label = i % 3
            text = f"{art}-{i}"
            table[text] = (centres[label] + rng.normal(size=6) * (0.5 if art == "A" else 3.0)).tolist()
            rows.append({"text": text, "label": label, "article": art})
    ev = ClusteringEvaluator(rows, seed=13)
    result = ev.evaluate(TableEncoder(table))
    ami, ari = [], []
    for art in ("A", "B"):
        sub = [r for r in rows if r["article"] == art]
        x = np.array([table[r["text"]] for r in sub], dtype=np.float32)
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        pred = KMeans(n_clusters=3, n_init=10, random_state=13).fit_predict(x)
        gold = [r["label"] for r in sub]
        ami.append(adjusted_mutual_info_score(gold, pred))
        ari.append(adjusted_rand_score(gold, pred))
    assert result["AMI"] == pytest.approx(np.mean(ami), abs=1e-6)
    assert result["ARI"] == pytest.approx(np.mean(ari), abs=1e-6)
    assert ev.n_units == 2 and ev.resample_primary(np.array([[0, 1], [0, 0]])).tolist() == pytest.approx(
        [np.mean(ami), ami[0]], abs=1e-6)


def test_sick_is_scipys_correlation_of_the_same_predictions(data_dir):
    from scipy.stats import pearsonr, spearmanr

    from argsim.data.sick import load_sick

    folder = data_dir / "sick"
    train, trial, test = (load_sick(folder, s)[:n] for s, n in (("train", 300), ("trial", 100), ("test", 150)))
    rng = np.random.default_rng(2)
    texts = {t for p in [*train, *trial, *test] for t in (p.sentence_a, p.sentence_b)}
    enc = TableEncoder({t: rng.normal(size=8).tolist() for t in sorted(texts)})
    ev = SICKEvaluator(train, trial, test)
    result = ev.evaluate(enc)
    gold = np.array([p.relatedness for p in test])
    assert result["pearson"] == pytest.approx(pearsonr(ev.predictions, gold)[0], abs=1e-12)
    assert result["spearman"] == pytest.approx(spearmanr(ev.predictions, gold)[0], abs=1e-12)
    assert ev.resample_primary(np.arange(ev.n_units)[None])[0] == pytest.approx(result.primary, abs=1e-12)
    draw = rng.integers(0, len(test), size=len(test))
    assert ev.resample_primary(draw[None])[0] == pytest.approx(pearsonr(ev.predictions[draw], gold[draw])[0])
