"""Nothing hides the one line: under --quiet the libraries' warnings, log lines and progress bars stay off the
terminal; without it a library warning is one line; tables are whole when stdout is a file; files that a
library left 0600 in an output folder get the umask's mode however the run ends (done, failed, interrupted)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from argsim.cli.app import app
from tests.cli.conftest import REPO, runner

NOISY = r'''
import logging, sys, warnings
from argsim.cli.app import app
import argsim.kpm.rank as rank_module

def noisy_rank(*args, out=None, **kwargs):
    warnings.warn("a library deprecation\nwith a second line", FutureWarning)
    logging.getLogger("sentence_transformers").warning("Removed shared tensor while saving")
    logging.getLogger("faiss.loader").info("Loading faiss with AVX2 support.")
    from tqdm import tqdm
    for _ in tqdm(range(3), desc="library bar"):
        pass
    from argsim.progress import progress_bar
    with progress_bar(3, "an argsim bar deep in a library call", enabled=True) as bar:
        bar.advance(3)
    raise SystemExit(0)

rank_module.rank_keypoints = noisy_rank
sys.argv = ["argsim", *sys.argv[1:]]
app()
'''


@pytest.fixture
def ws(kpm_workspace):
    tmp_path = kpm_workspace
    shutil.copy(REPO / "examples" / "counter" / "arguments.jsonl", tmp_path / "counter.jsonl")
    (tmp_path / "noisy.py").write_text(NOISY, encoding="utf-8")
    return tmp_path


def _noisy(ws: Path, *global_options: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "ARGSIM_PROGRESS_SECONDS": "0"}  # log-file bars write at once
    for var in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "noisy.py", *global_options, "rank", "keypoints", "--arguments",
                           "arguments.csv", "--key-points", "key_points.csv", "--out", "r"], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=300)


def test_quiet_keeps_library_noise_off_the_terminal(ws):
    done = _noisy(ws, "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr


def test_without_quiet_a_library_warning_is_one_line(ws):
    done = _noisy(ws)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "deprecation" in ln or "second line" in ln]
    assert lines == ["warning: FutureWarning: a library deprecation"], done.stderr
    assert "Removed shared tensor" in done.stderr  # a library's warning-level log line is still shown
    assert "an argsim bar deep in a library call" in done.stderr  # bars show without --quiet


def test_tables_are_whole_when_stdout_is_a_file(ws):
    result = runner.invoke(app, ["--quiet", "rank", "counterargs", "-i", "counter.jsonl", "--method", "tf-cosine",
                                 "--label", "a-long-method-label-that-rich-would-cut", "--out", "r.jsonl"])
    assert result.exit_code == 0, result.output
    assert "a-long-method-label-that-rich-would-cut" in result.stdout and "…" not in result.stdout


@pytest.mark.parametrize("ending", ["interrupt", "error", "done"])
def test_files_left_private_get_the_umask_mode_however_the_run_ends(ws, monkeypatch, ending):
    import argsim.kpm.rank as rank_module
    from argsim.errors import ArgsimError

    def writes_private(*args, out=None, **kwargs):
        out.mkdir(parents=True, exist_ok=True)
        path = out / "model.safetensors"
        path.write_bytes(b"weights")
        os.chmod(path, 0o600)  # as safetensors writes
        if ending == "interrupt":
            raise KeyboardInterrupt
        if ending == "error":
            raise ArgsimError("stopped")
        raise SystemExit(0)

    (ws / "r").mkdir()
    (ws / "r" / "chosen.txt").write_text("mine")
    os.chmod(ws / "r" / "chosen.txt", 0o600)
    old = os.utime(ws / "r" / "chosen.txt", (0, 0))
    assert old is None
    monkeypatch.setattr(rank_module, "rank_keypoints", writes_private)
    mask = os.umask(0o022)
    try:
        runner.invoke(app, ["--quiet", "rank", "keypoints", "--arguments", "arguments.csv", "--key-points",
                            "key_points.csv", "--out", "r"])
    finally:
        os.umask(mask)
    assert (ws / "r" / "model.safetensors").stat().st_mode & 0o777 == 0o644
    assert (ws / "r" / "chosen.txt").stat().st_mode & 0o777 == 0o600  # older than the run: its mode was chosen


BUGGY = r'''
import sys
from argsim.cli.app import app
import argsim.kpm.rank as rank_module

def buggy_rank(*args, **kwargs):
    return {}["a key that is not there"]

rank_module.rank_keypoints = buggy_rank
sys.argv = ["argsim", *sys.argv[1:]]
app()
'''


def test_an_unexpected_exception_is_one_line_exit_1(ws):
    (ws / "buggy.py").write_text(BUGGY, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("ARGSIM_DEBUG", None)
    done = subprocess.run([sys.executable, "buggy.py", "--quiet", "rank", "keypoints", "--arguments", "arguments.csv",
                           "--key-points", "key_points.csv", "--out", "r"], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=300)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: unexpected KeyError") and "Traceback" not in done.stderr
    env["ARGSIM_DEBUG"] = "1"
    done = subprocess.run([sys.executable, "buggy.py", "--quiet", "rank", "keypoints", "--arguments", "arguments.csv",
                           "--key-points", "key_points.csv", "--out", "r"], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=300)
    assert "Traceback" in done.stderr


def test_a_reader_that_leaves_early_ends_the_command_quietly(monkeypatch):
    """`argsim models | head -1`: the output's reader closes the pipe, so the next write raises BrokenPipeError;
    the command ends as click ends it (exit 1), with no "unexpected ... bug" line, whatever it was printing."""
    from argsim.cli import groups

    def closed_pipe(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.delenv("ARGSIM_DEBUG", raising=False)  # the handling of unexpected errors as a user meets it
    monkeypatch.setattr(groups.console, "print", closed_pipe)
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 1 and "unexpected" not in result.output and "error" not in result.output
