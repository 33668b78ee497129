"""Wrong-shaped structured input: every reader of a whole JSON file gets the same catalogue of wrong shapes and
answers each with one InputError naming the file (and the field), never an AttributeError / TypeError / KeyError;
through the CLI the same files end as one line and exit code 2."""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.errors import InputError, ModelError

#: shapes that no reader of a JSON object accepts at its top level or in a field that holds records / numbers
WRONG_SHAPES = {
    "list-of-ints": [1, 2],
    "string": "hello",
    "null": None,
    "number": 3,
    "empty-list": [],
    "list-of-lists": [[]],
    "list-of-strings": ["a", "b"],
    "object-of-strings": {"a": "b"},
    "object-of-lists": {"a1": [1, 2]},
    "text-in-number": {"a1": {"k1": "0.5"}},
    "bool-in-number": {"a1": {"k1": True}},
    "records-as-string": {"task": "t", "rows": "a", "history": "a", "losses": "a", "evals": "a"},
    "records-of-strings": {"task": "t", "rows": ["a"], "history": ["a"], "losses": ["a"], "evals": ["a"]},
    "text-in-number-column": {"task": "t", "rows": [{"metric": "m", "value": "high"}],
                              "history": [{"epoch": "one", "val": 0.5}], "steps": "ten",
                              "evals": [{"step": "x"}]},
}


def _results(path: Path) -> None:
    from argsim.report import read_results_file

    read_results_file(path)


def _train_config(path: Path) -> None:
    from argsim.training.curve import read_train_config

    read_train_config(path.parent)


def _history(path: Path) -> None:
    from argsim.counter.neural.store import read_history

    read_history(path.parent)


def _predictions(path: Path) -> None:
    from argsim.metrics.kpa_map import read_predictions

    read_predictions(path)


def _summaries(path: Path) -> None:
    from argsim.minutes.evaluate import read_summaries

    read_summaries(path)


def _shard_manifest(path: Path) -> None:
    from argsim.engine.embedding import read_manifest

    read_manifest(path.parent)


def _simple_sd_weights(path: Path) -> None:
    from argsim.counter.lexical.simplesd import resolve_weights

    resolve_weights(weights=str(path))


def _ltr_meta(path: Path) -> None:
    from argsim.counter.ltr.model import LTRModel

    (path.parent / "model.json").write_text("{}")
    LTRModel.load(path.parent)


def _kpm_cross_info(path: Path) -> None:
    from argsim.data.argkp import KPMData
    from argsim.kpm.scoring import cross_predictions

    cross_predictions(KPMData("none", [], []), path.parent)


def _ensemble(path: Path) -> None:
    from argsim.kpm.mts.encoder import load_ensemble

    load_ensemble(path.parent)


def _concat(path: Path) -> None:
    from argsim.backend.concat import load_concat_encoder

    load_concat_encoder(path.parent)


def _trained_history(path: Path) -> None:
    from argsim.counter.neural.table3 import training_budget

    training_budget(str(path.parent))


def _budgets(path: Path) -> None:
    from argsim.io import read_json_as
    from argsim.schemas import Budgets

    read_json_as(Budgets, path)


def _add_metrics(path: Path) -> None:
    from argsim.training.record import add_metrics

    add_metrics(path.parent, {"dev": 0.5})


# reader -> the file name it reads
READERS = {"results": (_results, "kpm.json"), "train_config": (_train_config, "train_config.json"),
           "history": (_history, "history.json"), "predictions": (_predictions, "predictions.json"),
           "summaries": (_summaries, "summaries.json"), "shard_manifest": (_shard_manifest, "_argsim_embeddings.json"),
           "simple_sd_weights": (_simple_sd_weights, "weights.json"), "ltr_meta": (_ltr_meta, "ltr.json"),
           "kpm_cross_info": (_kpm_cross_info, "argsim_kpm_cross.json"), "ensemble": (_ensemble, "ensemble.json"),
           "concat": (_concat, "config.json"), "trained_history": (_trained_history, "history.json"),
           "budgets": (_budgets, "budget.json"), "add_metrics": (_add_metrics, "train_config.json")}
