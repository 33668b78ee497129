"""`Evaluation` equality: the task, metrics, primary metric, data, n and details compared as plain dicts."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from argsim.metrics.record import Evaluation


def test_equal_evaluations_compare_their_details_as_dicts_and_accept_subclasses():
    first = Evaluation("t", {"accuracy": 0.5}, "accuracy", details=OrderedDict([("ties", 1), ("over", 2)]))
    second = Evaluation("t", {"accuracy": 0.5}, "accuracy", details=OrderedDict([("over", 2), ("ties", 1)]))
    assert first == second  # the details' order is not part of the result

    class Named(Evaluation):
        pass

    assert Named("t", {"accuracy": 0.5}, "accuracy", details={"ties": 1, "over": 2}) == first
    assert first != Evaluation("t", {"accuracy": 0.6}, "accuracy", details={"ties": 1, "over": 2})
    assert first != {"accuracy": 0.5}
    with pytest.raises(TypeError):
        hash(first)
