"""ArguAna (BEIR / MTEB) replica and its evaluator: metrics against a hand computation and pytrec_eval, the
replica's ids and counts on the real data, the validation split free of test texts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from argsim.data.arguana import BEIR_COUNTS, beir_id, load_arguana
from argsim.data.counterargs import load_counterargs
from argsim.evaluation.arguana import ArguAnaEvaluator, mteb_scores


@pytest.fixture(scope="module")
def test_split():
    return load_arguana("test")


# ---------------------------------------------------------------- metrics

QRELS = {"q1": {"d1": 1}, "q2": {"d9": 1}, "q3": {"absent": 1}}
RUN = {  # q1: itself first (ignored), relevant at rank 3 after removal; q2: relevant at rank 12; q3: never
    "q1": {"q1": 10.0, "d5": 9.0, "d6": 8.0, "d1": 7.0, "d7": 1.0},
    "q2": {f"d{i}": 100.0 - i for i in range(20, 31)} | {"d9": 50.0},
    "q3": {"d1": 3.0, "d2": 2.0},
}


def test_metrics_match_hand_computation_and_pytrec_eval():
    import pytrec_eval

    scores, per_query = mteb_scores(QRELS, RUN)
    ndcg = [1 / math.log2(3 + 1), 0.0, 0.0]  # one relevant document: DCG = 1/log2(rank+1), ideal DCG = 1
    mrr = [1 / 3, 0.0, 0.0]  # q2's relevant document is at rank 12: outside the top 10
    recall = [1.0, 1.0, 0.0]
    assert scores["ndcg_at_10"] == pytest.approx(np.mean(ndcg), abs=1e-5)
    assert scores["mrr_at_10"] == pytest.approx(np.mean(mrr), abs=1e-5)
    assert scores["recall_at_100"] == pytest.approx(np.mean(recall), abs=1e-5)
    assert per_query["q1"]["ndcg_cut_10"] == pytest.approx(ndcg[0], abs=1e-6)
    # pytrec_eval itself on the run without the identical ids
    run = {q: {d: s for d, s in docs.items() if d != q} for q, docs in RUN.items()}
    ref = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut.10", "recall.100", "recip_rank"}).evaluate(run)
    assert scores["ndcg_at_10"] == pytest.approx(np.mean([r["ndcg_cut_10"] for r in ref.values()]), abs=1e-5)
    assert scores["recall_at_100"] == pytest.approx(np.mean([r["recall_100"] for r in ref.values()]), abs=1e-5)


def test_identical_ids_are_ignored_and_would_otherwise_count():
    qrels, run = {"q": {"q": 1}}, {"q": {"q": 5.0, "d": 1.0}}  # the query's own id as its relevant document
    assert mteb_scores(qrels, run)[0]["ndcg_at_10"] == 0.0
    assert mteb_scores(qrels, run, ignore_identical_ids=False)[0]["ndcg_at_10"] == 1.0


# ---------------------------------------------------------------- the replica on the real data


def test_replica_ids_and_counts_against_beir(test_split):
    data = test_split
    assert len(data.queries) == len(data.qrels) == BEIR_COUNTS["queries"] == 1406
    assert len(data.corpus) == 8676  # BEIR: 8,674 (see argsim.data.arguana)
    assert data.qrels["test-environment-aeghhgwpe-pro02a"] == {"test-environment-aeghhgwpe-pro02b": 1}
    assert all(len(rel) == 1 for rel in data.qrels.values())
    assert len({d for rel in data.qrels.values() for d in rel}) == 1406
    # the five points without a counter keep a qrel to their absent counter, as in BEIR
    assert sorted(data.missing_relevant) == ["test-education-ufsdfkhbwu-con03b",
                                              "test-free-speech-debate-yfsdfkhbwu-con03b",
                                              "test-politics-dhwem-pro06b", "test-science-sghwbdgmo-con03b",
                                              "test-society-asfhwapg-con04b"]
    # BEIR's query text (line breaks as spaces) and BEIR's query statistics
    assert data.queries["test-environment-aeghhgwpe-pro02a"].startswith(
        "Being vegetarian helps the environment  Becoming a vegetarian is an environmentally friendly thing")
    lengths = [len(t) for t in data.queries.values()]
    assert (min(lengths), max(lengths), len(set(data.queries.values()))) == (251, 5500, 1298)
    # BEIR's first, tenth and last documents (ir_datasets' checks of beir/arguana) are in the replica
    assert {"test-environment-aeghhgwpe-pro02b", "test-environment-aeghhgwpe-con01b",
            "validation-society-fyhwscdcj-con02b"} <= set(data.corpus)
    assert all(i.split("-")[0] in ("test", "training", "validation") for i in data.corpus)
    assert len(set(data.corpus.values())) == 8567  # one document per distinct text, besides the test counters' twins


def test_beir_id_is_initials_of_the_debate_folder():
    corpus = load_counterargs()
    a = corpus.by_id["test/environment/animals-environment-general-health-health-general-weight-philosophy-ethics/"
                     "pro/pro02a-point.txt"]
    assert beir_id(a) == "test-environment-aeghhgwpe-pro02a"
    assert len({beir_id(x) for x in corpus.arguments}) == len(corpus.arguments)


def test_validation_split_never_holds_a_test_text():
    corpus = load_counterargs()
    test_texts = {a.text.replace("\n", " ") for a in corpus.split("test")}
    val = load_arguana("validation")
    assert len(val.queries) > 1000 and len(val.corpus) > 5000
    assert not test_texts & (set(val.queries.values()) | set(val.corpus.values()))
    assert all(i.startswith(("training-", "validation-")) for i in [*val.corpus, *val.queries])
    assert not val.missing_relevant and all(q.startswith("validation-") for q in val.queries)


def test_limit_keeps_the_whole_corpus(test_split):
    head = test_split.head(3)
    assert list(head.queries) == list(test_split.queries)[:3] and head.corpus is test_split.corpus


# ---------------------------------------------------------------- the evaluator on a tiny replica


def test_evaluator_units_and_rankers_on_a_tiny_replica():
    data = load_arguana("test", themes=["sport"])
    assert 20 < len(data.queries) < 40 and len(data.corpus) < 300
    ev = ArguAnaEvaluator(data, name="sport")
    bm25 = ev.evaluate("bm25")
    assert bm25.primary_metric == "ndcg_at_10" and set(bm25.metrics) == {"ndcg_at_10", "mrr_at_10", "recall_at_100"}
    assert ev.n_units == len(data.queries)
    assert np.mean(ev.unit_values) == pytest.approx(bm25["ndcg_at_10"], abs=1e-5)
    assert bm25["ndcg_at_10"] > 0.3  # the counter shares the point's words: far above chance (~0.02)
    dense = ev.evaluate("glove50")
    assert "one side" in dense.details["retrieval"] and dense["recall_at_100"] > 0.5
    assert ev("bm25")["sport_ndcg_at_10"] == pytest.approx(bm25["ndcg_at_10"])


# ---------------------------------------------------------------- argsim's tasks as MTEB tasks


@pytest.mark.slow
def test_mteb_tasks_load_offline_and_mteb_scores_as_the_evaluator(tmp_path, monkeypatch):
    """The tasks load from the local data only; MTEB's own run of MiniLM on a tiny ArguAna replica gives the
    evaluator's nDCG@10; the result writer writes MTEB's file."""
    import json

    import mteb
    from sentence_transformers import SentenceTransformer

    from argsim.backend import get_encoder, model_path
    from argsim.evaluation.mteb_tasks import mteb_tasks, write_mteb_result

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tasks = mteb_tasks(limit=4, themes=["sport"])
    assert [t.metadata.name for t in tasks] == ["ArgsimArguAna", "ArgsimSICK-R", "ArgsimArgKPReranking"]
    for t in tasks:
        t.load_data()
    arguana = tasks[0].dataset["default"]["test"]
    assert len(arguana["queries"]) == 4 and len(arguana["corpus"]) == len(load_arguana("test", themes=["sport"]).corpus)
    assert len(tasks[1].dataset["test"]) == 4
    assert all(set(r) <= set(tasks[2].dataset["default"]["test"]["top_ranked"][q])
               for q, r in tasks[2].dataset["default"]["test"]["relevant_docs"].items())

    st = SentenceTransformer(str(model_path("minilm")), device="cpu")
    result = mteb.evaluate(st, tasks=[tasks[0]], cache=None, show_progress_bar=False)
    theirs = result.task_results[0].scores["test"][0]
    ev = ArguAnaEvaluator(load_arguana("test", themes=["sport"]).head(4))
    ours = ev.evaluate(get_encoder("minilm"))
    assert ours["ndcg_at_10"] == pytest.approx(theirs["ndcg_at_10"], abs=1e-4)
    assert ours["recall_at_100"] == pytest.approx(theirs["recall_at_100"], abs=1e-4)

    path = write_mteb_result("sentence-transformers/all-MiniLM-L6-v2", "arguana", "test", ours.metrics, tmp_path)
    saved = json.loads(path.read_text())
    assert path.name == "ArgsimArguAna.json" and saved["task_name"] == "ArgsimArguAna"
    assert saved["scores"]["test"][0]["main_score"] == pytest.approx(ours["ndcg_at_10"], abs=1e-6)
    loaded = mteb.TaskResult.from_disk(path)
    assert loaded.get_score() == pytest.approx(ours["ndcg_at_10"], abs=1e-6)


def test_a_bad_argument_file_is_one_line_naming_it(tmp_path):
    from argsim.errors import ArgsimError

    root = tmp_path / "counterargs18"
    (root / "03-pairs-best-counter-task" / "test").mkdir(parents=True)
    (root / "03-pairs-best-counter-task" / "test" / "00-argument-pair-type-counts.tsv").write_text("FILE\n")
    for split in ("training", "validation", "test"):
        (root / "02-extracted-arguments" / split).mkdir(parents=True)
    side = root / "02-extracted-arguments" / "test" / "sport" / "house-bans-boxing" / "pro"
    side.mkdir(parents=True)
    (side / "pro01a-point.txt").write_bytes(b"Title\n\nBody \xff\n")
    with pytest.raises(ArgsimError) as err:
        load_arguana("test", data_dir=tmp_path)
    assert "pro01a-point.txt" in str(err.value) and "UTF-8" in str(err.value) and "\n" not in str(err.value)


def test_a_bad_split_is_refused_before_the_corpus_is_read(tmp_path):
    """The split is an option: refused first, even where no corpus could be read (an empty data folder)."""
    with pytest.raises(ValueError, match="unknown ArguAna split 'dev'"):
        load_arguana("dev", data_dir=tmp_path)