#: shapes a reader may accept (an object it reads only some fields of; a budget may be any text)
ACCEPTED = {("train_config", s) for s in ("object-of-strings", "object-of-lists", "text-in-number", "bool-in-number")
            } | {("budgets", "object-of-strings"), ("budgets", "records-as-string")} | {
    ("kpm_cross_info", s) for s in ("object-of-strings", "object-of-lists", "text-in-number", "bool-in-number",
                                    "records-as-string", "records-of-strings", "text-in-number-column")}
#: a valid file of each reader: with a BOM in front it is still read
VALID = {"results": {"task": "kpm", "rows": [{"metric": "m", "value": 0.5}]}, "train_config": {"steps": 3},
         "history": {"history": [{"epoch": 0, "val": 0.5}]}, "predictions": {"a": {"k": 0.5}},
         "summaries": [{"summary": "a", "gold": "b"}], "simple_sd_weights": {"weights": [0.1] * 8},
         "budgets": {"bipolar": "2 epochs"}}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("shape", sorted(WRONG_SHAPES))
def test_each_reader_refuses_each_wrong_shape_in_one_line(tmp_path, reader, shape):
    func, name = READERS[reader]
    path = tmp_path / name
    path.write_text(json.dumps(WRONG_SHAPES[shape]), encoding="utf-8")
    if (reader, shape) in ACCEPTED:
        with contextlib.suppress(ModelError):  # read, then refused as a model folder: it holds no model
            func(path)
        return
    with pytest.raises(InputError) as info:
        func(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message


#: faults of the file itself, the same for every reader
FILE_FAULTS = {
    "empty": b"",
    "blank": b"  \n",
    "latin-1": '{"task": "caf\xe9"}'.encode("latin-1"),
    "utf-16": '{"task": "t"}'.encode("utf-16"),
    "truncated": b'{"task": "t", "rows": [{"metric": "m", "val',
    "bom-then-wrong-shape": b"\xef\xbb\xbf[1, 2]",
    "huge-line": ("[" + ",".join(["1"] * 500_000) + "]").encode(),
    "nan": b'{"a": {"k": NaN}, "task": NaN, "rows": NaN, "history": NaN, "weights": NaN, "members": NaN, '
           b'"parts": NaN, "summaries": NaN, "model": NaN, "context": NaN, "config": NaN, "losses": NaN}',
    "infinity": b'{"a": {"k": Infinity}, "task": "t", "rows": [{"metric": "m", "value": -Infinity}], '
                b'"weights": [Infinity, 0, 0, 0, 0, 0, 0, 0], "history": [{"epoch": Infinity}], "steps": Infinity}',
    "duplicate-key": b'{"task": "t", "task": "u"}',
}
ACCEPTED_FAULTS = {("budgets", "nan"), ("budgets", "infinity"), ("kpm_cross_info", "infinity")}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("fault", sorted(FILE_FAULTS))
def test_each_reader_refuses_each_file_fault_in_one_line(tmp_path, reader, fault):
    func, name = READERS[reader]
    path = tmp_path / name
    path.write_bytes(FILE_FAULTS[fault])
    if (reader, fault) in ACCEPTED_FAULTS:
        return
    with pytest.raises(InputError) as info:
        func(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message, message


@pytest.mark.parametrize("reader", sorted(VALID))
def test_a_bom_before_a_valid_file_is_read(tmp_path, reader):
    func, name = READERS[reader]
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(VALID[reader]).encode())
    func(path)


def test_the_field_and_what_was_found_are_named():
    from argsim.schemas import Predictions, ResultsFile, validate

    with pytest.raises(InputError, match=r"r\.json, field 'rows\.0\.value': expected a number, found text"):
        validate(ResultsFile, {"task": "t", "rows": [{"metric": "m", "value": "x"}]}, "r.json")
    with pytest.raises(InputError, match=r"p\.json, field 'a\.k': expected a finite number, found infinity"):
        validate(Predictions, {"a": {"k": math.inf}}, "p.json")
    with pytest.raises(InputError, match=r"p\.json, row 2, column 'text': expected text, found a number"):
        validate(list[dict[str, str]], [{"text": "a"}, {"text": 3}], "p.json")
    assert validate(Predictions, {"a": {"k": 1}}, "p.json") == {"a": {"k": 1.0}}
    from argsim.schemas import Summaries  # a union of a list and an object: the branch's class is not a field

    with pytest.raises(InputError, match=r"s\.json, field 'summaries': missing field$"):
        validate(Summaries, {"items": []}, "s.json")


def test_argsim_own_files_pass(tmp_path):
    """Every committed results file is of the declared shape (NaN figures included)."""
    from argsim.report import load_all

    assert load_all(Path(__file__).resolve().parent.parent / "bench" / "results")


runner = CliRunner()


@pytest.mark.parametrize("shape", ["list-of-ints", "records-of-strings", "text-in-number-column"])
def test_cli_report_and_models_curve_end_in_one_line(tmp_path, monkeypatch, shape):
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "t.json").write_text(json.dumps(WRONG_SHAPES[shape]), encoding="utf-8")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train_config.json").write_text(json.dumps(WRONG_SHAPES[shape]), encoding="utf-8")
    for argv in (["--workdir", str(tmp_path), "report"], ["models", "curve", str(tmp_path / "m")]):
        result = runner.invoke(app, argv)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2, (argv, result.stderr)
        assert len(lines) == 1 and "unexpected" not in lines[0] and str(tmp_path) in lines[0]


