"""CPU inference backends against PyTorch fp32: speed, memory, vector agreement and every task's figure.

The measurement is `argsim.benchmarks.backends.run_backends_benchmark` (its docstring says what each figure is);
`argsim bench backends` runs the same. Writes bench/results/backends.json; its speed-ups order the variants that
pass the statistical rule of the CPU default (`argsim bench default`, docs/backends.md).

    argsim data triplets minutes --out runs/minutes-triplets   # once: the minutes test triplets
    python bench/bench_backends.py [--quick] [--n 2000] [--threads 1,2]   # the options of `argsim bench backends`
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(REPO))

from argsim.cli.app import app


def main() -> int:
    """`argsim bench backends` with this script's arguments, run from the repository (its runs/ and models/)."""
    os.chdir(REPO)
    return app(["bench", "backends", *sys.argv[1:]], standalone_mode=False) or 0


if __name__ == "__main__":
    sys.exit(main())
