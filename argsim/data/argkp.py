"""ArgKP-2021 (IBM Key Point Analysis shared task 2021, track 1): typed, validated loader.

A split is three CSV files laid out as upstream: `arguments_<split>.csv` (arg_id, argument, topic, stance),
`key_points_<split>.csv` (key_point_id, key_point, topic, stance) and `labels_<split>.csv`
(arg_id, key_point_id, label). `load_argkp(split)` reads one split of the dataset folder; `kpm_data` builds any
split (a user's own files, records in memory). Every problem is reported with file, row and column.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argsim.data.catalog import DatasetInfo, Stat, dataset_dir, register_dataset
from argsim.errors import ArgsimError, InputError, did_you_mean, examples, warn
from argsim.io import read_numbered_records, topic_key
from argsim.schemas import LabelRecord, argkp_items, columns, validate_records

SPLITS = ("train", "dev")


@dataclass(frozen=True)
class Argument:
    arg_id: str
    text: str
    topic: str
    stance: int  # +1 pro, -1 con


@dataclass(frozen=True)
class KeyPoint:
    kp_id: str
    text: str
    topic: str
    stance: int


@dataclass
class KPMData:
    """Arguments, key points and (optional) gold labels of one split; ids are unique."""

    name: str
    arguments: list[Argument]
    key_points: list[KeyPoint]
    labels: dict[tuple[str, str], int] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.arg_by_id = {a.arg_id: a for a in self.arguments}
        self.kp_by_id = {k.kp_id: k for k in self.key_points}
        groups: dict[tuple[str, int], list[KeyPoint]] = defaultdict(list)
        for kp in self.key_points:
            groups[(topic_key(kp.topic), kp.stance)].append(kp)
        self._kps_by_group = dict(groups)

    @property
    def has_labels(self) -> bool:
        return bool(self.labels)

    @property
    def topics(self) -> list[str]:
        return list(dict.fromkeys(a.topic for a in self.arguments))

    def candidates(self, arg: Argument) -> list[KeyPoint]:
        """The key points of the argument's topic and stance (the ones the task scores it against)."""
        return self._kps_by_group.get((topic_key(arg.topic), arg.stance), [])

    def unscorable(self) -> list[Argument]:
        """Arguments whose (topic, stance) has no key point: no method can score them."""
        return [a for a in self.arguments if (topic_key(a.topic), a.stance) not in self._kps_by_group]

    def positives(self) -> int:
        return sum(1 for v in self.labels.values() if v == 1)

    def subset(self, topics: Iterable[str], name: str | None = None) -> KPMData:
        """Only the arguments, key points and labels of `topics` (for topic folds and small tests); a topic the
        split lacks is an ArgsimError naming the nearest one (letter case and spacing first)."""
        keep = set(topics)
        have = sorted({a.topic for a in self.arguments} | {k.topic for k in self.key_points})
        if unknown := sorted(keep - set(have)):
            raise ArgsimError(f"{self.name}: no topic {unknown[0]!r}{did_you_mean(unknown[0], have)}"
                              f"{f' (and {len(unknown) - 1} more unknown)' if len(unknown) > 1 else ''}; "
                              f"it has {len(have)} topics")
        args = [a for a in self.arguments if a.topic in keep]
        kps = [k for k in self.key_points if k.topic in keep]
        ids = {a.arg_id for a in args}
        labels = {p: v for p, v in self.labels.items() if p[0] in ids}
        return KPMData(name or f"{self.name}[{len(keep)} topics]", args, kps, labels, self.files)


def merge(parts: list[KPMData], name: str) -> KPMData:
    """Concatenate splits (ids must stay unique across them: ArgKP's are)."""
    return KPMData(name, [a for p in parts for a in p.arguments], [k for p in parts for k in p.key_points],
                   {k: v for p in parts for k, v in p.labels.items()}, [f for p in parts for f in p.files])


#: one part of a split: a file, or records in memory as (the name errors give, [(row, {column: value}), ...])
Part = str | Path | tuple[str, Sequence[tuple[int, Mapping[str, Any]]]]


def _part(part: Part, kind: type) -> tuple[str | Path, Sequence[tuple[int, Mapping[str, Any]]]]:
    """(where, numbered records) of a file or of records in memory, checked against the record `kind`
    (`argsim.schemas`: ids, texts, stances 1 / -1, labels 0 / 1; records in memory are read as a CSV's cells are,
    their labels and stances from text or numbers)."""
    if not isinstance(part, tuple):
        return Path(part), read_numbered_records(Path(part), kind)
    source, records = part
    first = records[0][1] if records else {}
    if missing := [c for c in columns(kind)[0] if records and c not in first]:
        raise InputError(source, f"missing column(s) {', '.join(missing)}; found {', '.join(map(str, first))}",
                         column=missing[0])
    return source, validate_records(kind, [(row, dict(rec)) for row, rec in records], source, csv=True)


