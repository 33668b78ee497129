"""Bounds of a tree ensemble's raw margin over a box of inputs: the first stage of the exact XGBoost cascade.

An XGBoost model (gbtree, one output) scores x by its margin m(x) = base + sum_t leaf_t(x), a split on feature f
with cut v sending x left iff x_f < v (in float32). Over a box lo <= x <= hi a split passes left iff lo_f < v and
right iff hi_f >= v, so base + sum_t (the largest leaf of t reachable from the box) >= m(x) on the box: valid, not
tight (docs/counterargs-ltr.md, Speed). This is the interval evaluation that verifies tree ensembles: Kantchelian,
Tygar & Joseph (ICML 2016, "Evasion and hardening of tree ensemble classifiers"); Chen, Zhang, Si, Li, Boning &
Hsieh (NeurIPS 2019, "Robustness verification of tree-based models"); Törnblom & Nadjm-Tehrani (2019, abstract
interpretation over intervals). For millions of rows: QuickScorer's bit vectors (Lucchese, Nardini, Orlando,
Perego, Tonellotto & Venturini, SIGIR 2015) extended from a point to a box (`_LeafMasks`): the bits left set are
the reachable leaves, numbered by decreasing value, so the largest is a word's lowest set bit.

Readings and choices:
- Parsing: XGBoost's own JSON model (`Booster.save_raw("json")`, what `argsim train ltr` saves as `xgboost.json`).
  `base_score` is stored on the probability scale for the logistic objectives (margin = logit(base_score)), as a
  margin otherwise; XGBoost >= 3 writes it as '[v]'. Refused: boosters other than gbtree (dart weighs its trees),
  several outputs (multi-class), categorical splits, and a `best_iteration` before the last tree (its predictions
  would use fewer trees).
- Missing values: XGBoost sends NaN by `default_left`; the features bounded here are never NaN, so a NaN in
  lo/hi is an error rather than a silent branch.
- Leaves are summed in float64; XGBoost sums float32, so the margin it predicts may differ from the exact sum
  by rounding. `TreeEnsemble.rounding_slack` bounds that difference; a caller that compares a bound with
  XGBoost's own prediction adds it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

#: words (rows x 64-leaf words) processed at once, to bound the memory of one pass
CHUNK_WORDS = 1 << 20


@dataclass
class TreeEnsemble:
    """Flat arrays of every node of every tree (node ids are global: tree t's nodes follow tree t - 1's)."""

    left: np.ndarray  # int32, -1 at a leaf
    right: np.ndarray  # int32, -1 at a leaf
    feature: np.ndarray  # int32 split feature (0 at a leaf)
    threshold: np.ndarray  # float32 cut (x < cut goes left; 0 at a leaf)
    value: np.ndarray  # float64 leaf value (0 at an inner node)
    roots: np.ndarray  # int32 root node of each tree, increasing
    base_margin: float
    n_features: int
    objective: str = "binary:logistic"

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    @cached_property
    def masks(self) -> _LeafMasks:
        """The bit-vector tables of the bound, built once and kept."""
        return _LeafMasks(self)

    def rounding_slack(self) -> float:
        """An upper bound of |XGBoost's float32 sum of base and leaves - the exact sum|, for any input:
        n + 1 terms of magnitude at most S = |base| + sum_t max|leaf_t|, each addition off by at most 2^-24 of a
        partial sum <= S (doubled, and a little more, for safety)."""
        sizes = np.diff(np.append(self.roots, len(self.left)))
        per_tree = np.maximum.reduceat(np.where(self.left < 0, np.abs(self.value), 0.0), self.roots) \
            if len(self.roots) else np.zeros(0)
        total = abs(self.base_margin) + float(per_tree[sizes > 0].sum())
        return 2.0 * (self.n_trees + 2) * 2.0 ** -24 * total + 1e-9


def parse_xgboost(model: Any) -> TreeEnsemble:
    """A `TreeEnsemble` from an XGBoost booster, its JSON text/bytes (`save_raw("json")`, a saved `.json` file's
    content) or that JSON as a dict."""
    if hasattr(model, "save_raw"):
        model = model.save_raw("json")
    if isinstance(model, (bytes, bytearray, str)):
        model = json.loads(model)
    learner = model["learner"]
    booster = learner["gradient_booster"]
    if booster.get("name") != "gbtree":
        raise ValueError(f"only gbtree boosters are supported, not {booster.get('name')}")
    params = learner["learner_model_param"]
    if int(params.get("num_target", "1")) != 1 or int(params.get("num_class", "0")) > 1:
        raise ValueError("only single-output models are supported")
    trees = booster["model"]["trees"]
    best = learner.get("attributes", {}).get("best_iteration")
    rounds = len(booster["model"].get("iteration_indptr", [0] * (len(trees) + 1))) - 1
    if best is not None and int(best) + 1 < rounds:
        raise ValueError(f"the model's best_iteration ({best}) ends before its last tree: predictions use fewer trees")
    objective = learner["objective"]["name"]
    base = float(str(params["base_score"]).strip("[]"))
    base_margin = float(np.log(base) - np.log1p(-base)) if objective in ("binary:logistic", "reg:logistic") else base
    if any(any(tree.get("split_type", [])) or tree.get("categories_nodes") for tree in trees):
        raise ValueError("categorical splits are not supported")
    sizes = [len(tree["left_children"]) for tree in trees]
    roots = np.cumsum([0, *sizes[:-1]])
    lc, rc, split = (np.concatenate([np.asarray(tree[k], dtype=np.int64) for tree in trees])
                     for k in ("left_children", "right_children", "split_indices"))
    cond = np.concatenate([np.asarray(tree["split_conditions"], dtype=np.float64) for tree in trees])
    leaf, offset = lc < 0, np.repeat(roots, sizes)  # node ids made global: tree t's after tree t - 1's
    return TreeEnsemble(left=np.where(leaf, -1, lc + offset).astype(np.int32),
                        right=np.where(leaf, -1, rc + offset).astype(np.int32),
                        feature=np.where(leaf, 0, split).astype(np.int32),
                        threshold=np.where(leaf, 0.0, cond).astype(np.float32),
                        value=np.where(leaf, cond.astype(np.float32).astype(np.float64), 0.0),
                        roots=roots.astype(np.int32), base_margin=base_margin,
                        n_features=int(params["num_feature"]), objective=objective)


ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)


class _LeafMasks:
    """QuickScorer's bit vectors: per tree, its leaves sorted by decreasing value in 64-bit words; per feature and
    cut position, the leaves a box can no longer reach."""

    def __init__(self, trees: TreeEnsemble) -> None:
        left, right, n_trees = trees.left, trees.right, trees.n_trees
        sizes = np.diff(np.append(trees.roots, len(left)))
        tree_of = np.repeat(np.arange(n_trees), sizes)
        leaves = np.flatnonzero(left < 0)
        leaves = leaves[np.lexsort((-trees.value[leaves], tree_of[leaves]))]  # by tree, then by decreasing value
        counts = np.bincount(tree_of[leaves], minlength=n_trees)
        rank = np.arange(len(leaves)) - np.repeat(np.cumsum(counts) - counts, counts)
        words = (counts + 63) // 64
        self.word_start = np.cumsum(words) - words
        self.n_words = int(words.sum())
        self.multiword = bool(np.any(words > 1))
        leaf_word = self.word_start[tree_of[leaves]] + rank // 64
        leaf_bit = np.left_shift(np.uint64(1), (rank % 64).astype(np.uint64))
        self.values = np.full((self.n_words, 65), -np.inf)  # column 64: an empty word
        self.values[leaf_word, rank % 64] = trees.value[leaves]
        self.flat_offsets = np.arange(self.n_words, dtype=np.int64) * 65
        self.base = trees.base_margin
        # every (ancestor, side) of every leaf: the leaf is cut off when the box cannot take that side
        inner = np.flatnonzero(left >= 0)
        parent = np.full(len(left), -1, dtype=np.int64)
        parent[left[inner]] = inner
        parent[right[inner]] = inner
        anc, on_left, which = [np.zeros(0, np.int64)], [np.zeros(0, bool)], [np.zeros(0, np.int64)]
        cur, lid = leaves.astype(np.int64), np.arange(len(leaves))
        while len(cur):
            up = parent[cur]
            ok = up >= 0
            cur, lid, up = cur[ok], lid[ok], up[ok]
            anc.append(up)
            on_left.append(left[up] == cur)
            which.append(lid)
            cur = up
        anc_a, left_a, which_a = (np.concatenate(x) for x in (anc, on_left, which))
        self.features = np.unique(trees.feature[inner])
        self.cuts: dict[int, np.ndarray] = {}
        self._records: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        for f in self.features:
            self.cuts[int(f)] = cuts = np.unique(trees.threshold[inner[trees.feature[inner] == f]])
            sel = trees.feature[anc_a] == f
            self._records[int(f)] = (np.searchsorted(cuts, trees.threshold[anc_a[sel]]), left_a[sel],
                                     leaf_word[which_a[sel]], ~leaf_bit[which_a[sel]])
        self._tables: dict[tuple[int, str], np.ndarray] = {}

    def table(self, f: int, kind: str) -> np.ndarray:
        """(cuts + 1, words) masks indexed by b = the number of cuts <= the value: 'lo' (b of lo) clears the left
        subtrees of the splits whose cut <= lo, 'hi' (b of hi) the right subtrees of those whose cut > hi, and
        'both' is their AND, for an exact value (lo == hi)."""
        key = (f, kind)
        if key not in self._tables:
            if kind == "both":
                self._tables[key] = self.table(f, "lo") & self.table(f, "hi")
            else:
                pos, on_left, word, keep = self._records[f]
                m = len(self.cuts[f])
                grouped = np.full((m, self.n_words), ALL_BITS)
                sel = on_left if kind == "lo" else ~on_left
                np.bitwise_and.at(grouped, (pos[sel], word[sel]), keep[sel])
                out = np.full((m + 1, self.n_words), ALL_BITS)
                if m and kind == "lo":  # left unreachable at every split whose cut <= lo: cuts 0 .. b-1
                    out[1:] = np.bitwise_and.accumulate(grouped, axis=0)
                elif m:  # right unreachable at every split whose cut > hi: cuts b .. m-1
                    out[:m] = np.bitwise_and.accumulate(grouped[::-1], axis=0)[::-1]
                self._tables[key] = out
        return self._tables[key]

    def prepare(self, interval: Any = ()) -> _LeafMasks:
        """Build the tables now (e.g. before the object is shipped to workers): 'lo' and 'hi' for the features
        that will be intervals, 'both' for the others."""
        interval = {int(f) for f in interval}
        for f in self.features:
            for kind in (("lo", "hi") if int(f) in interval else ("both",)):
                self.table(int(f), kind)
        return self

    def upper(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        acc = np.full((len(lo), self.n_words), ALL_BITS)
        tmp = np.empty_like(acc)
        for f in self.features:
            f = int(f)
            cuts = self.cuts[f]
            at_lo = np.searchsorted(cuts, lo[:, f], side="right")
            if np.array_equal(lo[:, f], hi[:, f]) and ((f, "both") in self._tables or (f, "lo") not in self._tables):
                looks = [("both", at_lo)]
            else:
                looks = [("lo", at_lo), ("hi", np.searchsorted(cuts, hi[:, f], side="right"))]
            for kind, at in looks:
                np.take(self.table(f, kind), at, axis=0, out=tmp)
                acc &= tmp
        # the first reachable leaf of each word is its largest: its bit is the lowest set bit
        first = np.bitwise_count((acc & (~acc + np.uint64(1))) - np.uint64(1))  # 64 for an empty word
        best = self.values.ravel()[self.flat_offsets + first.astype(np.int64)]
        if self.multiword:
            best = np.maximum.reduceat(best, self.word_start, axis=1)
        return self.base + best.sum(axis=1)


def margin_upper_bound(trees: TreeEnsemble, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """base + sum over trees of the largest leaf reachable from the box [lo, hi] for each of the N rows (in chunks
    that bound the memory of one pass); lo, hi: (N, n_features) model inputs, cast to float32 as XGBoost does.
    With lo == hi it is the model's margin (up to float32 rounding, see `TreeEnsemble.rounding_slack`)."""
    lo = np.atleast_2d(np.asarray(lo, dtype=np.float32))
    hi = np.atleast_2d(np.asarray(hi, dtype=np.float32))
    if lo.shape != hi.shape or lo.shape[1] < trees.n_features:
        raise ValueError(f"lo and hi must both be (rows, >= {trees.n_features}) arrays, got {lo.shape} and {hi.shape}")
    if np.isnan(lo).any() or np.isnan(hi).any():
        raise ValueError("NaN in the box: missing values (XGBoost's default direction) are not supported")
    if np.any(lo > hi):
        raise ValueError("lo > hi in the box")
    out = np.empty(len(lo))
    step = max(1, CHUNK_WORDS // max(trees.masks.n_words, 1))
    for start in range(0, len(lo), step):
        out[start:start + step] = trees.masks.upper(lo[start:start + step], hi[start:start + step])
    return out


def margins(trees: TreeEnsemble, x: np.ndarray) -> np.ndarray:
    """The margin at the points x (exact float64 sum of their leaves)."""
    return margin_upper_bound(trees, x, x)
