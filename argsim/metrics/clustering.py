"""Clustering agreement with a gold partition: MI, AMI, RI and ARI (scikit-learn), averaged over groups."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from argsim.errors import examples, warn

METRICS = ("MI", "AMI", "RI", "ARI")


def clustering_scores(gold: Sequence, predicted: Sequence) -> dict[str, float]:
    """MI (nats), adjusted MI, Rand index and adjusted Rand index of one clustering."""
    from sklearn import metrics

    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predicted labels")
    if len(gold) == 0:
        raise ValueError("no items to score")
    return {"MI": float(metrics.mutual_info_score(gold, predicted)),
            "AMI": float(metrics.adjusted_mutual_info_score(gold, predicted)),
            "RI": float(metrics.rand_score(gold, predicted)),
            "ARI": float(metrics.adjusted_rand_score(gold, predicted))}


def warn_one_section(groups: Sequence, gold: Sequence) -> int:
    """One warning line, with counts, when articles (groups) have a single gold section: any clustering of them
    scores AMI, RI and ARI 1 (MI 0), so they raise the averages without saying anything about the vectors. Returns
    how many articles have one section. The same warning is given once per process (`eval clustering` evaluates
    the same rows with each model and algorithm)."""
    sections: dict = defaultdict(set)
    for g, y in zip(groups, gold, strict=True):
        sections[g].add(y)
    single = [g for g, labels in sections.items() if len(labels) == 1]
    message = (f"{len(single)} of {len(sections)} article(s) have one gold section "
               f"({examples([g if g != '' else '(all)' for g in single])}): every clustering of them scores AMI, "
               "RI and ARI 1, so they say nothing about the model")
    if single and message not in _WARNED:
        _WARNED.add(message)
        warn(message)
    return len(single)


_WARNED: set[str] = set()  # the one-section warnings given in this process


def group_scores(groups: Sequence, gold: Sequence, predicted: Sequence) -> dict:
    """{group (article): its `clustering_scores`}, groups in order of first appearance."""
    by_group: dict = defaultdict(lambda: ([], []))
    for g, y, p in zip(groups, gold, predicted, strict=True):
        by_group[g][0].append(y)
        by_group[g][1].append(p)
    return {g: clustering_scores(y, p) for g, (y, p) in by_group.items()}


def averaged_scores(groups: Sequence, gold: Sequence, predicted: Sequence) -> tuple[dict[str, float], int]:
    """Scores computed per group (article) and averaged with equal weight; returns (means, number of groups)."""
    per = list(group_scores(groups, gold, predicted).values())
    return {m: float(np.mean([s[m] for s in per])) for m in METRICS}, len(per)
