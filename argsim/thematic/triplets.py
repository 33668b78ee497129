"""Weakly labelled thematic triplets from article sections (triplets-sen, triplets-titles) and the sentence
clustering benchmark (SCB), built from Wikipedia articles the way Ein Dor et al. (2018) describe (docs/thematic.md
defines each in full; the `random-section` and `random-article` negatives are the paper's section 5 alternatives),
after the paper's section filters (section 3.1; docs/thematic.md, "Section filters"): which sections and sentences
of an article take part in triplets and clustering.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

from argsim.config import SEED
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


def _length_ok(sentence: str) -> bool:
    return MIN_TOKENS <= count_tokens(sentence) <= MAX_TOKENS


def kept_sections(article: Article, level: str = "top") -> list[KeptSection]:
    """The article's sections after the paper's filters (lead, Background and list sections dropped; sentences
    of min-max tokens), those left without any sentence dropped too. level 'top': a level-2 section absorbs its
    sub-sections (the paper's sections); 'all': every heading is a section of its own."""
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
            sec.paragraphs.append([s for s in para if _length_ok(s)])
            sec.openers.append(para[0] if para and _length_ok(para[0]) else None)
        if sec.sentences:
            kept.append(sec)
    return kept


NEGATIVES = ("adjacent", "random-section", "random-article")
SPLITS = ("train", "dev", "test")
MAX_PARAGRAPH_DISTANCE = 3


@dataclass
class PreparedArticle:
    title: str
    sections: list[KeptSection]


def split_articles(titles: list[str], seed: int = SEED) -> dict[str, list[str]]:
    """Seeded 80/10/10 split of distinct article titles (done before any filtering)."""
    distinct = sorted(set(titles))
    random.Random(seed).shuffle(distinct)
    n_train = round(len(distinct) * 0.8)
    n_dev = round(len(distinct) * 0.1)
    return {"train": distinct[:n_train], "dev": distinct[n_train:n_train + n_dev], "test": distinct[n_train + n_dev:]}


def prepare(articles: list[Article], level: str = "top", min_sections: int = MIN_SECTIONS
            ) -> list[PreparedArticle]:
    """Filtered sections of the articles that keep at least `min_sections` sections."""
    kept = ((a.title, kept_sections(a, level)) for a in articles)
    return [PreparedArticle(title, secs) for title, secs in kept if len(secs) >= min_sections]


def _openers(sec: KeptSection) -> list[tuple[int, str]]:
    return [(i, s) for i, s in enumerate(sec.openers) if s is not None]


def sentence_triplets(articles: list[PreparedArticle], negatives: str = "adjacent", seed: int = SEED) -> list[dict]:
    """triplets-sen records: anchor, positive, negative, article, section, negative_section, negative_article."""
    if negatives not in NEGATIVES:
        raise ValueError(f"negatives must be one of {NEGATIVES}, not {negatives!r}")
    rng = random.Random(seed)
    out = []
    for ai, art in enumerate(articles):
        pools = [_openers(s) for s in art.sections]
        for si, sec in enumerate(art.sections):
            neighbours = [j for j in (si - 1, si + 1) if 0 <= j < len(art.sections) and pools[j]]
            for (i, first), (j, second) in itertools.combinations(pools[si], 2):
                if j - i > MAX_PARAGRAPH_DISTANCE:
                    continue
                anchor, positive = (first, second) if rng.random() < 0.5 else (second, first)
                for nj in neighbours:
                    neg_art, neg_sec = art, nj
                    if negatives == "random-section":
                        neg_sec = rng.choice([j for j in range(len(art.sections)) if j != si and pools[j]])
                    elif negatives == "random-article":
                        if len(articles) < 2:
                            raise ValueError("random-article negatives need at least two articles")
                        neg_art = articles[rng.choice([k for k in range(len(articles)) if k != ai])]
                        neg_sec = rng.choice([j for j, s in enumerate(neg_art.sections) if _openers(s)])
                    pool = pools[neg_sec] if neg_art is art else _openers(neg_art.sections[neg_sec])
                    out.append({"anchor": anchor, "positive": positive, "negative": rng.choice(pool)[1],
                                "article": art.title, "section": sec.heading, "negative_article": neg_art.title,
                                "negative_section": neg_art.sections[neg_sec].heading})
    return out


def section_title(article_title: str, heading: str) -> str:
    """The paper's section title: article title + section title ("Julie Bishop Political career")."""
    return f"{article_title} {heading}"


def title_triplets(articles: list[PreparedArticle]) -> list[dict]:
    """triplets-titles records: the section's first sentence, its own title, a neighbouring section's title."""
    out = []
    for art in articles:
        for si, sec in enumerate(art.sections):
            ops = _openers(sec)
            if not ops or ops[0][0] != 0:
                continue  # the section's first sentence must itself pass the length filter
            for nj in (si - 1, si + 1):
                if 0 <= nj < len(art.sections):
                    out.append({"anchor": ops[0][1], "positive": section_title(art.title, sec.heading),
                                "negative": section_title(art.title, art.sections[nj].heading),
                                "article": art.title, "section": sec.heading,
                                "negative_article": art.title, "negative_section": art.sections[nj].heading})
    return out


def clustering_benchmark(articles: list[PreparedArticle]) -> list[dict]:
    """SCB rows (article, section, label, text): every kept sentence of articles with 5-12 sections."""
    return [{"article": art.title, "section": sec.heading, "label": label, "text": s}
            for art in articles if 5 <= len(art.sections) <= 12
            for label, sec in enumerate(art.sections) for s in sec.sentences]
