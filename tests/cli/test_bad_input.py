"""Bad input and bad options, fed through the CLI: exit code 2, exactly one line on stderr, no traceback, and
whatever was already written is byte-identical afterwards.

Every case runs with model loading forbidden (`argsim.backend.registry._build` raises): bad input must be found
before any model loads, which is also what keeps this table fast. Cases about a model folder itself allow it.
"""

from __future__ import annotations

import json
import shutil

import pytest

from argsim.cli.app import app
from tests.cli.conftest import FIXTURES, REPO, runner

SENTINEL = b"already written: must survive\n"


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A work folder with small valid inputs of every kind, an existing file `old.json`, a folder `adir/` holding
    `adir/old.json`, an empty folder `emptydir/`, and a foreign module `evilmod` on sys.path that would drop
    `MARKER` when imported."""
    monkeypatch.chdir(tmp_path)
    kpm = FIXTURES / "kpm"
    for name in ("arguments.csv", "key_points.csv", "labels.csv"):
        shutil.copy(kpm / name, tmp_path / name)
    (tmp_path / "texts.txt").write_text("We should ban whaling.\nWhaling is a tradition.\n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    (tmp_path / "preds.json").write_text(json.dumps({"a1": {"k1": 0.9, "k2": 0.1}}), encoding="utf-8")
    (tmp_path / "dupkeys.json").write_text('{"a1": {"k1": 0.9, "k1": 0.1}}', encoding="utf-8")
    (tmp_path / "foreign.json").write_text(json.dumps({"zz1": {"k1": 0.9}, "zz2": {"k2": 0.5}}), encoding="utf-8")
    shutil.copy(REPO / "examples" / "thematic" / "triplets.jsonl", tmp_path / "triplets.jsonl")
    shutil.copy(REPO / "examples" / "thematic" / "sentences.jsonl", tmp_path / "sentences.jsonl")
    shutil.copy(REPO / "examples" / "counter" / "arguments.jsonl", tmp_path / "counter.jsonl")
    shutil.copy(FIXTURES / "minutes" / "utterances.csv", tmp_path / "utterances.csv")
    shutil.copy(REPO / "examples" / "counter_neural" / "val.jsonl", tmp_path / "pairs.jsonl")
    (tmp_path / "one_pair.jsonl").write_text('{"point": "Ban cars.", "counter": "Cars carry the disabled."}\n')
    rows = (tmp_path / "utterances.csv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    (tmp_path / "badlength.csv").write_text(
        "id,text,topic,subtopic,length\nq1,保育所の待機児童について伺います。,子育て,待機児童,0\n", encoding="utf-8")
    (tmp_path / "twotopics.csv").write_text(
        "id,text,topic,subtopic\nq1,保育所の待機児童について伺います。,子育て,待機児童\n"
        "q1,待機児童は八千人を超えております。,教育,待機児童\n", encoding="utf-8")
    assert "id" in header
    (tmp_path / "summaries.json").write_text(json.dumps({"summaries": [{"summary": "a"}]}), encoding="utf-8")
    (tmp_path / "notriplets.jsonl").write_text('{"anchor": "a", "positive": "b"}\n', encoding="utf-8")
    (tmp_path / "old.json").write_bytes(SENTINEL)
    (tmp_path / "adir").mkdir()
    (tmp_path / "emptydir").mkdir()
    (tmp_path / "counter_model").mkdir()  # another trainer's model folder, as `train bipolar` leaves it
    (tmp_path / "counter_model" / "train_config.json").write_text(json.dumps({"trainer": "counter-bipolar"}))
    (tmp_path / "adir" / "old.json").write_bytes(SENTINEL)
    (tmp_path / "adir" / "predictions.json").write_bytes(SENTINEL)
    # a model folder naming a foreign loader, one holding a pickle, one whose modules.json names a foreign class
    (tmp_path / "evilmod.py").write_text(f"open({str(tmp_path / 'MARKER')!r}, 'w').write('ran')\n"
                                         "def load(*a, **k):\n    raise SystemExit('ran')\nclass Thing: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "foreign_loader").mkdir()
    (tmp_path / "foreign_loader" / "argsim_encoder.json").write_text('{"loader": "evilmod:load"}')
    (tmp_path / "pickled").mkdir()
    (tmp_path / "pickled" / "model.joblib").write_bytes(b"\x80\x04K\x01.")
    (tmp_path / "pickled" / "config.json").write_text("{}")
    (tmp_path / "foreign_st").mkdir()
    (tmp_path / "foreign_st" / "modules.json").write_text(
        json.dumps([{"idx": 0, "name": "0", "path": "", "type": "evilmod.Thing"}]))
    (tmp_path / "foreign_st" / "config.json").write_text("{}")
    return tmp_path


@pytest.fixture
def no_model_loads(monkeypatch):
    """Loading any model is a test failure (the bad input must be found first)."""
    from argsim.backend import folders, registry

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded before the bad input was found")

    monkeypatch.setattr(registry, "_build", refuse)
    monkeypatch.setattr(registry, "load_sentence_transformer", refuse)
    monkeypatch.setattr(registry, "load_cross_encoder", refuse)
    monkeypatch.setattr(folders, "plain_sentence_transformer", refuse)
    monkeypatch.setattr(folders, "load_transformer", refuse)


KPM = ["--arguments", "arguments.csv", "--key-points", "key_points.csv"]
KPM_L = [*KPM, "--labels", "labels.csv"]
UNWRITABLE = "/proc/argsim-no-such/out.json"

# (id, argv, a phrase of the one error line, model loading allowed)
CASES: list[tuple[str, list[str], str, bool]] = [
    # global options
    ("global-workdir-is-file", ["--workdir", "old.json", "embed", "texts.txt"], "expected a folder", False),
    ("global-cache-dir-is-file", ["--cache-dir", "old.json", "embed", "texts.txt"], "expected a folder", False),
    ("global-cache-dir-unwritable", ["--cache-dir", "/proc/argsim-none/cache", "embed", "texts.txt"],
     "not writable", False),
    ("global-threads-zero", ["--threads", "0", "embed", "texts.txt"], "--threads", False),
    ("global-device", ["--device", "tpu", "embed", "texts.txt"], "--device", False),
    # embed
    ("embed-missing-input", ["embed", "nope.txt"], "file not found", False),
    ("embed-not-utf8", ["embed", "latin1.txt"], "not valid UTF-8", False),
    ("embed-missing-column", ["embed", "arguments.csv", "--column", "text"], "missing column", False),
    ("embed-out-full-dir", ["embed", "texts.txt", "--out", "adir"], "folder is not empty", False),
    ("embed-batch-huge", ["embed", "texts.txt", "--batch-size", "100000000000", "--out", "v.npy"], "--batch-size",
     False),
    ("embed-shards-unwritable", ["embed", "texts.txt", "--out", "/proc/argsim-none/shards"], "not writable", False),
    ("embed-out-under-file", ["embed", "texts.txt", "--out", "old.json/v.npy"], "is a file, not a folder", False),
    ("embed-out-unwritable", ["embed", "texts.txt", "--out", "/proc/argsim-none/v.npy"], "not writable", False),
    ("embed-out-suffix", ["embed", "texts.txt", "--out", "old.json"], "unsupported suffix", False),
    ("embed-batch-zero", ["embed", "texts.txt", "--batch-size", "0"], "--batch-size", False),
    ("embed-seq-negative", ["embed", "texts.txt", "--max-seq-length", "-5"], "--max-seq-length", False),
    ("embed-pooling", ["embed", "texts.txt", "--pooling", "max"], "--pooling", False),
    ("embed-id-column-plain", ["embed", "texts.txt", "--id-column", "id", "--out", "v.csv"], "id-column", False),
    ("embed-unknown-model", ["embed", "texts.txt", "--model", "no-such-model"], "unknown model", True),
    ("embed-foreign-loader", ["embed", "texts.txt", "--model", "foreign_loader"], "argsim's own", True),
    ("embed-pickle-folder", ["embed", "texts.txt", "--model", "pickled"], "pickle", True),
    ("embed-foreign-module", ["embed", "texts.txt", "--model", "foreign_st"], "evilmod.Thing", True),
    # data check
    ("data-check-unknown", ["data", "check", "nosuch"], "unknown dataset", False),
    # eval map
    ("map-missing-preds", ["eval", "map", "nope.json", *KPM_L], "file not found", False),
    ("map-duplicate-keys", ["eval", "map", "dupkeys.json", *KPM_L], "duplicate key 'k1'", False),
    ("map-no-id-matches", ["eval", "map", "foreign.json", *KPM_L], "none of the 2", False),
    ("map-formula", ["eval", "map", "preds.json", *KPM_L, "--formula", "best"], "--formula", False),
    ("map-tie-break", ["eval", "map", "preds.json", *KPM_L, "--tie-break", "last"], "--tie-break", False),
    ("map-out-is-dir", ["eval", "map", "preds.json", *KPM_L, "--out", "adir"], "is a folder", False),
    ("map-out-unwritable", ["eval", "map", "preds.json", *KPM_L, "--out", UNWRITABLE], "not writable", False),
    ("map-no-labels", ["eval", "map", "preds.json", *KPM], "gold labels", False),
    ("map-only-arguments", ["eval", "map", "preds.json", "--arguments", "arguments.csv"], "both", False),
    # rank keypoints
    ("rank-kp-out-is-file", ["rank", "keypoints", *KPM, "--out", "old.json"], "expected a folder", False),
    ("rank-kp-missing-file", ["rank", "keypoints", "--arguments", "nope.csv", "--key-points", "key_points.csv",
                              "--out", "adir"], "file not found", False),
    ("rank-kp-bad-stance", ["rank", "keypoints", "--arguments", "labels.csv", "--key-points", "key_points.csv",
                            "--out", "adir"], "missing column", False),
    # train sbert / mts
    ("sbert-batch-zero", ["train", "sbert", *KPM_L, "--batch-size", "0", "--out", "adir"], "--batch-size", False),
    ("sbert-loss", ["train", "sbert", *KPM_L, "--loss", "triplet", "--out", "adir"], "--loss", False),
    ("sbert-out-is-file", ["train", "sbert", *KPM_L, "--out", "old.json"], "expected a folder", False),
    ("sbert-model-not-a-model", ["train", "sbert", *KPM_L, "--model", "emptydir", "--out",
                                 "newdir"], "not a sentence-transformers, transformers or argsim model folder", True),
    # a trainer's model is checked before its data is read (here: missing)
    ("sbert-unknown-model", ["train", "sbert", "--arguments", "nope.csv", "--key-points", "key_points.csv",
                             "--labels", "labels.csv", "--model", "MiniLM", "--out", "newdir"],
     "did you mean 'minilm'", False),
    ("msbert-unknown-backbone", ["train", "minutes-sbert", "--train", "nope.jsonl", "--backbone", "nosuch-model",
                                 "--out", "newdir"], "unknown model 'nosuch-model'", False),
    ("retriever-data-dir", ["--data-dir", "emptydir", "train", "counter-retriever", "--out", "newdir"],
     "layout incomplete", False),
    ("retriever-unknown-model", ["--data-dir", "emptydir", "train", "counter-retriever", "--model", "nosuch-model",
                                 "--out", "newdir"], "unknown model", False),
    ("bipolar-unknown-model", ["train", "bipolar", "--train", "nope.jsonl", "--val", "pairs.jsonl", "--model",
                               "nosuch-model", "--out", "newdir"], "unknown model", False),
    ("sbert-no-labels", ["train", "sbert", *KPM, "--out", "adir"], "labels", False),
    ("sbert-no-argkp", ["--data-dir", "adir", "train", "sbert", *KPM_L, "--out", "adir"], "--eval-split", False),
    ("mts-epochs-zero", ["train", "mts", *KPM_L, "--epochs", "0", "--out", "adir"], "--epochs", False),
    ("mts-variant", ["train", "mts", *KPM_L, "--variant", "big", "--out", "adir"], "--variant", False),
    ("mts-pooling", ["train", "mts", *KPM_L, "--pooling", "max", "--out", "adir"], "--pooling", False),
    ("mts-folds-own-data", ["train", "mts", *KPM_L, "--folds", "3", "--out", "adir"], "--folds", False),
    ("mts-fold-beyond-folds", ["train", "mts", "--folds", "3", "--fold", "5", "--out", "newdir"],
     "--fold 5: --folds 3 numbers its folds 1 to 3", False),
    ("mts-fold-one-model", ["train", "mts", *KPM_L, "--fold", "2", "--out", "newdir"], "--fold 2", False),
    ("mts-no-argkp", ["--data-dir", "adir", "train", "mts", *KPM_L, "--out", "adir"], "--eval-split", False),
    # eval triplets
    ("triplets-missing-column", ["eval", "triplets", "notriplets.jsonl"], "negative", False),
    ("triplets-distance", ["eval", "triplets", "triplets.jsonl", "--distance", "cos"], "--distance", False),
    ("triplets-limit-zero", ["eval", "triplets", "triplets.jsonl", "--limit", "0"], "--limit", False),
    ("triplets-out-is-dir", ["eval", "triplets", "triplets.jsonl", "--out", "adir"], "is a folder", False),
    # thematic
    ("thematic-out-is-file", ["train", "thematic", "triplets.jsonl", "--out", "old.json"], "expected a folder",
     False),
    ("thematic-arch", ["train", "thematic", "triplets.jsonl", "--out", "adir", "--arch", "gru"], "--arch", False),
    ("thematic-bilstm-lora", ["train", "thematic", "triplets.jsonl", "--out", "newdir", "--arch", "bilstm",
                              "--lora-rank", "4"], "--lora-rank is a setting of the other network", False),
    ("thematic-minilm-hidden", ["train", "thematic", "triplets.jsonl", "--out", "newdir", "--hidden", "10"],
     "--hidden is a setting of the other network", False),
    ("thematic-out-other-model", ["train", "thematic", "triplets.jsonl", "--out", "counter_model", "--arch",
                                  "bilstm"], "holds a counter-bipolar model", False),
    ("thematic-batch-zero", ["train", "thematic", "triplets.jsonl", "--out", "adir", "--batch-size", "0"],
     "--batch-size", False),
    ("thematic-missing", ["train", "thematic", "nope.jsonl", "--out", "adir"], "file not found", False),
    ("cluster-k-zero", ["cluster", "sentences", "sentences.jsonl", "--k", "0"], "--k", False),
    ("cluster-algorithm", ["cluster", "sentences", "sentences.jsonl", "--algorithm", "dbscan"], "--algorithm",
     False),
    ("cluster-linkage", ["cluster", "sentences", "sentences.jsonl", "--linkage", "single"], "--linkage", False),
    ("cluster-out-is-dir", ["cluster", "sentences", "sentences.jsonl", "--out", "adir"], "is a folder", False),
    ("cluster-no-text", ["cluster", "sentences", "labels.csv", "--out", "c.jsonl"], "missing column", False),
    ("clustering-algorithm", ["eval", "clustering", "sentences.jsonl", "--algorithm", "dbscan"], "--algorithm",
     False),
    ("clustering-missing", ["eval", "clustering", "nope.jsonl"], "file not found", False),
    ("wiki-out-is-file", ["data", "triplets", "wikipedia", "--out", "old.json"], "expected a folder", False),
    ("wiki-negatives", ["data", "triplets", "wikipedia", "--negatives", "far"], "--negatives", False),
    ("wiki-level", ["data", "triplets", "wikipedia", "--level", "sub"], "--level", False),
    ("wiki-min-sections", ["data", "triplets", "wikipedia", "--min-sections", "0"], "--min-sections", False),
    # minutes
    ("mine-out-is-file", ["data", "triplets", "minutes", "--out", "old.json"], "expected a folder", False),
    ("mine-max-draws", ["data", "triplets", "minutes", "--max-draws", "0"], "--max-draws", False),
    ("mine-missing", ["data", "triplets", "minutes", "--minutes", "nope.json", "--out", "adir"], "not found",
     False),
    ("msbert-batch-zero", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--batch-size", "0"],
     "--batch-size", False),
    ("msbert-distance", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--distance", "l1"], "--distance",
     False),
    ("msbert-model-not-a-model", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--model",
                                  "emptydir", "--out", "newdir"], "not a sentence-transformers", True),
    ("msbert-dev-missing", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--dev", "nope.jsonl", "--out",
                            "newdir"], "nope.jsonl: file not found", False),
    ("msbert-words-not-ginza", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--model", "minilm",
                                "--word-min-count", "2", "--out", "newdir"], "ginza backbone's word vectors", False),
    ("msbert-out-other-model", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--out", "counter_model"],
     "--out counter_model holds a counter-bipolar model", False),
    ("msbert-out-is-file", ["train", "minutes-sbert", "--train", "triplets.jsonl", "--out", "old.json"],
     "expected a folder", False),
    ("summ-length-zero", ["summarize", "minutes", "--input", "utterances.csv", "--length", "0"], "--length",
     False),
    ("summ-row-length-zero", ["summarize", "minutes", "--input", "badlength.csv", "--method", "lead"],
     "at least 1", False),
    ("summ-two-topics", ["summarize", "minutes", "--input", "twotopics.csv", "--method", "lead"], "must agree",
     False),
    ("summ-method", ["summarize", "minutes", "--input", "utterances.csv", "--method", "textrank"], "--method",
     False),
    ("summ-cap", ["summarize", "minutes", "--input", "utterances.csv", "--cap", "cut"], "--cap", False),
    ("summ-out-is-dir", ["summarize", "minutes", "--input", "utterances.csv", "--out", "adir"], "is a folder",
     False),
    ("rouge-unit", ["eval", "rouge", "summaries.json", "--unit", "word"], "--unit", False),
    ("rouge-missing", ["eval", "rouge", "nope.json"], "file not found", False),
    ("rouge-no-gold", ["eval", "rouge", "summaries.json"], "gold", False),
    ("rouge-out-is-dir", ["eval", "rouge", "summaries.json", "--out", "adir"], "is a folder", False),
    # counter-argument retrieval
    ("rank-ca-top-k-zero", ["rank", "counterargs", "-i", "counter.jsonl", "--top-k", "0"], "--top-k", False),
    ("rank-ca-setting", ["rank", "counterargs", "-s", "sdx"], "--setting", False),
    ("rank-ca-split", ["rank", "counterargs", "--split", "dev"], "--split", False),
    ("rank-ca-candidates", ["rank", "counterargs", "-i", "counter.jsonl", "--candidates", "some"], "--candidates",
     False),
    ("rank-ca-opt-typo", ["rank", "counterargs", "-i", "counter.jsonl", "--opt", "bm25_idff=okapi",
                          "--out", "r.jsonl"], "valid keys: bm25_stats, bm25_idf", False),
    ("rank-ca-opt-form", ["rank", "counterargs", "-i", "counter.jsonl", "--opt", "okapi", "--out", "r.jsonl"],
     "key=value", False),
    ("rank-ca-out-is-dir", ["rank", "counterargs", "-i", "counter.jsonl", "--out", "adir"], "is a folder", False),
    ("rank-ca-missing", ["rank", "counterargs", "-i", "nope.jsonl", "--out", "r.jsonl"], "file not found", False),
    ("rank-ca-method", ["rank", "counterargs", "-i", "counter.jsonl", "--method", "bm26", "--out", "r.jsonl"],
     "unknown ranking method", False),
    ("eval-ca-missing", ["eval", "counterargs", "nope.jsonl"], "file not found", False),
    ("eval-ca-ties", ["eval", "counterargs", "counter.jsonl", "--ties", "random"], "--ties", False),
    ("ltr-method", ["train", "ltr", "--method", "svm-part"], "--method", False),
    ("ltr-out-is-file", ["train", "ltr", "--out", "old.json"], "expected a folder", False),
    ("engine-unknown", ["--engine", "spark", "train", "ltr"], "--engine", False),
    ("ltr-stopwords", ["train", "ltr", "--stopwords", "nltk"], "--stopwords", False),
    ("simple-sd-out-is-dir", ["train", "simple-sd", "--out", "adir"], "is a folder", False),
    ("simple-sd-tune-setting-alone", ["--data-dir", "emptydir", "train", "simple-sd", "--tune-setting", "epa",
                                      "--out", "s.json"], "add --tune", False),
    ("simple-sd-split", ["train", "simple-sd", "--split", "dev"], "--split", False),
    ("bipolar-batch-zero", ["train", "bipolar", "--out", "adir", "--batch-size", "0"], "--batch-size", False),
    ("bipolar-kind", ["train", "bipolar", "--out", "adir", "--kind", "tripolar"], "--kind", False),
    ("bipolar-out-is-file", ["train", "bipolar", "--out", "old.json"], "expected a folder", False),
    ("bipolar-cross-init", ["train", "bipolar", "--out", "newdir", "--kind", "cross-encoder", "--init", "adir"],
     "--init starts the heads", False),
    ("bipolar-one-pair", ["train", "bipolar", "--train", "one_pair.jsonl", "--val", "pairs.jsonl", "--out", "newdir"],
     "one_pair.jsonl: 1 pair(s) with 2 distinct texts", False),
    ("bipolar-cross-one-pair", ["train", "bipolar", "--train", "pairs.jsonl", "--val", "pairs.jsonl", "--limit", "1",
                                "--kind", "cross-encoder", "--out", "newdir"], "at least 3 are needed", False),
    ("bipolar-layers-frozen", ["train", "bipolar", "--out", "newdir", "--train-layers", "2"], "--train-encoder",
     False),
    ("bipolar-cross-layers", ["train", "bipolar", "--out", "newdir", "--kind", "cross-encoder", "--train-encoder",
                              "--train-layers", "2"], "a cross-encoder fine-tunes every layer", False),
    ("bipolar-init-not-counter", ["train", "bipolar", "--out", "newdir", "--init", "adir"],
     "not a trained counter-argument model", False),
    ("bipolar-init-other-kind", ["train", "bipolar", "--out", "newdir", "--init", "counter-bi-encoder"],
     "a bi-encoder model cannot initialise a bipolar model", False),
    ("counter-neural-settings", ["eval", "counter-neural", "--settings", "epa,xyz"], "'xyz'", False),
    ("counter-neural-ks", ["eval", "counter-neural", "--ks", "10,0"], "--ks", False),
    ("demo-unknown-model", ["demo", "--model", "no-such-model"], "unknown model", True),
    ("sick-missing-folder", ["eval", "sick", "--folder", "nope"], "nope", False),
    ("embed-import-missing", ["embed-import", "nope"], "nope", False),
    ("counter-neural-split", ["eval", "counter-neural", "--split", "dev"], "--split", False),
    ("search-k-zero", ["rank", "counter-search", "--model", "adir", "--candidates", "texts.txt", "--queries",
                       "texts.txt", "--out", "s.jsonl", "--k", "0"], "--k", False),
    ("search-index", ["rank", "counter-search", "--model", "adir", "--candidates", "texts.txt", "--queries",
                      "texts.txt", "--out", "s.jsonl", "--index", "lsh"], "--index", False),
    ("search-out-is-dir", ["rank", "counter-search", "--model", "adir", "--candidates", "texts.txt", "--queries",
                           "texts.txt", "--out", "adir"], "is a folder", False),
    ("search-foreign-loader", ["rank", "counter-search", "--model", "foreign_loader", "--candidates", "texts.txt",
                               "--queries", "texts.txt", "--out", "s.jsonl"], "not a trained", True),
    ("build-log-is-dir", ["models", "build", "minutes-sbert", "--log", "adir"], "is a folder", False),
    ("build-log-under-file", ["models", "build", "minutes-sbert", "--log", "old.json/b.log"], "is a file", False),
    # report
    ("report-readme-is-dir", ["report", "--readme", "adir"], "is a folder", False),
    ("report-full-under-file", ["report", "--full", "old.json/x.md"], "is a file, not a folder", False),
]


@pytest.mark.parametrize("argv, phrase, loads_model", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_nothing_written(ws, request, argv, phrase, loads_model):
    if not loads_model:
        request.getfixturevalue("no_model_loads")
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    result = runner.invoke(app, ["--quiet", *argv])
    err = result.stderr
    assert result.exit_code == 2, (result.exit_code, result.output, repr(result.exception))
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception,
                                                                                      SystemExit)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    assert phrase in lines[0], lines[0]
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert after == before, "a file was written or changed"
    assert not (ws / "MARKER").exists(), "code from a model folder ran"


def test_warnings_are_one_line_on_stderr_with_counts(ws, no_model_loads):
    """Valid but suspicious input: key points whose topic differs in case, unknown prediction ids."""
    (ws / "lower.csv").write_text((ws / "arguments.csv").read_text().replace(",Uniforms,", ",uniforms,"))
    preds = json.loads((REPO / "examples" / "kpm" / "predictions.json").read_text()) | {"zz9": {"k1": 0.5}}
    (ws / "p.json").write_text(json.dumps(preds))
    result = runner.invoke(app, ["--quiet", "eval", "map", "p.json", "--arguments", "lower.csv", "--key-points",
                                 "key_points.csv", "--labels", "labels.csv"])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 2, result.stderr
    assert "10 of 12 arguments have no key point" in warnings[0] and "'uniforms'" in warnings[0]
    assert "1 predicted argument id(s)" in warnings[1] and "zz9" in warnings[1]


def test_atomic_writes_respect_the_umask(tmp_path):
    import os

    from argsim.io import write_json

    old = os.umask(0o022)
    try:
        path = write_json(tmp_path / "r.json", {"a": 1})
        assert path.stat().st_mode & 0o777 == 0o644
        os.chmod(path, 0o664)
        write_json(path, {"a": 2})  # rewriting keeps the file's own mode
        assert path.stat().st_mode & 0o777 == 0o664
        os.umask(0o027)
        assert write_json(tmp_path / "s.json", {}).stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


def test_legacy_manifests_naming_argsim_functions_still_resolve(tmp_path):
    from argsim.backend.names import LEGACY_LOADERS, manifest_loader_name

    for old, name in LEGACY_LOADERS.items():
        (tmp_path / "argsim_encoder.json").write_text(json.dumps({"loader": old}))
        assert manifest_loader_name(tmp_path) == name


def _commands(typer_app, path=""):
    for c in typer_app.registered_commands:
        yield f"{path} {c.name or c.callback.__name__}".strip(), c.callback
    for g in typer_app.registered_groups:
        yield from _commands(g.typer_instance, f"{path} {g.name or g.typer_instance.info.name}")


def test_every_output_is_checked_and_every_number_bounded():
    """The general mechanisms cover every command: each output path option has the output check, each numeric
    option a lower bound (only seeds may be anything)."""
    import inspect

    import typer

    unchecked, unbounded = [], []
    for name, fn in _commands(app):
        for p in inspect.signature(fn).parameters.values():
            info, ann = p.default, str(p.annotation)
            if not isinstance(info, typer.models.ParameterInfo):
                continue
            if "Path" in ann and (p.name == "out" or p.name in ("readme", "full")) \
                    and not getattr(info.callback, "argsim_output", None):
                unchecked.append(f"{name} --{p.name}")
            if ann.split(" ")[0] in ("int", "float", "list[int]") and info.min is None and p.name != "seed":
                unbounded.append(f"{name} --{p.name}")
    assert not unchecked and not unbounded, (unchecked, unbounded)


def test_the_python_api_refuses_the_training_inputs_the_command_line_refuses(tmp_path):
    """The library functions behind the rows above refuse alike, before any model or data is loaded."""
    from types import SimpleNamespace

    from argsim.counter.neural.config import NeuralConfig
    from argsim.counter.neural.data import PairData
    from argsim.errors import ArgsimError
    from argsim.trainers.counter_bipolar import train_bipolar
    from argsim.trainers.minutes_sbert import MinutesTrainConfig
    from argsim.trainers.mts import check_folds
    from argsim.training import begin_run

    one = PairData.from_text_pairs([("Ban cars.", "Cars carry the disabled.")], [("a", "b")])
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train_config.json").write_text(json.dumps({"trainer": "counter-bipolar"}))
    for call, phrase in [
            (lambda: train_bipolar(NeuralConfig(), one, tmp_path / "o"), "at least 3"),
            (lambda: train_bipolar(NeuralConfig(), one, tmp_path / "o", init="counter-bi-encoder"), "initialise"),
            (lambda: train_bipolar(NeuralConfig(train_layers=2), one, tmp_path / "o"), "--train-encoder"),
            (lambda: check_folds(3, [5]), "--fold 5"),
            (lambda: MinutesTrainConfig(backbone="minilm", word_min_count=2), "ginza"),
            (lambda: begin_run(SimpleNamespace(seed=1), tmp_path / "m", trainer="kpm-sbert"), "holds a counter")]:
        with pytest.raises(ArgsimError, match=phrase):
            call()
    assert not (tmp_path / "o").exists()


def test_the_training_checks_pass_what_argsim_itself_trains(tmp_path):
    """The refusals above leave the valid uses alone: every `models build` recipe's configs, `--init` of a shipped
    model, a rerun into OUT of the same trainer, and every kind of model folder `model_path` opened before."""
    from dataclasses import replace

    from argsim.backend.folders import model_path
    from argsim.counter.neural.config import NeuralConfig
    from argsim.modelbuild.recipes import RECIPES, Step
    from argsim.thematic.config import ThematicTrainConfig
    from argsim.trainers.counter_bipolar import check_init
    from argsim.trainers.minutes_sbert import MinutesTrainConfig
    from argsim.trainers.mts import check_folds
    from argsim.training.record import check_trainer

    steps = [s for r in RECIPES for s in (r.train, *(c for c, _ in r.prepare)) if isinstance(s, Step)]
    configs = [s.config for s in steps if s.config is not None]
    assert {type(c) for c in configs} >= {NeuralConfig, ThematicTrainConfig, MinutesTrainConfig}
    for config in configs:
        if isinstance(config, ThematicTrainConfig):
            config.checked(has_dev=True)
        elif isinstance(config, NeuralConfig):
            check_init(config, None)
        replace(config)  # __post_init__'s checks
    check_init(NeuralConfig(), "counter-bipolar")
    check_init(NeuralConfig(kind="bi-encoder"), "counter-bi-encoder")
    ThematicTrainConfig(init="thematic").checked(has_dev=True)
    check_folds(1, [1])
    check_folds(7, [1, 7])
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train_config.json").write_text(json.dumps({"trainer": "kpm-mts"}))
    check_trainer(tmp_path / "m", "kpm-mts")  # the same trainer again: retrained in place
    check_trainer(tmp_path / "new", "kpm-mts")
    minilm = model_path("minilm")
    (tmp_path / "hf").mkdir()
    shutil.copy(minilm / "config.json", tmp_path / "hf" / "config.json")
    shutil.copytree(REPO / "argsim" / "shipped" / "kpm", tmp_path / "adapter")
    for folder in (minilm, tmp_path / "hf", tmp_path / "adapter", REPO / "argsim" / "shipped" / "minutes"):
        assert model_path(str(folder)) == folder
