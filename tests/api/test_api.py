"""The public Python API (`argsim.*`) against independent computations and against the CLI path it shares.

Real MiniLM, small slices of the real data (skipped where the datasets are absent); nothing is trained here
except `fit`'s argument checks.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import argsim
from argsim.cli.app import app
from argsim.errors import ArgsimError, InputError

runner = CliRunner()
TOPIC = "We should abandon the use of school uniform"


def invoke(*args: str):
    res = runner.invoke(app, ["--quiet", *args])
    assert res.exit_code == 0, res.output
    return res


# ------------------------------------------------------------------ datasets


def test_load_dataset_row_counts_equal_the_loaders(data_dir):
    from argsim.data.argkp import load_argkp
    from argsim.data.catalog import dataset_dir
    from argsim.data.counterargs import load_counterargs
    from argsim.data.poliinfo import ntcir14_gold_items
    from argsim.data.sick import load_sick

    for split in ("train", "dev"):
        gold = load_argkp(split, data_dir)
        df = argsim.load_dataset("argkp", split=split, data_dir=data_dir)
        assert len(df) == len(gold.labels) and df["arg_id"].nunique() == len(gold.arguments)
        assert int(df["label"].sum()) == gold.positives() and df["key_point_id"].nunique() == len(gold.key_points)
        assert list(dict.fromkeys(df["arg_id"])) == [a.arg_id for a in gold.arguments]  # the file's order
        row = df.iloc[0]
        assert gold.labels[(row.arg_id, row.key_point_id)] == row.label
        assert gold.kp_by_id[row.key_point_id].text == row.key_point
    both = argsim.load_dataset("argkp", data_dir=data_dir)
    assert both["split"].value_counts().to_dict() == {"train": 20635, "dev": 3458}
    corpus = load_counterargs(data_dir)
    test = argsim.load_dataset("counterargs-18", split="test", data_dir=data_dir)
    assert len(test) == len(corpus.split("test"))
    points = test[test["counter"].notna()]
    assert len(points) == len(corpus.points("test"))
    p = corpus.by_id[points.iloc[0]["id"]]
    assert corpus.true_counter(p).id == points.iloc[0]["counter"]
    minutes = argsim.load_dataset("minutes", data_dir=data_dir)
    assert len(minutes) == len(ntcir14_gold_items(dataset_dir("poliinfo", data_dir))) == 740
    sick = argsim.load_dataset("sick", split="test", data_dir=data_dir)
    assert len(sick) == len(load_sick(dataset_dir("sick", data_dir), "test"))


def test_load_dataset_unknown_names_are_one_line_errors(data_dir):
    with pytest.raises(ArgsimError, match="unknown dataset 'argkp2'"):
        argsim.load_dataset("argkp2")
    with pytest.raises(ArgsimError, match="unknown split 'dev' of sick"):
        argsim.load_dataset("sick", split="dev", data_dir=data_dir)


# ------------------------------------------------------------------ encode


def test_encode_is_the_backend_and_sentence_transformers(minilm):
    from sentence_transformers import SentenceTransformer

    from argsim.backend import model_path

    texts = ["Nuclear power is clean.", "Uniforms stop bullying.", "Nuclear power is clean."]
    v = argsim.encode(texts, normalize=True)
    assert v.shape == (3, 384) and v.dtype == np.float32
    ref = SentenceTransformer(str(model_path("minilm")), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.allclose(v, ref, atol=1e-5)
    assert argsim.encode(texts[0]).shape == (384,)


# ------------------------------------------------------------------ key point matching


def test_match_picks_the_cosine_argmax(minilm):
    args = ["Nuclear plants emit no CO2.", "Reactors can melt down.", "Waste stays radioactive for ages."]
    kps = ["Nuclear power is clean", "Nuclear power is dangerous"]
    out = argsim.KeyPointMatcher("minilm", threshold=-1.0).match(args, kps)  # every best key point fits
    a, k = argsim.encode(args, normalize=True), argsim.encode(kps, normalize=True)
    sims = a @ k.T
    assert list(out.columns) == ["arg_id", "argument", "topic", "stance", "key_point_id", "key_point", "score",
                                 "matched"]
    assert out["key_point"].tolist() == [kps[i] for i in sims.argmax(1)] and out["matched"].all()
    assert np.allclose(out["score"], sims.max(1), atol=1e-5)
    pairs = argsim.KeyPointMatcher("minilm", threshold=-1.0).match(args, kps, all_pairs=True)
    assert len(pairs) == 6 and pairs["best"].sum() == 3
    assert np.allclose(pairs["score"].to_numpy().reshape(3, 2), sims, atol=1e-5)
    # the model's threshold (zero-shot MiniLM: the cosine default): below it no key point fits, the score stays
    from argsim.kpm.threshold import COSINE_THRESHOLD

    own = argsim.KeyPointMatcher("minilm").match(args, kps)
    fits = sims.max(1) >= COSINE_THRESHOLD
    assert own["matched"].tolist() == fits.tolist() and own["key_point"].isna().tolist() == (~fits).tolist()
    assert np.allclose(own["score"], sims.max(1), atol=1e-5)


def test_match_frames_respect_topic_and_stance(minilm):
    args = pd.DataFrame({"arg_id": ["x", "y"], "argument": ["Uniforms cost too much.", "Uniforms are fair."],
                         "topic": ["uniforms", "uniforms"], "stance": [-1, 1]})
    kps = pd.DataFrame({"key_point_id": ["c", "p"], "key_point": ["Uniforms are expensive", "Uniforms equalise"],
                        "topic": ["uniforms", "uniforms"], "stance": [-1, 1]})
    out = argsim.KeyPointMatcher("minilm", threshold=-1.0).match(args, kps)
    assert out.set_index("arg_id")["key_point_id"].to_dict() == {"x": "c", "y": "p"}
    lonely = args.assign(topic=["uniforms", "taxes"])
    out = argsim.KeyPointMatcher("minilm", threshold=-1.0).match(lonely, kps)
    assert out["key_point_id"].isna().tolist() == [False, True] and np.isnan(out["score"].iloc[1])


def test_evaluate_equals_the_rank_keypoints_and_eval_map_commands(data_dir, minilm, tmp_path):
    """The API's mAP on one dev topic = `argsim rank keypoints` then `argsim eval map` on the same files."""
    dev = argsim.load_dataset("argkp", split="dev", data_dir=data_dir)
    part = dev[dev["topic"] == TOPIC]
    files = {}
    for name, cols, src in (("arguments", ["arg_id", "argument", "topic", "stance"], part),
                            ("key_points", ["key_point_id", "key_point", "topic", "stance"], part),
                            ("labels", ["arg_id", "key_point_id", "label"], part)):
        files[name] = tmp_path / f"{name}.csv"
        src[cols].drop_duplicates(cols[:1] if name != "labels" else cols[:2]).to_csv(files[name], index=False)
    inputs = ["--arguments", str(files["arguments"]), "--key-points", str(files["key_points"]),
              "--labels", str(files["labels"])]
    invoke("rank", "keypoints", *inputs, "-m", "minilm", "--out", str(tmp_path / "run"))
    invoke("eval", "map", str(tmp_path / "run" / "predictions.json"), *inputs, "--out", str(tmp_path / "m.json"))
    cli = json.loads((tmp_path / "m.json").read_text())
    matcher = argsim.KeyPointMatcher("minilm")
    for scores in (matcher.evaluate(part), matcher.evaluate("dev", topics=[TOPIC])):
        assert scores["strict_map"] == pytest.approx(cli["strict"], abs=1e-12)
        assert scores["relaxed_map"] == pytest.approx(cli["relaxed"], abs=1e-12)
    preds = json.loads((tmp_path / "run" / "predictions.json").read_text())
    assert argsim.kpa_map(preds, part) == {"strict_map": cli["strict"], "relaxed_map": cli["relaxed"]}
    best = pd.read_csv(tmp_path / "run" / "best_keypoints.csv")
    api = matcher.match_df(part)
    # one threshold (the model's) for both: the CSV keeps every best key point with its `matched` flag, the API
    # leaves an unmatched argument's key point empty
    assert api["matched"].tolist() == best["matched"].tolist() and 0 < best["matched"].sum() < len(best)
    assert api["key_point_id"].tolist() == best["key_point_id"].where(best["matched"]).tolist()


