"""Peak memory of `argsim embed` on a long file: one text a line (or a CSV file, a header and an id and a text a
row), 100,000 and 1,000,000 lines, each embedded into a .npy file by a fresh `argsim` process (an empty embedding
cache) with a static word-vector model, the fastest argsim ships. The input streams when the peak stays flat as the
file grows tenfold, and a CSV streams when its peak is that of the same texts one a line.

    python bench/bench_large_input.py                      # glove50, 100k and 1M lines
    python bench/bench_large_input.py --lines 10000        # a quick check
    python bench/bench_large_input.py --format csv --lines 1000000

Rows go to bench/results/large-input.json (merged; `embed-large-input`): the wall seconds, the texts per second
and the peak resident memory of each run, with the conditions of the machine. Each output is checked: its shape,
and its rows equal to those of the same texts embedded in this process.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from argsim.results import environment, result_rows, write_results

#: runs `argsim` as a child and prints its peak resident memory (KiB) last: one process per measured run
_CHILD = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(rc)")

#: the `argsim` command of this Python environment (also when it is not on PATH)
ARGSIM = shutil.which("argsim") or str(Path(sys.executable).with_name("argsim"))

#: words the synthetic texts are drawn from (each line also carries its number, so every text is distinct)
WORDS = ("school uniforms should be banned because they limit the freedom of students to express themselves "
         "the government must subsidize renewable energy since fossil fuels harm health and the climate we "
         "should abolish capital punishment as it is irreversible and does not deter crime better than prison "
         "social media brings people together but spreads misinformation and hurts young people").split()


def write_texts(path: Path, lines: int, seed: int = 13, fmt: str = "text") -> int:
    """`lines` distinct texts of 8 to 20 words, one a line (`fmt` csv: a header `id,text`, then `t<i>,<text>`
    rows); returns the file's size in bytes."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n") if fmt == "csv" else None
        if out is not None:
            out.writerow(["id", "text"])
        for start in range(0, lines, 10_000):
            n = min(10_000, lines - start)
            lengths = rng.integers(8, 21, size=n)
            picks = rng.integers(0, len(WORDS), size=int(lengths.sum()))
            at = 0
            for i, k in enumerate(lengths):
                text = " ".join(WORDS[j] for j in picks[at:at + k]) + f" {start + i}"
                if out is not None:
                    out.writerow([f"t{start + i}", text])
                else:
                    fh.write(text + "\n")
                at += k
    return path.stat().st_size


def read_sample(path: Path, rows: set[int], fmt: str) -> dict[int, str]:
    """The texts of the given 0-based rows of a file `write_texts` wrote."""
    with open(path, encoding="utf-8", newline="") as fh:
        texts = (r["text"] for r in csv.DictReader(fh)) if fmt == "csv" else (line.rstrip("\n") for line in fh)
        return {i: t for i, t in enumerate(texts) if i in rows}


def timed_embed(argv: list[str], cache: Path) -> tuple[float, float]:
    """(wall seconds, peak MiB) of one `argsim embed` process using the cache folder `cache`."""
    env = {**os.environ, "ARGSIM_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv], env=env, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip().splitlines()[-2:]}")
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def check_output(out: Path, texts_file: Path, lines: int, model: str, fmt: str) -> None:
    """The .npy holds one row per line, and a sample of rows equals the same texts embedded here."""
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    vectors = np.load(out, mmap_mode="r")
    if vectors.shape[0] != lines:
        sys.exit(f"{out}: {vectors.shape[0]} rows for {lines} lines")
    rows = np.random.default_rng(0).choice(lines, size=min(lines, 200), replace=False)
    sample = read_sample(texts_file, set(rows.tolist()), fmt)
    enc = get_encoder(model, config=RunConfig(use_cache=False, quiet=True))
    expected = enc.encode([sample[i] for i in sorted(sample)])
    if not np.allclose(np.asarray(vectors[sorted(sample)]), expected, atol=1e-5):
        sys.exit(f"{out}: rows differ from the same texts embedded in one call")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="glove50", help="the model to embed with")
    ap.add_argument("--lines", type=int, nargs="+", default=[100_000, 1_000_000], help="file lengths to measure")
    ap.add_argument("--format", choices=["text", "csv"], default="text",
                    help="text: one text a line; csv: a header, then an id and a text a row (column text)")
    args = ap.parse_args()
    command = "python bench/bench_large_input.py" + "".join(f" {a}" for a in sys.argv[1:])
    conditions = environment(device="cpu")  # taken before the runs: the load they start under
    rows = []
    for lines in args.lines:
        with tempfile.TemporaryDirectory() as tmp:
            suffix = ".csv" if args.format == "csv" else ".txt"
            texts_file, out = Path(tmp) / f"texts{suffix}", Path(tmp) / "vectors.npy"
            size = write_texts(texts_file, lines, fmt=args.format)
            argv = [ARGSIM, "--quiet", "embed", str(texts_file), "--model", args.model, "--out", str(out)]
            seconds, peak_mb = timed_embed(argv, Path(tmp) / "cache")
            check_output(out, texts_file, lines, args.model, args.format)
        split = f"{lines:,} {'CSV rows' if args.format == 'csv' else 'lines'} ({size / 2**20:.0f} MiB)"
        setting = "cold cache, .npy" + (", CSV input (column text)" if args.format == "csv" else "")
        rows += result_rows({"wall_seconds": round(seconds, 1), "texts_per_second": round(lines / seconds, 1)},
                            method="embed-large-input", model=args.model, split=split, setting=setting,
                            peak_mb=round(peak_mb, 1), extra={"lines": lines, "bytes": size, "format": args.format},
                            env=conditions, command=command)
        print(f"{split}: {seconds:.1f} s, {lines / seconds:,.0f} texts/s, peak {peak_mb:.0f} MiB", flush=True)
    print(write_results("large-input", rows, merge=True, command=command))


if __name__ == "__main__":
    main()
