"""CPU inference backends against PyTorch fp32: speed, memory, vector agreement and every task's figure.

The measurement is `argsim.benchmarks.backends.run_backends_benchmark` (its docstring says what each figure is);
`argsim bench backends` runs the same. Gates (docs/backends.md): a variant may become the CPU default when every
task figure is within 0.005 of torch fp32 and its throughput is >= 5x torch fp32's. Writes
bench/results/backends.json.

    argsim data triplets minutes --out runs/minutes-triplets   # once: the minutes test triplets
    python bench/bench_backends.py [--quick] [--n 2000] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(REPO))

from argsim.benchmarks.backends import (  # noqa: E402
    VARIANTS,
    BackendBenchOptions,
    parse_threads,
    run_backends_benchmark,
    variant_names,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 texts, 20 points a setting, 200 triplets of each kind")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", default="1,2", help="thread counts to time (comma list)")
    ap.add_argument("--quality-threads", type=int, default=1, help="threads of the latency and task passes")
    ap.add_argument("--counter-points", type=int, default=50)
    ap.add_argument("--triplets", type=int, default=500)
    ap.add_argument("--minutes-triplets", type=int, default=500, help="first N mined minutes test triplets")
    ap.add_argument("--minutes-dir", type=Path, default=REPO / "runs" / "minutes-triplets",
                    help="folder of `argsim data triplets minutes` (its test.jsonl)")
    ap.add_argument("--variants", default=",".join(v[0] for v in VARIANTS))
    args = ap.parse_args()
    chosen = {"threads": parse_threads(args.threads), "quality_threads": args.quality_threads,
              "repeats": args.repeats, "batch_size": args.batch_size, "minutes_dir": args.minutes_dir,
              "variants": variant_names(args.variants), "static_model": REPO / "models" / "minilm-static"}
    sizes = {"n": args.n, "counter_points": args.counter_points, "triplets": args.triplets,
             "minutes_triplets": args.minutes_triplets}
    options = BackendBenchOptions.quick(**chosen) if args.quick else BackendBenchOptions(**sizes, **chosen)
    run_backends_benchmark(options, command=" ".join(["python bench/bench_backends.py", *sys.argv[1:]]),
                           log=lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