def test_kpa_map_frames_dicts_and_split_names_agree(data_dir):
    """Seeded random scores over every dev candidate: the frame, the split name and the loader give one mAP."""
    from argsim.data.argkp import load_argkp
    from argsim.metrics.kpa_map import evaluate_map

    gold = load_argkp("dev", data_dir)
    rng = np.random.default_rng(0)
    preds = {a.arg_id: {k.kp_id: float(rng.random()) for k in gold.candidates(a)} for a in gold.arguments[::2]}
    ref = evaluate_map(preds, gold)
    frame = argsim.load_dataset("argkp", split="dev", data_dir=data_dir)
    long = pd.DataFrame([(a, k, s) for a, kps in preds.items() for k, s in kps.items()],
                        columns=["arg_id", "key_point_id", "score"])
    for p, g in ((preds, frame), (long, frame), (preds, "dev"), (preds, gold)):
        assert argsim.kpa_map(p, g, data_dir=data_dir) == {"strict_map": ref.strict, "relaxed_map": ref.relaxed}
    r2 = evaluate_map(preds, gold, formula="2021-09")
    assert argsim.kpa_map(preds, frame, formula="2021-09")["strict_map"] == r2.strict
    text_free = frame.drop(columns=["argument", "key_point"])
    assert argsim.kpa_map(preds, text_free)["strict_map"] == ref.strict