def _items(source: str | Path, records: Iterable[tuple[int, Mapping[str, Any]]], kind: type, text_column: str,
           repeated: bool) -> list:
    """The arguments (`kind` Argument) or key points (KeyPoint) of numbered records; a repeated id is an error
    naming both rows, or (`repeated`: rows of pairs) the first row's item."""
    id_column = "arg_id" if kind is Argument else "key_point_id"
    out, seen = [], {}
    for row, rec in records:
        item_id, stance = rec[id_column].strip(), rec["stance"]
        if item_id in seen and not repeated:
            raise InputError(source, f"duplicate {id_column} {item_id!r} (first at row {seen[item_id]})", row=row,
                             column=id_column)
        if item_id not in seen:
            seen[item_id] = row
            out.append(kind(item_id, rec[text_column], rec["topic"].strip(), stance))
    return out


def _labels(source: str | Path, records: Iterable[tuple[int, Mapping[str, Any]]], arg_ids: set[str],
            kp_ids: set[str]) -> dict[tuple[str, str], int]:
    """Gold labels {(arg_id, key_point_id): 0/1}, their ids checked against the arguments and key points."""
    out: dict[tuple[str, str], int] = {}
    first_row: dict[tuple[str, str], int] = {}
    for row, rec in records:
        aid, kid = rec["arg_id"].strip(), rec["key_point_id"].strip()
        if aid not in arg_ids:
            raise InputError(source, f"arg_id {aid!r} is not in the arguments file", row=row, column="arg_id")
        if kid not in kp_ids:
            raise InputError(source, f"key_point_id {kid!r} is not in the key points file", row=row,
                             column="key_point_id")
        if (aid, kid) in out:
            raise InputError(source, f"duplicate pair ({aid}, {kid}) (first at row {first_row[(aid, kid)]})", row=row)
        first_row[(aid, kid)], out[(aid, kid)] = row, rec["label"]
    return out


def kpm_data(arguments: Part, key_points: Part, labels: Part | None = None, name: str | None = None,
             argument_column: str = "argument", key_point_column: str = "key_point", repeated: bool = False) -> KPMData:
    """The one builder of `KPMData`, for ArgKP's files, a user's own files and the Python API's lists and
    DataFrames alike, so all refuse and warn in the same words: each id once (its topic, its stance 1 or -1), the
    labels 0 or 1 naming known ids, each pair once; one warning line for arguments without a key point of their
    topic and stance (`warn_unscorable`). Every problem names its file (or records), row and column.

    Args:
        arguments: The arguments (columns arg_id, `argument_column`, topic, stance): a CSV/TSV/JSONL/JSON file, or
            ``(name, [(row, record), ...])`` in memory.
        key_points: The key points (key_point_id, `key_point_column`, topic, stance), the same way.
        labels: The gold labels (arg_id, key_point_id, label), the same way; None: unlabelled.
        name: The split's name (None: the arguments file's stem, or the records' name).
        argument_column, key_point_column: The text columns.
        repeated: An id may repeat (records of (argument, key point) pairs: the first row of each id counts).

    Returns:
        The `KPMData` (its `files`: the files read).

    Example:
        >>> rows = [(1, {"arg_id": "a1", "argument": "x", "key_point_id": "k1", "key_point": "y", "topic": "t",
        ...              "stance": "1", "label": 1})]
        >>> data = kpm_data(("pairs", rows), ("pairs", rows), ("pairs", rows), repeated=True)
        >>> data.labels, data.candidates(data.arguments[0])[0].text
        ({('a1', 'k1'): 1}, 'y')
    """
    a_source, a_records = _part(arguments, argkp_items("arg_id", argument_column, isinstance(arguments, tuple)))
    args = _items(a_source, a_records, Argument, argument_column, repeated)
    kps = _items(*_part(key_points, argkp_items("key_point_id", key_point_column, isinstance(key_points, tuple))),
                 KeyPoint, key_point_column, repeated)
    gold = {} if labels is None else _labels(*_part(labels, LabelRecord), {a.arg_id for a in args},
                                             {k.kp_id for k in kps})
    files = [Path(p) for p in (arguments, key_points, labels) if p is not None and not isinstance(p, tuple)]
    data = KPMData(name or (a_source.stem if isinstance(a_source, Path) else a_source), args, kps, gold, files)
    warn_unscorable(data, a_source)
    return data


