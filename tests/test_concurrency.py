"""Two argsim processes at once (real processes, tiny inputs): merging rows into one results file loses none;
embedding into one output through one shared embedding cache, both finish and the output is whole and right."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent

MERGER = """
import sys
from argsim.results import write_results
who = sys.argv[1]
for i in range(int(sys.argv[2])):
    write_results("race", [{"method": f"{who}-{i}", "metric": "m", "value": float(i)}], command="test",
                  env={}, path=sys.argv[3], merge=True)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "ARGSIM_DEBUG": "1"}


@pytest.mark.slow
def test_two_processes_merging_into_one_results_file_lose_no_rows(tmp_path):
    path = tmp_path / "race.json"
    procs = [subprocess.Popen([sys.executable, "-c", MERGER, who, "25", str(path)], env=_env())
             for who in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    methods = {r["method"] for r in json.loads(path.read_text())["rows"]}
    assert methods == {f"{w}-{i}" for w in "ab" for i in range(25)}
    assert [p.name for p in tmp_path.iterdir()] == ["race.json"]  # no temporary or lock file is left


@pytest.mark.slow
def test_two_processes_embedding_through_one_cache_into_one_output(tmp_path):
    texts = tmp_path / "t.txt"
    texts.write_text("".join(f"sentence number {i} about argument mining\n" for i in range(40)), encoding="utf-8")
    argsim = [sys.executable, "-m", "argsim.cli.app", "-q", "--cache-dir", str(tmp_path / "cache")]
    out = tmp_path / "v.npy"
    procs = [subprocess.Popen([*argsim, "embed", str(texts), "--out", str(out)], env=_env(), cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in results] == [0, 0], results
    both = np.load(out)
    import argsim

    fresh = argsim.encode(texts.read_text(encoding="utf-8").splitlines(),
                          config=argsim.RunConfig(use_cache=False, quiet=True))
    np.testing.assert_allclose(both, fresh, atol=1e-5)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["t.txt", "v.npy"]