def test_fit_checks_its_arguments():
    with pytest.raises(ArgsimError, match="one model"):
        argsim.KeyPointMatcher(["minilm", "minilm"]).fit()
    unlabelled = pd.DataFrame({"arg_id": ["a"], "key_point_id": ["k"], "topic": ["t"], "stance": [1],
                               "argument": ["x"], "key_point": ["y"]})
    with pytest.raises(ArgsimError, match="gold labels"):
        argsim.KeyPointMatcher("minilm").fit(unlabelled)
    with pytest.raises(ArgsimError, match="weight"):
        argsim.KeyPointMatcher(["minilm", "minilm"], weights=[1.0])


def test_fit_trains_the_recipe_it_is_given_into_the_work_folder(tmp_path, monkeypatch):
    """fit hands train_sbert the recipe with this matcher's model and the run's seed, and writes under the run's
    work folder by default (the training itself: tests/kpm/test_kpm_train.py)."""
    from argsim.trainers import kpm_sbert as sbert

    seen = {}
    monkeypatch.setattr(sbert, "train_sbert", lambda data, out, cfg, **kw: seen.update(out=out, cfg=cfg) or {})
    pairs = pd.DataFrame({"arg_id": ["a", "a", "b", "b"], "key_point_id": ["k", "l", "k", "l"], "topic": ["t"] * 4,
                          "stance": [1] * 4, "argument": ["x", "x", "y", "y"], "key_point": ["p", "q", "p", "q"],
                          "label": [1, 0, 0, 1]})
    config = argsim.RunConfig(seed=7, workdir=tmp_path)
    matcher = argsim.KeyPointMatcher("minilm", config=config).fit(pairs, recipe=sbert.SbertConfig(epochs=2.0))
    assert seen["out"] == tmp_path / "models" / "kpm-sbert" and matcher.models == [str(seen["out"])]
    assert (seen["cfg"].model, seen["cfg"].seed, seen["cfg"].epochs) == ("minilm", 7, 2.0)


