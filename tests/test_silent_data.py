"""Data that cannot mean what the user wants is refused or warned with counts, never silently scored or dropped;
faults of the machine (a full disk, a read-only folder, no home folder) end in one line with nothing
half-written."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.errors import InputError, environment_problem

runner = CliRunner()


def test_unterminated_quote_is_refused_not_read_as_data(tmp_path):
    from argsim.io import read_records
    from argsim.schemas import text_records

    path = tmp_path / "t.csv"
    path.write_text('text\nfine\n"abc\nmore\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"row 3: a quote opened in this row is never closed"):
        read_records(path, text_records("text"))


def test_one_label_spelled_several_ways_is_one_label(capsys):
    from argsim.io import canonical_labels

    labels = canonical_labels([1, "1", " 1", "1.0", "e\u0301", "\u00e9", "b\u200b", "b"], "s.jsonl")
    assert labels == ["1", "1", "1", "1", "\u00e9", "\u00e9", "b", "b"]
    assert "3 label(s) spelled several ways" in capsys.readouterr().err
    assert canonical_labels(["a", "b"], "s.jsonl") == ["a", "b"] and capsys.readouterr().err == ""


def _arguments(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "args.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_counter_pool_that_cannot_hold_the_gold_is_refused(tmp_path):
    from argsim.counter.core.userdata import load_user_arguments

    rows = [{"id": "p1", "kind": "point", "text": "a", "counter": "p2"},
            {"id": "p2", "kind": "point", "text": "b"}, {"id": "c1", "kind": "counter", "text": "c"}]
    with pytest.raises(InputError, match=r"row 1, column 'counter': 1 point\(s\) have a true counter that cannot"):
        load_user_arguments(_arguments(tmp_path, rows), candidates="counters")
    load_user_arguments(_arguments(tmp_path, rows), candidates="all")  # there p2 is a candidate of p1
    rows[0]["counter"] = "p1"
    with pytest.raises(InputError, match="names itself as its counter"):
        load_user_arguments(_arguments(tmp_path, rows))


def test_training_pairs_whose_counter_is_the_point_are_refused(tmp_path):
    from argsim.counter.neural.data import pairs_from_file

    path = tmp_path / "pairs.jsonl"
    path.write_text('{"point": "a", "counter": "b"}\n{"point": "c", "counter": "c "}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"row 2, column 'counter': 1 pair\(s\) have the point itself"):
        pairs_from_file(path)


@pytest.mark.parametrize(("exc", "phrase"), [
    (OSError(errno.ENOSPC, "No space left on device", "out.json"), "out.json: no space left on device"),
    (OSError(errno.EROFS, "Read-only file system", "/ro/x"), "/ro/x: read-only file system"),
    (RuntimeError("Could not determine home directory."), "no home folder"),
    (ValueError("x"), None),
])
def test_environment_problems_are_named(exc, phrase):
    assert environment_problem(exc) == phrase or (phrase and phrase in environment_problem(exc))


def test_full_disk_ends_in_one_line_with_nothing_half_written(tmp_path, monkeypatch):
    """A write that fails midway (ENOSPC after some bytes) leaves neither the output nor a temporary file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    (tmp_path / "p.json").write_text(json.dumps({"a1": {"k1": 0.9}}))
    for name in ("arguments.csv", "key_points.csv", "labels.csv"):
        (tmp_path / name).write_bytes((Path(__file__).parent / "fixtures" / "kpm" / name).read_bytes())
    real = Path.write_text

    def full(self, data, *args, **kwargs):
        if self.name.startswith(".out.json"):
            real(self, data[: len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    result = runner.invoke(app, ["eval", "map", "p.json", "--arguments", "arguments.csv", "--key-points",
                                 "key_points.csv", "--labels", "labels.csv", "--out", "out.json"])
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no space left on device" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir() if "out" in p.name) == []


def test_no_home_folder_is_one_line(tmp_path, monkeypatch):
    """HOME unset and no password entry: platformdirs would answer "~/.cache" (a folder named "~" here)."""
    import pwd

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    monkeypatch.delenv("ARGSIM_CACHE_DIR", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    (tmp_path / "t.txt").write_text("a text\n", encoding="utf-8")
    result = runner.invoke(app, ["-q", "embed", "t.txt", "--out", "v.npy"])
    assert result.exit_code == 2 and "no home folder" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]  # no "~" folder, no output


def test_a_collection_without_gold_counters_says_so_and_its_rankings_cannot_be_scored(tmp_path, monkeypatch):
    """`rank counterargs --input` over points without counters writes the rankings and says there is no accuracy
    (no empty table); `eval counterargs` of such rankings is one line, exit 2, not an empty table and exit 0."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    (tmp_path / "points.jsonl").write_text("".join(
        json.dumps({"id": f"p{i}", "text": f"School uniforms {word}.", "kind": "point"}) + "\n"
        for i, word in enumerate(["stop bullying", "cost parents money", "limit expression"])), encoding="utf-8")
    res = runner.invoke(app, ["rank", "counterargs", "--method", "bm25", "--input", "points.jsonl", "--out",
                              "r.jsonl"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "no point has a gold counter: 3 rankings, no accuracy@1" in res.output
    assert "┏" not in res.output and len((tmp_path / "r.jsonl").read_text().splitlines()) == 3
    res = runner.invoke(app, ["eval", "counterargs", "r.jsonl"], env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "r.jsonl: no point has a gold counter" in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1
