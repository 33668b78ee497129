"""`make bench`: run every bench/bench_*.py in turn (pass --quick through), report failures at the end."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    extra = sys.argv[1:]
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {script.name} {' '.join(extra)}", flush=True)
        start = time.perf_counter()
        rc = subprocess.call([sys.executable, str(script), *extra])
        print(f"=== {script.name}: exit {rc} after {time.perf_counter() - start:.0f}s", flush=True)
        if rc != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
