"""`pip install argsim` without extras: the key point matching API runs, the CLI builds, and a feature whose package
is missing says in one line which package and extra bring it (argsim/extras.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from argsim.extras import EXTRAS, missing_message

ROOT = Path(__file__).resolve().parent.parent

#: every optional package of the extras absent in the child process (None in sys.modules: `import` fails and
#: `importlib.util.find_spec` says not installed, as without the package)
BLOCK = f"""
import sys
sys.modules.update(dict.fromkeys({sorted(EXTRAS)!r}))
"""


def run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ARGSIM_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)


def test_key_point_matching_and_the_cli_need_no_extra(tmp_path):
    res = run("""
import argsim
from argsim.cli.app import app
out = argsim.KeyPointMatcher(threshold=-1.0).match(["Nuclear plants emit no CO2.", "Reactors can melt down."],
                                                  ["Nuclear power is clean", "Nuclear power is dangerous"])
print(out["key_point"].tolist())
import gensim
""", tmp_path)
    assert "['Nuclear power is clean', 'Nuclear power is dangerous']" in res.stdout, res.stderr[-2000:]
    assert "ModuleNotFoundError" in res.stderr  # the block held: matching ran without the extras


def test_a_missing_extra_is_one_line_naming_it(tmp_path):
    res = run("""
from argsim.backend.words import load_word_vectors
try:
    load_word_vectors("glove50")
except Exception as exc:
    print(type(exc).__name__, exc)
""", tmp_path)
    want = "MissingDependency word vectors needs the package gensim: pip install 'argsim[lexical]'"
    assert res.stdout.strip() == want
    assert missing_message("ot.lp", "WMD") == "WMD needs the package POT: pip install 'argsim[lexical]'"
