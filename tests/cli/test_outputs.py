"""Where and how runs write: the output format follows the suffix, default outputs go to the work folder
(`--workdir` / `ARGSIM_HOME`), never into the package."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.io import write_vectors

UTTERANCES = Path(__file__).resolve().parents[1] / "fixtures" / "minutes" / "utterances.csv"
runner = CliRunner()


def test_vectors_are_written_in_the_format_the_suffix_names(tmp_path):
    import pyarrow.parquet as pq

    vecs = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    np.testing.assert_array_equal(np.load(write_vectors(tmp_path / "v.npy", vecs)), vecs)
    with open(write_vectors(tmp_path / "v.csv", vecs, ids=["a", "b"]), encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "d0", "d1", "d2"] and [r[0] for r in rows[1:]] == ["a", "b"]
    np.testing.assert_array_equal(np.array([[float(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32), vecs)
    table = pq.read_table(write_vectors(tmp_path / "v.parquet", vecs))
    assert table.column("id").to_pylist() == ["0", "1"]
    np.testing.assert_array_equal(np.array(table.column("vector").to_pylist(), dtype=np.float32), vecs)
    assert not (tmp_path / "v.txt").exists()


def test_embed_csv_output_carries_the_ids(tmp_path, minilm):
    src = tmp_path / "in.csv"
    src.write_text("id,text\nx1,We should ban whaling.\nx2,Whaling is a tradition.\n", encoding="utf-8")
    out = tmp_path / "v.csv"
    result = runner.invoke(app, ["--quiet", "embed", str(src), "--id-column", "id", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert [r[0] for r in rows[1:]] == ["x1", "x2"] and len(rows[1]) == 1 + 384
    assert not out.read_bytes().startswith(b"\x93NUMPY")


@pytest.mark.parametrize("how", ["option", "env"])
def test_default_outputs_go_to_the_work_folder(tmp_path, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    args = ["--quiet", "summarize", "minutes", "--input", str(UTTERANCES), "--method", "lead"]
    if how == "option":
        args = ["--workdir", str(home), *args]
    else:
        monkeypatch.setenv("ARGSIM_HOME", str(home))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads((home / "runs" / "minutes-summaries.json").read_text())["method"] == "lead"
    assert not (tmp_path / "runs").exists()
    from argsim.paths import results_dir, set_workdir

    try:
        assert results_dir() == home / "bench" / "results"
    finally:
        set_workdir(None)  # the CLI set this run's work folder for the process; later tests start afresh


def test_nothing_locates_writes_next_to_the_package_source():
    """No module derives a write location from its own file (after `pip install` that is site-packages)."""
    root = Path(__file__).resolve().parents[2] / "argsim"
    offenders = []
    for path in root.rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "__file__" in line and ("models" in line or "runs" in line or "results" in line):
                offenders.append(f"{path.relative_to(root)}:{n}")
    assert not offenders, offenders
