"""Wikipedia articles in raw wikitext (IBM Debater claim-stance release): markup stripping and section structure.

`parse_article(wikitext, title)` turns one raw article into an `Article`: a lead section (level 0, heading "")
followed by one `Section` per heading (any level), each with its paragraphs, and each paragraph split into
sentences. Stripped: HTML comments, `<ref>` notes, templates `{{...}}` (nested), tables `{|...|}`, files, images
and category links, external-link brackets, bold/italic quotes, HTML tags and entities, list/table lines, and the
stray " ." this dump appends to headings and paragraph ends. One non-empty line is one paragraph (the dump keeps
editors' one-paragraph-per-line layout but drops some of the blank lines between paragraphs).

`load_articles(folder)` parses the 1,056 files, keeps the 1,019 distinct titles (duplicates are byte-identical),
and caches the parse in the argsim cache folder.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import os
import re
import statistics
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from argsim.config import default_cache_dir
from argsim.data.catalog import DatasetInfo, Stat, register_dataset
from argsim.errors import InputError
from argsim.io import atomic_path, check_input_file, pipe_docs, read_records, read_text_file
from argsim.progress import track
from argsim.schemas import ArticleIndexRecord

ROOT = "ibm_claim_stance_articles"
PARSER_VERSION = "3"


@dataclass
class Paragraph:
    sentences: list[str]


@dataclass
class Section:
    heading: str
    level: int  # 0 = lead (text before the first heading), 2 = "==", 3 = "===", ...
    paragraphs: list[Paragraph] = field(default_factory=list)

    @property
    def sentences(self) -> list[str]:
        return [s for p in self.paragraphs for s in p.sentences]


@dataclass
class Article:
    title: str
    sections: list[Section]
    source: str = ""

    @classmethod
    def from_dict(cls, d: dict) -> Article:
        return cls(d["title"], [Section(s["heading"], s["level"], [Paragraph(p["sentences"]) for p in s["paragraphs"]])
                                for s in d["sections"]], d.get("source", ""))


_HEADING_COUNT_RE = re.compile(r"^(={2,6})\s*(.+?)\s*\1")
HEADING_RE = re.compile(r"^(={2,6})\s*(.+?)\s*\1\s*(?:\.\s*)?$")
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF_RE = re.compile(r"<ref\b[^>/]*/>|<ref\b[^>]*>.*?</ref\s*>", re.S | re.I)
_DROP_TAGS_RE = re.compile(r"<(gallery|math|timeline|imagemap|score|syntaxhighlight|source|pre|references|noinclude)"
                           r"\b[^>]*>.*?</\1\s*>", re.S | re.I)
_TEMPLATE_RE = re.compile(r"\{\{(?:(?!\{\{|\}\}).)*\}\}", re.S)
_TABLE_RE = re.compile(r"\{\|(?:(?!\{\|).)*?\|\}", re.S)
_LINK_RE = re.compile(r"\[\[([^\[\]]*)\]\]")
_EXTLINK_RE = re.compile(r"\[(?:https?:)?//[^\s\]]+\s*([^\]]*)\]")
_URL_RE = re.compile(r"https?://\S+")
_TAG_RE = re.compile(r"</?[a-zA-Z][^>]*>")
_DROP_LINK_PREFIXES = ("file:", "image:", "category:", "media:", "wikipedia:", "wp:", "template:", "help:",
                       "portal:", "user:", "special:", "wikt:")
_INTERWIKI_RE = re.compile(r"^:?[a-z]{2,3}(?:-[a-z]+)?:")
_LIST_LINE_RE = re.compile(r"^\s*[*#:;|!]")


def _resolve_link(match: re.Match) -> str:
    target, _, label = match.group(1).partition("|")
    t = target.strip().lower()
    if t.startswith(_DROP_LINK_PREFIXES) or _INTERWIKI_RE.match(t):
        return ""
    return label.rsplit("|", 1)[-1] if label else target.lstrip(":").split("#")[0] or target


def strip_markup(text: str) -> str:
    """Remove wiki markup from a block of wikitext, keeping line structure (headings stay as `== x ==`)."""
    for pattern in (_COMMENT_RE, _REF_RE, _DROP_TAGS_RE):
        text = pattern.sub("", text)
    for pattern, repl in ((_TEMPLATE_RE, ""), (_TABLE_RE, ""), (_LINK_RE, _resolve_link)):
        n = 1
        while n:  # until nothing matches: nested constructs go innermost first
            text, n = pattern.subn(repl, text)
    text = _EXTLINK_RE.sub(lambda m: m.group(1), text)
    text = _URL_RE.sub("", text)
    text = text.replace("'''", "").replace("''", "")
    text = _TAG_RE.sub("", text)
    text = re.sub(r"__[A-Z]+__", "", text)
    return html.unescape(text).replace("\u00a0", " ")


def clean_line(line: str) -> str:
    """Tidy one stripped line: the dump's trailing " .", empty brackets, spaces before punctuation."""
    line = re.sub(r"\s+", " ", line).strip()
    line = re.sub(r"(?:\s\.)+$", "", line).strip()  # stray " ." appended to paragraph ends
    line = re.sub(r"\(\s*[,;]?\s*\)", "", line)
    line = re.sub(r"\s+([,.;:!?)])", r"\1", line)
    line = re.sub(r"\(\s+", "(", line)
    return re.sub(r"\s{2,}", " ", line).strip()


@lru_cache(maxsize=1)
def _nlp():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(paragraphs: list[str]) -> list[list[str]]:
    """Sentences of each paragraph (spaCy's rule-based English sentencizer; OpenNLP in the paper)."""
    return [[s.text.strip() for s in doc.sents if s.text.strip()] for doc in pipe_docs(_nlp(), paragraphs, 256)]


