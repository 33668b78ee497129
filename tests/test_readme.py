"""The README's Python examples run as written: every ```python block, in order, in one namespace.

The blocks use the real data (ArgKP, PoliInfo), so the test is skipped where the data folder is absent. They run
in a temporary working folder, so whatever an example writes stays out of the checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python fenced blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_blocks_are_found():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x + 1\n"]


def test_readme_python_blocks_run(data_dir, tmp_path, monkeypatch):
    """`data_dir` (conftest) skips where the real datasets are absent."""
    monkeypatch.setenv("ARGSIM_DATA", str(Path(data_dir).resolve()))
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "README.md has no python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for i, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except Exception as exc:  # the block's number and its first line say which example broke
            raise AssertionError(f"README python block {i} ({block.splitlines()[0]!r}) failed: {exc!r}") from exc


def test_links_of_readme_and_docs_resolve():
    """Every relative link of the README and docs/ names a file that exists (and a heading, with `#anchor`)."""
    broken = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([^)#\s:]+)(?:#([^)\s]+))?\)", page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            if not path.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and path.suffix == ".md":
                headings = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-")
                            for h in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M)}
                if anchor not in headings:
                    broken.append(f"{page.name}: {target}#{anchor}")
    assert not broken, broken