def warn_unscorable(data: KPMData, source: Path | str) -> None:
    """One warning line when arguments have no key point of their (topic, stance): they are not scored, and the
    evaluation counts them as misses; InputError (one line) when no argument has one: nothing would be scored, and empty
    outputs would pass for a result. Names topics that match a key point topic only up to case or spaces."""
    lost = data.unscorable()
    if not lost:
        return
    if len(lost) == len(data.arguments):
        raise InputError(source, f"none of the {len(lost)} arguments has a key point of its topic and stance, so "
                                 "nothing would be scored: are the key points of these topics?")
    kp_topics = {" ".join(k.topic.split()).casefold(): k.topic for k in data.key_points}
    near = sorted({a.topic for a in lost if a.topic not in {k.topic for k in data.key_points}
                   and " ".join(a.topic.split()).casefold() in kp_topics})
    hint = (f"; topic {near[0]!r} differs from the key points' {kp_topics[' '.join(near[0].split()).casefold()]!r} "
            "only in case or spacing" if near else "")
    warn(f"{source}: {len(lost)} of {len(data.arguments)} arguments have no key point of their topic and stance "
         f"and are not scored ({examples([a.arg_id for a in lost])}){hint}")


def split_files(folder: Path, split: str) -> tuple[Path, Path, Path]:
    return (folder / f"arguments_{split}.csv", folder / f"key_points_{split}.csv", folder / f"labels_{split}.csv")


def load_argkp(split: str = "dev", data_dir: str | Path | None = None, labels: bool = True) -> KPMData:
    """One ArgKP-2021 split (train, dev, or e.g. test when its files are laid out the same way);
    `split='train+dev'` joins both (all 28 topics, for topic k-fold)."""
    parts = split.split("+")
    bad = next((p for p in parts if not re.fullmatch(r"[A-Za-z0-9_-]+", p)), None)
    if bad is not None:
        raise ArgsimError(f"split {split!r}: {bad!r} is not a split name (letters, digits, '-', '_'; '+' joins "
                          "splits)")
    if len(set(parts)) != len(parts):
        raise ArgsimError(f"split {split!r} names one split twice (its rows would count twice)")
    if len(parts) > 1:
        return merge([load_argkp(s, data_dir, labels) for s in parts], split)
    folder = dataset_dir("argkp", data_dir)
    a, k, lab = split_files(folder, split)
    if missing := [p.name for p in (a, k) + ((lab,) if labels else ()) if not p.is_file()]:
        raise InputError(folder, f"split '{split}' not found: missing {', '.join(missing)}")
    return kpm_data(a, k, lab if labels else None, name=f"argkp-{split}")


_EXPECTED = {
    "train": {"topics": 24, "arguments": 5583, "pro": 2883, "con": 2700, "key points": 207, "labels": 20635,
              "positives": 4260, "arguments with a positive": 4018, "same topic+stance pairs": 24454},
    "dev": {"topics": 4, "arguments": 932, "pro": 472, "con": 460, "key points": 36, "labels": 3458,
            "positives": 738, "arguments with a positive": 671, "same topic+stance pairs": 4211},
}


def split_stats(data: KPMData) -> dict[str, int]:
    """Counts of one split, as SOURCE.md reports them."""
    return {"topics": len(data.topics), "arguments": len(data.arguments),
            "pro": sum(a.stance == 1 for a in data.arguments), "con": sum(a.stance == -1 for a in data.arguments),
            "key points": len(data.key_points), "labels": len(data.labels), "positives": data.positives(),
            "arguments with a positive": len({a for (a, _), v in data.labels.items() if v == 1}),
            "same topic+stance pairs": sum(len(data.candidates(a)) for a in data.arguments)}


def _check(folder: Path) -> list[Stat]:
    return [Stat(f"{split}: {key}", value, _EXPECTED[split][key]) for split in SPLITS
            for key, value in split_stats(kpm_data(*split_files(folder, split), name=split)).items()]


register_dataset(DatasetInfo(
    name="argkp", folder="argkp", title="ArgKP-2021 (KPA shared task 2021, track 1)",
    published="https://github.com/IBM/KPA_2021_shared_task (kpm_data/, commit 2f5e2d5)",
    layout=[p.name for s in SPLITS for p in split_files(Path(), s)],
    check=_check,
    notes=["the test split (arguments_test.csv, key_points_test.csv, labels_test.csv) loads the same way "
           "when placed beside train/dev"],
))


def load_kpm_input(split: str | None = "dev", arguments: str | Path | None = None,
                   key_points: str | Path | None = None, labels: str | Path | None = None,
                   need_labels: bool = False, data_dir: str | Path | None = None) -> KPMData:
    """The CLI's input rule: the user's own files when `arguments` is given, else the ArgKP `split`."""
    if arguments is not None or key_points is not None:
        if arguments is None or key_points is None:
            raise InputError(arguments or key_points, "give both --arguments and --key-points")
        if need_labels and labels is None:
            raise InputError(arguments, "evaluation needs the gold labels: give --labels")
        return kpm_data(arguments, key_points, labels)
    if labels is not None:  # the split's own labels would be read, and the file given silently not
        raise InputError(labels, "gold labels go with your own --arguments and --key-points; a split's labels are "
                                 "its labels_<split>.csv under --data-dir")
    split = split or "dev"
    with_labels = need_labels or "+" in split or split_files(dataset_dir("argkp", data_dir), split)[2].is_file()
    return load_argkp(split, data_dir, labels=with_labels)
