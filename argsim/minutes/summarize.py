"""Summarising minutes items with EmbedRank++ (Eq. 6) or baselines (lead, random).

An item is a list of sentences with a main topic, a subtopic and a character budget; items come from the
NTCIR-14 summarization files, the PoliInfo-2 segmented items mapped onto them, or a user's JSON/CSV.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from argsim.config import SEED, RunConfig
from argsim.errors import ArgsimError, InputError, examples, warn
from argsim.io import read_numbered_records, write_json
from argsim.minutes.mmr import MMRWeights, _greedy, compose, key_size, select_embedrank, select_paper
from argsim.minutes.text import strip_noise, utterance_sentences
from argsim.options import check_settings, setting

ITEM_SETS = ("ntcir14", "poliinfo2")


@dataclass
class MinutesItem:
    id: str
    sentences: list[str]
    main_topic: str = ""
    sub_topic: str = ""
    budget: int = 100
    gold: str = ""
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SummarizeOptions(MMRWeights):
    """How `summarize_items` picks sentences: the Eq. 6 weights (`MMRWeights`: mmr_weight, m, s) and the rest; the
    options of `argsim summarize minutes` and the `options` of `argsim.summarize_minutes`.

    Args:
        mmr_weight, m, s: the Eq. 6 weights k, m and s of the MMR part, the topic and the subtopic similarity
            (`MMRWeights`).
        method: embedrank-paper (Eq. 6), embedrank (normalised MMR with `beta`), lead or random.
        beta: embedrank's relevance/diversity trade-off.
        chars_per_key: the key size is the budget divided by this (Eq. 7).
        cap: fit (skip sentences that overflow the budget) or truncate (cut the text).
        seed: the random baseline's seed.

    Example:
        >>> SummarizeOptions(method="lead").weights
        MMRWeights(mmr_weight=0.2, m=0.3, s=0.5)
    """

    method: Literal["embedrank-paper", "embedrank", "lead", "random"] = setting(
        "embedrank-paper", "embedrank-paper (Eq. 6), embedrank (normalised MMR, beta), lead or random.")
    beta: float = setting(0.5, "embedrank: relevance/diversity trade-off.", min=0, max=1)
    chars_per_key: int = setting(50, "Key size = budget / this (Eq. 7).", min=1)
    cap: Literal["fit", "truncate"] = setting("fit", "fit: skip sentences that overflow the budget; truncate: cut "
                                                     "the text.")
    seed: int = setting(SEED, "Seed of the random baseline (the global --seed).", cli=False)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.method == "embedrank-paper" and not (self.mmr_weight or self.m or self.s):
            raise ArgsimError("the Eq. 6 weights --mmr-weight, --m and --s (mmr_weight, m, s) are all 0: every "
                              "sentence would score 0 and each summary would be the item's first sentences; make "
                              "one positive, or choose --method lead")

    @property
    def weights(self) -> MMRWeights:
        """The Eq. 6 weights alone."""
        return MMRWeights(self.mmr_weight, self.m, self.s)


def _clean_sentences(sentences: Sequence[str]) -> list[str]:
    return [s for s in (strip_noise(x) for x in sentences) if s]


def topic_text(raw: str) -> str:
    """MainTopic headlines are `<br>`-joined; join them into one text."""
    return raw.replace("<br>", "。").strip()


def dataset_items(folder: Path, which: str = "ntcir14") -> list[MinutesItem]:
    """`ntcir14`: the 740 NTCIR-14 items with Source and gold summary; `poliinfo2`: the PoliInfo-2
    segmented questions/answers whose spans the NTCIR-14 Sources cover exactly."""
    from argsim.data import poliinfo as P

    if which == "ntcir14":
        return [MinutesItem(it.id, _clean_sentences(it.sentences), topic_text(it.main_topic), it.sub_topic,
                            it.length, it.summary, {"speaker": it.speaker, "date": it.date, "file": it.source_file})
                for it in P.ntcir14_gold_items(folder)]
    if which == "poliinfo2":
        return [MinutesItem(f"{m.item_id}:{m.part}", _clean_sentences(m.sentences), topic_text(m.main_topic),
                            m.sub_topic, m.length, m.summary, {"speaker": m.speaker, "exact": m.exact})
                for m in P.map_dialog_items(folder) if m.exact]
    raise InputError(None, f"unknown item set '{which}': choose one of {', '.join(ITEM_SETS)}")


def user_items(path: Path, default_budget: int = 100) -> list[MinutesItem]:
    """A user's utterances (CSV/TSV/JSONL/JSON; `argsim.schemas.UtteranceRecord`): rows with the same id form one
    item, in file order, and must agree on topic, subtopic, length and summary (a later row may leave them blank);
    each text is cleaned and split into sentences."""
    from argsim.schemas import UtteranceRecord

    rows = read_numbered_records(path, UtteranceRecord)
    items: dict[str, MinutesItem] = {}
    first: dict[str, tuple[int, dict]] = {}
    for r, row in rows:
        key = row["id"]
        if key not in items:
            items[key] = MinutesItem(key, [], topic_text(row["topic"]), row["subtopic"],
                                     row.get("length") or default_budget, row.get("summary") or "")
            first[key] = (r, row)
        else:  # one item, one context: rows that disagree would silently lose all but the first value
            r0, row0 = first[key]
            for col in ("topic", "subtopic", "length", "summary"):
                a, b = str(row0.get(col) or "").strip(), str(row.get(col) or "").strip()
                if b and a != b:
                    raise InputError(path, f"item '{key}' has {col} {b!r} here but {a!r} in row {r0}; rows of "
                                           "one item must agree", row=r, column=col)
        items[key].sentences += utterance_sentences(row["text"])
    if empty := [k for k, it in items.items() if not it.sentences]:
        raise InputError(path, f"item '{empty[0]}' has no text after cleaning")
    return list(items.values())


def summarize_items(items: Sequence[MinutesItem], encoder=None, options: SummarizeOptions = SummarizeOptions(),
                    quiet: bool = False) -> list[dict]:
    """Summarise every item (`quiet`: no progress bar): one record per item with the selected sentences, their
    scores and the summary."""
    from argsim.progress import track

    vec_of: dict[str, np.ndarray] = {}
    if options.method.startswith("embedrank"):
        texts = sorted(({s for it in items for s in it.sentences} | {it.main_topic for it in items}
                        | {it.sub_topic for it in items}) - {""})
        vecs = encoder.encode(texts, description="embedding sentences and topics")
        vec_of = dict(zip(texts, vecs, strict=True))
    rng = np.random.default_rng(options.seed)
    out = []
    cut: list[MinutesItem] = []  # items whose summary is a sentence cut at the budget (no whole sentence fitted)
    for it in track(items, "summarising", enabled=not quiet):
        n = key_size(it.budget, options.chars_per_key)
        lengths = [len(s) for s in it.sentences]
        budget = it.budget if options.cap == "fit" else None
        if options.method in ("lead", "random"):  # the earliest sentences (of a random order) that fit the budget
            rank = np.argsort(rng.permutation(len(lengths))) if options.method == "random" else range(len(lengths))
            chosen = [(i, 0.0) for i, _ in _greedy(len(lengths), n, lambda i, sel, rank=rank: -rank[i], lengths,
                                                    budget)]
        else:
            chosen = _embedrank(it, vec_of, options, n, lengths, budget)
        fallback = None
        if not chosen and it.sentences:
            fallback = 0 if options.method in ("lead", "random") else _embedrank(it, vec_of, options, 1)[0][0]
        summary = compose(it.sentences, chosen, it.budget, fallback)
        if fallback is not None and len(it.sentences[fallback]) > it.budget:
            cut.append(it)
        out.append({"id": it.id, "budget": it.budget, "key_size": n, "summary": summary, "gold": it.gold,
                    "selected": [{"index": i, "sentence": it.sentences[i], "score": round(sc, 6), "rank": r + 1}
                                 for r, (i, sc) in enumerate(chosen)],
                    "n_sentences": len(it.sentences), **({"meta": it.meta} if it.meta else {})})
    if cut:  # English text is one long "sentence" to the Japanese sentence splitter: its summary is cut mid-word
        unsplit = [it for it in cut if not any(c in s for s in it.sentences for c in "。！？")]
        hint = (f"; {len(unsplit)} of them hold no Japanese sentence end (。！？): the summarizer splits Japanese "
                "sentences only, so such text is cut mid-word" if unsplit else "")
        warn(f"{len(cut)} of {len(items)} items: no whole sentence fits the budget, so the summary is the best "
             f"sentence cut at the budget ({examples([it.id for it in cut])}){hint}")
    return out


def _embedrank(it: MinutesItem, vec_of: dict, options: SummarizeOptions, n: int, lengths: Sequence[int] | None = None,
               budget: int | None = None) -> list[tuple[int, float]]:
    """The EmbedRank selection of `options.method` (the topics' vectors: None for an empty topic)."""
    sv = np.stack([vec_of[s] for s in it.sentences]) if it.sentences else np.zeros((0, 1))
    if options.method == "embedrank-paper":
        return select_paper(sv, n, vec_of.get(it.main_topic), vec_of.get(it.sub_topic), options.weights,
                            lengths=lengths, budget=budget)
    return select_embedrank(sv, n, options.beta, lengths=lengths, budget=budget)


def run_summaries(items: Sequence[MinutesItem], model: str = "ginza", options: SummarizeOptions = SummarizeOptions(),
                  config=None) -> tuple[list[dict], float]:
    """`summarize_items` with the backend encoder `model` (only the EmbedRank methods embed); the records and
    the seconds the summarising took (`argsim summarize minutes` and `argsim.summarize_minutes` call this)."""
    from argsim.backend import get_encoder
    from argsim.measure import timed

    config = config or RunConfig()
    enc = get_encoder(model, config=config) if options.method.startswith("embedrank") else None
    with timed() as t:
        results = summarize_items(items, enc, options, quiet=config.quiet)
    return results, t["seconds"]


def summarize_to_file(out: Path, model: str, options: SummarizeOptions, config: RunConfig, items: str = "ntcir14",
                      input: Path | None = None, length: int = 100,
                      limit: int | None = None) -> tuple[list[dict], float]:
    """`argsim summarize minutes`: the dataset's `items` (or the user's `input` rows, `length` the budget of rows
    without one; the first `limit`) summarised by `run_summaries` (seeded by the run's seed) and written to `out` as
    JSON with the method, model, items, options and seconds. Returns (the summaries, seconds)."""
    from argsim.data.catalog import dataset_dir

    its = user_items(input, length) if input else dataset_items(dataset_dir("poliinfo", config.data_dir), items)
    options = replace(options, seed=config.seed)
    results, seconds = run_summaries(its[:limit] if limit else its, model, options, config)
    write_json(out, {"method": options.method, "model": model if options.method.startswith("embedrank") else None,
                     "items": input and str(input) or items,
                     "options": {k: v for k, v in asdict(options).items() if k not in ("method", "seed")},
                     "seconds": seconds, "summaries": results})
    return results, seconds
