"""The published figures every comparison is made against: one table, read by results, benchmarks and the report.

All values are fractions (a paper's percentages / 100), keyed by results task, then by a figure name. A figure
that a paper does not give (or that was lost in the text conversion we have) is simply absent: `published`
returns None for it, and nothing is filled in by guess.
"""

from __future__ import annotations

from collections.abc import Mapping

#: where each task's figures come from (papers under /work/shared/papers)
SOURCES: dict[str, str] = {
    "kpm": "papers/kpm-siamese-transformers.txt (SBERT ~0.75 single mAP) and "
           "papers/kpm-matching-the-statements.txt (MTS, RoBERTa, 7-fold mean strict / relaxed mAP)",
    "counterargs-ltr": "papers/counterargs-bipolar-encoder.txt, Table 2 (accuracy@1, test; Simple-SD is "
                       "Wachsmuth et al.'s)",
    "counterargs-neural": "papers/counterargs-bipolar-encoder.txt, Table 3 (epa, test, accuracy@1/K)",
    "thematic": "papers/thematic-triplet-networks.txt, Table 3 (TDC accuracy on triplets-sen test); Tables 4 and 5 "
                "were lost in the text conversion, so no figure is given for them",
    "minutes": "papers/minutes-political-sbert-embedrank.txt: Table 4 (triplet accuracy / mean diff; USE -> the "
               "e5-multilingual stand-in, JPSB -> trained), Table 6 (ROUGE-1 recall of EmbedRank++), Sec. 3.1 "
               "(27,078 mined triplets), the best PoliInfo-2 team's ROUGE-1",
}

_TABLE2 = {  # method -> setting -> accuracy@1
    "simple-sd": {"sdoc": 0.745, "sda": 0.441, "epc": 0.500, "epa": 0.324},
    "simple-sd-reimpl": {"sdoc": 0.724, "sda": 0.418, "epc": 0.447, "epa": 0.310},
    "logreg-part": {"sdoc": 0.737, "sda": 0.423, "epc": 0.454, "epa": 0.300},
    "logreg-full": {"sdoc": 0.736, "sda": 0.430, "epc": 0.449, "epa": 0.310},
    "xgboost-part": {"sdoc": 0.776, "sda": 0.434, "epc": 0.442, "epa": 0.313},
    "xgboost-full": {"sdoc": 0.797, "sda": 0.475, "epc": 0.473, "epa": 0.337},
}
_TABLE3 = {  # method -> K -> accuracy@1/K
    "Bi-encoder": {10: 0.1488, 30: 0.1488, 50: 0.1488},
    "Unipolar-ret": {10: 0.3004, 30: 0.3004, 50: 0.3004},
    "BM25 + Cross-encoder": {10: 0.0876, 30: 0.1557, 50: 0.1557},
    "BM25 + Unipolar-cls": {10: 0.0128, 30: 0.0216, 50: 0.0273},
    "Bi-encoder + Cross-encoder": {10: 0.0622, 30: 0.0244, 50: 0.0179},
    "Bipolar-encoder": {10: 0.4886, 30: 0.4904, 50: 0.4889},
    "Bipolar-encoder w/o |u-v|": {10: 0.1340, 30: 0.0548, 50: 0.0124},
    "Bipolar-encoder w/o joint": {10: 0.4363, 30: 0.4202, 50: 0.4174},
}

#: task -> figure name -> value
PUBLISHED: dict[str, dict[str, float]] = {
    "kpm": {"sbert/strict_mAP": 0.75, "mts/strict_mAP": 0.840, "mts/relaxed_mAP": 0.941},
    "counterargs-ltr": {f"{m}/{s}": v for m, row in _TABLE2.items() for s, v in row.items()},
    "counterargs-neural": {f"{m}/accuracy@1/{k}": v for m, row in _TABLE3.items() for k, v in row.items()},
    "thematic": {"tdc/mean-vectors": 0.65, "tdc/triplets-sen": 0.74},
    "minutes": {"triplets-e5-multilingual-accuracy": 0.8674, "triplets-e5-multilingual-mean_diff": 0.2441,
                "triplets-trained-accuracy": 0.9849, "triplets-trained-mean_diff": 0.3705,
                "rouge1-recall-e5-multilingual": 0.0846, "rouge1-recall-trained": 0.0696,
                "rouge1-best-team": 0.3208, "mining-triplets": 27078.0},
}


def published(task: str, name: str) -> float | None:
    """The published figure `name` of `task`, or None when the paper gives none."""
    return PUBLISHED.get(task, {}).get(name)


def table2(method: str, setting: str) -> float | None:
    """Table 2 (counter-argument LTR) for a method label; a `[variant]` suffix is ignored."""
    return published("counterargs-ltr", f"{method.split('[', 1)[0]}/{setting}")


def table3(method: str) -> Mapping[int, float]:
    """Table 3 (counter-argument neural, epa test) of a method: K -> accuracy@1/K (empty when not in the paper)."""
    prefix = f"{method}/accuracy@1/"
    return {int(k[len(prefix):]): v for k, v in PUBLISHED["counterargs-neural"].items() if k.startswith(prefix)}
