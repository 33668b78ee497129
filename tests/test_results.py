"""Result rows from the evaluator contract, and merging rows into a results file without losing provenance."""

from __future__ import annotations

import json

import pytest

from argsim.errors import ArgsimError
from argsim.evaluation import Evaluation
from argsim.published import published, table2, table3
from argsim.results import ResultRow, check_task_name, environment, result_rows, write_results

ENV_OLD = {"argsim": "0.0.9", "seed": 1, "device": "cuda", "packages": {"torch": "2.0"}}
ENV_NEW = {"argsim": "0.1.0", "seed": 13, "device": "cpu", "packages": {"torch": "2.13.0"}}


def ev(acc: float, diff: float) -> Evaluation:
    return Evaluation("triplets", {"accuracy": acc, "mean_diff": diff}, "accuracy", data="test", n=10)


def test_evaluation_is_a_mapping_with_a_primary_metric():
    e = ev(0.9, 0.2)
    assert dict(e) == {"accuracy": 0.9, "mean_diff": 0.2} and e.primary == 0.9 and len(e) == 2
    with pytest.raises(ValueError, match="primary metric"):
        Evaluation("x", {"a": 1.0}, "b")


def test_result_rows_one_row_per_metric_each_with_its_env_and_command():
    rows = result_rows(ev(0.9, 0.2), method="m", model="minilm", setting="cosine", paper={"accuracy": 0.95},
                       seconds=1.5, env=ENV_NEW, command="argsim eval triplets x")
    assert [(r.metric, r.value, r.paper, r.split) for r in rows] == [("accuracy", 0.9, 0.95, "test"),
                                                                    ("mean_diff", 0.2, None, "test")]
    assert all(r.env == ENV_NEW and r.command == "argsim eval triplets x" and r.seconds == 1.5 for r in rows)
    renamed = result_rows(ev(0.9, 0.2), method="m", metrics={"mean_diff": "diff"}, split="dev", env=ENV_NEW,
                          command="c")
    assert [(r.metric, r.value, r.split) for r in renamed] == [("diff", 0.2, "dev")]
    with pytest.raises(KeyError, match="no metric"):
        result_rows(ev(0.9, 0.2), method="m", metrics=["f1"], env=ENV_NEW, command="c")


def test_result_rows_of_plain_measured_figures():
    rows = result_rows({"texts_per_second": 12.5}, method="scale", model="minilm", seconds=3.0, env=ENV_NEW,
                       command="bench")
    assert [(r.metric, r.value, r.split, r.seconds, r.env, r.command) for r in rows] == [
        ("texts_per_second", 12.5, None, 3.0, ENV_NEW, "bench")]
    with pytest.raises(KeyError, match="figures: no metric"):
        result_rows({"a": 1.0}, method="m", metrics=["b"], env=ENV_NEW, command="c")


def test_merge_keeps_each_rows_own_env(tmp_path):
    path = tmp_path / "task.json"
    old = result_rows(ev(0.5, 0.1), method="old", env=ENV_OLD, command="cmd-old")
    old += result_rows(ev(0.6, 0.1), method="replaced", env=ENV_OLD, command="cmd-old")
    write_results("task", old, path=path)
    new = result_rows(ev(0.7, 0.3), method="replaced", env=ENV_NEW, command="cmd-new")
    write_results("task", new, path=path, merge=True)
    data = json.loads(path.read_text())
    assert set(data) == {"task", "rows", "commands"} and data["commands"] == ["cmd-old", "cmd-new"]
    by = {(r["method"], r["metric"]): r for r in data["rows"]}
    assert len(data["rows"]) == 4
    assert by[("old", "accuracy")]["env"] == ENV_OLD and by[("old", "accuracy")]["command"] == "cmd-old"
    assert by[("replaced", "accuracy")]["env"] == ENV_NEW and by[("replaced", "accuracy")]["value"] == 0.7
    assert by[("replaced", "accuracy")]["command"] == "cmd-new"


def test_rows_without_env_get_the_given_one(tmp_path):
    path = write_results("t", [ResultRow("m", None, "s", None, "count", 3.0)], command="c", env=ENV_NEW,
                         path=tmp_path / "t.json")
    row = json.loads(path.read_text())["rows"][0]
    assert row["env"] == ENV_NEW and row["command"] == "c" and "extra" not in row


def test_environment_records_versions_device_seed_and_commit():
    env = environment(seed=5, device="cpu")
    assert env["seed"] == 5 and env["device"] == "cpu" and env["packages"].get("numpy")
    assert env["commit"] is None or len(env["commit"].split("+")[0]) == 40


def test_published_figures_from_one_table():
    assert table2("simple-sd[literal]", "epa") == 0.324 and table2("bm25", "sdoc") is None
    assert table3("Bipolar-encoder") == {10: 0.4886, 30: 0.4904, 50: 0.4889} and table3("nope") == {}
    assert published("thematic", "tdc/mean-vectors") == 0.65 and published("thematic", "tdc/minilm") is None


def test_timing_conditions_move_into_env(tmp_path):
    """Load and machine notes are conditions of a timing: they land in env["conditions"], not in the row's extra."""
    row = {"method": "m", "model": None, "split": "s", "setting": None, "metric": "seconds", "value": 3.0,
           "extra": {"load": 2.4, "points": 7, "options": {"k": 1, "load_average": [1.0, 2.0]}}}
    path = write_results("t", [row], command="c", env=dict(ENV_NEW), path=tmp_path / "t.json")
    out = json.loads(path.read_text())["rows"][0]
    assert out["extra"] == {"points": 7, "options": {"k": 1}}
    assert out["env"]["conditions"] == {"load": 2.4, "load_average_start_end": [1.0, 2.0]}
    assert row["extra"]["options"] == {"k": 1, "load_average": [1.0, 2.0]}  # the caller's row is left as it was


def test_environment_records_conditions():
    cond = environment()["conditions"]
    assert cond["cores"] >= 1 and isinstance(cond["cpu_flags"], list)


def test_a_task_name_is_lowercase_letters_digits_dash_underscore_and_at_most_100_characters():
    """The name becomes bench/results/<task>.json: a path, a capital, an empty name or a 101st character is
    refused (the cap was a separate length test before the pattern held it)."""
    for good in ("kpm", "counterargs-ltr", "a_b-9", "a" * 100):
        assert check_task_name(good) == good
    for bad in ("", "Kpm", "-x", "../x", "a/b", "kpm\n", "a" * 101, 3):
        with pytest.raises(ArgsimError, match="a task name is lowercase letters"):
            check_task_name(bad)
