"""Training/evaluation inputs as indices into one table of unique texts (identical texts share one index)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from argsim.config import SEED
from argsim.errors import ArgsimError, InputError
from argsim.io import read_numbered_records
from argsim.options import setting


@dataclass
class PairData:
    """Point–counter pairs for training and validation, plus the candidate collections of each split."""

    texts: list[str]
    train_pairs: np.ndarray                 # (n, 2) point index, counter index
    train_collection: np.ndarray            # negatives are drawn from these
    val_pairs: np.ndarray                   # (m, 2)
    val_collection: np.ndarray              # validation candidates (epa: every validation argument)
    info: dict = field(default_factory=dict)

    @classmethod
    def from_text_pairs(cls, train: Sequence[tuple[str, str]], val: Sequence[tuple[str, str]],
                        train_extra: Sequence[str] = (), val_extra: Sequence[str] = ()) -> PairData:
        """Build from (point, counter) text pairs; each split's collection = its points, counters and extras."""
        index: dict[str, int] = {}  # each distinct text's position in the table

        def ids(texts: Iterable[str]) -> np.ndarray:
            return np.asarray([index.setdefault(t, len(index)) for t in texts], dtype=np.int64)

        def pairs(ps: Sequence[tuple[str, str]]) -> np.ndarray:
            return np.stack([ids(p for p, _ in ps), ids(c for _, c in ps)], 1) if ps else np.zeros((0, 2), np.int64)

        tp, vp = pairs(train), pairs(val)
        tc = np.unique(np.concatenate([tp.ravel(), ids(train_extra)]))
        vc = np.unique(np.concatenate([vp.ravel(), ids(val_extra)]))
        return cls(list(index), tp, tc, vp, vc)


def random_subset(items: list, n: int | None, rng: np.random.Generator) -> list:
    """`n` of `items` drawn by `rng`, in their order (all of them when `n` is None or not smaller).

    Example:
        >>> random_subset(list("abcde"), 2, np.random.default_rng(13))
        ['d', 'e']
    """
    if n is None or n >= len(items):
        return items
    return [items[i] for i in sorted(rng.choice(len(items), size=n, replace=False))]


def counterargs_data(corpus, train_split: str = "training", val_split: str = "validation",
                     limit: int | None = None, val_limit: int | None = None, seed: int = SEED) -> PairData:
    """PairData from the counterargs-18 corpus: pairs of the splits, collections = every argument (epa); `limit` /
    `val_limit` keep a random subset of the pairs, and then the collection is only those pairs' texts."""
    rng = np.random.default_rng(seed)

    def take(split: str, n: int | None) -> tuple[list, list]:
        pairs = list(corpus.pairs(split))
        args = list(corpus.points(split)) + list(corpus.counters(split))
        if n is not None and n < len(pairs):
            pairs, args = random_subset(pairs, n, rng), []
        return pairs, args

    tr_pairs, tr_args = take(train_split, limit)
    va_pairs, va_args = take(val_split, val_limit)
    data = PairData.from_text_pairs([(p.text, c.text) for p, c in tr_pairs], [(p.text, c.text) for p, c in va_pairs],
                                    [a.text for a in tr_args], [a.text for a in va_args])
    data.info = {"train_split": train_split, "val_split": val_split, "train_pairs": len(tr_pairs),
                 "val_pairs": len(va_pairs), "train_candidates": len(data.train_collection),
                 "val_candidates": len(data.val_collection)}
    return data


def pairs_from_file(path: Path) -> list[tuple[str, str]]:
    """(point, counter) pairs of a training file (CSV/TSV/JSONL with columns point, counter); pairs whose counter is
    their point (which training would drop) are refused with their count and first row."""
    from argsim.schemas import CounterPairRecord

    rows = read_numbered_records(path, CounterPairRecord)
    if same := [row for row, r in rows if r["point"].strip() == r["counter"].strip()]:
        raise InputError(path, f"{len(same)} pair(s) have the point itself as the counter (a text is never its own "
                               "candidate, so they would be dropped)", row=same[0], column="counter")
    return [(str(r["point"]), str(r["counter"])) for _, r in rows]


@dataclass(frozen=True)
class PairSource:
    """Where a counter model's training pairs come from: counterargs-18 (training pairs, validated on the
    validation split in epa) or your own `train` / `val` files, where each file's other rows serve as negatives.

    Example:
        >>> PairSource(limit=200).limit
        200
    """

    train: Path | None = setting(None, "Your own training pairs: CSV/TSV/JSONL with columns point, counter "
                                       "(default: counterargs-18 training split).")
    val: Path | None = setting(None, "Your own validation pairs (point, counter).")
    limit: int | None = setting(None, "Train on a random subset of N pairs (quick runs).", min=1)
    val_limit: int | None = setting(None, "Validate on a random subset of N pairs.", min=1)

    def load(self, data_dir: str | Path | None = None, seed: int = SEED) -> PairData:
        """The pairs as `PairData` (`counterargs_data` of the corpus under `data_dir`, else the files)."""
        if self.train is None:
            from argsim.data.counterargs import load_counterargs

            return counterargs_data(load_counterargs(data_dir), limit=self.limit, val_limit=self.val_limit, seed=seed)
        if self.val is None:
            raise ArgsimError("--train needs --val (a file of validation pairs point, counter)")
        rng = np.random.default_rng(seed)  # the same seeded draw as counterargs-18's subsets
        data = PairData.from_text_pairs(random_subset(pairs_from_file(self.train), self.limit, rng),
                                        random_subset(pairs_from_file(self.val), self.val_limit, rng))
        data.info = {"train_file": str(self.train), "val_file": str(self.val), "train_pairs": len(data.train_pairs),
                     "val_pairs": len(data.val_pairs)}
        return data