@lru_cache(maxsize=200_000)
def count_tokens(sentence: str) -> int:
    """Word tokens of a sentence (spaCy English tokenizer, punctuation excluded)."""
    return sum(1 for t in _nlp().tokenizer(sentence) if not (t.is_punct or t.is_space))


def parse_article(wikitext: str, title: str, source: str = "") -> Article:
    """Parse one raw wikitext article into its lead and heading sections, markup stripped."""
    sections = [Section("", 0)]
    raw_paragraphs: list[tuple[int, str]] = []
    for line in strip_markup(wikitext).splitlines():
        if m := HEADING_RE.match(line.strip()):
            sections.append(Section(clean_line(m.group(2)).strip("= "), len(m.group(1))))
        elif not (_LIST_LINE_RE.match(line) or line.strip().startswith(("{", "}"))):
            cleaned = clean_line(line)
            if len(cleaned) > 1 and re.search(r"[A-Za-z]", cleaned):
                raw_paragraphs.append((len(sections) - 1, cleaned))
    for (idx, _), sents in zip(raw_paragraphs, split_sentences([p for _, p in raw_paragraphs]), strict=True):
        if sents:
            sections[idx].paragraphs.append(Paragraph(sents))
    return Article(title, sections, source)


def read_article_index(folder: Path) -> list[dict]:
    """Rows of `article_info.csv` (topic_id, raw_file, title, url)."""
    return read_records(folder / ROOT / "article_info.csv", ArticleIndexRecord)


def read_raw_article(path: Path) -> str:
    """The raw wikitext of one article file (a missing file: InputError naming it)."""
    if not os.path.lexists(path):
        raise InputError(path, "article file listed in article_info.csv is missing")
    return read_text_file(path)  # a FIFO or folder is named, never opened


def load_articles(folder: Path, use_cache: bool = True, limit: int | None = None, cache_dir: Path | None = None,
                  quiet: bool = False) -> list[Article]:
    """The distinct articles (first file of each title, in article_info.csv order), parsed and cached.

    `cache_dir`: the cache folder (None: `default_cache_dir()`; parsed articles go under its `datasets/`).
    """
    key = hashlib.sha256((folder / ROOT / "article_info.csv").read_bytes() + PARSER_VERSION.encode()).hexdigest()
    cache = (cache_dir or default_cache_dir()) / "datasets" / f"wikipedia-{key[:16]}.json.gz"
    if use_cache and limit is None and cache.is_file():
        try:
            with gzip.open(cache, "rt", encoding="utf-8") as fh:
                return [Article.from_dict(d) for d in json.load(fh)]
        except (OSError, ValueError, KeyError):
            cache.unlink(missing_ok=True)  # corrupt: rebuild
    first: dict[str, dict] = {}
    for row in read_article_index(folder):
        first.setdefault(row["title"], row)
    articles = [parse_article(read_raw_article(folder / ROOT / r["raw_file"]), r["title"], r["raw_file"])
                for r in track(list(first.values())[:limit], "parsing Wikipedia articles", enabled=not quiet)]
    if use_cache and limit is None:
        with atomic_path(cache) as tmp, gzip.open(tmp, "wt", encoding="utf-8") as fh:
            json.dump([asdict(a) for a in articles], fh)
    return articles


def check(folder: Path) -> list[Stat]:
    """Statistics beside SOURCE.md: files, distinct titles, bytes, topics, heading counts.

    Headings are the lines SOURCE.md's regex matches; it also counts one commented-out
    "=====...{{No more links}}=====" line and one more, so SOURCE.md's totals differ by 2 (17,687 vs 17,685) and
    those three figures are shown, not enforced."""
    rows = read_article_index(folder)
    files = [check_input_file(folder / ROOT / r["raw_file"]).read_bytes() for r in rows]  # a FIFO: named, not opened
    per_file = [[len(m.group(1)) for line in data.decode("utf-8").split("\n") if (m := _HEADING_COUNT_RE.match(line))]
                for data in files]
    levels = [lv for lvs in per_file for lv in lvs]
    per_article = [len(v) for v in per_file]
    return [
        Stat("article files", len(rows), 1056),
        Stat("distinct titles", len({r["title"] for r in rows}), 1019),
        Stat("bytes (all files)", sum(map(len, files)), 38_119_565),
        Stat("debate topics", len({r["topic_id"] for r in rows}), 55),
        Stat("headings (all files; SOURCE.md 17,685)", len(levels)),
        Stat("level-2 headings (SOURCE.md 8,428)", sum(lv == 2 for lv in levels)),
        Stat("level-3 headings", sum(lv == 3 for lv in levels), 7_397),
        Stat("level-4 headings", sum(lv == 4 for lv in levels), 1_751),
        Stat("deeper headings (SOURCE.md 109)", sum(lv > 4 for lv in levels)),
        Stat("median headings per file", int(statistics.median(per_article)), 14),
        Stat("max headings per file", max(per_article), 81),
        Stat("files with >= 5 headings", sum(n >= 5 for n in per_article), 946),
    ]


register_dataset(DatasetInfo(
    name="wikipedia",
    folder="wikipedia",
    title="Wikipedia articles of the IBM Debater Claim Stance Dataset (raw wikitext, April 2012)",
    published="https://github.com/cchang-vassar/Semantic-Relations-in-Vector-Embeddings (corpora/IBM_EACL/, "
              "commit 7b9d0a4); original: IBM Debater datasets, Bar-Haim et al. EACL 2017",
    layout=[f"{ROOT}/article_info.csv", f"{ROOT}/articles"],
    check=check,
    notes=["stands in for the non-public triplets-sen/titles and SCB data of Ein Dor et al. 2018"],
))
