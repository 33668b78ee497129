"""CPU inference backends against PyTorch fp32: speed, memory, vector agreement and every task's figure on slices,
by the task evaluators of `argsim evaluate` (the run docs/backends.md, "Measured", describes). These are quick
checks; which variant may become the CPU default is decided on the full test sets (`argsim.benchmarks.default_gate`).
Rows go to `<results folder>/backends.json` (merged).
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argsim.backend import get_encoder, registry
from argsim.backend.encoder import MAX_BATCH_SIZE
from argsim.config import SEED, RunConfig
from argsim.data.catalog import data_root
from argsim.errors import ArgsimError
from argsim.io import read_records
from argsim.measure import usable_cores
from argsim.metrics.record import Evaluation
from argsim.options import setting
from argsim.results import environment, result_rows, write_results
from argsim.schemas import text_records

if TYPE_CHECKING:  # the evaluators import sentence-transformers: loaded when a run starts
    from argsim.evaluation import CounterArgumentEvaluator, KPAMapEvaluator, TripletEvaluator

#: name -> (backend, quantize, precision)
VARIANTS = {"torch-fp32": ("torch", "none", "fp32"), "torch-bf16": ("torch", "none", "bf16"),
            "onnx-fp32": ("onnx", "none", "fp32"), "onnx-int8": ("onnx", "int8", "fp32"),
            "openvino-fp32": ("openvino", "none", "fp32"), "openvino-int8": ("openvino", "int8", "fp32"),
            "model2vec": ("torch", "none", "fp32")}
COUNTER_SETTINGS = ("sdoc", "sda", "epc", "epa")
#: every task figure: (the `BenchInputs` evaluator that measures it, the figure in its evaluation)
TASK_METRICS = {"kpm_strict_mAP": ("kpm", "strict_map"), "kpm_relaxed_mAP": ("kpm", "relaxed_map"),
                **{f"counter_{s}_acc1": ("counter", f"{s}_accuracy@1") for s in COUNTER_SETTINGS},
                "triplet_accuracy": ("triplets", "accuracy"), "minutes_triplet_accuracy": ("minutes", "accuracy")}


@dataclass(frozen=True)
class BackendBenchOptions:
    """What `run_backends_benchmark` measures (the defaults are the documented run); the options of `argsim bench
    backends` (`threads` and `variants` as comma lists there).

    Example:
        >>> BackendBenchOptions.quick().n
        300
    """

    n: int = setting(2000, "ArgKP training arguments timed for throughput.", min=1)
    batch_size: int = setting(64, "Encoding batch.", min=1, max=MAX_BATCH_SIZE)
    repeats: int = setting(1, "Throughput passes (the best counts).", min=1)
    threads: tuple[int, ...] = setting((1, 2), "Thread counts timed (comma list).")
    quality_threads: int = setting(1, "Threads of the latency and task passes.", min=1)
    counter_points: int = setting(50, "First test points of each counterargs-18 setting.", min=1)
    triplets: int = setting(500, "First thematic test triplets.", min=1)
    minutes_triplets: int = setting(500, "First mined minutes test triplets.", min=1)
    minutes_dir: Path = setting(Path("runs") / "minutes-triplets", "Folder of `argsim data triplets minutes --out` "
                                "(its test.jsonl).")
    variants: tuple[str, ...] = setting(tuple(VARIANTS), "Variants to measure (comma list).")
    static_model: Path = setting(Path("models") / "minilm-static", "The model2vec folder of the model2vec variant "
                                 "(distilled from minilm when missing).", cli=False)

    @classmethod
    def quick(cls, **changes: Any) -> BackendBenchOptions:
        """A short run: 300 texts, 20 points a setting, 200 triplets of each kind."""
        return cls(**{"n": 300, "counter_points": 20, "triplets": 200, "minutes_triplets": 200, **changes})


def _seconds(enc: Any, texts: list[str]) -> float:
    start = time.perf_counter()
    enc.encode(texts, use_cache=False, show_progress=False)
    return time.perf_counter() - start


def latency_ms(enc: Any, queries: list[str]) -> float:
    """Median milliseconds of encoding each query alone (no cache)."""
    return 1000 * statistics.median(_seconds(enc, [q]) for q in queries)


def speed_and_deltas(variant: dict[str, float], fp32: dict[str, float], thread_counts: Sequence[int]
                     ) -> tuple[float, dict[str, float]]:
    """(speed-up, task deltas) of a variant's figures against torch fp32's: the speed-up compares each one's best
    `sentences_per_s@T` over `thread_counts`; the deltas are every `TASK_METRICS` figure minus fp32's (rounded to 4
    decimals, as the rows store them).

    Example:
        >>> fig = {m: 0.5 for m in TASK_METRICS}
        >>> speed_and_deltas(fig | {"sentences_per_s@1": 600.0}, fig | {"sentences_per_s@1": 100.0}, [1])[0]
        6.0
    """
    speed = (max(variant[f"sentences_per_s@{t}"] for t in thread_counts)
             / max(fp32[f"sentences_per_s@{t}"] for t in thread_counts))
    return speed, {m: round(variant[m] - fp32[m], 4) for m in TASK_METRICS}


@dataclass
class BenchInputs:
    """The texts and the task evaluators (those of `argsim evaluate`, on slices) every variant is measured on."""

    files: list[Path]  # the ArgKP training arguments, the mined minutes test triplets
    texts: list[str]  # timed for throughput
    calibration: list[str]  # OpenVINO int8's calibration texts
    kpm: KPAMapEvaluator  # ArgKP dev (its `gold` also gives the latency and cosine texts)
    counter: CounterArgumentEvaluator  # the first test points of each setting
    triplets: TripletEvaluator  # cosine, ties wrong
    minutes: TripletEvaluator


def measure_variant(model: str, name: str, options: BackendBenchOptions,
                    inputs: BenchInputs, reference: dict[str, np.ndarray], log: Callable[[str], None]) -> dict:
    """One variant's figures: throughput at each thread count, latency, peak memory (this process's peak resident
    set since the variant started, Linux: unlike `argsim.measure.peak_memory_mb`, getrusage, never reset, it gives
    each variant its own peak), cosine to torch fp32's vectors (`reference`, filled by torch fp32 itself) and every
    `TASK_METRICS` figure; throughput is sentences per second (no cache), the best of `options.repeats` passes."""
    import torch

    backend, quantize, precision = VARIANTS[name]
    registry._LOADED.clear()
    gc.collect()
    with suppress(OSError):  # the peak resident set restarts here (VmHWM := VmRSS)
        Path("/proc/self/clear_refs").write_text("5")
    r: dict = {"load_average_start": round(os.getloadavg()[0], 2)}
    # no embedding cache (every figure computed); the exports stay in the cache folder for the next run
    base = RunConfig(device="cpu", precision=precision, backend=backend, quantize=quantize, quiet=True, use_cache=False)
    cal = inputs.calibration if quantize != "none" else None
    for threads in options.threads:
        torch.set_num_threads(threads)
        enc = get_encoder(model, batch_size=options.batch_size, config=replace(base, threads=threads), calibration=cal)
        enc.encode(inputs.texts[:64], use_cache=False, show_progress=False)  # warm-up (and any lazy build)
        r[f"sentences_per_s@{threads}"] = len(inputs.texts) / min(_seconds(enc, inputs.texts)
                                                                   for _ in range(options.repeats))
        log(f"{name}: {r[f'sentences_per_s@{threads}']:.1f} sentences/s at {threads} thread(s)")
    torch.set_num_threads(options.quality_threads)
    enc = get_encoder(model, batch_size=options.batch_size, config=replace(base, threads=options.quality_threads),
                      calibration=cal)
    kp_texts = list(dict.fromkeys(str(k.text) for k in inputs.kpm.gold.key_points))
    latency_ms(enc, kp_texts[-5:])  # warm-up of the one-text path
    r["latency_ms"] = latency_ms(enc, kp_texts[:30])
    r["peak_mb"] = None
    with suppress(OSError):
        status = Path("/proc/self/status").read_text().splitlines()
        r["peak_mb"] = next((round(int(line.split()[1]) / 1024, 1) for line in status if line.startswith("VmHWM:")),
                            None)
    vecs = enc.encode(list(dict.fromkeys(str(a.text) for a in inputs.kpm.gold.arguments)) + kp_texts,
                      show_progress=False)
    if name == "torch-fp32":
        reference["dev"] = vecs
    if name != "model2vec" and "dev" in reference:  # a static model's vectors live in another space
        ref = reference["dev"]
        cos = (ref * vecs).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(vecs, axis=1)
        r["cosine_mean"], r["cosine_min"] = float(cos.mean()), float(cos.min())
    found = {task: getattr(inputs, task).evaluate(enc) for task in ("kpm", "counter", "triplets", "minutes")}
    return r | {m: found[task][key] for m, (task, key) in TASK_METRICS.items()} | {
        "load_average_end": round(os.getloadavg()[0], 2)}


def variant_rows(results: dict[str, dict], options: BackendBenchOptions, inputs: BenchInputs,
                 distill_seconds: float | None, log: Callable[[str], None]) -> list:
    """The rows of the variants measured so far, each with its speed-up and task deltas against torch fp32."""
    fp32, rows = results.get("torch-fp32"), []
    for name, r in results.items():
        backend, quantize, precision = VARIANTS[name]
        env = environment(seed=SEED, device="cpu", precision=precision, data_files=inputs.files)
        env["conditions"] |= {"load_start": r["load_average_start"], "load_end": r["load_average_end"],
                              "threads_timed": list(options.threads), "threads_default": usable_cores()}
        env |= {"backend": backend, "quantize": quantize}
        figures = {k: round(v, 4) for k, v in r.items() if not k.startswith("load_average") and v is not None}
        extra: dict = {"n": options.n, "batch": options.batch_size, "counter_points": options.counter_points,
                       "latency_and_task_threads": options.quality_threads, "triplets": len(inputs.triplets.triplets),
                       "minutes_triplets": len(inputs.minutes.triplets),
                       "calibration": f"{len(inputs.calibration)} ArgKP train arguments"
                       if quantize == "int8" and backend == "openvino" else None}
        if name == "model2vec":
            extra |= {"static_model": f"argsim distill minilm --out {Path(options.static_model).name} (PCA 256)",
                      "distill_seconds": distill_seconds}
        if fp32 is not None:
            speed, deltas = speed_and_deltas(r, fp32, options.threads)
            figures["speedup_vs_torch_fp32"] = round(speed, 3)
            extra |= {"delta_vs_torch_fp32": deltas}
            log(f"{name}: {speed:.2f}x torch fp32, max |task delta| {max(abs(d) for d in deltas.values()):.4f}")
        primary = "sentences_per_s@2" if "sentences_per_s@2" in figures else next(iter(figures))
        rows += result_rows(Evaluation("backends", figures, primary_metric=primary,
                                       data="argkp+counterargs18+wikipedia+minutes", n=options.n),
                            method=name, model="all-MiniLM-L6-v2" if name != "model2vec" else "minilm-static",
                            split="mixed", setting=f"batch={options.batch_size}", extra=extra, env=env,
                            peak_mb=r.get("peak_mb"))
    return rows


def run_backends_benchmark(options: BackendBenchOptions = BackendBenchOptions(),
                           log: Callable[[str], None] = lambda line: None) -> list:
    """Measure every variant of `options` and write (merge) its rows into backends.json; the rows are returned.

    Each variant's rows are written as soon as it is measured (kept if a later one fails). A variant's speed-up
    compares its best thread count with torch fp32's best (torch oversubscribed at 2 threads must not flatter the
    others).

    Args:
        options: the run (`BackendBenchOptions`).
        log: receives one line per measurement.

    Returns:
        The `ResultRow`s of the variants measured.

    Raises:
        ArgsimError: the mined minutes triplets are missing, or a variant name is unknown.

    Example:
        >>> run_backends_benchmark(BackendBenchOptions.quick(variants=("torch-fp32",)))  # doctest: +SKIP
    """
    from argsim.backend.runtime import calibration_choice
    from argsim.evaluation import CounterArgumentEvaluator, KPAMapEvaluator, TripletEvaluator

    variant_names(options.variants)
    minutes_test = Path(options.minutes_dir) / "test.jsonl"
    if not minutes_test.is_file():
        raise ArgsimError(f"{minutes_test} is missing: run `argsim data triplets minutes --out "
                          f"{options.minutes_dir}` first")
    train_csv = data_root() / "argkp" / "arguments_train.csv"
    train = [r["argument"] for r in read_records(train_csv, text_records("argument"))]
    inputs = BenchInputs([train_csv, minutes_test], train[:options.n], calibration_choice(train[options.n:])[0],
                         KPAMapEvaluator.from_dataset("dev"),
                         CounterArgumentEvaluator.from_dataset("test", options.counter_points,
                                                               settings=COUNTER_SETTINGS),
                         TripletEvaluator.from_dataset("test", options.triplets),
                         TripletEvaluator.from_dataset("test", options.minutes_triplets, dataset="minutes",
                                                       folder=options.minutes_dir))
    results: dict[str, dict] = {}
    reference: dict[str, np.ndarray] = {}
    distill_seconds = None
    static = Path(options.static_model)
    try:
        for name in [v for v in VARIANTS if v in options.variants]:
            if name == "model2vec" and not static.is_dir():
                from argsim.backend.static import distill

                try:
                    distill_seconds = distill("minilm", static).seconds
                except (ArgsimError, ImportError, RuntimeError, ValueError) as exc:
                    log(f"skip model2vec: {exc}")
                    continue
                log(f"distilled minilm -> {static} in {distill_seconds:.0f}s")
            model = str(static) if name == "model2vec" else "minilm"
            results[name] = r = measure_variant(model, name, options, inputs, reference, log)
            write_results("backends", variant_rows(results, options, inputs, distill_seconds, log), merge=True)
            log(f"{name}: " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    finally:
        registry._LOADED.clear()
    return variant_rows(results, options, inputs, distill_seconds, lambda line: None)


def parse_threads(text: str) -> tuple[int, ...]:
    """'1,2' -> (1, 2).

    Example:
        >>> parse_threads("1,2")
        (1, 2)
    """
    try:
        out = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise ArgsimError(f"--threads: '{text}' is not a comma list of thread counts") from None
    if not out or min(out) < 1:
        raise ArgsimError(f"--threads: '{text}' is not a comma list of thread counts >= 1")
    return out


def variant_names(text: str | Sequence[str]) -> tuple[str, ...]:
    """A comma list (or sequence) of variant names, checked against `VARIANTS`."""
    names = tuple(v.strip() for v in (text.split(",") if isinstance(text, str) else text) if v.strip())
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or not names:
        raise ArgsimError(f"--variants: unknown variant(s) {', '.join(unknown) or '(none given)'}: choose from "
                          f"{', '.join(VARIANTS)}")
    return names
