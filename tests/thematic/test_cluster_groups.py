"""Per-group clustering (`argsim cluster sentences`): a k larger than a group's sentences gives each sentence its
own cluster and one warning line that names the groups, rows without a group column as `(all)`."""

from __future__ import annotations

import numpy as np

from argsim.thematic.cluster import cluster_groups


def test_a_k_above_a_groups_size_gives_one_cluster_per_sentence_and_names_the_group(capsys) -> None:
    vectors = np.eye(5, dtype=np.float32)
    rows = [{"text": str(i)} for i in range(2)] + [{"text": str(i), "article": "Uniforms"} for i in range(3)]
    labels = cluster_groups(rows, vectors, k=3)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["warning: k=3 exceeds the sentences of 1 of 2 group(s) ((all)); those get one cluster per "
                   "sentence"]
    assert len(set(labels[:2])) == 2 and len(set(labels[2:])) == 3
