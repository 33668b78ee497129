"""`argsim eval map` and `argsim rank keypoints` on the example files (real MiniLM for the ranking)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app

EX = Path(__file__).resolve().parents[2] / "examples" / "kpm"
FILES = ["--arguments", str(EX / "arguments.csv"), "--key-points", str(EX / "key_points.csv")]
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["--quiet", *args])


def test_eval_map_cli_writes_json(tmp_path):
    out = tmp_path / "map.json"
    res = invoke("eval", "map", str(EX / "predictions.json"), *FILES, "--labels", str(EX / "labels.csv"),
                 "--out", str(out))
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert abs(data["strict"] - 0.5) < 1e-9 and abs(data["relaxed"] - 4 / 9) < 1e-9
    assert data["formula"] == "leaderboard" and len(data["groups"]) == 3
    assert sorted(data) == ["arguments", "dummies", "formula", "gold", "groups", "invalid_key_points", "predicted",
                            "predictions", "relaxed", "seed", "strict", "tie_break", "unknown_arguments"]
    res = invoke("eval", "map", str(EX / "predictions.json"), *FILES, "--labels", str(EX / "labels.csv"),
                 "--formula", "2021-09", "--out", str(out))
    assert abs(json.loads(out.read_text())["strict"] - (1 / 3 + 1 / 4) / 3) < 1e-9


def test_eval_map_cli_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "labels.csv"
    bad.write_text("arg_id,key_point_id,label\na1,k1,2\n")
    res = invoke("eval", "map", str(EX / "predictions.json"), *FILES, "--labels", str(bad))
    assert res.exit_code == 2
    assert "labels.csv, row 2, column 'label'" in res.output and "Traceback" not in res.output
    res = invoke("eval", "map", str(EX / "predictions.json"), *FILES)
    assert res.exit_code == 2 and "--labels" in res.output


def test_rank_keypoints_on_own_files(tmp_path, minilm):
    out = tmp_path / "rank"
    res = runner.invoke(app, ["--quiet", "--workdir", str(tmp_path), "rank", "keypoints", "--model", "minilm", *FILES,
                              "--labels", str(EX / "labels.csv"), "--threshold", "0.3", "--out", str(out), "--task",
                              "kpm-test"])
    assert res.exit_code == 0, res.output
    preds = json.loads((out / "predictions.json").read_text())
    kp_group = {"k1": ("Uniforms", 1), "k2": ("Uniforms", 1), "k3": ("Uniforms", -1), "k4": ("Whaling", 1)}
    with open(EX / "arguments.csv") as fh:
        args = {r["arg_id"]: (r["topic"], int(r["stance"])) for r in csv.DictReader(fh)}
    assert set(preds) == set(args)
    for aid, scores in preds.items():
        assert {kp_group[k] for k in scores} == {args[aid]}  # only key points of the same topic and stance
    # the clearest match of the examples: "Uniforms stop bullying over clothes" -> "School uniform reduces bullying"
    assert max(preds["a1"], key=preds["a1"].get) == "k1"
    with open(out / "best_keypoints.csv") as fh:
        best = list(csv.DictReader(fh))
    assert len(best) == 12 and best[0]["key_point_id"] == "k1"
    with open(out / "coverage.csv") as fh:
        cover = {r["key_point_id"]: r for r in csv.DictReader(fh)}
    matched = sum(1 for b in best if float(b["score"]) >= 0.3)
    assert sum(int(c["matched"]) for c in cover.values()) == matched
    assert int(cover["k3"]["arguments"]) == 4
    # every score is the cosine of the two texts' MiniLM vectors, computed here independently
    with open(EX / "key_points.csv") as fh:
        kp_text = {r["key_point_id"]: r["key_point"] for r in csv.DictReader(fh)}
    with open(EX / "arguments.csv") as fh:
        arg_text = {r["arg_id"]: r["argument"] for r in csv.DictReader(fh)}
    for aid, kid in (("a1", "k1"), ("a1", "k2")):
        u, v = minilm.encode([arg_text[aid], kp_text[kid]])
        assert preds[aid][kid] == pytest.approx(float(u @ v / np.linalg.norm(u) / np.linalg.norm(v)), abs=1e-5)
    # the printed/written mAP is the official metric of exactly these predictions (= `eval map` on the file)
    metrics = json.loads((out / "metrics.json").read_text())
    res = invoke("eval", "map", str(out / "predictions.json"), *FILES, "--labels", str(EX / "labels.csv"),
                 "--out", str(tmp_path / "map.json"))
    official = json.loads((tmp_path / "map.json").read_text())
    assert metrics["map"]["leaderboard"] == {"strict": official["strict"], "relaxed": official["relaxed"]}
    # --task: the same two figures as result rows, each with its own env and command, under the work folder
    rows = json.loads((tmp_path / "bench" / "results" / "kpm-test.json").read_text())["rows"]
    assert {r["metric"]: r["value"] for r in rows} == {"strict_mAP": official["strict"],
                                                      "relaxed_mAP": official["relaxed"]}
    assert all(r["env"]["device"] == "cpu" and r["env"]["seed"] is not None and r["command"] for r in rows)
