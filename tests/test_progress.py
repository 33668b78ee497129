"""Progress in a log file: when stderr is not a terminal the bar writes plain lines, throttled, and short work
stays silent."""

from __future__ import annotations

from argsim.progress import track


def test_a_log_gets_plain_progress_lines_with_counts_and_time_left(monkeypatch, capsys):
    monkeypatch.setenv("ARGSIM_PROGRESS_SECONDS", "0")  # a line at every step
    assert list(track(range(4), "epoch 1/5")) == [0, 1, 2, 3]
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 5  # one per step and the last line at the end
    assert lines[0].startswith("epoch 1/5: 1/4 (25%) 0:00:00 elapsed, ~") and lines[0].endswith(" left")
    assert lines[-1] == "epoch 1/5: 4/4 (100%) 0:00:00 elapsed"


def test_short_work_writes_nothing_to_a_log(monkeypatch, capsys):
    monkeypatch.delenv("ARGSIM_PROGRESS_SECONDS", raising=False)  # default: at most one line a minute
    assert sum(track(range(100), "encode")) == 4950
    assert capsys.readouterr().err == ""
