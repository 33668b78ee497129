"""The paper's section filters (Ein Dor et al. 2018, section 3.1; docs/thematic.md, "Section filters"): which
sections and sentences of an article take part in triplets and clustering."""

from __future__ import annotations

from dataclasses import dataclass, field

from argsim.data.wikipedia import Article, count_tokens

DROPPED_HEADINGS = frozenset({"background", "external links", "further reading", "references", "see also",
                              "notes", "citations", "authored books"})
MIN_TOKENS, MAX_TOKENS = 5, 50
MIN_SECTIONS = 5
LEVELS = ("top", "all")


@dataclass
class KeptSection:
    """One section that passed the filters: its heading and, per paragraph, the sentences of 5-50 tokens.

    `openers[i]` is the opening sentence of paragraph i when it has 5-50 tokens, else None (the paragraph is
    still counted, so paragraph distances are those of the article)."""

    heading: str
    paragraphs: list[list[str]] = field(default_factory=list)
    openers: list[str | None] = field(default_factory=list)

    @property
    def sentences(self) -> list[str]:
        return [s for p in self.paragraphs for s in p]


def _length_ok(sentence: str, min_tokens: int, max_tokens: int) -> bool:
    return min_tokens <= count_tokens(sentence) <= max_tokens


def kept_sections(article: Article, level: str = "top", min_tokens: int = MIN_TOKENS,
                  max_tokens: int = MAX_TOKENS) -> list[KeptSection]:
    """The article's sections after the paper's filters (lead, Background and list sections dropped; sentences
    of min-max tokens); sections left without any sentence are dropped too.

    level 'top': a level-2 section absorbs its sub-sections (the paper's sections); 'all': every heading is a
    section of its own."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    merged: list[tuple[str, list[list[str]]]] = []  # (heading, paragraphs as sentence lists) per section, lead included
    for sec in article.sections:
        paragraphs = [list(p.sentences) for p in sec.paragraphs]
        if level == "all" or sec.level <= 2 or not merged:
            merged.append((sec.heading, paragraphs))
        else:
            merged[-1][1].extend(paragraphs)
    kept = []
    for i, (heading, paragraphs) in enumerate(merged):
        if i == 0 or heading.strip().lower() in DROPPED_HEADINGS:
            continue
        sec = KeptSection(heading)
        for para in paragraphs:
            sec.paragraphs.append([s for s in para if _length_ok(s, min_tokens, max_tokens)])
            sec.openers.append(para[0] if para and _length_ok(para[0], min_tokens, max_tokens) else None)
        if sec.sentences:
            kept.append(sec)
    return kept

