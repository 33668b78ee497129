"""`argsim evaluate` / `argsim.evaluate`: intervals, paired tests, the leaderboard, its rows, HTML and the command.

The statistics run on small fake task evaluators (on the `TaskEvaluator` contract) with known unit outcomes, so
each figure is checked against an independent computation (scipy's exact binomial test, a normal interval, a
constant shift that only shared draws reproduce); the command's option and model errors are checked before any
task reads its data.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.benchmarks import evaluate as ev_mod
from argsim.benchmarks.evaluate import (
    Leaderboard,
    Task,
    bootstrap_draws,
    paired_test,
    percentile_interval,
    run_evaluate,
)
from argsim.cli.app import app
from argsim.errors import ArgsimError
from argsim.evaluation.base import TaskEvaluator
from argsim.metrics.record import Evaluation

runner = CliRunner()


class FakeModel:
    """A model whose unit outcomes are given: `outcomes` (0/1 or real values)."""

    def __init__(self, name: str, outcomes: np.ndarray) -> None:
        self.name, self.outcomes = name, np.asarray(outcomes, dtype=np.float64)


class FakeEvaluator(TaskEvaluator):
    """Primary = mean of the model's unit outcomes (the contract's default resampling)."""

    task: ClassVar[str] = "fake"
    accepts_cross_encoder: ClassVar[bool] = False
    built: ClassVar[list] = []

    def __init__(self, n: int) -> None:
        super().__init__("test", "accuracy")
        self.n = n

    @classmethod
    def from_dataset(cls, split=None, limit=None, config=None, name=None, **options: Any) -> FakeEvaluator:
        cls.built.append((split, limit, options))
        return cls(limit or 200)

    def evaluate(self, model: Any) -> Evaluation:
        self.unit_values = model.outcomes[: self.n]
        return Evaluation(self.task, {"accuracy": float(self.unit_values.mean()), "other": 1.0}, "accuracy",
                          data="test", n=self.n)


class FakeCrossEvaluator(FakeEvaluator):
    accepts_cross_encoder = True


class CrossEncoder(FakeModel):
    """Recognised as a pair scorer by its class name, as sentence-transformers' `CrossEncoder` is."""


def tasks(**kw: type) -> dict[str, Task]:
    return {k: Task(k, cls, k.upper(), f"fake {k}") for k, cls in kw.items()}


def binary(p: float, n: int = 200, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < p).astype(np.float64)


def test_interval_of_a_mean_of_0_1_outcomes_matches_the_normal_interval():
    units = binary(0.7, 2000)
    draws = bootstrap_draws(len(units), 2000, seed=1)
    low, high = percentile_interval(units[draws].mean(axis=1))
    p, half = units.mean(), 1.96 * math.sqrt(units.mean() * (1 - units.mean()) / len(units))
    assert abs(low - (p - half)) < 0.004 and abs(high - (p + half)) < 0.004


def test_the_same_draws_serve_every_model_of_a_task():
    """B = A + 0.1 on every unit: with shared draws every resampled difference is exactly 0.1."""
    a = np.random.default_rng(3).random(200)
    board = run_evaluate({"a": FakeModel("a", a), "b": FakeModel("b", a - 0.1)}, compare=["a", "b"],
                         task_table=tasks(t=FakeEvaluator))
    c = board.comparisons[0]
    assert c.delta == pytest.approx(0.1) and c.low == pytest.approx(0.1) and c.high == pytest.approx(0.1)
    assert c.significant and c.p_mcnemar is None and c.p_bootstrap == 0.0


def test_paired_test_mcnemar_matches_an_exact_binomial_test():
    from scipy.stats import binomtest

    a, b = binary(0.75, 200, 1), binary(0.6, 200, 2)
    board = run_evaluate({"a": FakeModel("a", a), "b": FakeModel("b", b)}, compare=["a", "b"],
                         task_table=tasks(t=FakeEvaluator), n_boot=500)
    c = board.comparisons[0]
    wins, losses = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    assert c.p_mcnemar == pytest.approx(binomtest(wins, wins + losses).pvalue, abs=1e-4)
    assert c.delta == pytest.approx(a.mean() - b.mean())
    assert c.significant == (c.low > 0 and c.p_mcnemar < 0.05)


