"""The statistical rule of the CPU default (`argsim.benchmarks.default_gate`) on synthetic per-item outcomes: a
variant identical to fp32 passes, a significantly shifted one fails (also when it stays inside fp32's interval:
the paired test is the sharper check), a variant 0.0051 away on 500 items without a significant paired difference
passes (the fixed 0.005 tolerance failed it); the verdicts read back from `argsim evaluate` rows equal those of
the arrays, and the fastest passing variant wins."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from argsim.benchmarks.default_gate import bench_name, decide, task_verdict, verdicts_from_rows
from argsim.benchmarks.evaluate import Task, bootstrap_draws, run_evaluate
from argsim.cli.app import app
from argsim.evaluation.base import TaskEvaluator
from argsim.metrics.record import Evaluation

N = 500
DRAWS = bootstrap_draws(N, 2000, 13)


def fp32_units() -> np.ndarray:
    return (np.random.default_rng(5).random(N) < 0.7).astype(np.float64)


def flipped(units: np.ndarray, gains: int, losses: int) -> np.ndarray:
    """`units` with `gains` of its 0s turned to 1 and `losses` of its 1s to 0 (the discordant items)."""
    out = units.copy()
    out[np.flatnonzero(units == 0)[:gains]] = 1.0
    out[np.flatnonzero(units == 1)[:losses]] = 0.0
    return out


def verdict(variant: np.ndarray, base: np.ndarray, binary: bool = True):
    return task_verdict("t", "accuracy", variant.mean(), variant[DRAWS].mean(1), base.mean(), base[DRAWS].mean(1),
                        variant if binary else None, base if binary else None)


def test_a_variant_identical_to_fp32_passes():
    base = fp32_units()
    v = verdict(base.copy(), base)
    assert v.passes and v.delta == 0 and v.delta_low == v.delta_high == 0 and v.p_mcnemar == 1.0


def test_a_significant_shift_fails_outside_and_even_inside_fp32s_interval():
    base = fp32_units()
    far = verdict(flipped(base, 40, 5), base)  # +0.07: outside the interval, McNemar p ~ 1e-8
    assert not far.inside and far.significant and not far.passes
    assert far.p_mcnemar == pytest.approx(binomtest(40, 45).pvalue, abs=1e-4)
    near = verdict(flipped(base, 12, 0), base)  # +0.024: inside fp32's +-0.04, but 12 wins and no loss
    assert near.inside and near.significant and not near.passes
    assert near.p_mcnemar == pytest.approx(binomtest(12, 12).pvalue, abs=1e-4) and near.p_mcnemar < 0.05


def test_a_difference_of_0_0051_on_500_items_without_a_significant_paired_difference_passes():
    rng = np.random.default_rng(7)
    base = rng.random(N)  # real-valued unit outcomes (e.g. per-query nDCG)
    noise = rng.normal(0, 0.1, N)
    variant = base + 0.0051 + noise - noise.mean()
    v = verdict(variant, base, binary=False)
    assert v.delta == pytest.approx(0.0051) and abs(v.delta) > 0.005  # the fixed tolerance failed it
    assert v.inside and not v.significant and v.delta_low < 0 < v.delta_high and v.passes
    ties = verdict(flipped(fp32_units(), 5, 2), fp32_units())  # 0/1: +0.006, McNemar p = 0.45
    assert ties.delta == pytest.approx(0.006) and ties.p_mcnemar == pytest.approx(binomtest(5, 7).pvalue, abs=1e-4)
    assert ties.passes


class UnitsEvaluator(TaskEvaluator):
    """Primary = the mean of the model's given 0/1 outcomes."""

    task = "units"

    def __init__(self) -> None:
        super().__init__("test", "accuracy")

    @classmethod
    def from_dataset(cls, split=None, limit=None, config=None, name=None, **options):
        return cls()

    def evaluate(self, model) -> Evaluation:
        self.unit_values = model.outcomes
        return Evaluation(self.task, {"accuracy": float(model.outcomes.mean())}, "accuracy", data="test", n=N)


class Outcomes:
    def __init__(self, outcomes: np.ndarray) -> None:
        self.outcomes = outcomes


