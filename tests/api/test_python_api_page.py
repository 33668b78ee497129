"""docs/python-api.md runs as written and prints what it says: every ```python block, in order, in one namespace;
each block's output is compared with its comment lines that start a line (`# ...`), whitespace-normalised.

The blocks use the real data (ArgKP, counterargs-18), so the test is skipped where the data folder is absent.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pandas as pd

from tests.test_readme import python_blocks

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def expected_output(block: str) -> list[str]:
    return [" ".join(line[2:].split()) for line in block.splitlines() if re.match(r"^# ", line)]


def test_python_api_page_prints_what_it_says(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ARGSIM_DATA", str(Path(data_dir).resolve()))
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 7
    namespace: dict = {"__name__": "__page__"}
    with pd.option_context("display.width", 120):
        for i, block in enumerate(blocks, 1):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, f"docs/python-api.md python block {i}", "exec"), namespace)
            got = [" ".join(line.split()) for line in out.getvalue().splitlines()]
            assert got == expected_output(block), f"block {i}"
