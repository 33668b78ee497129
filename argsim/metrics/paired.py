"""Paired comparison of two systems scored on the same items: difference of means with a bootstrap interval and
an exact McNemar test (for 0/1 outcomes such as accuracy@1 hits)."""

from __future__ import annotations

import numpy as np


def paired_comparison(a: np.ndarray, b: np.ndarray, n_boot: int = 2000, seed: int = 13) -> dict:
    """mean(a) - mean(b) over the same items, its 95 % percentile-bootstrap interval (items resampled together)
    and, when both are 0/1, the two-sided exact McNemar p-value (binomial test on the discordant items)."""
    from scipy.stats import binomtest

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(f"paired outcomes need two equal, non-empty 1-d arrays, got {a.shape} and {b.shape}")
    diff = a - b
    rng = np.random.default_rng(seed)
    boot = diff[rng.integers(0, len(diff), size=(n_boot, len(diff)))].mean(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    out = {"delta": round(float(diff.mean()), 4), "ci95": [round(float(lo), 4), round(float(hi), 4)],
           "items": int(len(diff))}
    if set(np.unique(np.concatenate([a, b]))) <= {0.0, 1.0}:
        wins, losses = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        out.update(wins=wins, losses=losses,
                   p_mcnemar=round(float(binomtest(wins, wins + losses).pvalue), 4) if wins + losses else 1.0)
    return out
