"""Which numeric variant of a model is the CPU default: the statistical rule of docs/backends.md ("The default, and
why"), decided from `argsim evaluate` rows (bench/results/evaluate.json: each variant scored and `--compare`d with
the fp32 model in one run, so both are resampled on the same draws and the comparison row holds the paired test).

A variant passes a task when its figure lies inside torch fp32's 95 % bootstrap interval and the paired test of
variant - fp32 (`argsim.benchmarks.evaluate.paired_test`) finds no significant difference, and passes when it passes
every task; speed only orders: the fastest that passes, is faster than fp32 and runs natively becomes the default.
Readings chosen: two-sided (significantly better fails too: the default must give fp32's figures), no fixed
tolerance, and "runs natively" is the model as stored, in its own framework, on a number format the hardware
computes (an ONNX Runtime / OpenVINO export, built and calibrated on first use, stays one option away).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from argsim.benchmarks.evaluate import METHOD, Leaderboard, paired_test, parse_variant, percentile_interval
from argsim.errors import ArgsimError


@dataclass(frozen=True)
class TaskVerdict:
    """A variant against torch fp32 on one task: the two figures, fp32's 95 % interval and the paired test."""

    task: str
    metric: str
    value: float
    fp32: float
    fp32_low: float
    fp32_high: float
    delta_low: float
    delta_high: float
    p_bootstrap: float
    p_mcnemar: float | None
    significant: bool

    @property
    def delta(self) -> float:
        return self.value - self.fp32

    @property
    def inside(self) -> bool:
        """The variant's figure lies inside fp32's 95 % interval (bounds included)."""
        return self.fp32_low <= self.value <= self.fp32_high

    @property
    def passes(self) -> bool:
        """Inside fp32's interval and no significant paired difference (the module's rule)."""
        return self.inside and not self.significant


def task_verdict(task: str, metric: str, value: float, boot: np.ndarray, fp32: float, fp32_boot: np.ndarray,
                 units: np.ndarray | None = None, fp32_units: np.ndarray | None = None) -> TaskVerdict:
    """The rule on one task from the figures resampled on the same bootstrap draws (as `argsim evaluate` resamples
    them) and, for McNemar, the 0/1 unit outcomes of both.

    Args:
        task, metric: what is compared.
        value, boot: the variant's figure and its resampled figures.
        fp32, fp32_boot: torch fp32's, on the same draws.
        units, fp32_units: the 0/1 unit outcomes (None where the figure is not a mean of 0/1 outcomes).

    Returns:
        The `TaskVerdict` (`.passes`).

    Example:
        >>> u = np.array([1.0, 0.0, 1.0, 1.0] * 50)
        >>> draws = np.random.default_rng(0).integers(0, 200, size=(500, 200))
        >>> task_verdict("t", "accuracy", u.mean(), u[draws].mean(1), u.mean(), u[draws].mean(1), u, u).passes
        True
    """
    low, high = percentile_interval(fp32_boot)
    test = paired_test(boot, fp32_boot, units, fp32_units)
    return TaskVerdict(task, metric, float(value), float(fp32), low, high, *test["ci95"], test["p_bootstrap"],
                       test["p_mcnemar"], test["significant"])


def verdicts_from_rows(rows: Sequence[Mapping[str, Any]], variant: str, fp32: str = "minilm") -> list[TaskVerdict]:
    """The `TaskVerdict` of every task on which `argsim evaluate` rows (dicts, as evaluate.json holds them) give
    `variant`'s figure, `fp32`'s with its interval, and the comparison row '`variant` vs `fp32`'; a baseline whose
    row records another precision than fp32 (`auto` on a CPU with native bf16) is no baseline: that task is not
    compared."""
    board = Leaderboard.from_rows(rows)
    not_fp32 = {r["setting"] for r in rows if r.get("method") == METHOD and r["model"] == fp32
                and (r.get("extra") or {}).get("primary") and (r.get("env") or {}).get("precision", "fp32") != "fp32"}
    return [TaskVerdict(c.task, base.metric, mine.value, base.value, base.low, base.high, c.low, c.high,
                        c.p_bootstrap, c.p_mcnemar, c.significant) for c in board.comparisons
            if (c.a, c.b) == (variant, fp32) and c.task not in not_fp32
            and (mine := board.score(variant, c.task)) and (base := board.score(fp32, c.task))]


def bench_name(variant: str) -> str | None:
    """The backends benchmark's name of a variant written as evaluate rows name it (None: not one of its).

    Example:
        >>> bench_name("minilm [openvino int8]"), bench_name("minilm [torch bf16]")
        ('openvino-int8', 'torch-bf16')
    """
    if (parsed := parse_variant(variant)) is None:
        return None
    o = parsed[1]
    return f"{o['backend']}-{o['quantize'] if o['quantize'] != 'none' else o['precision'].replace('auto', 'fp32')}"