# ------------------------------------------------------------------ counter-argument retrieval


def test_counter_retriever_bm25_is_the_rankers_own_output():
    from argsim.counter.lexical.baselines import bm25_scores
    from argsim.data.counterargs import Argument

    cands = ["School uniforms do not stop bullying at all.", "Taxes fund public schools.",
             "Bullying happens with or without uniforms.", "Guns deter crime."]
    queries = ["School uniforms stop bullying.", "Higher taxes hurt the economy."]
    out = argsim.CounterRetriever("bm25").index(cands, ids=["a", "b", "c", "d"]).retrieve(queries, k=4)

    def arg(i: str, t: str, kind: str) -> Argument:
        return Argument(i, "user", "", "", "", kind, 0, "", t, t)

    points = [arg(f"q{i}", q, "point") for i, q in enumerate(queries)]
    pool = [arg(f"c{i}", c, "counter") for i, c in enumerate(cands)]
    direct = bm25_scores(points, {p.id: pool for p in points})
    for qi, q in enumerate(queries):
        got = out[out["query_id"] == qi]
        assert got["rank"].tolist() == [1, 2, 3, 4] and (got["query"] == q).all()
        order = np.argsort(-direct[f"q{qi}"], kind="stable")
        assert got["candidate"].tolist() == [cands[j] for j in order]
        assert got["candidate_id"].tolist() == [["a", "b", "c", "d"][j] for j in order]
        assert np.allclose(got["score"], direct[f"q{qi}"][order])
    top1 = argsim.CounterRetriever("bm25").index(cands).retrieve(queries, k=1)
    assert len(top1) == 2


def test_counter_retriever_never_returns_the_query_itself():
    """A query that is one of the indexed texts (BM25 scores it best against itself) is ranked against the others
    only: the same ranking as an index without it."""
    cands = ["School uniforms stop bullying.", "School uniforms do not stop bullying at all.",
             "Taxes fund public schools.", "Bullying happens with or without uniforms."]
    out = argsim.CounterRetriever("bm25").index(cands).retrieve([cands[0], " " + cands[0] + "\n"], k=4)
    without = argsim.CounterRetriever("bm25").index(cands[1:], ids=["1", "2", "3"]).retrieve([cands[0]], k=4)
    assert cands[0] not in out["candidate"].tolist() and len(out) == 6
    for qi in (0, 1):
        got = out[out["query_id"] == qi]
        assert got["candidate_id"].tolist() == without["candidate_id"].tolist()
        assert np.allclose(got["score"], without["score"])
    assert argsim.CounterRetriever("bm25").index(cands[:1]).retrieve(cands[:1]).empty  # nothing else to rank


def test_counter_retriever_evaluate_equals_the_metric_on_direct_scores(counterargs_corpus, data_dir):
    """accuracy@1 of `evaluate` = `argsim.accuracy_at_1` over the BM25 ranker's direct scores of the same pools."""
    from argsim.counter.core.run import dataset_points
    from argsim.counter.lexical.baselines import bm25_scores

    got = argsim.CounterRetriever("bm25").evaluate(split="validation", setting="sdoc", limit=25, data_dir=data_dir)
    points, pools, gold = dataset_points("validation", "sdoc", limit=25, data_dir=data_dir)
    scores = bm25_scores(points, pools)
    scored = {p.id: [(c.id, float(s)) for c, s in zip(pools[p.id], scores[p.id], strict=True)] for p in points}
    assert got["points"] == got.n == 25 and got.primary_metric == "accuracy_at_1"
    assert got["accuracy_at_1"] == pytest.approx(argsim.accuracy_at_1(scored, gold), abs=1e-12)
    frame = pd.DataFrame([(q, c, s) for q, cs in scored.items() for c, s in cs],
                         columns=["query", "candidate", "score"])
    assert argsim.accuracy_at_1(frame, gold) == argsim.accuracy_at_1(scored, gold)


