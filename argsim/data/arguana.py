"""ArguAna as open-collection retrieval (Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation
of Information Retrieval Models", NeurIPS Datasets and Benchmarks 2021), rebuilt from counterargs-18.

BEIR's (and MTEB's) ArguAna turns the best-counterargument task of Wachsmuth, Syed & Stein (ACL 2018) into retrieval
over one collection (the 1,406 test points are the queries, a point's own counter its one relevant document; ids and
texts are BEIR's, `beir_id` and `beir_text`); docs/arguana.md describes it and compares the replica with BEIR's data
figure by figure.

BEIR does not document which arguments enter its 8,674 documents. This near-replica takes (the reading chosen):
every test counter (each is a query's relevant document), then one document per distinct text among all other
points and counters (test first, then training, then validation, each in path order; a text that equals a test
counter's text is not repeated): 8,676 documents. The five test points without a counter keep a qrel naming their
absent `b` id, as in BEIR, and score 0 for every model.

`split="validation"` is the same construction on training + validation for model selection, without any text that
occurs in the test split (a validation point whose text or whose counter's text is a test text is no query, nor is
a point without a counter).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from argsim.data.catalog import dataset_dir
from argsim.data.counterargs import ARGS_DIR, Argument, CounterCorpus, load_counterargs_folder

ARGUANA_SPLITS = ("test", "validation")
#: BEIR's ArguAna counts (the figures the replica is compared with)
BEIR_COUNTS = {"queries": 1406, "documents": 8674, "qrels": 1406, "missing_relevant": 5}
_ORDER = {"test": 0, "training": 1, "validation": 2}


def beir_id(arg: Argument) -> str:
    """BEIR's id of an argument: `{split}-{theme}-{debate initials}-{side}{NN}{a|b}`.

    Example:
        >>> from argsim.data.counterargs import Argument
        >>> a = Argument("x", "test", "sport", "house-would-ban-boxing", "con", "point", 3, "T", "B", "T\\n\\nB")
        >>> beir_id(a)
        'test-sport-hwbb-con03a'
    """
    initials = "".join(word[0] for word in arg.debate.split("-") if word)
    return f"{arg.split}-{arg.theme}-{initials}-{arg.stance}{arg.number:02d}{'a' if arg.kind == 'point' else 'b'}"


def beir_text(arg: Argument) -> str:
    """BEIR's text of an argument: the file's text (stripped) with every line break turned into a space."""
    return arg.text.replace("\r\n", "\n").replace("\n", " ")


@dataclass(frozen=True)
class ArguAnaData:
    """Queries, corpus and qrels of one split of the ArguAna replica (every mapping in a fixed, stable order).

    Attributes:
        split: "test" (the BEIR replica) or "validation" (for model selection; never a test text).
        queries: query id -> text (a point; its id is also a corpus id unless its text was kept under another id).
        corpus: document id -> text.
        qrels: query id -> {relevant document id: 1} (the point's own counter; it may be absent from the corpus,
            as for the five test points without a counter).
    """

    split: str
    queries: dict[str, str]
    corpus: dict[str, str]
    qrels: dict[str, dict[str, int]]

    def head(self, limit: int | None) -> ArguAnaData:
        """The first `limit` queries (and their qrels) with the whole corpus; None: all."""
        if limit is None or limit >= len(self.queries):
            return self
        keep = list(self.queries)[:limit]
        return ArguAnaData(self.split, {q: self.queries[q] for q in keep}, self.corpus,
                           {q: self.qrels[q] for q in keep})

    @property
    def missing_relevant(self) -> list[str]:
        """Relevant document ids that are not in the corpus (in BEIR: the counters of five test points)."""
        return [d for rel in self.qrels.values() for d in rel if d not in self.corpus]


def _collection(args: Iterable[Argument], kept_first: list[Argument], banned: set[str]) -> dict[str, str]:
    """`kept_first` always, then one argument per distinct text not yet seen and not in `banned`."""
    corpus = {beir_id(a): beir_text(a) for a in kept_first}
    seen = set(corpus.values()) | banned
    for a in sorted(args, key=lambda a: (_ORDER[a.split], a.id)):
        text = beir_text(a)
        if text not in seen:
            seen.add(text)
            corpus[beir_id(a)] = text
    return corpus


def build_arguana(corpus: CounterCorpus, split: str = "test") -> ArguAnaData:
    """The replica's `split` built from a loaded counterargs-18 corpus (any subset of it works: tests pass a few
    debates).

    Args:
        corpus: counterargs-18 arguments (`argsim.data.counterargs.load_counterargs`).
        split: "test" (BEIR's construction) or "validation" (the same on training + validation, no test text).

    Returns:
        The `ArguAnaData` of the split.

    Example:
        >>> from argsim.data.counterargs import load_counterargs
        >>> build_arguana(load_counterargs(), "validation").split                  # doctest: +SKIP
        'validation'
    """
    if split not in ARGUANA_SPLITS:
        raise ValueError(f"unknown ArguAna split '{split}': choose one of {', '.join(ARGUANA_SPLITS)}")
    test = split == "test"
    banned = set() if test else {beir_text(a) for a in corpus.split("test")}  # validation: never a test text
    pool = [a for a in corpus.arguments if a.split in (_ORDER if test else ("training", "validation"))]
    counters = [a for a in corpus.counters(split) if beir_text(a) not in banned]
    docs = _collection([a for a in pool if not (a.split == split and a.kind == "counter")], counters, banned)
    points = corpus.all_points(split)
    if not test:
        points = [p for p in points if beir_text(p) not in banned and (c := corpus.true_counter(p)) is not None
                  and beir_id(c) in docs]
    queries = {beir_id(p): beir_text(p) for p in points}
    return ArguAnaData(split, queries, docs, {beir_id(p): {beir_id(p)[:-1] + "b": 1} for p in points})


def load_arguana(split: str = "test", data_dir: str | Path | None = None,
                 themes: Iterable[str] | None = None) -> ArguAnaData:
    """Load the replica's `split` from `<data_dir>/counterargs18` (None: `$ARGSIM_DATA` or the data folder).

    Args:
        split: "test" (the BEIR replica: 1,406 queries, 8,676 documents) or "validation" (queries = validation
            points, corpus = training + validation arguments without any test text).
        data_dir: the dataset root.
        themes: keep only these idebate themes (a small replica for quick checks; None: all 15).

    Returns:
        The `ArguAnaData` of the split.

    Example:
        >>> data = load_arguana("test", themes=["sport"])                         # doctest: +SKIP
        >>> sorted(data.qrels)[0]                                                  # doctest: +SKIP
        'test-sport-...-con01a'
    """
    if split not in ARGUANA_SPLITS:  # before reading the corpus (build_arguana checks it again for its own callers)
        raise ValueError(f"unknown ArguAna split '{split}': choose one of {', '.join(ARGUANA_SPLITS)}")
    corpus = _cached_corpus(dataset_dir("counterargs18", data_dir) / ARGS_DIR)
    if themes is not None:
        wanted = set(themes)
        corpus = CounterCorpus([a for a in corpus.arguments if a.theme in wanted], root=corpus.root)
    return build_arguana(corpus, split)


#: counterargs-18's arguments, read once per process and folder (13,532 small files)
_cached_corpus = cache(load_counterargs_folder)
