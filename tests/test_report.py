"""The README/docs renderer on a tiny results folder: the exact markdown it writes."""

from __future__ import annotations

import json

import pytest

from argsim.markdown import table
from argsim.report import headline_table, markdown_table, render_markdown, update_readme

RESULT = {"task": "kpm", "commands": ["argsim one", "argsim two"], "rows": [
    {"method": "zero-shot", "model": "minilm", "split": "dev", "setting": "a|b", "metric": "strict_mAP",
     "value": 0.72398, "paper": None, "seconds": 1.5, "peak_mb": None, "env": {}, "command": "argsim one"},
    {"method": "zero-shot", "model": "minilm", "split": "dev", "setting": "a|b", "metric": "relaxed_mAP",
     "value": 0.8, "paper": 0.941, "seconds": None, "peak_mb": None, "env": {}, "command": "argsim one"},
    {"method": "mts", "model": "minilm", "split": "dev", "setting": "a|b", "metric": "strict_mAP",
     "value": 12345.678, "paper": None, "seconds": None, "peak_mb": None, "env": {}, "command": "argsim two"},
]}


def test_table_renderer():
    assert table(["a", "b|c"], [[1, "x|y"]], align=["", "right"]) == "| a | b\\|c |\n|---|---:|\n| 1 | x\\|y |"


def test_full_table_exact_markdown():
    assert markdown_table(RESULT) == "\n".join([
        "#### kpm", "",
        "| method | model | split | setting | metric | value | paper | seconds |",
        "|---|---|---|---|---|---|---|---|",
        "| zero-shot | minilm | dev | a\\|b | strict_mAP | 0.724 |  | 1.5 |",
        "| zero-shot | minilm | dev | a\\|b | relaxed_mAP | 0.8 | 0.941 |  |",
        "| mts | minilm | dev | a\\|b | strict_mAP | 12,345.7 |  |  |",
        "", "Regenerate: `argsim one`; `argsim two`", ""])


def test_headline_table_exact_markdown():
    assert headline_table(RESULT) == "\n".join([
        "#### kpm", "",
        "| method | strict_mAP | relaxed_mAP |",
        "|---|---|---|",
        "| zero-shot | 0.724 | 0.8 (0.941) |",
        "| mts | 12,345.7 |  |",
        "", "Published figures in parentheses. Regenerate: `argsim one`; `argsim two`", ""])


def test_readme_block_replaced_and_idempotent(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "kpm.json").write_text(json.dumps(RESULT))
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:start -->\nold\n<!-- results:end -->\nend\n")
    assert update_readme(readme, folder) is True
    assert readme.read_text() == ("intro\n<!-- results:start -->\n" + render_markdown(folder) +
                                  "\n<!-- results:end -->\nend\n")
    assert update_readme(readme, folder) is False
    (tmp_path / "bad.md").write_text("no markers")
    with pytest.raises(ValueError, match="results:start"):
        update_readme(tmp_path / "bad.md", folder)
