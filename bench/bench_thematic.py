"""Thematic similarity benchmark (Ein Dor et al. 2018 on the substitute Wikipedia data).

For every model: TDC accuracy on the test triplets (triplets-sen and triplets-titles), the sentence clustering
benchmark of the test articles (k-means and agglomerative, MI/AMI/RI/ARI averaged over articles), SICK
relatedness (Pearson r, Spearman rho, MSE), plus training throughput, and a PNG of one test article's sentences
in 2-D before and after training. Writes bench/results/thematic.json (with --quick: runs/thematic-quick.json on
small slices, no training).

Models: mean-vectors (GloVe 6B 50d), MiniLM zero-shot, the BiLSTM triplet networks (triplets-sen,
triplets-titles, their concatenation sen-titles, and the two alternative-negative variants when trained) and
MiniLM fine-tuned with TripletLoss. Missing data and models are built first with the documented bounded
settings (`--no-train` to skip models that are not there).

    .venv/bin/python bench/bench_thematic.py            # full run
    .venv/bin/python bench/bench_thematic.py --quick    # smoke run on slices
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from argsim.settings import seed_everything

DATA = REPO / "runs" / "thematic" / "data"
MODELS = REPO / "models"
SEED = 13
PLOT = REPO / "docs" / "img" / "thematic_article_2d.png"

# Published figures: argsim.published (task "thematic": Table 3 TDC accuracy on triplets-sen test; Tables 4 and 5
# were lost in the text conversion of the paper we have, so no published figure is filled in for them).

# name -> (model argument, L1 or cosine for TDC, training recipe or None)
SPECS = {
    "mean-vectors": ("glove50", "cosine", None),
    "minilm-zero-shot": ("minilm", "cosine", None),
    "triplets-sen": (str(MODELS / "thematic-sen"), "l1",
                     dict(arch="bilstm", data="triplets-sen-train.jsonl", max_triplets=40000, max_minutes=20)),
    "triplets-titles": (str(MODELS / "thematic-titles"), "l1",
                        dict(arch="bilstm", data="triplets-titles-train.jsonl", epochs=3, max_minutes=12)),
    "triplets-sen-titles": (str(MODELS / "thematic-sen-titles"), "l1", dict(arch="concat")),
    "triplets-sen-rand-section": (str(MODELS / "thematic-sen-random-section"), "l1",
                                  dict(arch="bilstm", data="triplets-sen-random-section-train.jsonl",
                                       max_triplets=40000, max_minutes=12, optional=True)),
    "triplets-sen-rand-art": (str(MODELS / "thematic-sen-random-article"), "l1",
                              dict(arch="bilstm", data="triplets-sen-random-article-train.jsonl",
                                   max_triplets=40000, max_minutes=12, optional=True)),
    "minilm-finetuned": (str(MODELS / "thematic-minilm"), "cosine",
                         dict(arch="minilm", data="triplets-sen-train.jsonl", max_triplets=6000, batch_size=16,
                              max_minutes=25)),
}


def read_jsonl(path: Path, limit: int | None = None) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return rows[:limit] if limit else rows


def ensure_data() -> None:
    from argsim.data.catalog import dataset_dir
    from argsim.data.wikipedia import load_articles
    from argsim.thematic.build import build_datasets

    for neg, probe in (("adjacent", "triplets-sen-test.jsonl"), ("random-section", "triplets-sen-random-section-"
                       "train.jsonl"), ("random-article", "triplets-sen-random-article-train.jsonl")):
        if not (DATA / probe).is_file():
            print(f"building thematic data ({neg} negatives) -> {DATA}", flush=True)
            build_datasets(load_articles(dataset_dir("wikipedia")), DATA, negatives=neg, seed=SEED)


def ensure_model(name: str) -> bool:
    """Train a missing model with its bounded recipe; False if it stays missing."""
    path, _, recipe = SPECS[name]
    if recipe is None or (Path(path) / ("config.json" if recipe["arch"] != "minilm" else "modules.json")).is_file():
        return True
    if recipe["arch"] == "concat":
        from argsim.thematic.bilstm import save_concat

        parts = {"sen": MODELS / "thematic-sen", "titles": MODELS / "thematic-titles"}
        if all((p / "model.pt").is_file() for p in parts.values()):
            save_concat(Path(path), parts)
            return True
        return False
    if ARGS.no_train:
        return False
    rows = read_jsonl(DATA / recipe["data"])
    print(f"training {name} on {len(rows):,} triplets ({recipe})", flush=True)
    if recipe["arch"] == "bilstm":
        from argsim.trainers.thematic_bilstm import ThematicTrainConfig, train_bilstm

        train_bilstm(rows, Path(path), ThematicTrainConfig(epochs=recipe.get("epochs", 1), seed=SEED,
                                                   max_triplets=recipe.get("max_triplets"),
                                                   max_minutes=recipe.get("max_minutes")))
    else:
        from argsim.trainers.thematic_minilm import ThematicTrainConfig, finetune_sentence_transformer

        finetune_sentence_transformer(rows, Path(path), ThematicTrainConfig(
            max_triplets=recipe["max_triplets"], batch_size=recipe["batch_size"], seed=SEED,
            max_minutes=recipe["max_minutes"], lr=2e-5, margin=1.0, lora_rank=0))  # docs/training.md's recipe
    return True


def bench_command() -> str:
    return (".venv/bin/python bench/bench_thematic.py" + (" --quick" if ARGS.quick else "")
            + f" --scb-articles {ARGS.scb_articles} --sick-train {ARGS.sick_train} --sick-test {ARGS.sick_test}"
            + (" --only " + " ".join(ARGS.only) if ARGS.only else ""))


DATA_FILES = [DATA / f for f in ("split.json", "triplets-sen-test.jsonl", "triplets-titles-test.jsonl",
                                 "scb-test.jsonl")]


def model_env(name: str) -> dict:
    """The environment of one model's rows: versions, seed, data hashes and that model's fingerprint."""
    from argsim.backend.fingerprint import fingerprint
    from argsim.results import environment

    path = Path(SPECS[name][0])
    return environment(seed=SEED, device="cpu", data_files=DATA_FILES,
                       models={name: fingerprint(path)} if path.exists() else {})


def training_rows(name: str, path: str, env: dict):
    from argsim.evaluation import Evaluation
    from argsim.results import result_rows

    p = Path(path)
    stats = None
    if (p / "config.json").is_file():
        stats = json.loads((p / "config.json").read_text()).get("training")
    if (p / "argsim_training.json").is_file():
        t = json.loads((p / "argsim_training.json").read_text())
        stats = {"triplets_seen": t.get("triplets_seen", t["triplets"] * t["epochs"]), "seconds": t["seconds"],
                 "triplets_per_second": t["triplets_per_second"]}
    if not stats:
        return []
    ev = Evaluation("training", {m: float(stats[m]) for m in ("triplets_per_second", "seconds", "triplets_seen")},
                    "triplets_per_second", data="train")
    return result_rows(ev, method="training", model=name, setting="1 torch thread", env=env,
                       command=bench_command())


def scb_slice(n_articles: int | None) -> list[dict]:
    """The SCB test rows of a seeded random sample of `n_articles` test articles (all when None or 0)."""
    import random

    scb = read_jsonl(DATA / "scb-test.jsonl")
    titles = sorted({r["article"] for r in scb})
    if n_articles and n_articles < len(titles):
        keep = set(random.Random(SEED).sample(titles, n_articles))
        scb = [r for r in scb if r["article"] in keep]
    return scb


CLUSTERINGS = (("kmeans", "ward"), ("agglomerative", "ward"), ("agglomerative", "average"))


def _setting(alg: str, linkage: str) -> str:
    return alg if alg == "kmeans" else f"{alg}-{linkage}"


def scb_rows(name: str, scb: list[dict], clusterings, env: dict) -> list:
    from argsim.evaluation import ClusteringEvaluator
    from argsim.measure import timed
    from argsim.results import result_rows

    rows = []
    for alg, linkage in clusterings:
        with timed() as t:
            ev = ClusteringEvaluator(scb, "test", alg, linkage, seed=SEED).evaluate(SPECS[name][0])
        rows += result_rows(ev, method="scb-clustering", model=name,
                            setting=_setting(alg, linkage), seconds=t["seconds"],
                            extra={"articles": ev.n, "sentences": len(scb)}, env=env, command=bench_command())
        print(f"  {name} SCB {_setting(alg, linkage)}: " + " ".join(f"{m} {v:.3f}" for m, v in ev.metrics.items()),
              flush=True)
    return rows


def evaluate(name: str, quick: bool, env: dict) -> list:
    from argsim.backend import get_encoder
    from argsim.data.catalog import dataset_dir
    from argsim.data.sick import load_sick
    from argsim.evaluation import SICKEvaluator
    from argsim.measure import peak_memory_mb, timed
    from argsim.metrics.triplets import triplet_scores
    from argsim.published import published
    from argsim.results import result_rows

    model, distance, _ = SPECS[name]
    enc = get_encoder(model)
    rows = []
    n_trip = 600 if quick else None
    for kind in ("sen", "titles"):
        trips = read_jsonl(DATA / f"triplets-{kind}-test.jsonl", n_trip)
        with timed() as t:
            vecs = [enc.encode([r[f] for r in trips]) for f in ("anchor", "positive", "negative")]
            s = triplet_scores(*vecs, distance=distance, ties="wrong")
        paper = published("thematic", f"tdc/{name}") if kind == "sen" else None
        rows += result_rows(s.evaluation("test"), method="tdc-accuracy", model=name,
                            setting=f"triplets-{kind}/{distance}", metrics=["accuracy"], paper={"accuracy": paper},
                            seconds=t["seconds"], peak_mb=peak_memory_mb(), extra={"n": s.n}, env=env,
                            command=bench_command())
        print(f"  {name} TDC {kind}: {s.accuracy:.4f} ({s.n} triplets, {t['seconds']:.0f}s)", flush=True)
    scb = scb_slice(6 if quick else ARGS.scb_articles)
    rows += scb_rows(name, scb, CLUSTERINGS, env)
    folder = dataset_dir("sick")
    lim = (300, 100, 300) if quick else (ARGS.sick_train or None, 200, ARGS.sick_test or None)
    with timed() as t:
        s = SICKEvaluator(load_sick(folder, "train")[:lim[0]], load_sick(folder, "trial")[:lim[1]],
                          load_sick(folder, "test")[:lim[2]]).evaluate(enc)
    rows += result_rows(s, method="sick-relatedness", model=name, setting=f"logreg C={s.details['c']}",
                        seconds=t["seconds"], extra={"n": s.n}, env=env, command=bench_command())
    print(f"  {name} SICK: r {s['pearson']:.4f} rho {s['spearman']:.4f} mse {s['mse']:.4f}", flush=True)
    return rows


PARTS = REPO / "runs" / "thematic-parts"


def evaluate_cached(name: str) -> list[dict]:
    """Rows of one model; with --reuse, taken from runs/thematic-parts/<name>.json when the model is unchanged
    (lets several processes evaluate disjoint models with --only, then one --reuse run assembles)."""
    from argsim.backend.fingerprint import fingerprint

    path = Path(SPECS[name][0])
    key = (f"{fingerprint(path) if path.exists() else SPECS[name][0]}:{ARGS.scb_articles}:{ARGS.sick_train}:"
           f"{ARGS.sick_test}")
    part = PARTS / f"{name}{'-quick' if ARGS.quick else ''}.json"
    if ARGS.reuse and part.is_file():
        saved = json.loads(part.read_text())
        if saved["key"] == key:
            print(f"  {name}: reusing {part}", flush=True)
            rows = saved["rows"]
            for r in rows:  # parts written before the linkage option: their agglomerative rows are average
                if r["setting"] == "agglomerative":
                    r["setting"] = "agglomerative-average"
            have = {r["setting"] for r in rows if r["method"] == "scb-clustering"}
            missing = [c for c in CLUSTERINGS if _setting(*c) not in have]
            if missing:
                scb = scb_slice(6 if ARGS.quick else ARGS.scb_articles)
                rows += [r.as_dict() for r in scb_rows(name, scb, missing, model_env(name))]
                part.write_text(json.dumps({"key": key, "rows": rows}), encoding="utf-8")
            return rows
    env = model_env(name)
    rows = [r.as_dict() for r in evaluate(name, ARGS.quick, env) + training_rows(name, SPECS[name][0], env)]
    PARTS.mkdir(parents=True, exist_ok=True)
    part.write_text(json.dumps({"key": key, "rows": rows}), encoding="utf-8")
    return rows


def plot_article(out: Path) -> None:
    """One test article's sentences in 2-D (PCA), coloured by section: BiLSTM untrained vs trained and MiniLM
    zero-shot vs fine-tuned."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import torch
    from sklearn.decomposition import PCA

    from argsim.backend import get_encoder
    from argsim.thematic.bilstm import load_model
    from argsim.vectors import l2_normalize

    scb = read_jsonl(DATA / "scb-test.jsonl")
    sizes: dict[str, int] = {}
    for r in scb:
        sizes[r["article"]] = sizes.get(r["article"], 0) + 1
    article = min((a for a, n in sizes.items() if 60 <= n <= 150), key=lambda a: abs(sizes[a] - 100),
                  default=next(iter(sizes)))
    rows = [r for r in scb if r["article"] == article]
    texts, labels = [r["text"] for r in rows], np.array([r["label"] for r in rows])
    panels = []
    sen = MODELS / "thematic-sen"
    if (sen / "model.pt").is_file():
        model, vocab, _ = load_model(sen)
        torch.manual_seed(SEED)
        for mod in (model.lstm, model.project, model.context):
            for p in mod.parameters():
                torch.nn.init.uniform_(p, -0.05, 0.05) if p.dim() == 1 else torch.nn.init.xavier_uniform_(p)
        with torch.inference_mode():
            untrained = model(*vocab.batch(texts)).numpy()
        panels += [("BiLSTM, untrained (random init)", untrained),
                   ("BiLSTM triplets-sen, trained", get_encoder(str(sen)).encode(texts))]
    panels.append(("MiniLM zero-shot", get_encoder("minilm").encode(texts)))
    if (MODELS / "thematic-minilm" / "modules.json").is_file():
        panels.append(("MiniLM fine-tuned (TripletLoss)", get_encoder(str(MODELS / "thematic-minilm")).encode(texts)))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2))
    cmap = plt.get_cmap("tab10" if labels.max() < 10 else "tab20")
    sections = {r["label"]: r["section"] for r in rows}
    for ax, (title, vecs) in zip(np.atleast_1d(axes), panels, strict=True):
        unit = l2_normalize(vecs)
        xy = PCA(n_components=2, random_state=SEED).fit_transform(unit)
        for lab in sorted(sections):
            m = labels == lab
            ax.scatter(xy[m, 0], xy[m, 1], s=14, color=cmap(lab), label=sections[lab][:28])
        ax.set_title(title, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    np.atleast_1d(axes)[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(f"Test article '{article}': {len(texts)} sentences, PCA of unit vectors, colour = section")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"plot -> {out}", flush=True)


ORDER = ["mean-vectors", "minilm-zero-shot", "triplets-sen", "triplets-titles", "triplets-sen-titles",
         "triplets-sen-rand-section", "triplets-sen-rand-art", "minilm-finetuned"]


def markdown_tables(rows: list[dict]) -> str:
    """The README/docs tables from result rows: TDC + SICK, clustering, training."""
    def get(model: str, method: str, metric: str, setting: str | None = None) -> dict | None:
        return next((r for r in rows if r["model"] == model and r["method"] == method and r["metric"] == metric
                     and (setting is None or r["setting"].startswith(setting))), None)

    def fmt(r: dict | None, digits: int = 3) -> str:
        if r is None:
            return "–"
        paper = f" ({r['paper']:.2f})" if r.get("paper") is not None else ""
        return f"{r['value']:.{digits}f}{paper}"

    from argsim.markdown import table

    models = [m for m in ORDER if any(r["model"] == m for r in rows)]
    tdc = table(["model", "TDC acc. triplets-sen (paper)", "TDC acc. triplets-titles", "SICK r", "SICK ρ",
                 "SICK MSE"],
                [[m, fmt(get(m, "tdc-accuracy", "accuracy", "triplets-sen")),
                  fmt(get(m, "tdc-accuracy", "accuracy", "triplets-titles")),
                  *(fmt(get(m, "sick-relatedness", k)) for k in ("pearson", "spearman", "mse"))] for m in models])
    algs = ("kmeans", "agglomerative-ward", "agglomerative-average")
    clustering = table(["model", "k-means MI", "AMI", "RI", "ARI", "agglomerative (ward) MI", "AMI", "RI", "ARI",
                        "agglomerative (average) MI", "AMI", "RI", "ARI"],
                       [[m] + [fmt(get(m, "scb-clustering", k, alg)) for alg in algs
                               for k in ("MI", "AMI", "RI", "ARI")] for m in models])
    training = table(["model", "triplets seen", "training seconds", "triplets/s"],
                     [[m, f"{get(m, 'training', 'triplets_seen')['value']:,.0f}",
                       f"{get(m, 'training', 'seconds')['value']:,.0f}",
                       f"{get(m, 'training', 'triplets_per_second')['value']:.1f}"]
                      for m in models if get(m, "training", "seconds")])
    return "\n\n".join([tdc, clustering, training]) + "\n"


def main() -> int:
    import torch

    from argsim.results import write_results

    torch.set_num_threads(ARGS.threads)  # one thread per process is fastest on the shared 2-core machine
    seed_everything(SEED)
    began = time.perf_counter()
    ensure_data()
    rows = []
    names = [n for n in (ARGS.only or SPECS) if n in SPECS]
    for name in names:
        if not ARGS.quick and not ensure_model(name):
            print(f"skipping {name}: model not trained", flush=True)
            continue
        if SPECS[name][2] and not Path(SPECS[name][0]).exists():
            print(f"skipping {name}: {SPECS[name][0]} missing", flush=True)
            continue
        rows += evaluate_cached(name)
    if not ARGS.quick and not ARGS.only and not ARGS.no_plot:
        plot_article(PLOT)
    path = REPO / "runs" / "thematic-quick.json" if ARGS.quick else None
    out = write_results("thematic", rows, command=bench_command(), path=path, merge=bool(ARGS.only))
    print(f"results -> {out} ({time.perf_counter() - began:.0f}s)", flush=True)
    table = markdown_tables(json.loads(Path(out).read_text())["rows"])
    (REPO / "runs").mkdir(exist_ok=True)
    (REPO / "runs" / "thematic-tables.md").write_text(table, encoding="utf-8")
    print(table, flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small slices, no training, runs/thematic-quick.json")
    parser.add_argument("--scb-articles", type=int, default=12, help="SCB test articles to cluster (seeded "
                        "sample; 0 = all 45)")
    parser.add_argument("--sick-train", type=int, default=1000, help="SICK training pairs (first N; 0 = 4,500)")
    parser.add_argument("--sick-test", type=int, default=1000, help="SICK test pairs (first N; 0 = 4,927)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--no-plot", action="store_true", help="skip the 2-D plot")
    parser.add_argument("--no-train", action="store_true", help="skip models that are not trained yet")
    parser.add_argument("--reuse", action="store_true", help="reuse per-model rows of unchanged models "
                        "from runs/thematic-parts/")
    parser.add_argument("--only", nargs="*", help=f"evaluate only these models ({', '.join(SPECS)}) and merge")
    ARGS = parser.parse_args()
    sys.exit(main())
