"""The Wikipedia wikitext loader: markup stripping on a hand-written article and the real IBM dump."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argsim.data.wikipedia import (
    ROOT,
    check,
    clean_line,
    load_articles,
    parse_article,
    read_article_index,
    strip_markup,
)
from argsim.errors import InputError

FIXTURE = Path(__file__).parents[1] / "fixtures" / "thematic" / "Solar_power.txt"
MARKUP = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|</?\w+>|\{\||\|\}|'''|File:|Category:|wikitable|https?://")


@pytest.fixture(scope="module")
def solar():
    return parse_article(FIXTURE.read_text(encoding="utf-8"), "Solar power")


def test_headings_levels_and_stray_dot(solar):
    assert [(s.heading, s.level) for s in solar.sections] == [
        ("", 0), ("History", 2), ("Early research", 3), ("Technology", 2), ("Background", 2), ("Economics", 2),
        ("Environmental impact", 2), ("Policy", 2), ("Future", 2), ("See also", 2), ("References", 2)]


def test_markup_is_stripped(solar):
    text = " ".join(s for sec in solar.sections for s in sec.sentences)
    assert not MARKUP.search(text), MARKUP.search(text)
    lead = solar.sections[0].sentences
    # link label kept, bold quotes and the <ref> note with its template removed, the trailing " ." dropped
    assert lead[0] == "Solar power is the conversion of sunlight into electrical power, either directly or indirectly."
    assert lead[1].endswith("world today.")
    assert "Infobox" not in text and "Panel.jpg" not in text and "check the year" not in text
    assert "22%" not in text  # table cells gone
    assert "list item" not in text  # bullet lists are not prose


def test_paragraphs_and_sentences(solar):
    history = solar.sections[1]
    # one line = one paragraph (the dump drops blank lines between some paragraphs); the image line is gone
    assert [len(p.sentences) for p in history.paragraphs] == [2, 1, 1, 1]
    assert history.paragraphs[0].sentences[0].startswith("The first solar cell was built by Charles Fritts")


def test_clean_line_rules():
    assert clean_line("Jenkins said it:  . ") == "Jenkins said it:"
    assert clean_line("a word () , then ( ok )") == "a word, then (ok)"
    assert strip_markup("[[a|b]] [[c]]s [[File:x.png|thumb|[[d]] e]]") == "b cs "


def test_real_index_and_article(data_dir):
    folder = data_dir / "wikipedia"
    rows = read_article_index(folder)
    assert len(rows) == 1056 and len({r["title"] for r in rows}) == 1019
    arts = load_articles(folder, use_cache=False, limit=2)
    assert [a.title for a in arts] == [rows[0]["title"], rows[1]["title"]]
    for a in arts:
        sents = [s for sec in a.sections for s in sec.sentences]
        assert len(a.sections) >= 5 and len(sents) > 30
        assert not any(MARKUP.search(s) for s in sents), [s for s in sents if MARKUP.search(s)][:3]
        assert not any(h.heading.endswith(".") or "=" in h.heading for h in a.sections)


def test_real_dataset_check_matches_source(data_dir):
    stats = check(data_dir / "wikipedia")
    assert all(s.ok is not False for s in stats), [(s.name, s.value, s.expected) for s in stats if s.ok is False]
    assert {s.name: s.value for s in stats}["distinct titles"] == 1019


def test_missing_file_is_a_clear_error(tmp_path):
    (tmp_path / ROOT).mkdir()
    (tmp_path / ROOT / "article_info.csv").write_text('"topic_id","raw_file","clean_fle","title","url"\n'
                                                      '"1","articles/t1/raw_9.txt","x","T","u"\n', encoding="utf-8")
    with pytest.raises(InputError, match="raw_9.txt"):
        load_articles(tmp_path, use_cache=False)
