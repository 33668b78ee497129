"""Paired comparison: bootstrap interval of the difference and the exact McNemar test."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.metrics.paired import paired_comparison


def test_identical_systems_differ_by_nothing() -> None:
    a = np.array([1, 0, 1, 1, 0, 1], dtype=bool)
    out = paired_comparison(a, a)
    assert out["delta"] == 0.0 and out["ci95"] == [0.0, 0.0]
    assert out["wins"] == out["losses"] == 0 and out["p_mcnemar"] == 1.0


def test_mcnemar_counts_only_discordant_items_and_matches_the_binomial() -> None:
    # 40 items: a right where b is wrong on 12, the reverse on 3, the rest agree
    a = np.array([1] * 12 + [0] * 3 + [1] * 15 + [0] * 10)
    b = np.array([0] * 12 + [1] * 3 + [1] * 15 + [0] * 10)
    out = paired_comparison(a, b)
    assert (out["wins"], out["losses"], out["items"]) == (12, 3, 40)
    assert out["delta"] == pytest.approx(9 / 40, abs=1e-4)
    # two-sided exact binomial on 15 discordant items, 3 or fewer on one side: 2 * P(X <= 3), X ~ Bin(15, 1/2)
    from math import comb

    expected = 2 * sum(comb(15, i) for i in range(4)) / 2 ** 15
    assert out["p_mcnemar"] == pytest.approx(expected, abs=1e-4)
    lo, hi = out["ci95"]
    assert 0 < lo < out["delta"] < hi  # a clear win: the interval excludes zero


def test_interval_is_seeded_and_graded_scores_skip_mcnemar() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(200), rng.random(200)
    assert paired_comparison(a, b, seed=1) == paired_comparison(a, b, seed=1)
    assert "p_mcnemar" not in paired_comparison(a, b)
    with pytest.raises(ValueError, match="equal"):
        paired_comparison(a, b[:10])