@dataclass(frozen=True)
class VariantDecision:
    """One variant: its tasks' verdicts, its throughput against torch fp32 (None: not measured), the tasks fp32 was
    scored on that it was not compared on (`missing`), and whether it passes: every task compared, every one
    passed."""

    variant: str
    verdicts: list[TaskVerdict]
    speedup: float | None
    missing: tuple[str, ...] = ()

    @property
    def passes(self) -> bool:
        return bool(self.verdicts) and not self.missing and all(v.passes for v in self.verdicts)

    @property
    def eligible(self) -> bool:
        """Runs the model as stored (torch: another precision, no export or calibration), so it may be a default
        (the module doc's reading of "natively")."""
        parsed = parse_variant(self.variant)
        return parsed is not None and parsed[1]["backend"] == "torch"


def decide(evaluate_rows: Sequence[Mapping[str, Any]], backends_rows: Sequence[Mapping[str, Any]] = (),
           fp32: str = "minilm") -> tuple[list[VariantDecision], str | None]:
    """Every variant of `fp32` that evaluate rows compare with it, fastest first, and the default: the fastest one
    that passes, is faster than fp32 and is `eligible` (None: fp32 stays).

    Args:
        evaluate_rows: `argsim evaluate` rows (bench/results/evaluate.json).
        backends_rows: `argsim bench backends` rows (bench/results/backends.json): each variant's
            `speedup_vs_torch_fp32` (`bench_name`).
        fp32: the torch fp32 model's name in the rows.

    Returns:
        (the decisions, the default variant's name or None).

    Example:
        >>> decide([])
        ([], None)
    """
    speed = {r["method"]: r["value"] for r in backends_rows if r.get("metric") == "speedup_vs_torch_fp32"}
    board = Leaderboard.from_rows(evaluate_rows)
    variants = dict.fromkeys(c.a for c in board.comparisons if c.b == fp32)
    tasks = dict.fromkeys(s.task for s in board.scores if s.model == fp32)
    decisions = []
    for name in variants:
        verdicts = verdicts_from_rows(evaluate_rows, name, fp32)
        missing = tuple(t for t in tasks if t not in {v.task for v in verdicts})
        decisions.append(VariantDecision(name, verdicts, speed.get(bench_name(name)), missing))
    decisions.sort(key=lambda d: -(d.speedup or 0.0))
    default = next((d.variant for d in decisions if d.passes and d.eligible and (d.speedup or 0.0) > 1.0), None)
    return decisions, default


def decision_table(decisions: Sequence[VariantDecision]) -> list[list[str]]:
    """One markdown-ready row per (variant, task): speed-up, figure, delta, fp32's interval, paired interval, p
    values, inside / significant, pass; the header first."""
    out = [["variant", "x torch fp32", "task", "metric", "figure", "delta", "fp32 95 % interval",
            "paired 95 % interval", "p (bootstrap)", "p (McNemar)", "inside", "significant", "passes"]]
    for d in decisions:
        speed = f"{d.speedup:.2f}" if d.speedup else "-"
        for v in d.verdicts:
            out.append([d.variant, speed, v.task, v.metric, f"{v.value:.4f}", f"{v.delta:+.4f}",
                        f"[{v.fp32_low:.4f}, {v.fp32_high:.4f}]", f"[{v.delta_low:+.4f}, {v.delta_high:+.4f}]",
                        f"{v.p_bootstrap:.3f}", "-" if v.p_mcnemar is None else f"{v.p_mcnemar:.3f}",
                        "yes" if v.inside else "no", "yes" if v.significant else "no", "pass" if v.passes else "fail"])
        out += [[d.variant, speed, task, *["-"] * 9, "not compared"] for task in d.missing]
    return out


def decide_from_results(folder: str | Path, fp32: str = "minilm") -> tuple[list[VariantDecision], str | None]:
    """`decide` on the results files of `folder` (evaluate.json; backends.json where it exists); ArgsimError (one
    line) when evaluate.json is missing or compares no variant with `fp32`."""
    folder = Path(folder)
    decisions, default = decide(*(json.loads(path.read_text(encoding="utf-8"))["rows"] if path.is_file() else []
                                  for path in (folder / "evaluate.json", folder / "backends.json")), fp32)
    if not decisions:
        raise ArgsimError(f"{folder / 'evaluate.json'}: no comparison of a variant with {fp32}: run e.g. `argsim "
                          f"evaluate '{fp32} [onnx int8]' {fp32} --compare '{fp32} [onnx int8]' {fp32} --record`")
    return decisions, default
