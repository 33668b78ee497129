"""CPU inference backends against PyTorch fp32: speed, memory, vector agreement and every task's figure.

Variants of all-MiniLM-L6-v2: torch fp32, torch bf16, onnx fp32, onnx int8 (dynamic), openvino fp32, openvino int8
(static, calibrated on 300 ArgKP training arguments outside the throughput slice). For each one:

- throughput: sentences/s on the first `--n` ArgKP training arguments, batch 64, no cache, at 1 and 2 threads
  (torch: `torch.set_num_threads`; ONNX Runtime / OpenVINO: intra-op threads), best of `--repeats`;
- one-query latency: median ms of 30 single short key points encoded one at a time;
- peak memory: the process's peak resident set while the variant loads and runs (VmHWM reset before it);
- cosine to torch fp32 of every ArgKP dev argument and key point (mean and minimum);
- task figures, each also as the difference to torch fp32: KPM strict / relaxed mAP on ArgKP dev (zero-shot,
  argument vs key point), counterargs-18 accuracy@1 (emb-cosine) on the first `--counter-points` test points of
  the sdoc, sda, epc and epa settings, thematic triplet accuracy (cosine, ties wrong) on the first
  `--triplets` test triplets of triplets-sen, and minutes triplet accuracy (cosine, ties wrong) on the first
  `--minutes-triplets` test triplets mined from the assembly minutes (`argsim data triplets minutes --out
  runs/minutes-triplets`, GiNZA thresholds, seed 13; the encoder scored is MiniLM, as on every other task).

Gates (docs/backends.md): a variant may become the CPU default when every task figure is within 0.005 of torch fp32
and its 2-thread throughput is >= 5x torch fp32's. Writes bench/results/backends.json.

    argsim data triplets minutes --out runs/minutes-triplets   # once: the minutes test triplets
    python bench/bench_backends.py [--quick] [--n 2000] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: (name, backend, quantize, precision)
VARIANTS = [("torch-fp32", "torch", "none", "fp32"), ("torch-bf16", "torch", "none", "bf16"),
            ("onnx-fp32", "onnx", "none", "fp32"), ("onnx-int8", "onnx", "int8", "fp32"),
            ("openvino-fp32", "openvino", "none", "fp32"), ("openvino-int8", "openvino", "int8", "fp32"),
            ("model2vec", "torch", "none", "fp32")]
#: the static model distilled from MiniLM for the `model2vec` variant (`argsim distill minilm --out ...`; the
#: benchmark distills it when missing)
STATIC = REPO / "models" / "minilm-static"
COUNTER_SETTINGS = ("sdoc", "sda", "epc", "epa")
GATE_DELTA, GATE_SPEEDUP = 0.005, 5.0


def reset_peak() -> None:
    """Reset this process's peak resident set (Linux: VmHWM := VmRSS)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def throughput(enc, texts: list[str], repeats: int) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        enc.encode(texts, use_cache=False, show_progress=False)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def latency_ms(enc, queries: list[str]) -> float:  # noqa: ANN001
    times = []
    for q in queries:
        start = time.perf_counter()
        enc.encode([q], use_cache=False, show_progress=False)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def counter_accuracy(enc, slices: dict) -> dict[str, float]:  # noqa: ANN001
    """accuracy@1 of the cosine of backend embeddings (point vs candidate) per setting (texts encoded once)."""
    texts = sorted({p.text for points, pools, _ in slices.values() for p in points}
                   | {c.text for _, pools, _ in slices.values() for pool in pools.values() for c in pool})
    vec = dict(zip(texts, enc.encode(texts, normalize=True, show_progress=False), strict=True))
    out = {}
    for setting, (points, pools, gold) in slices.items():
        hits = 0
        for p in points:
            pool = pools[p.id]
            scores = np.stack([vec[c.text] for c in pool]) @ vec[p.text]
            hits += pool[int(np.argmax(scores))].id == gold[p.id]
        out[f"counter_{setting}_acc1"] = hits / len(points)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 texts, 20 points a setting, 200 triplets")
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
    if args.quick:
        args.n, args.counter_points, args.triplets, args.minutes_triplets = 300, 20, 200, 200
    minutes_test = args.minutes_dir / "test.jsonl"
    if not minutes_test.is_file():
        print(f"{minutes_test} is missing: run `argsim data triplets minutes --out {args.minutes_dir}` first",
              file=sys.stderr)
        return 2

    import torch

    from argsim.api.datasets import load_dataset
    from argsim.backend import get_encoder, registry
    from argsim.backend.runtime import calibration_choice, default_threads
    from argsim.config import RunConfig
    from argsim.counter.core.run import dataset_points
    from argsim.data.argkp import load_argkp
    from argsim.data.catalog import data_root
    from argsim.evaluation import Evaluation
    from argsim.io import read_records
    from argsim.kpm.scoring import score_key_points
    from argsim.metrics.kpa_map import evaluate_map
    from argsim.metrics.triplets import triplet_scores
    from argsim.results import environment, result_rows, write_results

    train_csv = data_root() / "argkp" / "arguments_train.csv"
    train = [r["argument"] for r in read_records(train_csv, required=["argument"])]
    texts, calibration = train[:args.n], calibration_choice(train[args.n:])[0]
    dev = load_argkp("dev")
    slices = {s: dataset_points("test", s, limit=args.counter_points) for s in COUNTER_SETTINGS}
    trips = load_dataset("wikipedia-triplets", split="test").head(args.triplets)
    minutes = read_records(minutes_test, required=["anchor", "positive", "negative"])[:args.minutes_triplets]
    thread_counts = [int(t) for t in args.threads.split(",")]
    default = default_threads()
    results: dict[str, dict] = {}
    reference: dict[str, np.ndarray] = {}
    wanted = [v for v in VARIANTS if v[0] in args.variants.split(",")]
    command = " ".join(["python bench/bench_backends.py", *sys.argv[1:]])

    def rows_of(results: dict) -> list:  # the rows of the variants measured so far
        fp32 = results.get("torch-fp32")
        task_metrics = ["kpm_strict_mAP", "kpm_relaxed_mAP", *(f"counter_{s}_acc1" for s in COUNTER_SETTINGS),
                        "triplet_accuracy", "minutes_triplet_accuracy"]
        rows = []
        for name, r in results.items():
            backend, quantize, precision = next(v[1:] for v in VARIANTS if v[0] == name)
            env = environment(seed=13, device="cpu", precision=precision, data_files=[train_csv, minutes_test])
            env["conditions"] |= {"load_start": r["load_average_start"], "load_end": r["load_average_end"],
                                  "threads_timed": thread_counts, "threads_default": default}
            env |= {"backend": backend, "quantize": quantize}
            figures = {k: round(v, 4) for k, v in r.items() if not k.startswith("load_average") and v is not None}
            extra: dict = {"n": args.n, "batch": args.batch_size, "counter_points": args.counter_points,
                           "latency_and_task_threads": args.quality_threads,
                           "triplets": len(trips), "minutes_triplets": len(minutes),
                           "calibration": f"{len(calibration)} ArgKP train arguments"
                           if quantize == "int8" and backend == "openvino" else None}
            if name == "model2vec":
                extra |= {"static_model": "argsim distill minilm --out models/minilm-static (PCA 256)",
                          "distill_seconds": distill_seconds}
            if fp32 is not None:
                # each at its best thread count: torch oversubscribed at 2 threads must not flatter the others
                speed = (max(r[f"sentences_per_s@{t}"] for t in thread_counts)
                         / max(fp32[f"sentences_per_s@{t}"] for t in thread_counts))
                deltas = {m: round(r[m] - fp32[m], 4) for m in task_metrics}
                figures["speedup_vs_torch_fp32"] = round(speed, 3)
                passes = all(abs(d) <= GATE_DELTA for d in deltas.values()) and speed >= GATE_SPEEDUP
                extra |= {"delta_vs_torch_fp32": deltas, "passes_gates": passes}
                print(f"{name}: {speed:.2f}x torch fp32, max |task delta| {max(abs(d) for d in deltas.values()):.4f}, "
                      f"gates {'PASS' if passes else 'fail'}", flush=True)
            rows += result_rows(Evaluation("backends", figures, primary_metric="sentences_per_s@2"
                                           if "sentences_per_s@2" in figures else next(iter(figures)),
                                           data="argkp+counterargs18+wikipedia+minutes", n=args.n),
                                method=name, model="all-MiniLM-L6-v2" if name != "model2vec" else "minilm-static",
                                split="mixed", setting=f"batch={args.batch_size}",
                                extra=extra, env=env, command=command, peak_mb=r.get("peak_mb"))
        return rows

    distill_seconds = None
    try:
        for name, backend, quantize, precision in wanted:
            if name == "model2vec" and not STATIC.is_dir():
                from argsim.backend.static import distill
                from argsim.errors import ArgsimError

                try:
                    distill_seconds = distill("minilm", STATIC).seconds
                except (ArgsimError, ImportError, RuntimeError, ValueError) as exc:
                    print(f"skip model2vec: {exc}", file=sys.stderr, flush=True)
                    continue
                print(f"distilled minilm -> {STATIC} in {distill_seconds:.0f}s", flush=True)
            registry._LOADED.clear()
            gc.collect()
            reset_peak()
            r: dict = {"load_average_start": round(os.getloadavg()[0], 2)}
            model = str(STATIC) if name == "model2vec" else "minilm"
            # no embedding cache (every figure computed); the exports stay in the cache folder for the next run
            base = RunConfig(device="cpu", precision=precision, backend=backend, quantize=quantize, quiet=True,
                             use_cache=False)
            for threads in thread_counts:
                torch.set_num_threads(threads)
                enc = get_encoder(model, batch_size=args.batch_size, config=base.with_(threads=threads),
                                  calibration=calibration if quantize != "none" else None)
                enc.encode(texts[:64], use_cache=False, show_progress=False)  # warm-up (and any lazy build)
                r[f"sentences_per_s@{threads}"] = throughput(enc, texts, args.repeats)
                print(f"{name}: {r[f'sentences_per_s@{threads}']:.1f} sentences/s at {threads} thread(s)", flush=True)
            torch.set_num_threads(args.quality_threads)
            enc = get_encoder(model, batch_size=args.batch_size, config=base.with_(threads=args.quality_threads),
                              calibration=calibration if quantize != "none" else None)
            kp_texts = list(dict.fromkeys(str(k.text) for k in dev.key_points))
            latency_ms(enc, kp_texts[-5:])  # warm-up of the one-text path (thread pools at the default count)
            r["latency_ms"] = latency_ms(enc, kp_texts[:30])
            r["peak_mb"] = peak_rss_mb()
            arg_texts = list(dict.fromkeys(str(a.text) for a in dev.arguments))
            vecs = enc.encode(arg_texts + kp_texts, show_progress=False)
            if name == "torch-fp32":
                reference["dev"] = vecs
            if name != "model2vec":  # a static model's vectors live in another space
                ref = reference["dev"]
                cos = (ref * vecs).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(vecs, axis=1)
                r["cosine_mean"], r["cosine_min"] = float(cos.mean()), float(cos.min())
            kpm = evaluate_map(score_key_points(dev, enc), dev)
            r["kpm_strict_mAP"], r["kpm_relaxed_mAP"] = kpm.strict, kpm.relaxed
            r |= counter_accuracy(enc, slices)
            tv = [enc.encode(list(trips[f]), show_progress=False) for f in ("anchor", "positive", "negative")]
            r["triplet_accuracy"] = triplet_scores(*tv, distance="cosine", ties="wrong").accuracy
            mv = [enc.encode([t[f] for t in minutes], show_progress=False) for f in ("anchor", "positive", "negative")]
            r["minutes_triplet_accuracy"] = triplet_scores(*mv, distance="cosine", ties="wrong").accuracy
            r["load_average_end"] = round(os.getloadavg()[0], 2)
            results[name] = r
            write_results("backends", rows_of(results), command=command, merge=True)  # kept if a later one fails
            print(f"{name}: " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                                          for k, v in r.items()), flush=True)
    finally:
        registry._LOADED.clear()

    write_results("backends", rows_of(results), command=command, merge=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
