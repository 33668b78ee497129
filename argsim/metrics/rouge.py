"""ROUGE-1 for Japanese summaries, offline.

Units: `content` (lemmas of content words -- NOUN, PROPN, VERB, ADJ, NUM by GiNZA/Sudachi part of speech), `surface`
(every Sudachi token except punctuation and symbols) or `char` (characters except whitespace, punctuation and symbols).
Enumeration marks such as 〔1〕 are removed first. As in the official PoliInfo-2 scoring, a summary longer than its
character limit scores 0 (it does not count as a valid answer); the scores are macro-averaged over items.

The metric is pure: the `content` and `surface` units need a spaCy pipeline with Sudachi tokens (GiNZA), which
the caller passes in as `nlp` (`argsim.minutes.evaluate.rouge_nlp` gets the backend's GiNZA pipeline).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from argsim.io import pipe_docs
from argsim.metrics.record import Evaluation

UNITS = ("content", "surface", "char")
CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})
ENUM_RE = re.compile(r"〔\s*[0-9０-９一二三四五六七八九十]+\s*〕|[（(][0-9０-９]+[)）]|[①-⑳]")


@dataclass(frozen=True)
class RougeScore:
    recall: float
    precision: float
    f: float


def _is_symbol(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PSZC"


def char_units(text: str) -> list[str]:
    """Characters of the text, NFKC-normalised, without whitespace, punctuation and symbols."""
    text = unicodedata.normalize("NFKC", ENUM_RE.sub("", text))
    return [c for c in text if not _is_symbol(c)]


def token_units(texts: Sequence[str], nlp: Any, unit: str = "content") -> list[list[str]]:
    """Sudachi (GiNZA) tokens of each text: content-word lemmas, or all non-punctuation surfaces.

    `nlp` is a spaCy `Language` whose tokens carry `pos_`, `lemma_` and `orth_` (GiNZA's `ja_ginza`)."""
    out = []
    with nlp.select_pipes(enable=[]):
        for doc in pipe_docs(nlp, [ENUM_RE.sub("", t) for t in texts], batch_size=256):
            if unit == "content":
                out.append([t.lemma_ for t in doc if t.pos_ in CONTENT_POS])
            else:
                out.append([t.orth_ for t in doc if t.pos_ not in ("PUNCT", "SYM", "SPACE")
                            and not all(_is_symbol(c) for c in t.orth_)])
    return out


def rouge1(candidate: Sequence[str], reference: Sequence[str]) -> RougeScore:
    """ROUGE-1 of two unit lists: clipped unigram overlap over the reference (recall) / candidate (precision)."""
    c, r = Counter(candidate), Counter(reference)
    overlap = sum((c & r).values())
    recall = overlap / sum(r.values()) if r else 0.0
    precision = overlap / sum(c.values()) if c else 0.0
    f = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return RougeScore(recall, precision, f)


@dataclass(frozen=True)
class RougeReport:
    unit: str
    recall: float
    precision: float
    f: float
    n: int
    over_limit: int
    per_item: list[RougeScore]

    def evaluation(self, data: str | None = None) -> Evaluation:
        """The contract view: rouge1-recall (primary, the PoliInfo-2 measure), rouge1-precision, rouge1-f."""
        return Evaluation("rouge1", {"rouge1-recall": self.recall, "rouge1-precision": self.precision,
                                     "rouge1-f": self.f}, "rouge1-recall", data=data, n=self.n,
                          details={"unit": self.unit, "over_limit": self.over_limit})


def rouge1_corpus(candidates: Sequence[str], references: Sequence[str], limits: Sequence[int | None] | None = None,
                  unit: str = "content", nlp: Any = None) -> RougeReport:
    """Macro-averaged ROUGE-1; a candidate longer than its limit (characters) scores 0.

    `nlp`: the tokenizer pipeline the `content` and `surface` units need (see `token_units`)."""
    if len(candidates) != len(references) or (limits is not None and len(limits) != len(candidates)):
        raise ValueError("candidates, references and limits must have the same length")
    if unit not in UNITS:
        raise ValueError(f"unknown ROUGE unit '{unit}': choose one of {', '.join(UNITS)}")
    if unit != "char" and nlp is None:
        raise ValueError(f"ROUGE unit '{unit}' needs a tokenizer pipeline (nlp); only 'char' works without one")
    cand_units, ref_units = ([char_units(t) for t in texts] if unit == "char" else token_units(list(texts), nlp, unit)
                             for texts in (candidates, references))
    over = [limit is not None and len(c) > limit
            for c, limit in zip(candidates, limits if limits is not None else [None] * len(candidates), strict=True)]
    scores = [RougeScore(0.0, 0.0, 0.0) if o else rouge1(cu, ru)
              for o, cu, ru in zip(over, cand_units, ref_units, strict=True)]
    n = len(scores)
    means = [sum(getattr(s, attr) for s in scores) / n if n else 0.0 for attr in ("recall", "precision", "f")]
    return RougeReport(unit, *means, n, sum(over), scores)