def test_equal_models_differ_by_nothing():
    a = binary(0.6, 300)
    t = paired_test(a[bootstrap_draws(300, 500)].mean(axis=1), a[bootstrap_draws(300, 500)].mean(axis=1), a, a)
    assert t["ci95"] == [0.0, 0.0] and not t["significant"] and t["p_mcnemar"] == 1.0


def test_scores_rows_round_trip_and_cross_encoders_skip_bi_encoder_tasks(tmp_path):
    models = {"good": FakeModel("good", binary(0.8)), "ce": CrossEncoder("ce", binary(0.5))}
    board = run_evaluate(models, task_table=tasks(bi=FakeEvaluator, rank=FakeCrossEvaluator), n_boot=200)
    assert board.score("ce", "bi") is None and board.score("ce", "rank") is not None
    s = board.score("good", "bi")
    assert s.low <= s.value <= s.high and s.value == pytest.approx(models["good"].outcomes.mean())
    from argsim.results import write_results

    path = write_results("evaluate", board.rows(env={"device": "cpu"}, command="argsim evaluate x"),
                         path=tmp_path / "e.json")
    rows = json.loads(path.read_text())["rows"]
    assert {r["metric"] for r in rows} == {"accuracy", "other"} and all(r["command"] for r in rows)
    primary = [r for r in rows if (r.get("extra") or {}).get("primary")]
    assert len(primary) == 3 and all(r["env"] == {"device": "cpu"} for r in rows)
    again = Leaderboard.from_rows(rows)
    assert [(x.model, x.task, x.value, x.low, x.high) for x in again.scores] == \
        [(x.model, x.task, x.value, x.low, x.high) for x in board.scores]


def test_a_model_no_chosen_task_can_score_is_an_error():
    with pytest.raises(ArgsimError, match="no chosen task can score"):
        run_evaluate(CrossEncoder("ce", binary(0.5)), task_table=tasks(bi=FakeEvaluator))


def test_default_task_without_data_is_left_out_with_a_warning_a_chosen_one_fails(capsys):
    class Missing(FakeEvaluator):
        @classmethod
        def from_dataset(cls, *a: Any, **k: Any) -> FakeEvaluator:
            raise ArgsimError("data/x.jsonl is missing")

    table = tasks(ok=FakeEvaluator, gone=Missing)
    board = run_evaluate(FakeModel("m", binary(0.5)), task_table=table, n_boot=100)
    assert [t.key for t in board.tasks] == ["ok"] and "gone left out" in capsys.readouterr().err
    with pytest.raises(ArgsimError, match="missing"):
        run_evaluate(FakeModel("m", binary(0.5)), tasks=["gone"], task_table=table)


@pytest.mark.parametrize("kwargs, phrase", [({"tasks": ["nope"]}, "unknown task"),
                                            ({"compare": ["m", "x"]}, "--compare"),
                                            ({"limit": 0}, "--limit"), ({"n_boot": 10}, "--n-boot")])
def test_bad_arguments_fail_before_any_data_is_read(kwargs, phrase):
    FakeEvaluator.built.clear()
    with pytest.raises(ArgsimError, match=phrase):
        run_evaluate(FakeModel("m", binary(0.5)), task_table=tasks(t=FakeEvaluator), **kwargs)
    assert FakeEvaluator.built == []


def test_published_figures_beside_the_tasks():
    from argsim.published import mteb_figure

    refs = ev_mod.TASKS["arguana"].reference_figures()
    assert len([r for r in refs if r.label.startswith("MTEB")]) == 10
    assert mteb_figure("sentence-transformers/all-MiniLM-L6-v2") == ("all-MiniLM-L6-v2", 0.5017)
    assert mteb_figure("bm25") == ("bm25s", 0.4928) and mteb_figure("my-model") is None
    assert {r.value for r in ev_mod.TASKS["kpa"].reference_figures()} == {0.84, 0.75}


# ---------------------------------------------------------------- the command


@pytest.fixture
def fake_tasks(monkeypatch):
    """Every task of the command replaced by the fake evaluator (the keys stay: `--tasks` checks them)."""
    FakeEvaluator.built.clear()
    for key, task in list(ev_mod.TASKS.items()):
        monkeypatch.setitem(ev_mod.TASKS, key, Task(key, FakeEvaluator, task.title, task.about,
                                                    references=task.references, published_task=task.published_task,
                                                    lexical=task.lexical))
    good, base = binary(0.8, 300, 1), binary(0.6, 300, 2)
    import argsim.benchmarks.evaluate as mod

    real_check = mod.check_model

    def named(model: Any) -> None:
        if model not in ("good", "base"):
            real_check(model)

    monkeypatch.setattr(mod, "check_model", named)

    fake_evaluate = FakeEvaluator.evaluate

    def evaluate(self: FakeEvaluator, model: Any) -> Evaluation:
        return fake_evaluate(self, FakeModel(model, good if model == "good" else base))

    monkeypatch.setattr(FakeEvaluator, "evaluate", evaluate)