def test_models_curve_given_a_file_or_nothing_says_what_it_is(tmp_path, monkeypatch):
    """A file where a trained folder is expected (the record itself: its folder named), a missing path and a folder
    argsim did not train: one line each, before any curve is drawn."""
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train_config.json").write_text(json.dumps({"steps": 3, "losses": [1.0, 0.5]}))
    (tmp_path / "empty").mkdir()
    for target, phrase in ((tmp_path / "m" / "train_config.json", f"is a file; expected a trained model folder "
                                                                  f"(its folder {tmp_path / 'm'})"),
                           (tmp_path / "notes.txt", "is a file; expected a trained model folder"),
                           (tmp_path / "nothing", "folder not found"),
                           (tmp_path / "empty", "no train_config.json here")):
        (tmp_path / "notes.txt").write_text("x")
        result = runner.invoke(app, ["models", "curve", str(tmp_path / "m"), str(target)])
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and f"{target}: {phrase}" in lines[0], result.stderr
        assert not (tmp_path / "m" / "learning_curve.png").exists()  # checked before the first folder is drawn


def test_report_that_would_print_nothing_says_why(tmp_path, monkeypatch):
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    result = runner.invoke(app, ["--workdir", str(tmp_path), "report"])
    assert result.exit_code == 2 and "no results files" in result.stderr
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "kpm.json").write_text(json.dumps({"task": "kpm", "rows": []}))
    result = runner.invoke(app, ["--workdir", str(tmp_path), "report", "--task", "kmp"])
    assert result.exit_code == 2 and "did you mean 'kpm'" in result.stderr


def test_models_listing_reads_each_folder_once_and_refuses_a_file(tmp_path, capsys):
    from argsim.modelbuild.inventory import trained_models

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "train_config.json").write_text(json.dumps({"trainer": "sbert", "steps": 3}))
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")  # a symlink loop: the same folder again, deeper
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "train_config.json").write_text(json.dumps({"trainer": "x", "metrics": [1]}))
    found = trained_models(tmp_path)
    assert [m.folder.name for m in found] == ["a"]
    assert "1 training record(s)" in capsys.readouterr().err
    with pytest.raises(InputError, match="is a file"):
        trained_models(tmp_path / "a" / "train_config.json")


RANKING = {"point": "p", "method": "bm25", "setting": "sdoc", "pool_size": 3, "gold": "c", "gold_better": 0}


@pytest.mark.parametrize(("field", "value", "phrase"), [
    ("method", ["m"], "column 'method': expected text, found a list"),
    ("setting", {"x": 1}, "column 'setting': expected text, found an object"),
    ("method", None, "column 'method': expected text, found null"),
    ("gold_score", "x", "column 'gold_score': expected a number, found text"),
    ("gold", 5, "column 'gold': expected text, found a number"),
])
def test_ranking_records_of_another_shape_are_one_line(tmp_path, monkeypatch, field, value, phrase):
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(RANKING) + "\n" + json.dumps({**RANKING, "point": "q", field: value}) + "\n")
    result = runner.invoke(app, ["eval", "counterargs", str(path)])
    assert result.exit_code == 2 and f"row 2, {phrase}" in result.stderr, result.stderr