def test_rows_give_the_arrays_verdicts_and_the_fastest_passing_variant_wins(tmp_path, monkeypatch):
    base = fp32_units()
    models = {"minilm": base, "minilm [onnx int8]": flipped(base, 5, 2), "minilm [openvino int8]":
              flipped(base, 30, 2), "minilm [torch bf16]": flipped(base, 1, 1)}
    rows = []
    for name in list(models)[1:]:
        board = run_evaluate({name: Outcomes(models[name]), "minilm": Outcomes(base)}, compare=[name, "minilm"],
                             n_boot=1000, task_table={"units": Task("units", UnitsEvaluator, "U", "fake")})
        rows += [r.as_dict() for r in board.rows(env={})]
        (got,) = verdicts_from_rows(rows, name)
        draws = bootstrap_draws(N, 1000, 13)
        m = models[name]
        want = task_verdict("units", "accuracy", m.mean(), m[draws].mean(1), base.mean(), base[draws].mean(1), m, base)
        assert got == want
    speed = [{"method": m, "metric": "speedup_vs_torch_fp32", "value": v}
             for m, v in (("onnx-int8", 2.6), ("openvino-int8", 2.9), ("torch-bf16", 1.7))]
    decisions, default = decide(rows, speed)
    assert [(d.variant, d.passes) for d in decisions] == [
        ("minilm [openvino int8]", False), ("minilm [onnx int8]", True), ("minilm [torch bf16]", True)]
    assert [d.eligible for d in decisions] == [False, False, True]  # exported graphs are one option away
    assert default == "minilm [torch bf16]"  # openvino int8 is faster but fails; onnx int8 passes but is an export
    assert decide([r for r in rows if "bf16" not in r["model"]], speed)[1] is None
    assert decide(rows)[1] is None  # without speed-ups nothing is known to be faster
    assert bench_name("minilm [openvino fp32]") == "openvino-fp32" and bench_name("minilm") is None

    import json

    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "evaluate.json").write_text(json.dumps({"task": "evaluate", "rows": rows}))
    (tmp_path / "bench" / "results" / "backends.json").write_text(json.dumps({"task": "backends", "rows": speed}))
    res = CliRunner().invoke(app, ["--workdir", str(tmp_path), "bench", "default"])
    assert res.exit_code == 0, res.output
    assert "minilm [torch bf16] passes and runs the model as stored: one option away" in res.stdout
    assert "default: minilm (torch fp32) on every CPU" in res.stdout and "│ minilm [openvino int8] │" in res.stdout
    assert "minilm [onnx int8] passes but runs an exported graph" in res.stdout
    res = CliRunner().invoke(app, ["--workdir", str(tmp_path), "bench", "default", "--fp32", "mpnet"])
    assert res.exit_code == 2 and "no comparison of a variant with mpnet" in res.output


def test_a_variant_not_compared_on_every_task_of_fp32_does_not_pass():
    """fp32 scored on a task the variant was never compared on: the variant is missing evidence, not passing."""
    base = fp32_units()
    name = "minilm [torch bf16]"
    board = run_evaluate({name: Outcomes(flipped(base, 5, 2)), "minilm": Outcomes(base)}, compare=[name, "minilm"],
                         n_boot=1000, task_table={"units": Task("units", UnitsEvaluator, "U", "fake")})
    rows = [r.as_dict() for r in board.rows(env={})]
    speed = [{"method": "torch-bf16", "metric": "speedup_vs_torch_fp32", "value": 1.7}]
    assert decide(rows, speed)[1] == name
    # a baseline that ran in bf16 (auto on a CPU with native bf16) is no fp32 baseline: nothing compared
    assert verdicts_from_rows([r | {"env": {"precision": "bf16"}} if r["model"] == "minilm" else r for r in rows],
                              name) == []
    fp32_row = next(r for r in rows if r["model"] == "minilm" and (r.get("extra") or {}).get("primary"))
    rows.append(fp32_row | {"setting": "other"})
    (decision,), default = decide(rows, speed)
    assert decision.missing == ("other",) and not decision.passes and default is None
