"""Scale benchmark: embed, index 1M vectors, retrieve top-30 for 1,000 queries; local vs Ray.

Synthetic corpus, built from real sentences: every argument of counterargs-18 (all splits) is split into sentences
(at . ! ? followed by a space); a synthetic text is two distinct real sentences joined by a space, drawn with a
fixed seed, so texts are realistic in length and vocabulary and there are as many distinct ones as needed.

Stages (each with wall time, throughput and the stage's peak resident memory, VmHWM reset before the stage):
1. embed: the local engine encodes synthetic texts (minilm, batch 64, no cache) for `--embed-seconds`;
2. local vs Ray: the same `--ratio-texts` texts embedded by the local engine (one process, torch's threads) and by
   a Ray Data actor pool of 2 workers here (one model and one thread per actor), as a ratio of wall times; the
   per-shard cost (one worker, one shard of `--shard-rows` texts) and the fixed cost (actor start + model load)
   project the wall time of N workers: fixed + ceil(texts / shard_rows) / N * shard_cost;
3. index: `--index-size` vectors. The first ones are the vectors of stage 1; every further synthetic text (two real
   sentences, drawn from the first `--compose-sentences` of the corpus sentences) gets the normalised sum of its
   two sentences' vectors (those sentences are embedded for real): a stand-in for embedding 1M texts, which this
   2-core machine cannot do in the time (the rows say how many vectors were embedded and how many composed);
4. query encoders: `--queries` real sentences (not in the index as such) encoded by torch fp32, ONNX Runtime,
   OpenVINO (fp32) and ONNX int8 at the library's thread count (`usable_cores`): the median latency of one
   query at a time and the cosine of every query vector to torch's. The fastest encoder whose vectors equal
   torch's (every cosine >= 0.9999) answers the queries below; int8 vectors do not, so it is timed only;
5. retrieve: faiss exact search (IndexFlatIP) of the torch query vectors is the reference top-30. Each kind of
   `--kinds` (`argsim.counter.neural.index.build_index`: IVF-Flat; IVF with 8-bit scalar codes re-scoring its
   top 30 x `--refine` exactly; IVF with 4-bit fast-scan PQ codes re-scoring its top 30 x `--refine-pq`
   exactly; or binary-ivf, sign bits re-scored to `--binary-depth`) is built with `--nlist` lists and searched at
   every `--nprobes`: recall@30 of the 1,000 queries against the reference, the batched search time, and the
   latency of one query at a time, its encoding by the chosen encoder included (faiss at the same thread count).
   A last row names the fastest configuration that keeps recall@30 >= `--target-recall`.

    python bench/bench_scale.py [--embed-seconds 1200] [--index-size 1000000] [--skip-ray]

Writes bench/results/scale.json (rows labelled `scale:*`; the load average at the start and end in each row's
`env["conditions"]`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from argsim.results import ResultRow, environment, result_rows, write_results

TASK = "scale"
MODEL = "minilm"
REPO = Path(__file__).resolve().parent.parent
#: a query encoder is eligible when every query vector has at least this cosine to torch fp32's (identical vectors)
IDENTICAL_COSINE = 0.9999
#: row families this benchmark measures again on every run: older rows of these are dropped, not merged
REMEASURED = ("scale:compose-", "scale:index-", "scale:retrieve-", "scale:rerank-", "scale:query-encoder-",
              "scale:best-")


def load() -> float:
    return round(os.getloadavg()[0], 2)


class Stage:
    """Wall time and peak RSS of one stage (VmHWM reset at the start, where the kernel allows it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> Stage:
        try:
            Path("/proc/self/clear_refs").write_text("5")
        except OSError:
            pass
        self.load_start = load()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        self.peak_mb = _vm("VmHWM")
        self.load_end = load()

    def extra(self, **values: object) -> dict:
        return {"load_start": self.load_start, "load_end": self.load_end, **values}


def _vm(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def build_binary_ivf(vectors: np.ndarray, nlist: int, seed: int):
    """Sign bits of every vector (48 bytes at 384 dimensions) in a faiss IndexBinaryIVF (Hamming distance); its
    candidates are re-scored exactly from the float vectors (`rerank_exact`)."""
    import faiss

    codes = np.packbits(vectors > 0, axis=1)
    dim = vectors.shape[1]
    index = faiss.IndexBinaryIVF(faiss.IndexBinaryFlat(dim), dim, nlist)
    rng = np.random.default_rng(seed)
    index.train(codes[np.sort(rng.choice(len(codes), size=min(len(codes), 40 * nlist), replace=False))])
    index.add(codes)
    return index


def index_megabytes(index) -> float:
    """Size of a faiss index serialised (what it holds in memory, about)."""
    import faiss

    data = (faiss.serialize_index_binary(index) if isinstance(index, faiss.IndexBinary)
            else faiss.serialize_index(index))
    return round(data.nbytes / 2**20, 1)


def drop_stale_rows(path: Path) -> None:
    """Remove from `path` the rows of the stages every run measures again (an older configuration's rows would
    linger beside the new ones under other keys); the Ray rows of an earlier run stay when `--skip-ray`."""
    from argsim.io import read_json, write_json

    if not path.is_file():
        return
    data = read_json(path)
    data["rows"] = [r for r in data.get("rows", []) if not r["method"].startswith(REMEASURED)]
    write_json(path, data)


def real_sentences() -> list[str]:
    """Distinct sentences (>= 4 words) of every counterargs-18 argument."""
    from argsim.data.counterargs import load_counterargs

    corpus = load_counterargs()
    seen: dict[str, None] = {}
    for split in ("training", "validation", "test"):
        for arg in corpus.split(split):
            for s in re.split(r"(?<=[.!?])\s+", arg.text):
                s = s.strip()
                if len(s.split()) >= 4:
                    seen.setdefault(s, None)
    return list(seen)


def synthetic_pairs(n_sentences: int, n: int, seed: int) -> np.ndarray:
    """n (i, j) pairs of distinct sentence indices."""
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n_sentences, size=n)
    j = (i + rng.integers(1, n_sentences, size=n)) % n_sentences
    return np.stack([i, j], 1)


def embed_for(encoder, texts: list[str], seconds: float, chunk: int = 512) -> tuple[np.ndarray, float]:
    """Encode texts chunk by chunk until `seconds` have passed; (vectors, seconds taken)."""
    parts, start = [], time.perf_counter()
    for a in range(0, len(texts), chunk):
        parts.append(encoder.encode(texts[a:a + chunk], use_cache=False, show_progress=False))
        if time.perf_counter() - start >= seconds:
            break
    return np.concatenate(parts), time.perf_counter() - start


def ray_embed(texts: list[str], workers: int, shard_rows: int) -> tuple[float, dict]:
    """Embed `texts` with a Ray Data actor pool of `workers`; (wall seconds, manifest)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from argsim.engine import get_engine
    from argsim.engine.embedding import EmbedSpec, embed_ray

    with tempfile.TemporaryDirectory(prefix="argsim-scale-") as tmp:
        src = Path(tmp) / "texts"  # one Parquet file per shard: Ray reads one block per file
        src.mkdir()
        for n, a in enumerate(range(0, len(texts), shard_rows)):
            pq.write_table(pa.table({"text": texts[a:a + shard_rows]}), src / f"part-{n:05d}.parquet")
        engine = get_engine("ray")
        _ = engine.workers  # start Ray before the clock
        start = time.perf_counter()
        manifest = embed_ray(src, Path(tmp) / "shards", EmbedSpec(model=MODEL), engine, batch_rows=shard_rows,
                             workers=workers)
        return time.perf_counter() - start, manifest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embed-seconds", type=float, default=1200, help="budget of stage 1 (default ~20 min)")
    ap.add_argument("--index-size", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=30)
    ap.add_argument("--ratio-texts", type=int, default=2048, help="texts embedded by local and by Ray (stage 2)")
    ap.add_argument("--shard-rows", type=int, default=256)
    ap.add_argument("--latency-queries", type=int, default=100, help="queries timed one at a time")
    ap.add_argument("--compose-sentences", type=int, default=5000, help="sentences whose pairs make the vectors "
                    "beyond the embedded texts")
    ap.add_argument("--nlist", type=int, default=4096, help="inverted lists of every IVF index")
    ap.add_argument("--nprobes", default="16,32,64,128", help="lists probed (comma list; each one measured)")
    ap.add_argument("--kinds", default="ivf,ivfsq8,ivfpqfs",
                    help="approximate indexes (build_index kinds, or binary-ivf: sign bits + exact re-scoring)")
    ap.add_argument("--refine", type=int, default=4, help="ivfsq8: k x this candidates re-scored exactly")
    ap.add_argument("--refine-pq", type=int, default=10, help="ivfpqfs: k x this candidates re-scored exactly")
    ap.add_argument("--binary-depth", type=int, default=1000, help="binary-ivf: candidates re-scored exactly")
    ap.add_argument("--query-backends", default="torch,onnx,openvino,onnx-int8",
                    help="query encoders timed; the fastest whose vectors equal torch's answers the queries")
    ap.add_argument("--target-recall", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--skip-ray", action="store_true")
    args = ap.parse_args()

    import faiss

    from argsim.backend import get_encoder
    from argsim.config import RunConfig
    from argsim.counter.neural.index import build_index, exact_index, recall_at_k, rerank_exact
    from argsim.measure import usable_cores

    rows: list[ResultRow] = []
    cmd = " ".join(["python bench/bench_scale.py", *sys.argv[1:]])
    run = {"model": MODEL, "setting": "synthetic", "env": environment(seed=args.seed, device="cpu"), "command": cmd}
    cfg = RunConfig(use_cache=False, quiet=True, device="cpu")
    sentences = real_sentences()
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(sentences))
    query_ids, index_sentence_ids = order[: args.queries], order[args.queries:]
    queries = [sentences[i] for i in query_ids]
    pool = [sentences[i] for i in index_sentence_ids]
    pairs = synthetic_pairs(len(pool), 200_000, args.seed)
    texts = [f"{pool[i]} {pool[j]}" for i, j in pairs]
    encoder = get_encoder(MODEL, config=cfg)
    encoder.encode(["warm up"], use_cache=False)
    print(f"{len(sentences):,} real sentences; {len(pool):,} for the corpus, {len(queries):,} queries", flush=True)

    # 1. embedding throughput (local engine)
    with Stage("embed") as st:
        emb, secs = embed_for(encoder, texts, args.embed_seconds)
    rate = len(emb) / secs
    rows += result_rows({"texts_per_second": round(rate, 1)}, method="scale:embed-local",
                         seconds=round(secs, 1), peak_mb=st.peak_mb,
                         extra=st.extra(texts=len(emb), budget_seconds=args.embed_seconds, torch_threads=
                                        __import__("torch").get_num_threads()), **run)
    print(f"embed: {len(emb):,} texts in {secs:.0f} s = {rate:.1f}/s (load {st.load_end})", flush=True)

    # 2. local vs Ray (2 workers) on the same texts; per-shard costs
    if not args.skip_ray:
        import ray

        sample = texts[len(emb): len(emb) + args.ratio_texts]
        with Stage("ratio-local") as st_l:
            encoder.encode(sample, use_cache=False, show_progress=False)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning")
        with Stage("ratio-ray") as st_r:
            ray_secs, _ = ray_embed(sample, 2, args.shard_rows)
        one = sample[: args.shard_rows]
        fixed_secs, _ = ray_embed(one[:8], 1, args.shard_rows)  # actor start + model load + one tiny batch
        shard1_secs, _ = ray_embed(one, 1, args.shard_rows)
        shard_cost = max(shard1_secs - fixed_secs, 1e-3)
        ray.shutdown()
        ratio = st_l.seconds / ray_secs
        n_shards = -(-args.index_size // args.shard_rows)
        projection = {str(n): round(fixed_secs + n_shards / n * shard_cost, 1) for n in (2, 8, 32, 128)}
        rows += result_rows({"speedup_ray2_over_local": round(ratio, 3)}, method="scale:embed-local-vs-ray2",
                            seconds=round(ray_secs, 1), peak_mb=max(st_l.peak_mb, st_r.peak_mb),
                            extra=st_r.extra(texts=len(sample), local_seconds=round(st_l.seconds, 1),
                                             ray_seconds=round(ray_secs, 1), ray_workers=2,
                                             shard_rows=args.shard_rows,
                                             shard_seconds_one_worker=round(shard_cost, 2),
                                             fixed_seconds=round(fixed_secs, 1),
                                             projected_seconds_for_index_size_by_workers=projection,
                                             note="Ray wall time includes starting 2 actors and loading 2 "
                                                  "models"), **run)
        print(f"local {st_l.seconds:.1f} s vs Ray(2) {ray_secs:.1f} s on {len(sample)} texts: x{ratio:.2f}; "
              f"shard {shard_cost:.1f} s, fixed {fixed_secs:.1f} s", flush=True)

    # 3. index 1M vectors
    with Stage("compose") as st:
        n_real = min(len(emb), args.index_size)
        n_compose = min(args.compose_sentences, len(pool))
        composed = synthetic_pairs(n_compose, args.index_size - n_real, args.seed + 1)
        used = np.unique(composed.ravel())
        sent_vecs = np.zeros((n_compose, emb.shape[1]), dtype=np.float32)
        if len(used):
            sent_vecs[used] = encoder.encode([pool[i] for i in used], use_cache=False, show_progress=False)
        vectors = np.empty((args.index_size, emb.shape[1]), dtype=np.float32)
        vectors[:n_real] = emb[:n_real]
        for a in range(0, len(composed), 100_000):
            c = composed[a:a + 100_000]
            vectors[n_real + a:n_real + a + len(c)] = sent_vecs[c[:, 0]] + sent_vecs[c[:, 1]]
        faiss.normalize_L2(vectors)
    del emb, sent_vecs
    composition = {"vectors": args.index_size, "embedded_texts": n_real, "embedded_sentences": int(len(used)),
                   "composed": int(args.index_size - n_real),
                   "composed_as": "normalised sum of the vectors of the text's two real sentences"}
    rows += result_rows({"seconds": round(st.seconds, 1)}, method="scale:compose-vectors",
                         seconds=round(st.seconds, 1), peak_mb=st.peak_mb, extra=st.extra(**composition), **run)
    print(f"vectors: {args.index_size:,} ({n_real:,} embedded texts, {len(used):,} sentences embedded) in "
          f"{st.seconds:.0f} s", flush=True)

    # 4. query encoders: one query at a time, at the library's thread count; identical vectors or not eligible
    threads = usable_cores()
    faiss.omp_set_num_threads(threads)
    lat_n = min(args.latency_queries, len(queries))
    reference = encoder.encode(queries, normalize=True, use_cache=False, show_progress=False)
    query_encoders: dict[str, tuple] = {}
    for name in args.query_backends.split(","):
        backend, _, quantize = name.partition("-")
        quantize = quantize or "none"
        qcfg = replace(cfg, backend=backend, quantize=quantize)
        enc = encoder if name == "torch" else get_encoder(MODEL, config=qcfg)
        with Stage(f"query-{name}") as st:
            vecs = enc.encode(queries, normalize=True, use_cache=False, show_progress=False)
            cos = np.einsum("qd,qd->q", vecs, reference)
            for text in queries[-5:]:  # warm-up of the one-text path
                enc.encode([text], normalize=True, use_cache=False, show_progress=False)
            lat = []
            for text in queries[:lat_n]:
                t0 = time.perf_counter()
                enc.encode([text], normalize=True, use_cache=False, show_progress=False)
                lat.append((time.perf_counter() - t0) * 1000)
        eligible = bool(cos.min() >= IDENTICAL_COSINE)
        query_encoders[name] = (enc, vecs, float(np.median(lat)), eligible)
        rows += result_rows({"latency_ms_median": round(float(np.median(lat)), 2)},
                            method=f"scale:query-encoder-{name}", peak_mb=st.peak_mb,
                            extra=st.extra(backend=backend, quantize=quantize, threads=threads,
                                           latency_queries=lat_n,
                                           latency_ms_p95=round(float(np.percentile(lat, 95)), 2),
                                           cosine_to_torch_min=round(float(cos.min()), 6),
                                           cosine_to_torch_mean=round(float(cos.mean()), 6),
                                           eligible_identical_vectors=eligible), **run)
        print(f"query encoder {name}: {np.median(lat):.2f} ms a query at {threads} threads, cosine to torch min "
              f"{cos.min():.6f} ({'eligible' if eligible else 'not eligible'})", flush=True)
    best_encoder = min((n for n, v in query_encoders.items() if v[3]), key=lambda n: query_encoders[n][2])
    qenc, q, _, _ = query_encoders[best_encoder]
    print(f"query encoder: {best_encoder}", flush=True)

    # 5. indexes; retrieve top-k for every query (recall against exact search of the torch query vectors) and the
    # latency of one query at a time, its encoding by the chosen query encoder included
    with Stage("flat") as st:
        flat = exact_index(vectors)
    rows += result_rows({"build_seconds": round(st.seconds, 1)}, method="scale:index-flat",
                         seconds=round(st.seconds, 1), peak_mb=st.peak_mb,
                         extra=st.extra(vectors=args.index_size), **run)
    with Stage("flat-search") as st:
        _, exact_ids = flat.search(reference, args.k)
    flat_search = st.seconds

    def latency(search, n: int) -> list[float]:
        out = []
        for text in queries[:n]:
            t0 = time.perf_counter()
            search(qenc.encode([text], normalize=True, use_cache=False, show_progress=False))
            out.append((time.perf_counter() - t0) * 1000)
        return out

    def retrieve_row(kind: str, ids: np.ndarray, search_seconds: float, lat: list[float], st: Stage,
                     **extra: object) -> float:
        rec = recall_at_k(ids, exact_ids, args.k)
        retrieve_rows.extend(result_rows(
            {f"recall@{args.k}": round(rec, 4)}, method=f"scale:retrieve-{kind}", seconds=round(search_seconds, 2),
            peak_mb=st.peak_mb,
            extra=st.extra(queries=len(queries), candidates=args.index_size, k=args.k,
                           search_seconds_batched=round(search_seconds, 2),
                           latency_ms_median=round(float(np.median(lat)), 2),
                           latency_ms_p95=round(float(np.percentile(lat, 95)), 2), latency_queries=len(lat),
                           latency_includes_query_encoding=True, query_encoder=best_encoder, threads=threads,
                           **composition, **extra), **run))
        print(f"retrieve {kind} {extra}: recall@{args.k} {rec:.4f}, batched {search_seconds:.2f} s, latency median "
              f"{np.median(lat):.2f} ms", flush=True)
        return rec

    retrieve_rows: list[ResultRow] = []
    with Stage("flat-latency") as st:
        lat = latency(lambda v, index=flat: index.search(v, args.k), min(lat_n, 20))
    retrieve_row("flat", exact_ids, flat_search, lat, st)
    del flat
    candidates: list[tuple[float, float, str]] = []  # (latency, recall, label) of every configuration
    nprobes = [int(x) for x in args.nprobes.split(",")]
    for kind in args.kinds.split(","):
        with Stage(kind) as st:
            if kind == "binary-ivf":
                index = build_binary_ivf(vectors, args.nlist, args.seed)
            else:
                index = build_index(vectors, kind, nlist=args.nlist, nprobe=nprobes[0], seed=args.seed,
                                    train_size=min(args.index_size, 40 * args.nlist),
                                    refine=args.refine_pq if kind == "ivfpqfs" else args.refine)
        mb = index_megabytes(index)
        rows += result_rows({"build_seconds": round(st.seconds, 1)}, method=f"scale:index-{kind}",
                             seconds=round(st.seconds, 1), peak_mb=st.peak_mb,
                             extra=st.extra(vectors=args.index_size, nlist=args.nlist, index_mb=mb,
                                            refine_k_factor={"ivfsq8": args.refine, "ivfpqfs": args.refine_pq}
                                            .get(kind)), **run)
        print(f"index {kind}: {st.seconds:.0f} s, {mb} MB, peak {st.peak_mb} MiB", flush=True)
        for nprobe in nprobes:
            if kind == "binary-ivf":
                index.nprobe = nprobe
                depth = args.binary_depth

                def search(v: np.ndarray, index=index, depth=depth) -> tuple:
                    _, cand = index.search(np.packbits(v > 0, axis=1), depth)
                    return rerank_exact(vectors, v, cand)
                extra = {"nprobe": nprobe, "rescored_exactly": depth}
            else:
                faiss.extract_index_ivf(index).nprobe = nprobe

                def search(v: np.ndarray, index=index) -> tuple:
                    return index.search(v, args.k)
                extra = {"nprobe": nprobe, "nlist": args.nlist}
                if kind in ("ivfsq8", "ivfpqfs"):
                    extra["refine_k_factor"] = args.refine_pq if kind == "ivfpqfs" else args.refine
            with Stage(f"{kind}-{nprobe}") as st:
                t0 = time.perf_counter()
                ids = search(q)[1][:, : args.k]
                batched = time.perf_counter() - t0
                lat = latency(search, lat_n)
            label = f"{kind}@nprobe={nprobe}"
            rec = retrieve_row(label, ids, batched, lat, st, **extra)
            candidates.append((float(np.median(lat)), rec, label))
        del index
    rows += retrieve_rows
    passing = sorted(c for c in candidates if c[1] >= args.target_recall)
    if passing:
        lat_best, rec_best, label = passing[0]
        rows += result_rows({"latency_ms_median": round(lat_best, 2)}, method="scale:best-under-recall-target",
                            extra={"configuration": label, f"recall@{args.k}": round(rec_best, 4),
                                   "target_recall": args.target_recall, "target_latency_ms": 10.0,
                                   "meets_latency_target": lat_best <= 10.0, "query_encoder": best_encoder,
                                   "threads": threads, **composition}, **run)
        print(f"best at recall >= {args.target_recall}: {label} {lat_best:.2f} ms (recall {rec_best:.4f})")
    else:
        print(f"no configuration reached recall {args.target_recall}")

    drop_stale_rows(REPO / "bench" / "results" / f"{TASK}.json")
    write_results(TASK, rows, command=cmd, env=run["env"], merge=True)
    print(f"written bench/results/{TASK}.json ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
