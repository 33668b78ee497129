"""SICK (SemEval-2014 Task 1): sentence pairs with relatedness scores (1-5) and entailment labels.

`load_sick(folder, split)` reads the official SemEval files (train 4,500 / trial 500 / test 4,927);
`load_sick_full(folder)` reads the full release `SICK.txt` (9,840 pairs with provenance columns).
Files are tab-separated with a header and no quoting (the test file has CRLF line endings).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from argsim.data.catalog import DatasetInfo, Stat, register_dataset
from argsim.errors import InputError
from argsim.io import read_text_file, split_lines

SPLIT_FILES = {"train": "SICK_train.txt", "trial": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
LABELS = ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")


@dataclass(frozen=True)
class SickPair:
    pair_id: int
    sentence_a: str
    sentence_b: str
    relatedness: float
    entailment: str
    split: str


def _read_tsv(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """(row number in the file, row) of a header-first, unquoted TSV file, blank lines skipped, with file/row/column
    errors."""
    lines = split_lines(read_text_file(path))
    if not lines:
        raise InputError(path, "empty file")
    header = lines[0].split("\t")
    if missing := [col for col in required if col not in header]:
        raise InputError(path, "missing column", column=missing[0])
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(path, f"{len(cells)} fields, expected {len(header)}", row=i)
        rows.append((i, dict(zip(header, cells, strict=True))))
    return rows


def _pair(row: dict[str, str], path: Path, line: int, split: str, label_col: str) -> SickPair:
    try:
        score = float(row["relatedness_score"])
        pid = int(row["pair_ID"])
    except ValueError:
        raise InputError(path, "pair_ID/relatedness_score is not a number", row=line) from None
    if not 1.0 <= score <= 5.0:
        raise InputError(path, f"relatedness {score} outside 1-5", row=line, column="relatedness_score")
    if row[label_col] not in LABELS:
        raise InputError(path, f"unknown entailment label {row[label_col]!r}", row=line, column=label_col)
    return SickPair(pid, row["sentence_A"], row["sentence_B"], score, row[label_col], split)


def load_sick(folder: Path, split: str = "train") -> list[SickPair]:
    """The SemEval-2014 pairs of one split: train, trial or test."""
    if split not in SPLIT_FILES:
        raise InputError(None, f"unknown SICK split '{split}': choose one of {', '.join(SPLIT_FILES)}")
    path = Path(folder) / SPLIT_FILES[split]
    cols = ("pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment")
    return [_pair(r, path, i, split, "entailment_judgment") for i, r in _read_tsv(path, cols)]


def load_sick_full(folder: Path) -> list[SickPair]:
    """All 9,840 pairs of the full SICK release (split from its SemEval_set column, lower-cased)."""
    path = Path(folder) / "SICK.txt"
    cols = ("pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_label", "SemEval_set")
    return [_pair(r, path, i, r["SemEval_set"].lower(), "entailment_label") for i, r in _read_tsv(path, cols)]


def check(folder: Path) -> list[Stat]:
    """Pair counts per split and label beside SOURCE.md, and agreement of SICK.txt with the SemEval files."""
    splits = {s: load_sick(folder, s) for s in SPLIT_FILES}
    full = load_sick_full(folder)
    labels = Counter(p.entailment for p in splits["train"])
    semeval = {p.pair_id: replace(p, split="") for ps in splits.values() for p in ps}  # the split's name aside
    same = sum(semeval.get(p.pair_id) == replace(p, split="") for p in full)
    full_splits = Counter(p.split for p in full)
    scores = [p.relatedness for ps in splits.values() for p in ps]
    return [
        *(Stat(f"{s} pairs", len(splits[s]), n) for s, n in zip(SPLIT_FILES, (4500, 500, 4927), strict=True)),
        *(Stat(f"train {lab.lower()}", labels[lab], n) for lab, n in zip(LABELS, (2536, 1299, 665), strict=True)),
        Stat("relatedness min", min(scores), 1.0),
        Stat("relatedness max", max(scores), 5.0),
        Stat("SICK.txt pairs", len(full), 9840),
        Stat("SICK.txt TRAIN / TRIAL / TEST", f"{full_splits['train']} / {full_splits['trial']} / "
                                              f"{full_splits['test']}", "4439 / 495 / 4906"),
        Stat("SICK.txt pairs identical to SemEval", same, 9840),
    ]


register_dataset(DatasetInfo(
    name="sick",
    folder="sick",
    title="SICK, SemEval-2014 Task 1 (relatedness + entailment)",
    published="https://github.com/brmson/dataset-sts (data/sts/sick2014/) and "
              "https://github.com/kkalouli/SICK-processing (SICK.txt); CC BY-NC-SA 3.0",
    layout=list(SPLIT_FILES.values()) + ["SICK.txt"],
    check=check,
))
