"""counterargs-18 (Wachsmuth et al., ACL 2018): points, counters and the candidate pools of the 8 settings.

Layout (under `<data>/counterargs18/02-extracted-arguments/`)::

    <split>/<theme>/<debate>/{pro,con}/{pro,con}NNa-point.txt    point NN: title line, blank line, body
    <split>/<theme>/<debate>/{pro,con}/{pro,con}NNb-counter.txt  the counter to point NN (body only)

`Argument.stance` is the side folder the file lies in (`pro`/`con`), i.e. the stance of the *point* of
the pair; a counter argues the opposite side (`Argument.argues`).

The eight retrieval settings (candidates for a point p of side s in debate d, theme t):

========  ==================================================  official file
sdoc      counters in d on side s (they argue against s)       01-debate-opposing-counters
sdc       all counters in d                                    02-debate-counters
sdoa      counters in d on side s + points in d on the other   03-debate-opposing-arguments
sda       all points and counters in d                         04-debate-arguments
stc       all counters of the theme t (every debate)           05-theme-counters
sta       all points and counters of the theme t               06-theme-arguments
epc       all counters of the split                            07-split-counters
epa       all points and counters of the split                 08-split-arguments
========  ==================================================  official file

Only arguments that take part in a pair are candidates (the 26 points without a counter are neither queries
nor candidates). Always: the query point itself is left out, and (an undocumented rule of the official pair files) so is
every candidate other than the true counter whose text is identical to the true counter's text. With both
rules the generated test pools reproduce `00-argument-pair-type-counts.tsv` exactly.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from argsim.data.catalog import DatasetInfo, Stat, dataset_dir, register_dataset
from argsim.errors import InputError, did_you_mean
from argsim.io import read_text_file, regular_files

SPLITS = ("training", "validation", "test")
SETTINGS = ("sdoc", "sdc", "sdoa", "sda", "stc", "sta", "epc", "epa")
SETTING_FILES = {
    "sdoc": "01-debate-opposing-counters", "sdc": "02-debate-counters", "sdoa": "03-debate-opposing-arguments",
    "sda": "04-debate-arguments", "stc": "05-theme-counters", "sta": "06-theme-arguments",
    "epc": "07-split-counters", "epa": "08-split-arguments",
}
ARGS_DIR = "02-extracted-arguments"
PAIRS_DIR = "03-pairs-best-counter-task"
_FILE_RE = re.compile(r"^(pro|con)(\d+)([ab])-(point|counter)\.txt$")


@dataclass(frozen=True, eq=False)
class Argument:
    """One point or counter of counterargs-18 (or of a user's own argument file)."""

    id: str  # relative path, e.g. test/culture/<debate>/pro/pro01a-point.txt
    split: str
    theme: str
    debate: str
    stance: str  # side folder: 'pro' | 'con' (a counter argues the other side)
    kind: str  # 'point' | 'counter'
    number: int
    conclusion: str  # first line of a point; '' for counters
    premise: str  # body after the blank line (a counter's whole text)
    text: str  # full text (stripped)

    @property
    def argues(self) -> str:
        """The stance the text argues: the side for a point, the opposite side for a counter."""
        return self.stance if self.kind == "point" else {"pro": "con", "con": "pro"}.get(self.stance, self.stance)

    @property
    def pair_key(self) -> tuple[str, str, str, str, int]:
        return (self.split, self.theme, self.debate, self.stance, self.number)

    def __hash__(self) -> int:
        return hash(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Argument) and other.id == self.id


def split_point_text(raw: str) -> tuple[str, str]:
    """(conclusion, premise) of a point: the first line, and the body after the (first) blank line."""
    head, _, body = raw.strip().replace("\r\n", "\n").partition("\n")
    return head.strip(), body.strip()


def read_argument(path: Path, root: Path) -> Argument:
    """Read one argument file; `root` is the `02-extracted-arguments` folder."""
    rel = path.relative_to(root)
    split, theme, debate, side, name = rel.parts
    m = _FILE_RE.match(name)
    if m is None or m.group(1) != side:
        raise InputError(path, "not a counterargs-18 argument file name")
    raw = read_text_file(path).replace("\r\n", "\n").replace("\r", "\n")  # universal newlines
    kind, text = m.group(4), raw.strip()
    conclusion, premise = split_point_text(raw) if kind == "point" else ("", text)
    return Argument(id=rel.as_posix(), split=split, theme=theme, debate=debate, stance=side, kind=kind,
                    number=int(m.group(2)), conclusion=conclusion, premise=premise, text=text)


@dataclass
class CounterCorpus:
    """All arguments of counterargs-18, indexed by split / theme / debate."""

    arguments: list[Argument]
    root: Path | None = None

    def __post_init__(self) -> None:
        self.arguments = sorted(self.arguments, key=lambda a: a.id)
        self.by_id = {a.id: a for a in self.arguments}
        self._counter_of = {a.pair_key: a for a in self.arguments if a.kind == "counter"}

    def split(self, split: str) -> list[Argument]:
        return [a for a in self.arguments if a.split == split]

    def points(self, split: str | None = None) -> list[Argument]:
        """Every point of `split` that has a counter (the queries of the task), in id order."""
        return [a for a in self.all_points(split) if a.pair_key in self._counter_of]

    def all_points(self, split: str | None = None) -> list[Argument]:
        """Every point, with or without a counter."""
        return [a for a in self.arguments if a.kind == "point" and (split is None or a.split == split)]

    def counters(self, split: str | None = None) -> list[Argument]:
        return [a for a in self.arguments if a.kind == "counter" and (split is None or a.split == split)]

    def true_counter(self, point: Argument) -> Argument | None:
        return self._counter_of.get(point.pair_key)

    def pairs(self, split: str | None = None) -> list[tuple[Argument, Argument]]:
        """(point, its counter) for every point of `split` that has one."""
        return [(p, self._counter_of[p.pair_key]) for p in self.points(split)]


def load_counterargs(data_dir: str | Path | None = None) -> CounterCorpus:
    """Load every point and counter of counterargs-18 from `<data_dir>/counterargs18/02-extracted-arguments`."""
    return load_counterargs_folder(dataset_dir("counterargs18", data_dir) / ARGS_DIR)


def load_counterargs_folder(folder: str | Path) -> CounterCorpus:
    """Load an `02-extracted-arguments`-style folder (also used for small fixture trees)."""
    folder = Path(folder)
    files = regular_files(sorted(p for p in folder.glob("*/*/*/*/*.txt") if _FILE_RE.match(p.name)), folder,
                          "argument files")
    return CounterCorpus([read_argument(p, folder) for p in files], root=folder)


def _scope(setting: str, a: Argument) -> tuple:
    """The arguments a setting draws a point's candidates from: its debate (sd*), its theme (st*), the split (ep*)."""
    return {"sd": (a.theme, a.debate), "st": (a.theme,), "ep": ()}[setting[:2]]


def _in_setting(setting: str, point: Argument, cand: Argument) -> bool:
    """Whether `cand`, of the point's scope, is a candidate of `setting` (the module docstring's table)."""
    if setting == "sdoc":
        return cand.kind == "counter" and cand.stance == point.stance
    if setting == "sdoa":
        return cand.argues != point.argues
    return cand.kind == "counter" or not setting.endswith("c")  # sdc, stc, epc: counters; sda, sta, epa: all


def build_pools(corpus: CounterCorpus, split: str, setting: str) -> dict[str, list[Argument]]:
    """Point id -> its candidate list (in id order, true counter included, query point excluded).

    A candidate other than the true counter whose text equals the true counter's text is left out (the
    undocumented rule that makes the official pair counts come out exactly).
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting '{setting}'{did_you_mean(setting, SETTINGS)}"
                         f": choose one of {', '.join(SETTINGS)}")
    args = [a for a in corpus.split(split) if a.kind == "counter" or a.pair_key in corpus._counter_of]
    scope: dict[tuple, list[Argument]] = defaultdict(list)
    for a in args:
        scope[_scope(setting, a)].append(a)
    pools: dict[str, list[Argument]] = {}
    base: dict[tuple, list[Argument]] = {}  # candidates of a scope for one kind of query, before exclusions
    for p in corpus.points(split):
        gold = corpus.true_counter(p)
        key = _scope(setting, p)
        bkey = (*key, p.theme, p.debate, p.stance) if setting in ("sdoc", "sdoa") else key
        if bkey not in base:
            base[bkey] = [c for c in scope[key] if _in_setting(setting, p, c)]
        excluded = {p.id} | {c.id for c in scope[key] if c.text == gold.text and c.id != gold.id}
        pools[p.id] = [c for c in base[bkey] if c.id not in excluded]
    return pools


_EXPECTED = {"training": (644, 4083, 4065), "validation": (211, 1290, 1287), "test": (214, 1406, 1401)}


def _check(folder: Path) -> list[Stat]:
    corpus = load_counterargs_folder(folder / ARGS_DIR)
    stats: list[Stat] = []
    for split, (debates, points, counters) in _EXPECTED.items():
        args = corpus.split(split)
        stats += [Stat(f"{split} debates (folders)", sum(d.is_dir() for d in (folder / ARGS_DIR / split).glob("*/*")),
                       debates),
                  Stat(f"{split} debates with arguments", len({(a.theme, a.debate) for a in args})),
                  Stat(f"{split} points", sum(a.kind == "point" for a in args), points),
                  Stat(f"{split} counters (= pairs)", sum(a.kind == "counter" for a in args), counters)]
    args = corpus.arguments
    return [*stats, Stat("themes", len({a.theme for a in args}), 15), Stat("argument files", len(args), 13532),
            Stat("pro points", sum(a.kind == "point" and a.stance == "pro" for a in args), 3491),
            Stat("con points", sum(a.kind == "point" and a.stance == "con" for a in args), 3288),
            Stat("distinct argument texts", len({a.text for a in args}))]


register_dataset(DatasetInfo(
    name="counterargs18",
    folder="counterargs18",
    title="counterargs-18 (ArguAna Counterargs Corpus)",
    published="the ArguAna Counterargs Corpus of Wachsmuth, Syed & Stein (ACL 2018); the copy used here is "
              "arguana-counterargs-corpus/ of github.com/cchang-vassar/Semantic-Relations-in-Vector-Embeddings "
              "at commit 420c6ae7",
    layout=[f"{ARGS_DIR}/{s}" for s in SPLITS] + [f"{PAIRS_DIR}/test/00-argument-pair-type-counts.tsv"],
    check=_check,
    notes=["pools are generated from 02-extracted-arguments; the 03 pair files are only used to check counts"],
))