# ---------------------------------------------------------------- record files (CSV / TSV / JSONL / JSON lists)

def _arguments(path: Path) -> None:
    from argsim.data.argkp import kpm_data

    kpm_data(path, ("key points", [(1, {"key_point_id": "k1", "key_point": "b", "topic": "t", "stance": 1})]))


def _labels(path: Path) -> None:
    from argsim.data.argkp import kpm_data
    from argsim.io import read_numbered_records
    from argsim.schemas import LabelRecord

    ids = read_numbered_records(path, LabelRecord)[0][1]  # the arguments and key points its first record names
    aid, kid = (str(ids.get(c)).strip() for c in ("arg_id", "key_point_id"))
    kpm_data(("arguments", [(1, {"arg_id": aid, "argument": "a", "topic": "t", "stance": 1})]),
             ("key points", [(1, {"key_point_id": kid, "key_point": "b", "topic": "t", "stance": 1})]), path)


def _counter_input(path: Path) -> None:
    from argsim.counter.core.userdata import load_user_arguments

    with open(path, "a", encoding="utf-8") as fh:  # a second argument: the first one's candidate
        fh.write('{"id": "p2", "text": "another"}\n' if path.suffix == ".jsonl" else "another,p2\n")
    load_user_arguments(path)


def _utterances(path: Path) -> None:
    from argsim.minutes.summarize import user_items

    user_items(path)


def _triplets(path: Path) -> None:
    from argsim.trainers.minutes_sbert import _load_triplets

    _load_triplets(path, None, 0)


def _texts(path: Path) -> None:
    from argsim.io import read_texts

    read_texts(path)


def _articles(path: Path) -> None:
    from argsim.thematic.build import read_user_articles

    read_user_articles(path, quiet=True)


def _summaries_rows(path: Path) -> None:
    from argsim.minutes.evaluate import read_summaries

    read_summaries(path)


def _key_points(path: Path) -> None:
    from argsim.data.argkp import kpm_data

    kpm_data(("arguments", [(1, {"arg_id": "a1", "argument": "a", "topic": "t", "stance": -1})]), path)


def _embed_ids(path: Path) -> None:  # `argsim embed --id-column id` (the encoder is loaded after the check)
    from argsim.io import read_records
    from argsim.schemas import text_records

    read_records(path, text_records("text", "id"))


def _collection(path: Path) -> None:
    from argsim.counter.neural.rerank import _read_collection

    _read_collection(path)


def _sentences(path: Path) -> None:  # `argsim cluster sentences`
    from argsim.io import read_records
    from argsim.schemas import SentenceRecord

    read_records(path, SentenceRecord)


def _labelled_sentences(path: Path) -> None:  # `argsim eval clustering`, the MTEB clustering task
    from argsim.io import read_records
    from argsim.schemas import LabelledSentenceRecord

    read_records(path, LabelledSentenceRecord)


def _counter_pairs(path: Path) -> None:
    from argsim.counter.neural.data import pairs_from_file

    pairs_from_file(path)


def _rankings(path: Path) -> None:  # `argsim eval counterargs`
    from argsim.counter.core.evaluation import check_ranking_records
    from argsim.io import read_records
    from argsim.schemas import RankingRecord

    check_ranking_records(read_records(path, RankingRecord), path)


def _article_index(path: Path) -> None:
    from argsim.io import read_records
    from argsim.schemas import ArticleIndexRecord

    read_records(path, ArticleIndexRecord)