def test_command_prints_the_leaderboard_and_writes_rows_html_and_marks_differences(fake_tasks, tmp_path):
    out, page = tmp_path / "rows.json", tmp_path / "report.html"
    res = runner.invoke(app, ["--quiet", "evaluate", "good", "base", "--tasks", "kpa,arguana", "--compare", "good",
                              "base", "--out", str(out), "--html", str(page), "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    assert "good - base" in res.stdout and " *" in res.stdout and "MTEB: all-MiniLM-L6-v2 0.502" in res.stdout
    rows = json.loads(out.read_text())["rows"]
    assert {r["setting"] for r in rows} == {"kpa", "arguana"}
    assert [r for r in rows if r["method"] == "evaluate-compare" and r["extra"]["significant"]]
    text = page.read_text()
    assert text.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == 2
    assert "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched


def test_report_html_redraws_saved_rows(fake_tasks, tmp_path):
    res = runner.invoke(app, ["--quiet", "--workdir", str(tmp_path), "evaluate", "good", "base", "--tasks", "kpa",
                              "--record", "--n-boot", "100"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "bench" / "results" / "evaluate.json").is_file()
    page = tmp_path / "all.html"
    res = runner.invoke(app, ["--quiet", "--workdir", str(tmp_path), "report", "--html", str(page)])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    assert text.count('class="chart" data-task="kpa"') == 1 and text.count('class="bar"') == 2
    assert 'data-label="MTS (Phan et al. 2021)"' in text


def test_limit_reaches_every_evaluator(fake_tasks):
    res = runner.invoke(app, ["--quiet", "evaluate", "good", "--tasks", "sick", "--limit", "7", "--n-boot", "100"])
    assert res.exit_code == 0, res.output
    assert FakeEvaluator.built == [(None, 7, {})]


@pytest.mark.parametrize("argv, phrase", [
    (["evaluate", "good", "--tasks", "kpa,nope"], "'nope' is not one of"),
    (["evaluate", "no-such-model-anywhere"], "unknown model"),
    (["evaluate", "good", "base", "--compare", "good", "other"], "--compare"),
    (["evaluate", "good", "--limit", "0"], "--limit"),
    (["evaluate", "good", "--html", "r.txt"], ".html"),
    (["evaluate", "good [torch]"], "a variant is written [BACKEND QUANTIZE PRECISION]"),
    (["evaluate", "good [torch bf16 fp32]"], "a variant is written"),
    (["evaluate", "good [onnx bf16]"], "--backend onnx computes in fp32"),
    (["evaluate", "good [torch int8]"], "--quantize int8 needs --backend onnx or openvino"),
])
def test_bad_options_and_models_are_one_line_exit_2_before_any_work(fake_tasks, tmp_path, monkeypatch, argv,
                                                                     phrase):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["--quiet", *argv])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and phrase in lines[0], res.stderr
    assert FakeEvaluator.built == [] and list(tmp_path.iterdir()) == []


def test_a_folder_that_holds_no_model_is_refused_before_any_data_is_read(fake_tasks, tmp_path):
    """An empty folder (or one of anything but a model) given as a model: one line, exit 2, and no task's data read,
    so no warning about a task's missing data comes first."""
    (tmp_path / "empty").mkdir()
    res = runner.invoke(app, ["--quiet", "evaluate", "good", str(tmp_path / "empty")])
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1, res.stderr
    assert "empty: not a sentence-transformers, transformers or argsim model folder" in lines[0]
    assert FakeEvaluator.built == []


def test_a_model_written_with_its_variant_runs_under_it_and_its_rows_record_it(fake_tasks, tmp_path, monkeypatch):
    """'good [torch bf16]' is 'good' scored under --precision bf16 beside 'base' in torch fp32, on the same draws:
    the rows keep the variant's name and record what ran; the comparison row names both."""
    seen, scored = {}, FakeEvaluator.evaluate

    def evaluate(self: FakeEvaluator, model: Any) -> Evaluation:
        seen[model] = getattr(self, "config", None)
        return scored(self, model)

    monkeypatch.setattr(FakeEvaluator, "evaluate", evaluate)
    out, variant = tmp_path / "rows.json", "good [torch bf16]"
    res = runner.invoke(app, ["--quiet", "evaluate", variant, "base", "--tasks", "kpa", "--compare", variant, "base",
                              "--out", str(out), "--n-boot", "100"])
    assert res.exit_code == 0, res.output
    assert seen["good"].precision == "bf16" and seen["good"].backend == "torch" and seen["base"] is None
    assert f"{variant} - base" in res.stdout  # the table names the variant (no markup eats its bracket)
    rows = {(r["method"], r["model"]): r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {("evaluate", variant), ("evaluate", "base"), ("evaluate-compare", f"{variant} vs base")}
    assert rows[("evaluate", variant)]["env"]["precision"] == "bf16" and rows[("evaluate", "base")]["env"][
        "precision"] == "fp32"
    assert rows[("evaluate", variant)]["env"]["bf16"] in ("native", "emulated") and "bf16" not in rows[
        ("evaluate", "base")]["env"]
    assert ev_mod.parse_variant("x [openvino int8]") == ("x", {"backend": "openvino", "quantize": "int8",
                                                                "precision": "auto"})
    assert ev_mod.parse_variant("folder [1]") is None and ev_mod.parse_variant("minilm") is None


# ---------------------------------------------------------------- the HTML page in a browser

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_html_report_renders_its_charts_and_numbers_in_a_browser(tmp_path):
    from PIL import Image

    from argsim.benchmarks.evaluate_view import leaderboard_html

    models = {"good": FakeModel("good", binary(0.8)), "base": FakeModel("base", binary(0.6))}
    board = run_evaluate(models, compare=["good", "base"], n_boot=200,
                         task_table={"arguana": Task("arguana", FakeEvaluator, "ArguAna", "fake"),
                                     "kpa": ev_mod.TASKS["kpa"].__class__("kpa", FakeEvaluator, "KPA", "fake",
                                                                          references=ev_mod.TASKS["kpa"].references,
                                                                          published_task="kpm")})
    page = tmp_path / "report.html"
    page.write_text(leaderboard_html(board), encoding="utf-8")
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('class="chart"') == 2 and html.count('class="bar"') == 4
    value = f"{models['good'].outcomes.mean():.3f}"
    assert value in html and 'data-label="MTEB: gte-modernbert-base"' in html and 'data-label="MTS' in html
    shot = tmp_path / "shot.png"
    res = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,1400", page.as_uri())
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int32)
    bar_blue = (np.abs(pixels - np.array([0x4C, 0x78, 0xA8])).sum(axis=2) < 30).sum()
    assert pixels.std() > 10 and bar_blue > 500  # not blank: the bars are drawn


# ---------------------------------------------------------------- real evaluators, MiniLM, a quick look


def test_limit_gives_a_quick_real_leaderboard_on_minilm(data_dir, tmp_path):
    import time

    start = time.perf_counter()
    res = runner.invoke(app, ["--quiet", "evaluate", "minilm", "--tasks", "kpa,thematic", "--limit", "10",
                              "--n-boot", "200", "--out", str(tmp_path / "rows.json")])
    assert res.exit_code == 0, res.output
    assert time.perf_counter() - start < 120  # seconds on a quiet machine; loose for a shared one
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    primary = {r["setting"]: r for r in rows if (r.get("extra") or {}).get("primary")}
    assert set(primary) == {"kpa", "thematic"}
    assert primary["kpa"]["metric"] == "strict_map" and primary["thematic"]["metric"] == "accuracy"
    assert primary["thematic"]["extra"]["units"] == 10 and "env" in primary["kpa"]
    low, high = primary["thematic"]["extra"]["ci95"]
    assert low <= primary["thematic"]["value"] <= high


def test_a_two_tower_model_is_scored_only_where_the_task_has_query_and_document_sides():
    from argsim.benchmarks.evaluate import TASKS, can_score, model_kind

    assert model_kind("counter-bi-encoder") == "two-tower" and model_kind("kpm") == "bi"
    fits = {k for k, t in TASKS.items() if can_score(t, "two-tower", t.evaluator_class())}
    assert fits == {"counter", "arguana"}
    assert all(can_score(t, "bi", t.evaluator_class()) for t in TASKS.values())
