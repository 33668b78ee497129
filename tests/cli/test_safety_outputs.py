"""No output destroys an input: an output that is an input (as given, through a symlink or a hard link), or one
file given to two outputs, is one error line and exit 2 before any work, and every file is byte-identical
afterwards. Options whose meaning is the same everywhere (--seed, --task, repeated list items) are checked by the
same machinery before any work."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from argsim.cli.app import app
from tests.cli.conftest import FIXTURES, REPO, runner


@pytest.fixture
def ws(kpm_workspace):
    tmp_path = kpm_workspace
    shutil.copy(REPO / "examples" / "thematic" / "sentences.jsonl", tmp_path / "sentences.jsonl")
    shutil.copy(REPO / "examples" / "counter" / "arguments.jsonl", tmp_path / "counter.jsonl")
    shutil.copy(FIXTURES / "minutes" / "utterances.csv", tmp_path / "utterances.csv")
    (tmp_path / "in.csv").write_text("id,text\na,We should ban whaling.\n", encoding="utf-8")
    (tmp_path / "preds.json").write_text(json.dumps({"a1": {"k1": 0.9}}), encoding="utf-8")
    (tmp_path / "R.md").write_text("# my readme\n", encoding="utf-8")
    os.symlink("in.csv", tmp_path / "link.csv")
    os.link(tmp_path / "in.csv", tmp_path / "hard.csv")
    os.symlink("preds.json", tmp_path / "plink.json")
    os.mkfifo(tmp_path / "pipe.npy")
    os.symlink("loop-b.npy", tmp_path / "loop-a.npy")
    os.symlink("loop-a.npy", tmp_path / "loop-b.npy")
    return tmp_path


@pytest.fixture
def no_model_loads(monkeypatch):
    from argsim.backend import registry

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded before the bad option was found")

    monkeypatch.setattr(registry, "_build", refuse)


KPM_L = ["--arguments", "arguments.csv", "--key-points", "key_points.csv", "--labels", "labels.csv"]
CASES = [
    ("embed-same", ["embed", "in.csv", "--out", "in.csv"], "destroy"),
    ("embed-symlink", ["embed", "in.csv", "--out", "link.csv"], "destroy"),
    ("embed-hardlink", ["embed", "in.csv", "--out", "hard.csv"], "destroy"),
    ("embed-dotted", ["embed", "in.csv", "--out", "./sub/../in.csv"], "destroy"),
    ("map-out-is-predictions", ["eval", "map", "preds.json", *KPM_L, "--out", "plink.json"], "destroy"),
    ("map-out-is-labels", ["eval", "map", "preds.json", *KPM_L, "--out", "labels.csv"], "destroy"),
    ("report-two-outputs", ["report", "--readme", "R.md", "--full", "R.md"], "both --readme and --full"),
    ("cluster-same", ["cluster", "sentences", "sentences.jsonl", "--out", "sentences.jsonl"], "destroy"),
    ("summarize-same", ["summarize", "minutes", "--input", "utterances.csv", "--method", "lead", "--out",
                        "utterances.csv"], "destroy"),
    ("rank-ca-same", ["rank", "counterargs", "-i", "counter.jsonl", "--out", "counter.jsonl"], "destroy"),
    ("rank-kp-out-is-model", ["rank", "keypoints", *KPM_L[:4], "--model", "sub", "--out", "sub"], "destroy"),
    ("out-fifo", ["embed", "in.csv", "--out", "pipe.npy"], "FIFO"),
    ("out-stdout", ["embed", "in.csv", "--out", "-"], "standard output"),
    ("in-stdin", ["embed", "-", "--out", "v.npy"], "standard input"),
    ("out-given-twice", ["eval", "map", "preds.json", *KPM_L, "--out", "a.json", "--out", "b.json"],
     "--out is given twice"),
    ("global-given-twice", ["--seed", "1", "--seed", "2", "embed", "in.csv"], "--seed is given twice"),
    ("out-symlink-loop", ["embed", "in.csv", "--out", "loop-a.npy"], "symlink loop"),
    ("task-path", ["rank", "counterargs", "-i", "counter.jsonl", "--out", "r.jsonl", "--task", "../../x"],
     "task name"),
    ("task-upper", ["eval", "triplets", "in.csv", "--task", "KPM/x"], "task name"),
    ("seed-negative", ["--seed", "-1", "embed", "in.csv"], "--seed"),
    ("seed-huge", ["--seed", str(2**32), "embed", "in.csv"], "--seed"),
    ("map-seed-huge", ["eval", "map", "preds.json", *KPM_L, "--seed", str(2**40)], "--seed"),
    ("setting-twice", ["rank", "counterargs", "-s", "sdoc", "-s", "sdoc"], "given twice"),
    ("settings-twice", ["eval", "counter-neural", "--settings", "epa,sda,epa"], "given twice"),
    ("ks-twice", ["eval", "counter-neural", "--ks", "10,30,10"], "given twice"),
    ("split-twice", ["rank", "keypoints", "--split", "dev+dev", "--out", "r"], "twice"),
    ("split-path", ["rank", "keypoints", "--split", "../../etc/x", "--out", "r"], "not a split name"),
    ("resume-with-input", ["rank", "counterargs", "-i", "counter.jsonl", "--out", "r.jsonl", "--resume"],
     "does not apply to --input"),
    ("limit-and-sample", ["rank", "counterargs", "--limit", "5", "--sample", "3", "--out", "r.jsonl"],
     "give one of them"),
]


@pytest.mark.parametrize("argv, phrase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_output_guard_one_line_nothing_changed(ws, no_model_loads, argv, phrase):
    (ws / "sub").mkdir()
    (ws / "sub" / "config.json").write_text("{}")
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}  # is_file: not the FIFO, not the loop
    result = runner.invoke(app, ["--quiet", *argv])
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert phrase in lines[0], lines[0]
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert after == before
    assert (ws / "link.csv").is_symlink() and (ws / "loop-a.npy").is_symlink()
    assert stat.S_ISFIFO(os.lstat(ws / "pipe.npy").st_mode)


def test_distinct_paths_still_run(ws, no_model_loads):
    """The guard refuses only what is the same file: a sibling output, and the README beside another file."""
    result = runner.invoke(app, ["--quiet", "eval", "map", "preds.json", *KPM_L, "--out", "map.json"])
    assert result.exit_code == 0, result.output
    assert json.loads((ws / "map.json").read_text())


def test_resume_keeps_rows_of_other_methods(ws, monkeypatch):
    """`rank counterargs --resume` onto a file holding another method's rows adds its own and keeps theirs."""
    from argsim.counter.core import run as run_mod

    other = [{"point": f"p{i}", "setting": "sdoc", "split": "test", "method": "tf-cosine", "pool_size": 3,
              "rank": 1, "top": []} for i in range(3)]
    (ws / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    pts = json.loads("[" + ",".join((ws / "counter.jsonl").read_text().splitlines()) + "]")
    assert pts  # the example file is the user's own arguments

    from argsim.counter.core.userdata import load_user_arguments

    points, pools, gold = load_user_arguments(ws / "counter.jsonl")

    def fake_points(split, setting, limit=None, data_dir=None, sample=None, seed=13):
        return points, pools, gold

    monkeypatch.setattr(run_mod, "dataset_points", fake_points)
    result = runner.invoke(app, ["--quiet", "rank", "counterargs", "--method", "bm25", "-s", "sdoc", "--out", "r.jsonl",
                                 "--resume"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (ws / "r.jsonl").read_text().splitlines()]
    methods = [r["method"] for r in rows]
    assert methods.count("tf-cosine") == 3 and methods.count("bm25") == len(points)
    assert [r for r in rows if r["method"] == "tf-cosine"] == other


def test_an_option_that_does_not_apply_is_refused_not_ignored(tmp_path, monkeypatch):
    """`summarize minutes --input F --items X` would summarise F and ignore --items; `--length` without --input
    would be ignored; `--labels` with an ArgKP split would read the split's labels, not the file: each is one
    line, exit code 2, before any work."""
    from typer.testing import CliRunner

    from argsim.cli.app import app

    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    utterances, labels = fixtures / "minutes" / "utterances.csv", fixtures / "kpm" / "labels.csv"
    out = str(tmp_path / "s.json")
    for argv, phrase in (
            (["summarize", "minutes", "--input", str(utterances), "--items", "ntcir14", "--out", out], "--items"),
            (["summarize", "minutes", "--length", "50", "--out", out], "--length"),
            (["rank", "keypoints", "--split", "dev", "--labels", str(labels), "--out", str(tmp_path / "kp")],
             "gold labels go with your own --arguments")):
        result = CliRunner().invoke(app, argv)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and phrase in lines[0], result.stderr
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "kp").exists()


def test_key_points_of_other_topics_only_are_refused(tmp_path, monkeypatch):
    """Arguments none of which has a key point of its topic and stance: nothing could be scored, so the run is
    refused in one line before any model loads instead of writing empty predictions with exit code 0."""
    from typer.testing import CliRunner

    from argsim.cli.app import app

    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)
    kpm = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"
    kps = tmp_path / "kps.csv"
    kps.write_text("key_point_id,key_point,topic,stance\nk1,a key point,another topic,1\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["rank", "keypoints", "--arguments", str(kpm / "arguments.csv"),
                                      "--key-points", str(kps), "--out", str(tmp_path / "kp")])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "nothing would be scored" in lines[0], result.stderr
    assert not (tmp_path / "kp").exists()


def test_a_vector_file_output_that_is_an_existing_folder_is_refused(ws, no_model_loads):
    """`embed --out dir.npy` where dir.npy is a folder: one line naming it, nothing written into it (before, shards
    went into it, though the suffix asked for a .npy file); `embed_file` in Python says the same instead of an
    IsADirectoryError after the work."""
    from argsim.api.encode import embed_file
    from argsim.errors import InputError

    for suffix in (".npy", ".csv", ".parquet"):
        folder = ws / f"dir{suffix}"
        folder.mkdir()
        result = runner.invoke(app, ["--quiet", "embed", "in.csv", "--out", folder.name])
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and "is a folder" in lines[0], result.output
        with pytest.raises(InputError, match="is a folder; expected a file name"):
            embed_file(ws / "in.csv", folder)
        assert not any(folder.iterdir())
