"""Interrupted work: Ctrl-C during `rank counterargs` leaves no partial file, keeps the finished settings, and
`--resume` ranks only the rest. The interrupt is the KeyboardInterrupt that SIGINT raises in the main thread,
raised inside the ranking of the second setting (deterministic, no timing race)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from argsim.cli.app import app

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "counter_neural" / "02-extracted-arguments"
runner = CliRunner()


def _tiny_corpus(root: Path) -> Path:
    """The fixture tree laid out as counterargs-18 (its test split; empty training/validation)."""
    base = root / "counterargs18"
    shutil.copytree(FIXTURE, base / "02-extracted-arguments")
    for split in ("training", "validation"):
        (base / "02-extracted-arguments" / split).mkdir()
    counts = base / "03-pairs-best-counter-task" / "test" / "00-argument-pair-type-counts.tsv"
    counts.parent.mkdir(parents=True)
    counts.touch()
    return root


def test_ctrl_c_keeps_finished_settings_and_resume_continues(tmp_path, monkeypatch):
    from argsim.counter.core import run as run_module

    monkeypatch.setenv("ARGSIM_DATA", str(_tiny_corpus(tmp_path / "data")))
    real = run_module.run_ranker
    calls: list[str] = []

    def interrupted_in_sda(method, points, pools, gold, setting, **kw):  # noqa: ANN001, ANN202
        calls.append(setting)
        if setting == "sda":
            raise KeyboardInterrupt
        return real(method, points, pools, gold, setting=setting, **kw)

    monkeypatch.setattr(run_module, "run_ranker", interrupted_in_sda)
    out = tmp_path / "ranking.jsonl"
    args = ["--quiet", "rank", "counterargs", "-m", "bm25", "-s", "sdoc", "-s", "sda", "-s", "sdc", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 130, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {r["setting"] for r in rows} == {"sdoc"}  # the finished setting, complete; nothing of sda
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".ranking.jsonl")]  # no temp file left
    kept = out.read_bytes()

    calls.clear()
    monkeypatch.setattr(run_module, "run_ranker", lambda *a, **kw: calls.append(kw["setting"]) or real(*a, **kw))
    result = runner.invoke(app, [*args, "--resume"])
    assert result.exit_code == 0, result.output
    assert calls == ["sda", "sdc"]  # sdoc was not ranked again
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["setting"] for r in rows].count("sdoc") == kept.count(b"\n")
    assert {r["setting"] for r in rows} == {"sdoc", "sda", "sdc"}
