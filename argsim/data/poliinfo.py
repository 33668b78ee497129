"""PoliInfo (Tokyo Metropolitan Assembly): minutes utterances, PoliInfo-2 dialog summarization items,
NTCIR-14 summarization items with their `Source` text, and the mapping between the two.

Layout under `<data>/poliinfo/` (see SOURCE.md): `minutes/{committees,proceedings}/*.json`,
`dialog_summarization/PoliInfo2-DialogSummarization-JA-Formal-*.json`,
`ntcir14_poliinfo/summarization/*.json`, `ntcir14_poliinfo/segmentation/*.json`, `resources/*.json`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from argsim.data.catalog import DatasetInfo, Stat, register_dataset
from argsim.errors import DataLayoutError, InputError
from argsim.io import read_json, read_json_as, regular_files
from argsim.schemas import Meetings

DIALOG_PREFIX = "dialog_summarization/PoliInfo2-DialogSummarization-JA-Formal-"
DIALOG_SPLITS = {"training-segmented": "Training-Segmented", "training-unsegmented": "Training-Unsegmented",
                 "test": "Test", "test-gsd": "Test-GSD"}
NTCIR14_FILES = {
    "training": "Summarization-FormalRun-Training.json",
    "single-test": "Single-FormalTest-Summarization-FormalRun.json",
    "single-testgs": "Single-FormalTestGS-Summarization-FormalRun.json",
    "multi-test": "Multi-FormalTest-Summarization-FormalRun.json",
    "multi-testgs": "Multi-FormalTestGS-Summarization-FormalRun.json",
}
#: NTCIR-14 files whose items carry gold summaries (the evaluation pool of `argsim summarize minutes`)
NTCIR14_GOLD = ("training", "single-testgs", "multi-testgs")
SOURCE_SEPARATOR = "\\n"  # a literal backslash-n joins the Source sentences


@dataclass(frozen=True)
class Utterance:
    """One utterance of the minutes: who said what, in which meeting, on which day."""

    meeting: str  # meeting id: "<file stem>#<index>"
    date: str  # ISO YYYY-MM-DD ("" when the file gives none)
    speaker: str  # e.g. 佐藤委員, 議長（石川良一君）; "null" marks the roll/agenda block
    text: str
    title: str = ""  # ProceedingTitle
    index: int = 0  # position in its meeting


@dataclass
class Meeting:
    id: str
    title: str
    date: str
    url: str
    source: str  # the file it came from (relative to the dataset folder)
    utterances: list[Utterance] = field(default_factory=list)


def _iso_date(raw: str) -> str:
    """'2009/9/25' -> '2009-09-25'; '' stays ''."""
    raw = (raw or "").strip()
    m = re.fullmatch(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})", raw)
    return f"{int(m[1]):04d}-{int(m[2]):02d}-{int(m[3]):02d}" if m else raw


def heisei_date(raw: str) -> str:
    """NTCIR-14 dates are Heisei 'YY-M-D' (24-2-28 = 2012-02-28); returns ISO."""
    m = re.fullmatch(r"(\d{1,2})-(\d{1,2})-(\d{1,2})", raw.strip())
    return f"{1988 + int(m[1]):04d}-{int(m[2]):02d}-{int(m[3]):02d}" if m else _iso_date(raw)


def minutes_files(folder: Path) -> list[Path]:
    files = regular_files(sorted((folder / "minutes").glob("*/*.json")), folder / "minutes", "minutes files")
    if not files:
        raise DataLayoutError(f"{folder / 'minutes'}: no minutes JSON files (expected committees/*.json, "
                              "proceedings/*.json)")
    return files


def load_meetings(folder: str | Path, files: list[Path] | None = None) -> list[Meeting]:
    """Every meeting of the available minutes files, in file order."""
    folder = Path(folder)
    meetings: list[Meeting] = []
    for path in files or minutes_files(folder):
        data = read_json_as(Meetings, path, what="a JSON list of meetings [{Date, ProceedingTitle, Proceeding: "
                                                 "[{Speaker, Utterance}]}]")
        rel = str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)
        for i, m in enumerate(data):
            mid = f"{path.stem}#{i}"
            meeting = Meeting(id=mid, title=m.get("ProceedingTitle") or "", date=_iso_date(m.get("Date") or ""),
                              url=m.get("URL") or "", source=rel)
            meeting.utterances.extend(Utterance(meeting=mid, date=meeting.date, speaker=str(u.get("Speaker") or "null"),
                                                text=u.get("Utterance") or "", title=meeting.title, index=j)
                                      for j, u in enumerate(m["Proceeding"]))
            meetings.append(meeting)
    return meetings


@dataclass(frozen=True)
class Answer:
    speaker: str  # role, e.g. 知事
    start: int  # minute line numbers in Pref13_tokyo.json (0 = not given)
    end: int
    length: int  # character budget
    summary: str


@dataclass(frozen=True)
class DialogItem:
    """One PoliInfo-2 dialog summarization item: a question and its one or more answers."""

    id: str
    meeting: str
    date: str
    main_topic: str
    sub_topic: str
    question_speaker: str
    question_start: int
    question_end: int
    question_length: int
    question_summary: str
    answers: tuple[Answer, ...]


def _as_list(v: object) -> list:
    return v if isinstance(v, list) else [v]


def _read_items(path: Path, make: Callable[[dict], object]) -> list:
    """`make(record)` of each record of a JSON list; a record it cannot read is an InputError naming its row."""
    items = []
    for i, d in enumerate(read_json(path)):
        try:
            items.append(make(d))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(path, f"malformed item ({exc})", row=i + 1) from None
    return items


def load_dialog_items(folder: str | Path, split: str = "training-segmented") -> list[DialogItem]:
    """PoliInfo-2 items of one split: training-segmented, training-unsegmented, test, test-gsd."""
    if split not in DIALOG_SPLITS:
        raise InputError(None, f"unknown PoliInfo-2 split '{split}': choose one of {', '.join(DIALOG_SPLITS)}")
    return _read_items(Path(folder) / f"{DIALOG_PREFIX}{DIALOG_SPLITS[split]}.json", lambda d: DialogItem(
        id=d["ID"], meeting=d["Meeting"], date=d["Date"], main_topic=d["MainTopic"], sub_topic=d["SubTopic"],
        question_speaker=d["QuestionSpeaker"], question_start=int(d["QuestionStartingLine"] or 0),
        question_end=int(d["QuestionEndingLine"] or 0), question_length=int(d["QuestionLength"] or 0),
        question_summary=d["QuestionSummary"] or "",
        answers=tuple(Answer(speaker=s, start=int(a or 0), end=int(b or 0), length=int(n or 0), summary=summ or "")
                      for s, a, b, n, summ in zip(*(_as_list(d[f"Answer{k}"]) for k in (
                          "Speaker", "StartingLine", "EndingLine", "Length", "Summary")), strict=True))))


@dataclass(frozen=True)
class SummarizationItem:
    """One NTCIR-14 summarization item: a span of the minutes (its sentences) and its gold summary."""

    id: str
    date: str  # ISO
    meeting: str
    speaker: str
    main_topic: str
    sub_topic: str
    start: int
    end: int
    length: int  # character budget (from "50字以内")
    summary: str
    sentences: tuple[str, ...]
    source_file: str = ""


def parse_length(raw: object) -> int:
    """'100字以内' -> 100; ints pass through."""
    if isinstance(raw, int):
        return raw
    return int(m.group()) if (m := re.search(r"\d+", str(raw or ""))) else 0


def split_source(source: str | None) -> tuple[str, ...]:
    """Split a `Source` field on the literal backslash-n (and real newlines), dropping empty parts."""
    parts = (source or "").replace("\n", SOURCE_SEPARATOR).split(SOURCE_SEPARATOR)
    return tuple(p.strip() for p in parts if p.strip())


def load_ntcir14_items(folder: str | Path, which: str = "training") -> list[SummarizationItem]:
    """NTCIR-14 summarization items of one file: training, single-test(gs), multi-test(gs)."""
    if which not in NTCIR14_FILES:
        raise InputError(None, f"unknown NTCIR-14 file '{which}': choose one of {', '.join(NTCIR14_FILES)}")
    return _read_items(Path(folder) / "ntcir14_poliinfo" / "summarization" / NTCIR14_FILES[which], lambda d: (
        SummarizationItem(id=d["ID"], date=heisei_date(str(d["Date"])), meeting=d["Meeting"], speaker=d["Speaker"],
                          main_topic=d["MainTopic"] or "", sub_topic=d["SubTopic"] or "", start=int(d["StartingLine"]),
                          end=int(d["EndingLine"]), length=parse_length(d["Length"]), summary=d.get("Summary") or "",
                          sentences=split_source(d.get("Source")), source_file=which)))


def ntcir14_gold_items(folder: str | Path) -> list[SummarizationItem]:
    """Every NTCIR-14 item that has both Source text and a gold summary (the summarization benchmark)."""
    return [it for which in NTCIR14_GOLD for it in load_ntcir14_items(folder, which) if it.sentences and it.summary]


@dataclass(frozen=True)
class MappedPart:
    """The source text of one PoliInfo-2 question or answer, recovered from NTCIR-14 items."""

    item_id: str
    part: str  # "question" or "answer-<k>"
    speaker: str
    main_topic: str
    sub_topic: str
    start: int
    end: int
    length: int
    summary: str
    sentences: tuple[str, ...]
    exact: bool  # True when the span is exactly a union of whole NTCIR-14 spans
    ntcir_ids: tuple[str, ...]


def covering_items(spans: list[SummarizationItem], start: int, end: int) -> list[SummarizationItem] | None:
    """NTCIR-14 items (sorted, de-duplicated by span) whose line ranges together cover [start, end]
    without gaps; None when some line of the span has no source text."""
    seen: dict[tuple[int, int], SummarizationItem] = {}
    for it in spans:
        if it.end >= start and it.start <= end:
            seen.setdefault((it.start, it.end), it)
    chosen = sorted(seen.values(), key=lambda it: (it.start, -it.end))
    pos, out = start, []
    for it in chosen:
        if it.start > pos:
            return None
        if it.end >= pos:
            out.append(it)
            pos = it.end + 1
        if pos > end:
            return out
    return None


def map_dialog_items(folder: str | Path, split: str = "training-segmented") -> list[MappedPart]:
    """PoliInfo-2 segmented items whose question/answer line spans lie inside NTCIR-14 `Source` spans.

    The text of a span is the Source sentences of the covering NTCIR-14 items; it is `exact` when the
    span starts and ends on their boundaries, otherwise it is a superset of the true span (the minutes file
    that would give line-level text is not available, see SOURCE.md).
    """
    folder = Path(folder)
    by_date: dict[str, list[SummarizationItem]] = {}  # the NTCIR-14 items with Source text, per date, by span
    for it in sorted((it for which in NTCIR14_GOLD for it in load_ntcir14_items(folder, which) if it.sentences),
                     key=lambda it: (it.start, it.end)):
        by_date.setdefault(it.date, []).append(it)
    out: list[MappedPart] = []
    for item in load_dialog_items(folder, split):
        parts = [("question", item.question_speaker, item.question_start, item.question_end,
                  item.question_length, item.question_summary)]
        parts += [(f"answer-{k + 1}", a.speaker, a.start, a.end, a.length, a.summary)
                  for k, a in enumerate(item.answers)]
        for name, speaker, start, end, length, summary in parts:
            if start <= 0 or end < start or not (cover := covering_items(by_date.get(item.date, []), start, end)):
                continue
            exact = cover[0].start == start and cover[-1].end == end
            sentences = tuple(s for it in cover for s in it.sentences)
            out.append(MappedPart(item_id=item.id, part=name, speaker=speaker, main_topic=item.main_topic,
                                  sub_topic=item.sub_topic, start=start, end=end, length=length,
                                  summary=summary, sentences=sentences, exact=exact,
                                  ntcir_ids=tuple(it.id for it in cover)))
    return out


def _check(folder: Path) -> list[Stat]:
    meetings = load_meetings(folder)
    stats = [Stat("minutes files", len(minutes_files(folder)), 18), Stat("meetings", len(meetings), 477),
             Stat("utterances", sum(len(m.utterances) for m in meetings), 25892)]
    expected_items = {"training-segmented": (438, 555), "training-unsegmented": (325, 368), "test": (254, 279),
                      "test-gsd": (254, 279)}
    for split, (n_items, n_answers) in expected_items.items():
        items = load_dialog_items(folder, split)
        stats += [Stat(f"PoliInfo-2 {split} items", len(items), n_items),
                  Stat(f"PoliInfo-2 {split} answers", sum(len(i.answers) for i in items), n_answers)]
    expected_ntcir = {"training": 596, "single-test": 79, "single-testgs": 79, "multi-test": 67, "multi-testgs": 67}
    stats += [Stat(f"NTCIR-14 summarization {which}", len(load_ntcir14_items(folder, which)), n)
              for which, n in expected_ntcir.items()]
    mapped = map_dialog_items(folder)
    q_items = {m.item_id for m in mapped if m.part == "question"}
    both = {m.item_id for m in mapped if m.part == "answer-1"} & q_items
    return [*stats, Stat("NTCIR-14 items with Source + gold summary", len(ntcir14_gold_items(folder))),
            Stat("segmented items with question text (SOURCE.md: 293)", len(q_items)),
            Stat("segmented items with question + answer text (SOURCE.md: 292)", len(both)),
            Stat("mapped parts (exact span)", sum(m.exact for m in mapped))]


register_dataset(DatasetInfo(
    name="poliinfo",
    folder="poliinfo",
    title="NTCIR-15 QA Lab-PoliInfo-2 dialog summarization + NTCIR-14 PoliInfo + Tokyo assembly minutes",
    published="https://github.com/poliinfo2/NTCIR15-QA-Lab-PoliInfo-2-Dataset and "
              "https://github.com/kmr-y/NTCIR14-QALab-PoliInfo-FormalRunDataset",
    layout=["minutes/committees", "minutes/proceedings", f"{DIALOG_PREFIX}Training-Segmented.json",
            f"{DIALOG_PREFIX}Test-GSD.json", "ntcir14_poliinfo/summarization/" + NTCIR14_FILES["training"]],
    check=_check,
    notes=["Pref13_tokyo.json (2011-2015 plenary minutes) is not available: summarization is evaluated on "
           "NTCIR-14 items with Source text and the PoliInfo-2 segmented items they cover."],
))
