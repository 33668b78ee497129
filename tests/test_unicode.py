"""Unicode: NFC and NFD forms, zero-width characters, right-to-left text and emoji read the same through every
reader (plain text, CSV, JSONL, JSON) and give the same vectors from the model and from the cache; a lone
surrogate (an escaped half pair, no character) is refused in one line by every reader and the Python API."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from argsim.errors import InputError
from argsim.io import read_texts

TEXTS = ["caf\u00e9 au lait", "cafe\u0301 au lait", "zero\u200bwidth\u200djoin", "\u05e9\u05dc\u05d5\u05dd world",
         "\u0645\u0631\u062d\u0628\u0627 \u202eRTL override\u202c", "emoji \U0001f600\U0001f44d\U0001f3fd",
         "\u4fdd\u80b2\u6240\u306e\u5f85\u6a5f\u5150\u7ae5"]


def _write_all(tmp_path, texts):
    (tmp_path / "t.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    with open(tmp_path / "t.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text"])
        writer.writerows([t] for t in texts)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    (tmp_path / "t.json").write_text(json.dumps([{"text": t} for t in texts], ensure_ascii=False),
                                     encoding="utf-8")
    return [tmp_path / f"t.{s}" for s in ("txt", "csv", "jsonl", "json")]


def test_every_reader_reads_the_same_characters(tmp_path):
    for path in _write_all(tmp_path, TEXTS):
        assert read_texts(path) == TEXTS, path.name


def test_a_lone_surrogate_is_refused_by_every_reader(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"text": "ok"}\n{"text": "a\\ud800b"}\n', encoding="utf-8")
    (tmp_path / "s.json").write_text('[{"text": "a\\udc00"}]', encoding="utf-8")
    (tmp_path / "s.txt").write_bytes(b"ok\na\xed\xa0\x80b\n")  # the surrogate's UTF-8 form: not valid UTF-8
    (tmp_path / "s.csv").write_bytes(b"text\na\xed\xa0\x80b\n")
    for name, phrase in (("s.jsonl", r"row 2: a lone surrogate U\+D800"), ("s.json", r"lone surrogate U\+DC00"),
                         ("s.txt", "not valid UTF-8"), ("s.csv", "not valid UTF-8")):
        with pytest.raises(InputError, match=phrase):
            read_texts(tmp_path / name)
    # an escaped pair is one character, read as such
    (tmp_path / "pair.jsonl").write_text('{"text": "\\ud83d\\ude00"}\n', encoding="utf-8")
    assert read_texts(tmp_path / "pair.jsonl") == ["\U0001f600"]


def test_python_api_refuses_a_lone_surrogate_before_any_model_loads():
    import argsim

    with pytest.raises(InputError, match="text 2 holds a lone surrogate U\\+D800"):
        argsim.encode(["fine", "a\ud800"], model="no-model-is-loaded-first")


def test_the_cache_returns_what_the_model_computes(tmp_path):
    import argsim

    fresh = argsim.encode(TEXTS, config=argsim.RunConfig(use_cache=False, quiet=True))
    config = argsim.RunConfig(cache_dir=tmp_path / "cache", quiet=True)
    first = argsim.encode(TEXTS, config=config)
    again = argsim.encode(list(reversed(TEXTS)), config=config)[::-1]
    np.testing.assert_allclose(first, fresh, atol=1e-5)
    np.testing.assert_array_equal(first, again)
    # NFC and NFD spell one word: the model (whose tokenizer normalises) gives them one vector
    np.testing.assert_allclose(first[0], first[1], atol=1e-5)
