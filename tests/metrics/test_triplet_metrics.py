"""Triplet accuracy and mean diff (the 0.959 / 0.892 / 0.640 headline figures) on hand-built triplets whose
answers are worked out by hand, for every distance and both tie rules."""

from __future__ import annotations

import numpy as np
import pytest

from argsim.metrics.triplets import triplet_diffs, triplet_scores

# anchor, positive, negative per row (2-d so every figure can be checked on paper)
A = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
P = np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 5.0], [3.0, 4.0]])
N = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [-3.0, -4.0]])


def test_cosine_diffs_and_scores_by_hand():
    # cos(a,p) - cos(a,n): row 0: 1 - 0; row 1: 0 - 1/sqrt2; row 2: 1 - 0; row 3: 1 - (-1) = 2
    expected = np.array([1.0, -1 / np.sqrt(2), 1.0, 2.0])
    np.testing.assert_allclose(triplet_diffs(A, P, N, "cosine"), expected)
    s = triplet_scores(A, P, N, "cosine")
    assert s.accuracy == 0.75 and s.n == 4 and s.ties == 0
    assert s.mean_diff == pytest.approx((1 - 1 / np.sqrt(2) + 1 + 2) / 4)


def test_l1_and_euclidean_diffs_by_hand():
    # d(a,n) - d(a,p). L1: row 0: 2 - 1; row 1: 1 - 2; row 2: 3 - 3; row 3: 14 - 0
    np.testing.assert_allclose(triplet_diffs(A, P, N, "l1"), [1.0, -1.0, 0.0, 14.0])
    # L2: row 0: sqrt2 - 1; row 1: 1 - sqrt2; row 2: sqrt5 - 3; row 3: 10 - 0
    np.testing.assert_allclose(triplet_diffs(A, P, N, "euclidean"),
                               [np.sqrt(2) - 1, 1 - np.sqrt(2), np.sqrt(5) - 3, 10.0])
    e = triplet_scores(A, P, N, "euclidean")
    assert e.accuracy == 0.5 and e.mean_diff == pytest.approx((np.sqrt(5) - 3 + 10) / 4)


def test_ties_count_as_correct_or_wrong():
    # L1 row 2 is an exact tie (3 == 3)
    correct = triplet_scores(A, P, N, "l1", ties="correct")
    wrong = triplet_scores(A, P, N, "l1", ties="wrong")
    assert (correct.accuracy, wrong.accuracy) == (0.75, 0.5)
    assert correct.ties == wrong.ties == 1 and correct.mean_diff == pytest.approx(14 / 4)


def test_cosine_ignores_scale_and_distances_do_not():
    scaled = triplet_diffs(A * 7.0, P * 0.5, N * 3.0, "cosine")
    np.testing.assert_allclose(scaled, triplet_diffs(A, P, N, "cosine"))
    assert not np.allclose(triplet_diffs(A * 7.0, P, N, "l1"), triplet_diffs(A, P, N, "l1"))


def test_evaluation_contract_and_bad_input():
    ev = triplet_scores(A, P, N, "cosine").evaluation("hand")
    assert ev.primary_metric == "accuracy" and ev.primary == 0.75 and list(ev) == ["accuracy", "mean_diff"]
    assert (ev.task, ev.data, ev.n, ev.details["ties"]) == ("triplets", "hand", 4, 0)
    with pytest.raises(ValueError, match="same"):
        triplet_diffs(A, P[:2], N)
    with pytest.raises(ValueError, match="unknown distance"):
        triplet_diffs(A, P, N, "manhattan")
    with pytest.raises(ValueError, match="no triplets"):
        triplet_scores(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)))