#: reader -> one valid record (its first field is required, its text fields hold text) and its number column
RECORD_READERS = {
    "arguments": (_arguments, {"argument": "a", "arg_id": "a1", "topic": "t", "stance": 1}, "stance"),
    "key_points": (_key_points, {"key_point": "k", "key_point_id": "k1", "topic": "t", "stance": -1}, "stance"),
    "labels": (_labels, {"key_point_id": "k1", "arg_id": "a1", "label": 1}, "label"),
    "counter_input": (_counter_input, {"text": "a point", "id": "p1"}, None),
    "utterances": (_utterances, {"text": "発言です。", "id": "q1", "topic": "t", "subtopic": "s", "length": 100},
                   "length"),
    "triplets": (_triplets, {"anchor": "a", "positive": "b", "negative": "c"}, None),
    "texts": (_texts, {"text": "a text"}, None),
    "embed_ids": (_embed_ids, {"text": "a text", "id": "t1"}, None),
    "collection": (_collection, {"text": "a text", "id": "c1"}, None),
    "sentences": (_sentences, {"text": "a sentence", "label": "history", "article": "A"}, None),
    "labelled_sentences": (_labelled_sentences, {"text": "a sentence", "label": "history", "article": "A"}, None),
    "counter_pairs": (_counter_pairs, {"point": "p", "counter": "c"}, None),
    "rankings": (_rankings, {"point": "p", "method": "bm25", "setting": "sdoc", "pool_size": 3, "gold": "c",
                             "gold_better": 0}, "pool_size"),
    "article_index": (_article_index, {"raw_file": "a.txt", "title": "A"}, None),
    "articles": (_articles, {"text": "== A ==\nSome text.", "title": "T"}, None),
    "summaries_rows": (_summaries_rows, {"summary": "a", "gold": "b", "budget": 50}, "budget"),
}


