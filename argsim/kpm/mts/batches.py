"""MTS training data: pseudo-label clusters, key-point-centred mini-batches, topic folds.

Pseudo labels (MTS section 4.1): each key point and its matching arguments share one cluster label; an
argument matched by several key points takes the label of the key point whose batch it is a positive of
(elsewhere the label of its first matching key point); every argument that matches no key point is its own
cluster. A mini-batch is built around one key point: the key point, up to `max_pos` matching arguments, up
to `max_neg` non-matching arguments that match another key point (they keep that key point's label, so
they form positive pairs among themselves) and up to `max_unmatched` arguments that match nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from argsim.data.argkp import Argument, KeyPoint, KPMData, merge
from argsim.errors import ArgsimError


@dataclass
class ClusterBatch:
    key_point_id: str
    statements: list[Argument | KeyPoint]
    labels: list[int]


@dataclass
class PairBatch:
    """SimAKP: labelled (argument, key point) pairs."""

    arguments: list[Argument]
    key_points: list[KeyPoint]
    labels: list[int]


def pseudo_labels(data: KPMData) -> tuple[dict[str, int], dict[str, int], int]:
    """(key point -> label, matched argument -> label of its first matching key point, next free label)."""
    kp_label = {kp.kp_id: i for i, kp in enumerate(data.key_points)}
    arg_label: dict[str, int] = {}
    for (aid, kid), y in data.labels.items():
        if y == 1 and aid not in arg_label:
            arg_label[aid] = kp_label[kid]
    return kp_label, arg_label, len(kp_label)


def cluster_batches(data: KPMData, max_pos: int = 30, max_neg: int = 90, max_unmatched: int = 15,
                    seed: int = 0) -> list[ClusterBatch]:
    """One shuffled batch per key point that has at least one matching argument (MTS section 4.1)."""
    if not data.has_labels:
        raise ArgsimError(f"{data.name}: MTS training needs gold labels")
    rng = random.Random(seed)
    kp_label, arg_label, next_label = pseudo_labels(data)
    per_kp: dict[str, dict[str, list[str]]] = {k.kp_id: {"pos": [], "neg": [], "unmatched": []}
                                               for k in data.key_points}
    for (aid, kid), y in data.labels.items():
        kind = "pos" if y == 1 else ("neg" if aid in arg_label else "unmatched")
        per_kp[kid][kind].append(aid)
    batches = []
    for kp in data.key_points:
        groups = per_kp[kp.kp_id]
        if not groups["pos"]:
            continue
        for ids in groups.values():
            rng.shuffle(ids)
        pos, neg, unm = groups["pos"][:max_pos], groups["neg"][:max_neg], groups["unmatched"][:max_unmatched]
        stmts = [kp, *(data.arg_by_id[aid] for aid in pos + neg + unm)]
        labels = [kp_label[kp.kp_id]] * (1 + len(pos)) + [arg_label[aid] for aid in neg] \
            + list(range(next_label, next_label + len(unm)))  # an unmatched argument is its own cluster
        next_label += len(unm)
        batches.append(ClusterBatch(kp.kp_id, stmts, labels))
    rng.shuffle(batches)
    return batches


def pair_batches(data: KPMData, batch_size: int = 32, seed: int = 0) -> list[PairBatch]:
    """Shuffled batches of the labelled pairs (the SimAKP baseline)."""
    rng = random.Random(seed)
    pairs = list(data.labels.items())
    rng.shuffle(pairs)
    return [PairBatch([data.arg_by_id[a] for (a, _), _ in chunk], [data.kp_by_id[k] for (_, k), _ in chunk],
                      [y for _, y in chunk])
            for chunk in (pairs[start:start + batch_size] for start in range(0, len(pairs), batch_size))]


def topic_folds(train: KPMData, dev: KPMData, k: int = 7) -> list[tuple[KPMData, KPMData]]:
    """MTS' topic k-fold: fold 1 is the official train/dev split; the training topics (in file order) are
    cut into k-1 further held-out groups, each fold training on all other topics."""
    if k < 1:
        raise ArgsimError("--folds must be at least 1")
    folds = [(train, dev)]
    if k == 1:
        return folds
    if k - 1 > len(train.topics):
        raise ArgsimError(f"--folds {k}: the training split has {len(train.topics)} topics, so at most "
                          f"{len(train.topics) + 1} folds (fold 1 is the official split)")
    everything = merge([train, dev], "argkp-train+dev")
    # k-1 consecutive groups whose sizes differ by at most one (numpy.array_split): exactly the folds asked for (a
    # fixed group size of ceil(n / (k-1)) would leave later folds empty, e.g. 12 folds when 20 are asked)
    for i, group in enumerate(np.array_split(np.array(train.topics, dtype=object), k - 1)):
        held = list(group)
        rest = [t for t in everything.topics if t not in held]
        folds.append((everything.subset(rest, f"fold{i + 2}-train"), everything.subset(held, f"fold{i + 2}-dev")))
    return folds
