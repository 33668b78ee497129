"""The Python API refuses and warns exactly as the CLI does: one catalogue of bad inputs, each run through the
command and through the public Python name, and both answers carry the same phrase (an error, or a warning line
on stderr)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import argsim
from argsim.cli.app import app
from argsim.errors import ArgsimError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
runner = CliRunner()


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    (tmp_path / "texts.txt").write_text("We should ban whaling.\nWhaling is a tradition.\n", encoding="utf-8")
    for name in ("arguments.csv", "key_points.csv", "labels.csv"):
        shutil.copy(FIXTURES / "kpm" / name, tmp_path / name)
    shutil.copy(FIXTURES / "minutes" / "utterances.csv", tmp_path / "utterances.csv")
    # key points whose topic differs from the arguments' only in letter case
    kp = (tmp_path / "key_points.csv").read_text(encoding="utf-8").replace(",Uniforms,", ",uniforms ,")
    (tmp_path / "key_points_case.csv").write_text(kp, encoding="utf-8")
    args = (tmp_path / "arguments.csv").read_text(encoding="utf-8").replace(",Uniforms,1\n", ",Uniforms,pro\n", 1)
    (tmp_path / "arguments_pro.csv").write_text(args, encoding="utf-8")
    kps = (tmp_path / "key_points.csv").read_text(encoding="utf-8")
    (tmp_path / "key_points_twice.csv").write_text(kps + kps.splitlines()[1] + "\n", encoding="utf-8")
    (tmp_path / "sentences.jsonl").write_text('{"text": "a", "label": 1}\n{"text": "b", "label": "1"}\n'
                                              '{"text": "c", "label": " 1"}\n', encoding="utf-8")
    return tmp_path


def _python_kpm(arguments: str, key_points: str):
    from argsim.api.kpm import match_inputs

    return lambda: match_inputs(pd.read_csv(arguments), pd.read_csv(key_points))


def _python_labels():
    argsim.cluster_sentences(["a", "b", "c"], model="minilm", labels=[1, "1", " 1"])


# (id, CLI argv, Python call, phrase, is it an error (else a warning))
CATALOGUE = [
    ("model-case", ["embed", "texts.txt", "--out", "v.npy", "--model", "KPM"],
     lambda: argsim.encode(["a"], model="KPM"), "did you mean 'kpm'", True),
    ("model-case-kpm", ["rank", "keypoints", "--arguments", "arguments.csv", "--key-points", "key_points.csv",
                        "--out", "ranked", "--model", "KPM"],
     lambda: argsim.KeyPointMatcher("KPM"), "did you mean 'kpm'", True),
    ("model-case-evaluate", ["evaluate", "KPM", "--tasks", "kpa"],
     lambda: argsim.evaluate(["KPM"], tasks=["kpa"]), "did you mean 'kpm'", True),
    ("mmr-weights-zero", ["summarize", "minutes", "--input", "utterances.csv", "--mmr-weight", "0", "--m", "0",
                          "--s", "0"],
     lambda: argsim.SummarizeOptions(mmr_weight=0, m=0, s=0), "are all 0", True),
    ("model-typo", ["embed", "texts.txt", "--out", "v.npy", "--model", "minlm"],
     lambda: argsim.encode(["a"], model="minlm"), "did you mean 'minilm'", True),
    ("threads-absurd", ["--threads", "1000000", "embed", "texts.txt", "--out", "v.npy"],
     lambda: argsim.encode(["a"], config=argsim.RunConfig(threads=1_000_000)), "--threads 1000000 is more than",
     False),
    ("topic-case", ["rank", "keypoints", "--arguments", "arguments.csv", "--key-points", "key_points_case.csv",
                    "--out", "ranked", "--model", "minilm"],
     _python_kpm("arguments.csv", "key_points_case.csv"), "only in case or spacing", False),
    ("stance-word", ["rank", "keypoints", "--arguments", "arguments_pro.csv", "--key-points", "key_points.csv",
                     "--out", "ranked", "--model", "minilm"],
     _python_kpm("arguments_pro.csv", "key_points.csv"), "column 'stance': stance must be 1 (pro) or -1 (con)",
     True),
    ("key-point-id-twice", ["rank", "keypoints", "--arguments", "arguments.csv", "--key-points", "key_points_twice.csv",
                            "--out", "ranked", "--model", "minilm"],
     _python_kpm("arguments.csv", "key_points_twice.csv"), "duplicate key_point_id 'k1' (first at row",
     True),
    ("label-spellings", ["cluster", "sentences", "sentences.jsonl", "--out", "c.jsonl", "--model", "minilm"],
     _python_labels, "spelled several ways", False),
]


@pytest.mark.parametrize("case", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_cli_and_python_answer_alike(ws, capsys, case):
    _id, argv, call, phrase, is_error = case
    result = runner.invoke(app, ["-q", *argv])
    assert phrase in result.stderr, result.stderr
    assert (result.exit_code == 2) == is_error, result.stderr
    capsys.readouterr()
    if is_error:
        with pytest.raises(ArgsimError, match=re.escape(phrase)):
            call()
    else:
        call()
        assert phrase in capsys.readouterr().err


def test_unknown_topic_is_named_not_reported_as_no_labels(data_dir):
    from argsim.data.argkp import load_argkp

    data = load_argkp("dev", data_dir)
    topic = data.topics[0] if hasattr(data, "topics") else data.arguments[0].topic
    topic = sorted(topic)[0] if isinstance(topic, set | frozenset) else topic
    with pytest.raises(ArgsimError, match="did you mean"):
        data.subset([topic.upper()])
    with pytest.raises(ArgsimError, match="did you mean"):
        argsim.KeyPointMatcher("minilm").evaluate("dev", topics=[topic.lower() + "x"], data_dir=data_dir)


def test_english_text_to_the_minutes_summarizer_is_warned(capsys):
    text = "This English utterance has no Japanese sentence end and is far longer than its small budget"
    from argsim.minutes.summarize import SummarizeOptions

    out = argsim.summarize_minutes(text, budget=20, options=SummarizeOptions(method="lead"))
    assert len("".join(out)) <= 20
    err = capsys.readouterr().err
    assert "no whole sentence fits the budget" in err and "no Japanese sentence end" in err



def _config(module: str, name: str, **fields):
    """A config of an API call built with `fields` (KeyPointMatcher.fit's recipe, embed_file's spec)."""
    import importlib

    return getattr(importlib.import_module(module), name)(**fields)

@pytest.mark.parametrize(("call", "phrase"), [
    (lambda: argsim.encode(None), "texts: expected a list of strings (or one string), found NoneType"),
    (lambda: argsim.encode({"a": 1}), "found dict"),
    (lambda: argsim.rouge1(None, "a", unit="char"), "summaries: expected a list of strings"),
    (lambda: argsim.rouge1("a", ["a", 1], unit="char"), "references: item 2 is int"),
    (lambda: argsim.summarize_minutes([None], model="minilm"), "sentences: item 1 is NoneType, not a string"),
    (lambda: argsim.cluster_sentences(["a", 3], model="minilm", n_clusters=1), "sentences: item 2 is int"),
    (lambda: argsim.CounterRetriever("bm25").index(["a", None]), "candidates: item 2 is NoneType"),
    (lambda: argsim.CounterRetriever("bm25").index(["a b", "c d"]).retrieve(7), "queries: expected a list"),
    (lambda: argsim.triplet_accuracy(["a"], [None], ["c"]), "positive: item 1 is NoneType"),
    (lambda: argsim.triplet_accuracy(np.ones((2, 3)), np.ones((3, 3)), np.ones((2, 3))), "one (n, dim) shape"),
    (lambda: argsim.triplet_accuracy(np.full((2, 3), np.nan), np.ones((2, 3)), np.ones((2, 3))),
     "anchor: the vectors hold NaN"),
    (lambda: argsim.accuracy_at_1({"q": 5}, {"q": "a"}), "expected (candidate, score) pairs"),
    (lambda: argsim.accuracy_at_1({"q": [("a", "high")]}, {"q": "a"}), "expected (candidate, score) pairs"),
    (lambda: argsim.accuracy_at_1([("a", 1)], {"q": "a"}), "scores: expected a DataFrame"),
    (lambda: argsim.accuracy_at_1({"q": [("a", 1)]}, {"q": "a"}, ties="random"), "unknown ties 'random'"),
    (lambda: argsim.KeyPointMatcher("minilm", combine="max").match(["a"], ["b"], topic="t"), "unknown --combine"),
    (lambda: argsim.KeyPointMatcher("minilm", threshold="0.5").match(["a"], ["b"], topic="t"), "give a number"),
    (lambda: argsim.KeyPointMatcher("minilm", threshold=float("nan")).match(["a"], ["b"], topic="t"),
     "give a number"),
    # the scalar parameters: a count, a choice, a config field, as the command line's parser checks them
    (lambda: argsim.RunConfig(seed=-1), "RunConfig seed (--seed) -1: must be at least 0"),
    (lambda: argsim.RunConfig(threads=0), "RunConfig threads (--threads) 0: must be at least 1"),
    (lambda: argsim.RunConfig(seed="13"), "expected int, found str"),
    (lambda: argsim.RunConfig(device="tpu"), "unknown device 'tpu' (--device): choose one of auto, cpu, cuda"),
    (lambda: argsim.RunConfig(precision="bf61"), "RunConfig precision (--precision) 'bf61' (did you mean 'bf16'?)"),
    (lambda: argsim.RunConfig(backend="tensorrt"), "expected one of 'torch', 'onnx', 'openvino'"),
    (lambda: argsim.RunConfig(quantize="int4"), "RunConfig quantize (--quantize) 'int4' (did you mean 'int8'?)"),
    (lambda: argsim.RunConfig(engine="dask"), "RunConfig engine (--engine) 'dask': expected one of 'local', 'ray'"),
    (lambda: argsim.SummarizeOptions(m=-1), "SummarizeOptions m (--m) -1: must be at least 0"),
    (lambda: argsim.SummarizeOptions(mmr_weight=float("nan")), "NaN is no setting"),
    (lambda: argsim.SummarizeOptions(cap="cut"), "expected one of 'fit', 'truncate'"),
    (lambda: argsim.summarize_minutes("これは文です。", model="minilm", budget=10.5),
     "budget (characters) must be a whole"),
    (lambda: argsim.load_dataset("argkp", split=3), "give a split name"),
    (lambda: argsim.KeyPointMatcher(["minilm", "minilm"], weights=["a", "b"]), "--weight values must be numbers"),
    (lambda: argsim.CounterRetriever("bm25", options="k1=1"), "options: give a dict"),
    (lambda: argsim.CounterRetriever("bm25").index(["a b", "c d"]).retrieve("a", k=1.5), "k must be a whole number"),
    (lambda: argsim.CounterRetriever("bm25").evaluate("test", "sdoc", limit=0), "limit must be a whole number"),
    (lambda: argsim.kpa_map({"a": {"k": 0.5}}, "dev", tie_break="coin"), "unknown tie_break 'coin'"),
    (lambda: argsim.kpa_map({"a": {"k": 0.5}}, [1, 2]), "gold: give a split name"),
    (lambda: argsim.rouge1("abc", "abc", unit="char", limits=-1), "limits (characters) must be a whole number"),
    (lambda: argsim.triplet_accuracy(np.ones((2, 3)), np.ones((2, 3)), np.zeros((2, 3)), distance="manhattan"),
     "unknown distance 'manhattan'"),
    (lambda: argsim.triplet_accuracy(np.ones((2, 3)), np.ones((2, 3)), np.zeros((2, 3)), ties="half"),
     "unknown ties 'half'"),
    (lambda: argsim.triplet_accuracy([], [], []), "no triplets to score"),
    (lambda: argsim.cluster_sentences(["a", "b"], model="minilm", n_clusters=1, linkage="wardd"),
     "(did you mean 'ward'?)"),
    (lambda: argsim.cluster_sentences(["a", "b"], model="minilm", n_clusters=1.5), "n_clusters must be a whole"),
    (lambda: argsim.encode(["a"], max_seq_length=0), "max_seq_length (tokens) must be a whole number"),
    (lambda: _config("argsim.trainers.kpm_sbert", "SbertConfig", batch_size=0),
     "SbertConfig batch_size (--batch-size) 0: must be at least 1"),
    (lambda: _config("argsim.engine.embedding", "EmbedSpec", role="q"),
     "EmbedSpec role (--role) 'q': expected one of 'query', 'document' or None"),
], ids=["encode-none", "encode-dict", "rouge-none", "rouge-int", "summarize-none", "cluster-int", "index-none",
        "retrieve-int", "triplet-none", "triplet-shapes", "triplet-nan", "acc-not-pairs", "acc-text-score",
        "acc-not-mapping", "acc-ties", "kpm-combine", "kpm-threshold-text", "kpm-threshold-nan",
        "config-seed", "config-threads", "config-type", "config-device", "config-precision", "config-backend",
        "config-quantize", "config-engine", "options-negative", "options-nan", "options-literal",
        "budget-fraction", "split-number", "weights-text", "ranker-options-text", "k-fraction", "limit-zero",
        "tie-break", "gold-list", "limits-negative", "distance", "triplet-ties", "triplets-none", "linkage",
        "clusters-fraction", "max-seq-length", "fit-recipe", "embed-spec"])
def test_a_python_input_of_the_wrong_kind_is_one_argsim_error_before_any_work(call, phrase):
    """Never a TypeError from deep inside, never an input turned into something else (None is no "None")."""
    with pytest.raises(ArgsimError) as err:
        call()
    assert phrase in str(err.value) and "\n" not in str(err.value)


def test_texts_of_any_iterable_kind_are_read_once_and_accuracy_takes_either_form(minilm, capsys):
    expected = argsim.encode(["a", "b"])
    for texts in (iter(["a", "b"]), ("a", "b"), np.array(["a", "b"]), pd.Series(["a", "b"])):
        assert np.array_equal(argsim.encode(texts), expected)
    pairs = {"q1": [("c1", 0.9), ("c2", 0.1)], "q2": [("c1", 0.5), ("c2", 0.5)]}
    as_dicts = {q: dict(ranked) for q, ranked in pairs.items()}
    gold = {"q1": "c1", "q2": "c2"}
    assert argsim.accuracy_at_1(as_dicts, gold) == argsim.accuracy_at_1(pairs, gold) == 0.75
    assert capsys.readouterr().err == ""
    assert argsim.accuracy_at_1(pairs, {"q1": "c1", "q9": "c2"}) == 0.5  # q2 has no gold: a miss, said once
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1 of 2 queries have no gold counter (e.g. q2)" in err[0]
