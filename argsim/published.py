"""The published figures every comparison is made against: one table, read by results, benchmarks and the report.

All values are fractions (a paper's percentages / 100), keyed by results task, then by a figure name. A figure
that a paper does not give (or that argsim does not hold) is simply absent: `published`
returns None for it, and nothing is filled in by guess.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the papers, cited by authors, title, venue and year
PAPERS: dict[str, str] = {
    "siamese-kpa": "Valerio Mariani and Alberto Roberto Marinelli, \"Siamese Transformer Networks for Key-Point "
                   "Analysis\", HLT course project report, University of Pisa, 2023",
    "mts": "Viet Hoang Phan, Long Tien Nguyen, Long Duc Nguyen and Khanh Ngoc Doan, \"Matching The Statements: "
           "A Simple and Accurate Model for Key Point Analysis\", Proceedings of the 8th Workshop on Argument "
           "Mining (ArgMining), EMNLP 2021",
    "bipolar": "Hongguang Shi, Shuirong Cao and Cam-Tu Nguyen, \"Revisiting the Role of Similarity and "
               "Dissimilarity in Best Counter Argument Retrieval\", arXiv preprint, 2023",
    "simple-sd": "Henning Wachsmuth, Shahbaz Syed and Benno Stein, \"Retrieval of the Best Counterargument without "
                 "Prior Topic Knowledge\", ACL 2018",
    "thematic": "Liat Ein Dor, Yosi Mass, Alon Halfon, Elad Venezian, Ilya Shnayderman, Ranit Aharonov and Noam "
                "Slonim, \"Learning Thematic Similarity Metric from Article Sections Using Triplet Networks\", "
                "ACL 2018",
    "minutes": "Daiki Shirafuji and Rafal Rzepka, \"Summarizing Utterances from Japanese Assembly Minutes using "
               "Political Sentence-BERT-based Method for QA Lab-PoliInfo-2 Task of NTCIR-15\", Proceedings of the "
               "15th NTCIR Conference, 2020",
    "mteb": "Niklas Muennighoff, Nouamane Tazi, Loic Magne and Nils Reimers, \"MTEB: Massive Text Embedding "
            "Benchmark\", EACL 2023",
}

#: where each task's figures come from: the paper and its table or section
SOURCES: dict[str, str] = {
    "kpm": f"{PAPERS['siamese-kpa']} (SBERT, about 0.75 strict mAP for a single model); {PAPERS['mts']} (MTS, "
           "RoBERTa, mean strict / relaxed mAP over 7 folds)",
    "counterargs-ltr": f"{PAPERS['bipolar']}, Table 2 (accuracy@1, test; Simple-SD is that of {PAPERS['simple-sd']})",
    "counterargs-neural": f"{PAPERS['bipolar']}, Table 3 (epa, test, accuracy@1/K)",
    "thematic": f"{PAPERS['thematic']}, Table 3 (accuracy on the sentence triplets' test set); argsim holds no "
                "figure of its Tables 4 and 5",
    "minutes": f"{PAPERS['minutes']}: Table 4 (triplet accuracy / mean diff; USE -> the e5-multilingual stand-in, "
               "JPSB -> trained), Table 6 (ROUGE-1 recall of EmbedRank++), Sec. 3.1 (27,078 mined triplets), the "
               "best PoliInfo-2 team's ROUGE-1",
    "arguana": f"the leaderboard of {PAPERS['mteb']}: ArguAna (BEIR's retrieval form of {PAPERS['simple-sd']}), "
               "nDCG@10 on the test queries",
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
    "arguana": {f"mteb/{m}": v for m, v in {
        "all-MiniLM-L6-v2": 0.5017, "bm25s": 0.4928, "all-mpnet-base-v2": 0.4652, "bge-small-en-v1.5": 0.6035,
        "bge-base-en-v1.5": 0.6375, "bge-large-en-v1.5": 0.6452, "gte-base-en-v1.5": 0.6349,
        "gte-modernbert-base": 0.7456, "Qwen3-Embedding-0.6B": 0.7097, "potion-retrieval-32M": 0.4488}.items()},
    "minutes": {"triplets-e5-multilingual-accuracy": 0.8674, "triplets-e5-multilingual-mean_diff": 0.2441,
                "triplets-trained-accuracy": 0.9849, "triplets-trained-mean_diff": 0.3705,
                "rouge1-recall-e5-multilingual": 0.0846, "rouge1-recall-trained": 0.0696,
                "rouge1-best-team": 0.3208, "mining-triplets": 27078.0},
}

#: argsim's names of models the MTEB leaderboard lists under another name (`mteb_figure`)
MTEB_ALIASES: dict[str, str] = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2", "bm25": "bm25s"}


def published(task: str, name: str) -> float | None:
    """The published figure `name` of `task`, or None when the paper gives none."""
    return PUBLISHED.get(task, {}).get(name)


def mteb_figure(model: str) -> tuple[str, float] | None:
    """(MTEB's model name, its ArguAna nDCG@10 on the MTEB leaderboard) of a model name, or None.

    A model matches by argsim name (`MTEB_ALIASES`), or by the last part of a Hugging Face id or folder name
    compared without case (`BAAI/bge-small-en-v1.5` -> bge-small-en-v1.5): the figure is the leaderboard's for that
    model, which a fine-tuned copy saved under the same folder name would not share.

    Example:
        >>> mteb_figure("minilm")
        ('all-MiniLM-L6-v2', 0.5017)
        >>> mteb_figure("BAAI/bge-small-en-v1.5")
        ('bge-small-en-v1.5', 0.6035)
    """
    name = MTEB_ALIASES.get(model, model.rstrip("/").rsplit("/", 1)[-1]).lower()
    found = next((k for k in PUBLISHED["arguana"] if k.removeprefix("mteb/").lower() == name), None)
    return (found.removeprefix("mteb/"), PUBLISHED["arguana"][found]) if found else None


def table2(method: str, setting: str) -> float | None:
    """Table 2 (counter-argument LTR) for a method label; a `[variant]` suffix is ignored."""
    return published("counterargs-ltr", f"{method.split('[', 1)[0]}/{setting}")


def table3(method: str) -> Mapping[int, float]:
    """Table 3 (counter-argument neural, epa test) of a method: K -> accuracy@1/K (empty when not in the paper)."""
    prefix = f"{method}/accuracy@1/"
    return {int(k[len(prefix):]): v for k, v in PUBLISHED["counterargs-neural"].items() if k.startswith(prefix)}