def test_counter_retriever_rejects_unknown_options_and_empty_index():
    with pytest.raises(ArgsimError, match="not an option of bm25"):
        argsim.CounterRetriever("bm25", options={"bm25_idff": "okapi"})
    with pytest.raises(ArgsimError, match="index candidates first"):
        argsim.CounterRetriever("bm25").retrieve(["x"])
    with pytest.raises(ArgsimError, match="unknown ranking method"):
        argsim.CounterRetriever("bm26")


# ------------------------------------------------------------------ thematic, minutes, metrics


def test_cluster_sentences_equals_kmeans_on_unit_vectors_and_the_command(minilm, tmp_path):
    from sklearn.cluster import KMeans

    sents = ["The team won the cup final.", "The striker scored twice.", "Parliament passed the budget.",
             "The minister resigned over the vote.", "The goalkeeper saved a penalty."]
    labels = argsim.cluster_sentences(sents, n_clusters=2)
    unit = argsim.encode(sents, normalize=True)
    ref = KMeans(n_clusters=2, n_init=10, random_state=13).fit_predict(unit)
    assert labels.tolist() == ref.tolist()
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps({"text": s, "article": "a" if i < 3 else "b", "label": i % 2}) + "\n"
                           for i, s in enumerate(sents)))
    invoke("cluster", "sentences", str(src), "--out", str(tmp_path / "c.jsonl"))
    cli = [json.loads(x)["cluster"] for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    api = argsim.cluster_sentences(sents, groups=["a", "a", "a", "b", "b"], labels=[0, 1, 0, 1, 0])
    assert api.tolist() == cli
    with pytest.raises(ArgsimError, match="n_clusters"):
        argsim.cluster_sentences(sents)


def test_summarize_minutes_equals_the_command(tmp_path):
    text = ("保育所の待機児童が増えています。本日は晴天です。区は保育所を三か所新設します。"
            "保育士の処遇改善も進めます。")
    src = tmp_path / "u.csv"
    with src.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text", "topic", "subtopic", "length"])
        w.writerow(["q1", text, "待機児童対策", "保育所の整備", 40])
    invoke("summarize", "minutes", "-i", str(src), "--out", str(tmp_path / "s.json"))
    (rec,) = json.loads((tmp_path / "s.json").read_text())["summaries"]
    got = argsim.summarize_minutes(text, topic="待機児童対策", subtopic="保育所の整備", budget=40)
    assert "".join(got) == rec["summary"] and len(rec["summary"]) <= 40
    assert got == [s["sentence"] for s in sorted(rec["selected"], key=lambda s: s["index"])]
    # key size 100 / 50 = 2 sentences
    lead = argsim.summarize_minutes(text, budget=100, options=argsim.SummarizeOptions(method="lead"))
    assert lead == ["保育所の待機児童が増えています。", "本日は晴天です。"]


def test_summarize_minutes_frames_equal_one_item_at_a_time(data_dir):
    items = argsim.load_dataset("minutes", split="single-testgs", data_dir=data_dir).head(4)
    options = argsim.SummarizeOptions(method="embedrank")
    out = argsim.summarize_minutes_frame(items, options=options)
    assert out["id"].tolist() == items["id"].tolist() and out["gold"].tolist() == items["summary"].tolist()
    for row, got in zip(items.itertuples(), out.itertuples(), strict=True):
        one = argsim.summarize_minutes(row.sentences, topic=row.main_topic, subtopic=row.sub_topic,
                                       budget=row.length, options=options)
        assert got.selected == one and got.summary == "".join(one)[:row.length] and len(got.summary) <= row.length
    with pytest.raises(ArgsimError, match="'sentences'"):
        argsim.summarize_minutes_frame(items.drop(columns=["sentences"]))
    with pytest.raises(ArgsimError, match="summarize_minutes_frame"):
        argsim.summarize_minutes(items)


def test_triplet_accuracy_and_rouge1_by_hand():
    rng = np.random.default_rng(1)
    a, p, n = (rng.normal(size=(50, 8)) for _ in range(3))
    def cos(x, y):
        return (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)

    assert argsim.triplet_accuracy(a, p, n) == pytest.approx(float((cos(a, p) >= cos(a, n)).mean()))
    l1 = float((np.abs(a - n).sum(1) > np.abs(a - p).sum(1)).mean())
    assert argsim.triplet_accuracy(a, p, n, distance="l1") == pytest.approx(l1)
    # characters: summary 消費税を上げる (7), reference 消費税を引き上げる (9); 7 shared
    r = argsim.rouge1(["消費税を上げる", "abc"], ["消費税を引き上げる", "xyz"], unit="char")
    assert r["recall"] == pytest.approx((7 / 9 + 0) / 2) and r["precision"] == pytest.approx((1 + 0) / 2)
    over = argsim.rouge1("消費税を上げる", "消費税を引き上げる", unit="char", limits=5)
    assert over["recall"] == 0 and over["over_limit"] == 1


def test_public_names_are_documented():
    """Each public name has a docstring with Args (classes: on the class or __init__), Returns and an Example."""
    for name in argsim.__all__:
        if name in ("__version__", "RunConfig"):
            continue
        doc = getattr(argsim, name).__doc__ or ""
        assert "Example" in doc and "Args:" in doc, name
        if not isinstance(getattr(argsim, name), type):
            assert "Returns:" in doc, name


def test_paths_are_accepted_for_models(minilm, tmp_path):
    from argsim.backend import model_path

    folder = Path(model_path("minilm"))
    out = argsim.KeyPointMatcher(folder).match(["a"], ["b"])
    assert len(out) == 1


def test_empty_or_non_finite_predictions_are_refused_not_scored_zero():
    """As `eval map` on an empty file: no scores, or a NaN score, is an error, never a silent mAP."""
    import pandas as pd

    from argsim.errors import ArgsimError

    gold = pd.DataFrame({"arg_id": ["a1", "a2"], "key_point_id": ["k1", "k1"], "topic": ["t", "t"],
                         "stance": [1, 1], "argument": ["x", "y"], "key_point": ["K", "K"], "label": [1, 0]})
    for bad in ({}, {"a1": {}}, {"a1": {"k1": float("nan")}, "a2": {"k1": 0.2}}):
        with pytest.raises(ArgsimError):
            argsim.kpa_map(bad, gold)
    assert argsim.kpa_map({"a1": {"k1": 0.9}, "a2": {"k1": 0.2}}, gold) == {"strict_map": 1.0, "relaxed_map": 1.0}


def test_encoding_no_texts_gives_no_rows_of_the_models_width():
    assert argsim.encode([], model="minilm").shape == (0, 384)


def test_metrics_of_nothing_or_of_non_finite_scores_are_refused():
    """accuracy@1 of no queries (it was NaN), a NaN score (it counted as a miss) and ROUGE-1 of no summaries (it
    was 0) are one-line errors."""
    with pytest.raises(ArgsimError):
        argsim.accuracy_at_1({}, {})
    with pytest.raises(ArgsimError):
        argsim.accuracy_at_1({"q": [("c", float("nan")), ("d", 0.1)]}, {"q": "c"})
    with pytest.raises(ArgsimError):
        argsim.rouge1([], [])
    assert argsim.accuracy_at_1({"q1": [("c1", 0.9), ("c2", 0.1)]}, {"q1": "c1"}) == 1.0



def test_a_scores_frame_without_a_needed_column_is_one_line_naming_it():
    """accuracy@1 of a frame missing a column it reads is one InputError naming it (not pandas' AttributeError)."""
    import pandas as pd

    frame = pd.DataFrame({"query": ["q"], "candidate": ["c"], "similarity": [1.0]})
    with pytest.raises(InputError, match=r"scores.*missing column\(s\) score; found query, candidate, similarity"):
        argsim.accuracy_at_1(frame, {"q": "c"})
