"""Cleaning assembly-minutes text: stage directions such as (拍手), speaker-role tags and procedural
boilerplate are removed before mining or summarising (the paper's outputs contained "(拍手)" and "–")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

#: stage directions and annotations: （拍手）, (拍手), 〔「異議なし」と呼ぶ者あり〕, 〔議場閉鎖〕, 【...】
BRACKET_NOTE_RE = re.compile(r"〔[^〕]*〕|【[^】]*】")
PAREN_NOTE_RE = re.compile(r"[（(](?:拍手|笑声|発言する者あり|議場騒然|"
                           r"[^（）()]{0,20}(?:者あり|離席|退席|着席|登壇|起立))[^（）()]{0,20}[）)]")
#: a leading speaker tag in the text itself: ○議長（石川良一君）, ◯副知事（...）
SPEAKER_TAG_RE = re.compile(r"^[○◯◎〇]\s*[^\s　]{1,30}?[（(][^）)]{1,20}[）)]\s*")
DASHES_RE = re.compile(r"^[\s\-－―—–‐・…。、]*$")
SENTENCE_END = "。？！?!」』）)"


def strip_noise(line: str) -> str:
    """Remove stage directions, a leading speaker tag and surrounding whitespace from one line."""
    line = SPEAKER_TAG_RE.sub("", line.strip())
    line = PAREN_NOTE_RE.sub("", BRACKET_NOTE_RE.sub("", line))
    line = line.strip(" 　\t")
    return "" if DASHES_RE.match(line) else line


def split_lines(utterance: str) -> list[str]:
    """Split an utterance into its lines (paragraphs).

    The minutes indent each paragraph with a full-width space; a line that is not indented and does not
    follow a sentence end is a hard wrap (e.g. "…ご異議ありません" + "か。") and is joined to the previous one."""
    out: list[str] = []
    for raw in utterance.split("\n"):
        if not raw.strip():
            continue
        if out and not raw.startswith(("\u3000", " ")) and not out[-1].endswith(tuple(SENTENCE_END)):  # wrapped
            out[-1] += raw.strip()
        else:
            out.append(raw)
    return out


def clean_lines(utterance: str, min_chars: int = 10) -> list[str]:
    """The cleaned lines of an utterance with at least `min_chars` characters."""
    return [x for x in map(strip_noise, split_lines(utterance)) if len(x) >= min_chars]


def boilerplate(lines: Iterable[str], min_count: int = 5) -> set[str]:
    """Lines that recur verbatim at least `min_count` times (procedural formulas such as
    'それでは、そのようにいたします。', '説明は終わりました。')."""
    return {line for line, n in Counter(lines).items() if n >= min_count}


def split_sentences(text: str) -> list[str]:
    """Split Japanese text into sentences after 。！？ (keeping the mark)."""
    return [p.strip() for p in re.split(r"(?<=[。！？!?])", text) if p.strip()]


def utterance_sentences(utterance: str) -> list[str]:
    """The sentences of an utterance: its cleaned lines (any length) split after 。！？ (`split_sentences`)."""
    return [s for line in clean_lines(utterance, min_chars=1) for s in split_sentences(line)]
