"""How long `argsim evaluate MODEL` takes on every task: once with an empty embedding cache (cold), once more with
the cache that run filled (warm), each a fresh process as a user starts it.

    python bench/bench_evaluate.py                 # minilm, all seven tasks
    python bench/bench_evaluate.py --quick         # --limit 50 on every task

Rows go to bench/results/evaluate.json (merged; `evaluate-timing`): the wall seconds and the peak memory of each
run, the tasks it scored, and the conditions of the machine. The two runs' figures must agree (the cache
changes the time, never a figure): the script fails when they do not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from argsim.benchmarks.evaluate import TASKS
from argsim.results import environment, result_rows, write_results

#: runs `argsim` as a child and prints its peak resident memory (KiB) last: one process per measured run
_CHILD = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(rc)")


def timed_run(argv: list[str], cache: Path) -> tuple[float, float, dict]:
    """(wall seconds, peak MiB, the rows it wrote) of one `argsim evaluate` process using `cache`."""
    import time

    out = cache.parent / f"rows-{time.monotonic_ns()}.json"
    env = {**os.environ, "ARGSIM_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv, "--out", str(out)], env=env, stderr=subprocess.PIPE,
                          text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip().splitlines()[-2:]}")
    peak_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    return seconds, peak_mb, {(r["setting"], r["metric"]): r["value"] for r in rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="minilm", help="the model to evaluate")
    ap.add_argument("--quick", action="store_true", help="--limit 50 on every task")
    args = ap.parse_args()
    argv = ["argsim", "--quiet", "evaluate", args.model] + (["--limit", "50"] if args.quick else [])
    conditions = environment(device="cpu")  # taken before the runs: the load they start under
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        runs = {phase: timed_run(argv, cache) for phase in ("cold-cache", "warm-cache")}
    (_, _, cold), (_, _, warm) = runs["cold-cache"], runs["warm-cache"]
    if cold != warm:
        sys.exit(f"the warm run's figures differ from the cold run's: {sorted(set(cold.items()) ^ set(warm.items()))}")
    tasks = sorted({setting for setting, _ in cold})
    command = "python bench/bench_evaluate.py" + "".join(f" {a}" for a in sys.argv[1:])
    for phase, (seconds, peak_mb, _) in runs.items():
        rows += result_rows({"wall_seconds": round(seconds, 1), "tasks": float(len(tasks))}, method="evaluate-timing",
                            model=args.model, split=f"{len(tasks)} of {len(TASKS)} tasks" + (
                                " (--limit 50)" if args.quick else ""), setting=phase, peak_mb=round(peak_mb, 1),
                            extra={"tasks": tasks}, env=conditions, command=command)
        print(f"{phase}: {seconds:.1f} s, peak {peak_mb:.0f} MiB, {len(tasks)} tasks", flush=True)
    print(write_results("evaluate", rows, merge=True, command=command))


if __name__ == "__main__":
    main()
