"""Embedding benchmark: argsim's backend vs `SentenceTransformer.encode` on the same model, texts and batch.

Encodes 2,000 ArgKP-2021 training arguments with all-MiniLM-L6-v2. Prints sentences/s of both, their ratio,
the speed-up of a cached second run and peak memory; writes bench/results/embed.json.
Run: `.venv/bin/python bench/bench_embed.py [--quick] [--n 2000] [--batch-size 64] [--repeats 3]`
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from argsim.backend import get_encoder
from argsim.config import RunConfig
from argsim.data.catalog import data_root
from argsim.evaluation import Evaluation
from argsim.io import read_records
from argsim.measure import peak_memory_mb
from argsim.results import environment, result_rows, write_results
from argsim.schemas import text_records


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="500 texts, one repeat")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    n, repeats = (500, 1) if args.quick else (args.n, args.repeats)
    csv_path = data_root() / "argkp" / "arguments_train.csv"
    texts = [r["argument"] for r in read_records(csv_path, text_records("argument"))][:n]
    seed = RunConfig().seed
    cache_root = Path(tempfile.mkdtemp(prefix="argsim-bench-"))
    try:
        enc = get_encoder("minilm", device=args.device, batch_size=args.batch_size,
                          config=RunConfig(cache_dir=cache_root / "warmup", quiet=True))
        model = enc.model
        model.encode(texts[:128], batch_size=args.batch_size)  # warm-up of both paths (same weights)
        raw_times, backend_times, cached_times = [], [], []
        for rep in range(repeats):
            start = time.perf_counter()
            raw = model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True, show_progress_bar=False)
            raw_times.append(time.perf_counter() - start)
            enc.configure(cache_dir=cache_root / f"run{rep}", quiet=True)  # a fresh, empty cache: the cold run
            # computes and stores every vector
            start = time.perf_counter()
            vecs = enc.encode(texts, show_progress=False)
            backend_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            cached = enc.encode(texts, show_progress=False)
            cached_times.append(time.perf_counter() - start)
            assert abs(vecs - raw).max() < 1e-4 and (cached == vecs).all()
            enc.cache().close()
        raw_s, backend_s, cached_s = min(raw_times), min(backend_times), min(cached_times)
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)

    raw_sps, backend_sps, cached_sps = n / raw_s, n / backend_s, n / cached_s
    ratio, speedup = backend_sps / raw_sps, backend_s / cached_s
    peak = peak_memory_mb()
    table = Table(title=f"embedding {n:,} ArgKP arguments, all-MiniLM-L6-v2, batch {args.batch_size}, "
                        f"{args.device}, best of {repeats}")
    for col in ("path", "seconds", "sentences/s"):
        table.add_column(col)
    table.add_row("SentenceTransformer.encode", f"{raw_s:.2f}", f"{raw_sps:,.0f}")
    table.add_row("argsim backend (cold cache)", f"{backend_s:.2f}", f"{backend_sps:,.0f}")
    table.add_row("argsim backend (cached re-run)", f"{cached_s:.3f}", f"{cached_sps:,.0f}")
    console = Console()
    console.print(table)
    console.print(f"backend/raw throughput ratio {ratio:.3f} (goal >= 0.95); cached speed-up {speedup:.0f}x "
                  f"(goal >= 20x); peak memory {peak:,.0f} MB")
    command = f"python bench/bench_embed.py{' --quick' if args.quick else ''}"
    common = dict(model="all-MiniLM-L6-v2", setting=f"n={n},batch={args.batch_size}", peak_mb=peak, command=command,
                  env=environment(seed=seed, device=args.device, data_files=[csv_path],
                                  models={"minilm": enc.identity}))

    def measured(metric: str, value: float) -> Evaluation:
        return Evaluation.single("embed", metric, value, data="argkp-train", n=n)

    rows = (result_rows(measured("sentences_per_s", round(raw_sps, 1)), method="sentence-transformers",
                        seconds=raw_s, **common)
            + result_rows(measured("sentences_per_s", round(backend_sps, 1)), method="argsim-backend-cold",
                          seconds=backend_s, **common)
            + result_rows(measured("sentences_per_s", round(cached_sps, 1)), method="argsim-backend-cached",
                          seconds=cached_s, **common)
            + result_rows(measured("throughput_ratio_vs_raw", round(ratio, 4)), method="argsim-backend-cold",
                          **common)
            + result_rows(measured("cached_speedup", round(speedup, 1)), method="argsim-backend-cached", **common))
    write_results("embed", rows, command=command)
    ok = ratio >= 0.95 and speedup >= 20
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
