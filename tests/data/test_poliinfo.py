"""PoliInfo loaders on the real files (counts from SOURCE.md) and the span mapping logic."""

from __future__ import annotations

import pytest

from argsim.data import poliinfo as P


@pytest.fixture(scope="module")
def folder(data_dir):
    return data_dir / "poliinfo"


def test_minutes_counts_match_source_md(folder):
    meetings = P.load_meetings(folder)
    assert len(meetings) == 477
    assert sum(len(m.utterances) for m in meetings) == 25892
    bank = [m for m in meetings if m.source.endswith("utterances_tokyo_bank.json")]
    assert len(bank) == 14 and bank[0].date == "2009-09-25"
    assert bank[0].utterances[0].speaker == "null" and bank[0].utterances[1].speaker == "田中議長"


def test_dialog_items_and_answers(folder):
    seg = P.load_dialog_items(folder, "training-segmented")
    assert len(seg) == 438 and sum(len(i.answers) for i in seg) == 555
    first = seg[0]
    assert (first.question_start, first.question_end, first.question_length) == (266, 276, 50)
    assert first.answers[0].speaker == "知事" and first.answers[0].summary.startswith("全国の先頭")
    gsd = P.load_dialog_items(folder, "test-gsd")
    assert len(gsd) == 254 and all(i.question_summary for i in gsd)
    assert all(i.question_start == 0 for i in P.load_dialog_items(folder, "test"))


def test_ntcir14_source_split_on_literal_backslash_n(folder):
    items = P.load_ntcir14_items(folder, "training")
    assert len(items) == 596
    it = items[0]
    assert it.date == "2012-02-28" and it.length == 100
    assert it.sentences[0].startswith("我々が生きている日本列島は、")
    assert it.sentences[0].endswith("見舞われてきました。")
    assert it.sentences[1].startswith("こうした過酷な国土にありながら")
    assert all("\\n" not in s for s in it.sentences)
    assert len(P.ntcir14_gold_items(folder)) == 740  # 596 + 79 + 67 minus the 2 training items without Source


def test_heisei_dates_and_lengths():
    assert P.heisei_date("24-2-28") == "2012-02-28"
    assert P.heisei_date("23-12-7") == "2011-12-07"
    assert P.parse_length("150字以内") == 150
    assert P.split_source("a\\nb\\n\\nc") == ("a", "b", "c")


def _item(start: int, end: int) -> P.SummarizationItem:
    return P.SummarizationItem(f"{start}-{end}", "2012-01-01", "", "", "", "", start, end, 50, "", ("x",))


def test_covering_items_requires_gapless_cover():
    spans = [_item(10, 20), _item(21, 30), _item(35, 40)]
    assert [i.id for i in P.covering_items(spans, 12, 25)] == ["10-20", "21-30"]
    assert P.covering_items(spans, 28, 36) is None  # lines 31-34 have no text
    assert [i.id for i in P.covering_items(spans, 35, 40)] == ["35-40"]


def test_mapping_of_segmented_items(folder):
    mapped = P.map_dialog_items(folder)
    questions = {m.item_id for m in mapped if m.part == "question"}
    assert 285 <= len(questions) <= 293  # SOURCE.md: 293 question spans inside NTCIR-14 Source spans
    exact = [m for m in mapped if m.exact]
    assert exact and all(m.sentences and m.summary for m in exact)
    ntcir = {it.id: it for it in P.ntcir14_gold_items(folder)}
    one = next(m for m in exact if len(m.ntcir_ids) == 1)
    assert one.sentences == ntcir[one.ntcir_ids[0]].sentences
    assert (ntcir[one.ntcir_ids[0]].start, ntcir[one.ntcir_ids[0]].end) == (one.start, one.end)