def _jsonl(*records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _csv(record: dict, values: list[str] | None = None) -> bytes:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(list(record))
    writer.writerow(values if values is not None else [str(v) for v in record.values()])
    return buf.getvalue().encode()


def _record_faults(valid: dict) -> dict[str, tuple[str, bytes]]:
    """fault -> (file suffix, content): the same catalogue for every record reader."""
    first = next(iter(valid))
    missing = {k: v for k, v in valid.items() if k != first}
    return {
        "list-where-object": (".jsonl", _jsonl(valid, [1, 2])),
        "string-where-object": (".jsonl", _jsonl(valid, "a record")),
        "json-not-a-list": (".json", json.dumps(valid).encode()),
        "json-list-of-strings": (".json", b'["a", "b"]'),
        "missing-field": (".jsonl", _jsonl(valid, missing)),
        "missing-column": (".csv", _csv(missing)),
        "null-field": (".jsonl", _jsonl({**valid, first: None})),
        "list-in-field": (".jsonl", _jsonl({**valid, first: ["x"]})),
        "object-in-field": (".jsonl", _jsonl({**valid, first: {"x": 1}})),
        "nan-in-field": (".jsonl", _jsonl(valid) + f'{{"{first}": NaN}}\n'.encode()),
        "blank-field": (".jsonl", _jsonl(valid, {**valid, first: "  "})),
        "blank-cell": (".csv", _csv(valid, ["  ", *map(str, list(valid.values())[1:])])),
        "bool-in-field": (".jsonl", _jsonl(valid, {**valid, first: True})),
        "float-in-field": (".jsonl", _jsonl(valid, {**valid, first: 2.5})),
        "empty-file": (".csv", b""),
        "empty-jsonl": (".jsonl", b""),
        "header-only": (".csv", _csv(valid).split(b"\n")[0] + b"\n"),
        "latin-1": (".csv", _csv(valid) + "caf\xe9\n".encode("latin-1")),
        "utf-16": (".csv", _csv(valid).decode().encode("utf-16")),
        "truncated-last-line": (".jsonl", _jsonl(valid) + b'{"' + first.encode() + b'": "cut'),
        "unterminated-quote": (".csv", _csv(valid) + b'"never closed,x\nmore\n'),
        "too-many-fields": (".csv", _csv(valid, [*map(str, valid.values()), "extra"])),
    }


#: text fields that hold a number are read as text (a CSV cannot tell them apart; an id may be a number)
FAULT_NAMES = sorted(_record_faults({"a": 1}))


@pytest.mark.parametrize("reader", sorted(RECORD_READERS))
@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_each_record_reader_refuses_each_fault_in_one_line(tmp_path, reader, fault):
    func, valid, _ = RECORD_READERS[reader]
    suffix, content = _record_faults(valid)[fault]
    if reader == "texts" and suffix == ".csv" and fault == "too-many-fields":
        pytest.skip("a one-column CSV has no field count to exceed")
    path = tmp_path / f"input{suffix}"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        func(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message, message


@pytest.mark.parametrize("reader", sorted(RECORD_READERS))
@pytest.mark.parametrize("form", ["bom-csv", "bom-jsonl", "extra-field", "huge-line"])
def test_each_record_reader_reads_valid_variants(tmp_path, reader, form):
    """A BOM, a field no reader knows and a 200 KB text on one line are all valid input."""
    func, valid, _ = RECORD_READERS[reader]
    first = next(iter(valid))
    suffix, content = {"bom-csv": (".csv", b"\xef\xbb\xbf" + _csv(valid)),
                       "bom-jsonl": (".jsonl", b"\xef\xbb\xbf" + _jsonl(valid)),
                       "extra-field": (".jsonl", _jsonl({**valid, "zz_unknown": [1, {"a": None}]})),
                       "huge-line": (".jsonl", _jsonl({**valid, first: valid[first] + " x" * 100_000}
                                                      if isinstance(valid[first], str) else valid))}[form]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(content)
    func(path)


def _number_faults(valid: dict, column: str) -> dict[str, tuple[str, bytes]]:
    """fault -> (suffix, content): wrong values in a reader's number column (a label, stance, count, pool size)."""
    other = {**valid, next(iter(valid)): f"{next(iter(valid.values()))}2"}  # a second record (ids differ)
    return {
        "text-in-number-column": (".jsonl", _jsonl(valid, {**other, column: "high"})),
        "text-in-number-column-csv": (".csv", _csv(valid, [("high" if k == column else str(v))
                                                           for k, v in valid.items()])),
        "mixed-number-types": (".jsonl", _jsonl(valid, {**other, column: str(valid[column])})),
        "nan-in-number-column": (".jsonl", _jsonl(valid) + json.dumps({**other, column: math.nan}).encode()
                                 + b"\n"),
        "infinity-in-number-column": (".jsonl", _jsonl(valid) + json.dumps({**other, column: math.inf}).encode()
                                      + b"\n"),
        "bool-in-number-column": (".jsonl", _jsonl(valid, {**other, column: True})),
        "list-in-number-column": (".jsonl", _jsonl(valid, {**other, column: [1]})),
        "object-in-number-column": (".jsonl", _jsonl(valid, {**other, column: {"n": 1}})),
        "out-of-range": (".jsonl", _jsonl(valid, {**other, column: -7})),
    }


NUMBER_READERS = sorted(r for r, (_, _, column) in RECORD_READERS.items() if column)


@pytest.mark.parametrize("reader", NUMBER_READERS)
@pytest.mark.parametrize("fault", sorted(_number_faults({"a": 1}, "a")))
def test_each_number_column_refuses_each_wrong_value_naming_row_and_column(tmp_path, reader, fault):
    """A label, stance, count or pool size that is text in JSON (also when the next line has the number: one
    column, one type), text that is no number in CSV, NaN, infinity, true, a list, an object or a value out of
    range is one line naming the file, the second record's row and the column."""
    func, valid, column = RECORD_READERS[reader]
    suffix, content = _number_faults(valid, column)[fault]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        func(path)
    message = str(info.value)
    assert message.startswith(f"{path}, row 2, column '{column}': ") and "\n" not in message, message


def test_record_values_are_read_once_for_every_caller(tmp_path):
    """CSV text and JSON numbers give the same values: labels and stances as ints, ids as text, counts as ints."""
    from argsim.io import read_records
    from argsim.schemas import LabelRecord, UtteranceRecord

    (tmp_path / "l.csv").write_text("arg_id,key_point_id,label\na1, 7 ,1.0\n")
    (tmp_path / "l.jsonl").write_text(json.dumps({"arg_id": "a1", "key_point_id": 7, "label": 1.0}) + "\n")
    csv_rec, = read_records(tmp_path / "l.csv", LabelRecord)
    json_rec, = read_records(tmp_path / "l.jsonl", LabelRecord)
    assert csv_rec["label"] == json_rec["label"] == 1 and type(json_rec["label"]) is int
    assert json_rec["key_point_id"] == "7" and csv_rec["key_point_id"] == " 7 "
    (tmp_path / "u.csv").write_text("id,text,topic,subtopic,length\nq,t,a,b,3\nr,t,a,b,\n")
    assert [r.get("length") for r in read_records(tmp_path / "u.csv", UtteranceRecord)] == [3, None]


def test_reading_100k_records_is_fast(tmp_path):
    """The check is one pydantic pass over the rows: 100,000 CSV rows with an id read in a few CPU seconds at most
    (about 0.6 s on one core)."""
    import time

    from argsim.io import read_records
    from argsim.schemas import text_records

    path = tmp_path / "big.csv"
    path.write_text("id,text\n" + "".join(f"i{n},text number {n}\n" for n in range(100_000)))
    start = time.process_time()  # CPU time: other processes on the machine do not count
    rows = read_records(path, text_records("text", "id"))
    assert len(rows) == 100_000 and rows[-1] == {"id": "i99999", "text": "text number 99999"}
    assert time.process_time() - start < 6.0


#: command -> (its argv with the file at {f} and outputs under {d}, the file's name, its content): each a record
#: file of a wrong shape, refused in one line before any model loads
COMMAND_FAULTS = {
    "embed": (["embed", "{f}", "--id-column", "id", "--out", "{d}/v.csv"], "t.jsonl",
              _jsonl({"text": "a", "id": "1"}, {"text": "b", "id": ["x"]})),
    "rank keypoints": (["rank", "keypoints", "--arguments", "{f}", "--key-points", "{f}", "--out", "{d}/k"],
                       "a.jsonl", _jsonl({"arg_id": "a", "argument": "x", "key_point_id": "k", "key_point": "y",
                                          "topic": "t", "stance": "pro"})),
    "cluster sentences": (["cluster", "sentences", "{f}", "--k", "2", "--out", "{d}/c.jsonl"], "s.jsonl",
                          _jsonl({"text": "a"}, {"text": "b", "article": {"x": 1}})),
    "eval clustering": (["eval", "clustering", "{f}"], "s.csv", b"text,label\na,1\nb,\n"),
    "eval triplets": (["eval", "triplets", "{f}"], "t.jsonl", _jsonl({"anchor": 1, "positive": "b",
                                                                      "negative": "c"})),
    "eval rouge": (["eval", "rouge", "{f}"], "r.jsonl", _jsonl({"summary": "a", "gold": "b", "budget": "many"})),
    "eval counterargs": (["eval", "counterargs", "{f}"], "r.csv", b"point,method,setting,pool_size\np,m,s,NaN\n"),
    "summarize minutes": (["summarize", "minutes", "--input", "{f}", "--out", "{d}/s.json"], "u.csv",
                          b"id,text,topic,subtopic,length\nq,t,a,b,1.5\n"),
    "rank counter-search": (["rank", "counter-search", "-m", "counter-bi-encoder", "--candidates", "{f}",
                             "--queries", "{f}", "--out", "{d}/r.jsonl"], "c.jsonl", _jsonl({"text": "a", "id": 1.5})),
}


@pytest.mark.parametrize("command", sorted(COMMAND_FAULTS))
def test_each_command_refuses_a_record_file_of_a_wrong_shape_in_one_line(tmp_path, monkeypatch, command):
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    argv, name, content = COMMAND_FAULTS[command]
    path = tmp_path / name
    path.write_bytes(content)
    result = runner.invoke(app, ["--quiet", *(a.format(f=path, d=tmp_path) for a in argv)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {path}, row ") and "unexpected" not in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_text_beyond_the_tokenizers_limits_is_tokenised_whole(lang):
    """Sudachi refuses more than 49,149 bytes and spaCy more than `nlp.max_length` characters: `pipe_docs` cuts
    such a text at sentence ends and joins the docs, so a long utterance, summary or article paragraph is read
    like any other (same tokens, same document vector as short texts give)."""
    spacy = pytest.importorskip("spacy")
    from argsim.io import pipe_docs

    if lang == "ja":
        pytest.importorskip("ja_ginza")
        nlp, sentence = spacy.load("ja_ginza"), "発言です。"
    else:
        nlp, sentence = spacy.blank("en"), "A short sentence. "
        nlp.add_pipe("sentencizer")
    text = sentence * 20_000
    with nlp.select_pipes(disable=[p for p in nlp.pipe_names if p != "sentencizer"]):
        short, long = pipe_docs(nlp, [sentence * 3, text])
        assert long.text == text and len(long) == len(short) // 3 * 20_000
        if lang == "ja":  # the mean of the same token vectors, summed in float32
            assert abs(long.vector - short.vector).max() < 1e-3


def test_an_error_quoting_huge_input_stays_one_short_line(tmp_path, monkeypatch):
    """A header of one 2 MB line (a text file given where triplets are expected) or an option value thousands of
    characters long is quoted in part: one line of bounded length that still names the file and ends with what
    was found."""
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    path = tmp_path / "huge.csv"
    path.write_text("word " * 400_000 + "\n", encoding="utf-8")
    for argv in (["eval", "triplets", str(path)], ["eval", "triplets", str(path), "--distance", "x" * 5000]):
        result = runner.invoke(app, argv)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and len(lines[0]) < 800, result.stderr[:300]
    assert str(path) in lines[0] or "--distance" in lines[0]


def _gold_frame():
    import pandas as pd

    return pd.DataFrame({"arg_id": ["a1", "a2"], "key_point_id": ["k1", "k1"], "topic": ["t", "t"],
                         "stance": [1, 1], "argument": ["x", "y"], "key_point": ["K", "K"], "label": [1, 0]})


API_SHAPES = [
    ("kpa_map-list", lambda a: a.kpa_map([1, 2], _gold_frame()), "predictions: not predictions"),
    ("kpa_map-list-of-scores", lambda a: a.kpa_map({"a1": [0.9]}, _gold_frame()), "field 'a1': expected an object"),
    ("kpa_map-text-score", lambda a: a.kpa_map({"a1": {"k1": "high"}}, _gold_frame()),
     "field 'a1.k1': expected a number, found text"),
    ("kpa_map-frame-columns", lambda a: a.kpa_map(__import__("pandas").DataFrame({"arg_id": ["a1"]}), _gold_frame()),
     "missing column(s) key_point_id, score"),
    ("match-records-as-texts", lambda a: a.KeyPointMatcher("glove50").match([{"arg_id": "a1"}], ["kp"]),
     "column 'argument': expected text, found an object"),
    ("match-number-as-text", lambda a: a.KeyPointMatcher("glove50").match(["ok", 3], ["kp"]),
     "row 2, column 'argument': expected text, found a number"),
    ("encode-bytes", lambda a: a.encode(b"We should ban whaling.", model="glove50"), "texts are bytes"),
]


@pytest.mark.parametrize(("call", "phrase"), [c[1:] for c in API_SHAPES], ids=[c[0] for c in API_SHAPES])
def test_the_python_api_refuses_wrong_shapes_in_one_line(call, phrase, monkeypatch):
    """Wrong shapes given to the public Python names end in one InputError naming the field, before any model
    loads, as the CLI's files do: before, a list of predictions was an AttributeError, records given where texts
    are expected were embedded as their repr, and bytes were embedded one number per byte."""
    import argsim
    from argsim.backend import registry
    from argsim.errors import InputError

    monkeypatch.setattr(registry, "_build", lambda *a, **k: pytest.fail("a model was loaded"))
    with pytest.raises(InputError) as info:
        call(argsim)
    assert phrase in str(info.value) and "\n" not in str(info.value)
    import numpy as np

    kept = argsim.kpa_map({"a1": {"k1": np.float32(0.9)}, "a2": {"k1": np.int64(0)}}, _gold_frame())  # numpy scores
    assert kept == {"strict_map": 1.0, "relaxed_map": 1.0}


@pytest.mark.parametrize(("name", "content", "held"), [
    ("semicolons.csv", "id;text\n1;a\n", "';'"),
    ("tabs.csv", "id\ttext\n1\ta\n", "'\\t'"),
    ("commas.tsv", "id,text\n1,a\n", "','"),
    ("pipes.tab", "id|text\n1|a\n", "'|'"),
])
def test_a_header_split_by_another_delimiter_says_so(tmp_path, name, content, held):
    """A table whose header is one column holding another delimiter names it and how suffixes are read, beside the
    missing columns; a header that is merely missing a column gets no such hint."""
    import re

    from argsim.io import read_records
    from argsim.schemas import text_records

    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=f"missing column\\(s\\) text, id; found .* \\(the header is one column "
                                         f"containing {re.escape(held)}: a .csv file is read comma-separated"):
        read_records(path, text_records("text", "id"))
    (tmp_path / "plain.csv").write_text("id,body\n1,a\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_records(tmp_path / "plain.csv", text_records("text", "id"))
    assert str(err.value).endswith("missing column(s) text; found id, body")
