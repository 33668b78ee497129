"""The minutes commands end to end on the example files (real GiNZA), and their bad-input errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from tests.conftest import FIXTURES, REPO

runner = CliRunner()


def test_summarize_and_rouge_on_user_csv(tmp_path):
    out = tmp_path / "s.json"
    csv = str(REPO / "examples/minutes/utterances.csv")
    res = runner.invoke(app, ["--quiet", "summarize", "minutes", "--input", csv, "--model", "ginza", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text(encoding="utf-8"))
    items = {r["id"]: r for r in data["summaries"]}
    assert set(items) == {"q1", "a1", "q2"}
    for r in items.values():
        assert 0 < len(r["summary"]) <= r["budget"] and "拍手" not in r["summary"]
        assert r["summary"] == "".join(s["sentence"] for s in sorted(r["selected"], key=lambda s: s["index"]))
    assert items["q1"]["key_size"] == 2 and items["a1"]["key_size"] == 1
    res = runner.invoke(app, ["--quiet", "eval", "rouge", str(out), "--unit", "char",
                              "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    score = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["scores"][0]
    assert score["n"] == 3 and score["recall"] == pytest.approx(_char_recall(list(items.values())), abs=1e-12)


def _char_recall(items: list[dict]) -> float:
    """Independent character ROUGE-1 recall: clipped character overlap / gold characters (letters and digits
    only, NFKC), 0 for a summary over its budget, averaged over items."""
    import unicodedata
    from collections import Counter

    def chars(text: str) -> Counter:
        text = unicodedata.normalize("NFKC", text)
        return Counter(c for c in text if unicodedata.category(c)[0] in "LN")

    recalls = []
    for r in items:
        if len(r["summary"]) > r["budget"]:
            recalls.append(0.0)
            continue
        gold, cand = chars(r["gold"]), chars(r["summary"])
        recalls.append(sum((gold & cand).values()) / sum(gold.values()))
    return sum(recalls) / len(recalls)


def test_bad_input_is_one_line_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,都は対策を進めます。\n", encoding="utf-8")
    res = runner.invoke(app, ["summarize", "minutes", "--input", str(bad), "--out", str(tmp_path / "o.json")])
    assert res.exit_code == 2 and "bad.csv" in res.output and "topic" in res.output
    assert not (tmp_path / "o.json").exists()
    res = runner.invoke(app, ["eval", "rouge", str(FIXTURES / "minutes" / "minutes.json")])
    assert res.exit_code == 2 and "summary" in res.output
