"""What ships speaks only of argsim: no trace of how it was developed.

Scanned: every string and docstring of the package (comments are not shipped text and are skipped), the README,
docs/ and the examples' notes, the bench scripts' strings and the prose fields of every results row. A results
row's `env` (where a timing's conditions belong) and `command` (what reproduces it) are not prose and are not
scanned. A hit fails the test with file:line and the word found.
"""

from __future__ import annotations

import json
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: (name, pattern): words of a development process, its tools and its machines
WORDS: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(rx, re.I)) for name, rx in [
    ("session number", r"\bsessions? \d"),
    ("session", r"\b(this|that|the|next|previous|earlier|later|a|one) session('s)?\b(?! (fixture|scope)\b)"),
    ("issue number", r"\bissues? \d"),
    ("ticket reference", r"(?<![\w&/])#\d+\b"),
    ("the issue", r"\bthe issue'?s?\b"),
    ("machine load", r"\bload \d"),
    ("machine load", r"\b(shared|busy|loaded) (the )?(machine|cores?|CPU cores)\b"),
    ("machine load", r"\b(running )?other work\b|\bshared the cores\b"),
    ("other jobs", r"\bother (engineers'?|jobs|people)\b"),
    ("other jobs", r"\b(six|five|\d) (other )?jobs\b"),
    ("shared the machine", r"\bshared the machine\b"),
    ("development path", r"\.\./shared\b"),
    ("development path", r"/work/"),
    ("development path", r"\bshared/data\b"),
    ("job wrapper", r"shared/bin"),
    ("job wrapper", r"`heavy\b|\bheavy (argsim|python|bash|make|\.venv|\.?/|CMD)|^heavy$|\b(in|under|through) heavy\b"),
    ("development round", r"\bdevelopment rounds?\b"),
    ("development round", r"\bround \d"),
    ("development tooling", r"\bfarm\b"),
    ("development tooling", r"\bcoordinator\b"),
    ("development tooling", r"\bthe lead'?s? (?!(time|paragraph|sentences?|section|and|baselines?)\b)\w+"),
    ("development tooling", r"\b(a|another|other|niced|the) helpers?\b(?! (function|module|class|method)s?\b)"),
    ("development tooling", r"\bhelper (sessions?|jobs?|agents?)\b"),
    ("development path", r"\bpapers/[\w.-]+\.txt\b"),
]]

#: results-row fields that are not prose: measurement conditions and the command that reproduces the row
NOT_PROSE = {"env", "command", "commands", "train_command"}


def _python_strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string literal (docstrings included) of a Python file, with the line each line of it is on."""
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                for i, line in enumerate(tok.string.splitlines()):
                    yield tok.start[0] + i, line


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)


def _prose(value: object, key: str = "") -> Iterator[str]:
    if key in NOT_PROSE:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _prose(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _prose(v, key)


def _results_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The prose of every row, located by the row's line in the file (found by its first prose string)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    data = json.loads(text)
    for row in data.get("rows", []):
        for s in _prose({k: v for k, v in row.items() if k not in NOT_PROSE}):
            needle = json.dumps(s)[1:-1]
            line = next((i for i, t in enumerate(lines, 1) if needle in t), 0)
            yield line, s
    for k in ("task",):
        yield 1, str(data.get(k, ""))


def scanned() -> Iterator[tuple[Path, Iterator[tuple[int, str]]]]:
    for path in sorted((ROOT / "argsim").rglob("*.py")) + sorted((ROOT / "bench").glob("*.py")):
        yield path, _python_strings(path)
    markdown = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.md"))]
    for path in markdown:
        if path.exists():
            yield path, _text_lines(path)
    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        yield path, _results_lines(path)


def hits_in(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str, str]]:
    for lineno, text in lines:
        for name, rx in WORDS:
            m = rx.search(text)
            if m:
                yield lineno, name, m.group(0)


def test_patterns_catch_and_spare():
    """The patterns find development words and leave ordinary text alone (an independent list of both)."""
    caught = ["as in session 10's run", "issue 16 asked", "see #12", "the issue's 0.88", "at load 2-3",
              "five other engineers' jobs", "jobs shared the machine", "../shared/data", "/work/shared/papers",
              "shared/bin/heavy argsim", "wrapped in heavy", "development round 3", "in round 4",
              "the farm's machine", "ask the coordinator", "the lead's metric", "a helper ran it",
              "niced helper sessions", "papers/kpm-siamese-transformers.txt", "on 2 busy cores",
              "while other work ran", "to fit the session's CPU budget"]
    spared = ["heavy tails of the distribution", "topic 12", "a round trip", "helper function", "loaded once",
              "&#39;", "the shared task", "File helpers: atomic writes", "no heavy work here", "a helper function",
              "the lead baseline", "drop the first section (the lead) and", "beat the lead and random baselines",
              "on 2 idle CPU cores", "a Ray session fixture", "the extraordinary-session utterances"]
    for text in caught:
        assert list(hits_in(iter([(1, text)]))), text
    assert [(t, h) for t in spared for h in hits_in(iter([(1, t)]))] == []


def test_python_strings_skip_comments(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('# session 3 comment\nx = "clean"\ny = """doc\nissue 4"""\n', encoding="utf-8")
    assert [(n, w) for n, _, w in hits_in(_python_strings(p))] == [(4, "issue 4")]


def test_nothing_of_development_ships():
    found = [f"{path.relative_to(ROOT)}:{lineno}: {name}: {word!r}"
             for path, lines in scanned() for lineno, name, word in hits_in(lines)]
    assert not found, f"{len(found)} development words in what ships:\n" + "\n".join(found[:300])
