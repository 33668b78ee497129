"""The README/docs renderer on a tiny results folder: the exact markdown it writes."""

from __future__ import annotations

import json

import pytest

from argsim.errors import ArgsimError
from argsim.markdown import table
from argsim.report import (
    headline_table,
    markdown_table,
    papers_table,
    render_markdown,
    update_readme,
    write_full_results,
)

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
    assert readme.read_text() == ("intro\n<!-- results:start -->\n" + papers_table(folder) +
                                  "\n<!-- results:end -->\nend\n")
    assert update_readme(readme, folder) is False
    (tmp_path / "bad.md").write_text("no markers")
    with pytest.raises(ArgsimError, match="results:start"):
        update_readme(tmp_path / "bad.md", folder)


def test_full_results_hold_headline_views_and_every_row(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "kpm.json").write_text(json.dumps(RESULT))
    text = write_full_results(tmp_path / "results.md", folder).read_text()
    assert render_markdown(folder) in text and render_markdown(folder, headline=False) in text


def test_conditions_column():
    result = {"task": "t", "rows": [{"method": "m", "metric": "seconds", "value": 2.0,
                                     "env": {"conditions": {"cpu": "X", "cpu_flags": ["avx2"], "load_average": 1.5}}}]}
    assert markdown_table(result, conditions=True).splitlines()[2:5] == [
        "| method | metric | value | conditions |", "|---|---|---|---|",
        "| m | seconds | 2 | cpu X; cpu_flags avx2; load_average 1.5 |"]


def test_papers_table_reads_the_rows(tmp_path):
    """The README's table takes argsim's figure from the selected row and the paper's from argsim.published."""
    folder = tmp_path / "results"
    folder.mkdir()
    rows = [{"method": "triplet-eval", "model": "minutes", "split": "test", "metric": "accuracy", "value": 0.9123},
            {"method": "triplet-eval", "model": "minutes", "split": "dev", "metric": "accuracy", "value": 0.95},
            {"method": "minutes-sbert-words", "model": "models/minutes-sbert-words", "split": "dev",
             "metric": "dev_accuracy", "value": 0.9, "seconds": 480.0}]
    (folder / "minutes.json").write_text(json.dumps({"task": "minutes", "rows": rows}))
    line = next(t for t in papers_table(folder).splitlines() if t.startswith("| Minutes"))
    assert "**0.912**" in line and "0.985 (" in line and "| 8.0 min |" in line


def test_papers_table_finds_every_figure_in_the_committed_results():
    """Every cell of the README's table comes from a row of bench/results (a renamed row would show '?'), and the
    README holds the table as rendered."""
    from pathlib import Path

    from argsim.report import END, START

    table = papers_table(Path(__file__).resolve().parents[1] / "bench" / "results")
    assert "?" not in table, table
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"{START}\n{table}\n{END}" in readme, "README's table is stale: run `make report`"


def test_a_shipped_model_without_a_card_matches_no_command():
    """A row selected by a shipped model's training command finds none when the model has no card (no error that
    would stop the whole report); a shipped model with a card gives its command."""
    from argsim.report import _shipped_command

    assert _shipped_command("no-such-shipped-model") is None
    assert _shipped_command("kpm").startswith("argsim ")
