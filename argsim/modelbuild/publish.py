"""`argsim models publish NAME FOLDER`: put a trained model into the package as a shipped model, behind a gate
(docs/models.md, "Train, continue, publish"; what a shipped folder holds: "How loading works").

Its card.json records the base and its weights' hash, the task, the data and its licence, the training run and its
figures, and the figure on a fixed small slice (`slice`) measured through the loader users get, so a test
reproduces it offline. The gate: a model replaces the shipped one only when its recorded primary figure is at least
the shipped one's; otherwise nothing is written (ArgsimError, exit 2).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from argsim.backend import get_encoder
from argsim.backend.names import SHIPPED_DIR, is_shipped_folder, read_card, shipped_models, weights_file
from argsim.counter.core.evaluation import summarize
from argsim.counter.core.run import RankRequest, rank_counterargs
from argsim.data.argkp import load_argkp
from argsim.data.arguana import load_arguana
from argsim.data.catalog import dataset_dir
from argsim.errors import ArgsimError
from argsim.io import read_records, sha256_file, write_json
from argsim.kpm.evaluate import map_of_folder
from argsim.metrics.triplets import TRIPLET_FIELDS, encoded_triplet_scores
from argsim.minutes import shipped
from argsim.modelbuild.inventory import read_json_object
from argsim.paths import under_workdir
from argsim.schemas import TripletRecord
from argsim.thematic.build import first_test_triplets
from argsim.training.record import TRAIN_INFO


@dataclass(frozen=True)
class ShippedTask:
    """What a shipped model of one task records and how its slice figure is measured."""

    task: str  # bench/results/<task>.json
    description: str
    primary: str  # the train_config.json metric that gates publishing (higher is better)
    figures: tuple[str, ...]  # the train_config.json metrics copied into the card
    data: str
    licence: str
    slice_description: str
    slice_figures: Callable[[Path, object], dict[str, float]]  # (trained folder, RunConfig) -> figures
    artifact: str = "lora"  # the card's artifact: "lora" (an adapter), "heads" (heads over the frozen base),
    # "lora+heads" (heads over the base with LoRA adapters of its towers) or "composite" (a config over shipped models)
    files: tuple[str, ...] = ("adapter_model.safetensors", "adapter_config.json", "argsim_encoder.json")
    trained_with: str = "train with --lora-rank"  # how a folder of this kind is made (for the refusal)
    #: (trained folder, staging folder) -> card entries: writes the artifact that ships from a trained folder that is
    #: not one itself (None: the folder holds `files`, which are copied); the slice is then measured on what it wrote
    pack: Callable[[Path, Path], dict] | None = None


def kpm_slice(config=None):
    """The fixed slice of ArgKP dev a shipped key point matcher is checked on: the first dev topic (file order),
    both stances, every argument and key point of it."""
    dev = load_argkp("dev", config.data_dir if config else None)
    return dev.subset(dev.topics[:1], name="argkp-dev[topic 1]")


def _kpm_slice_figures(folder: Path, config=None) -> dict[str, float]:
    result = map_of_folder(folder, kpm_slice(config), config)
    return {"strict_map": result.strict, "relaxed_map": result.relaxed}


#: the fixed slice a shipped counter-argument retriever is checked on: counterargs-18 validation, the first points
#: in id order, each ranked against every argument of its debate (setting sda)
COUNTER_SLICE = {"split": "validation", "setting": "sda", "limit": 60}


def _counter_slice_figures(ranker: str, folder: Path, config=None) -> dict[str, float]:
    """accuracy@1 and MRR on `COUNTER_SLICE` with `ranker` (`bi-encoder`, `bipolar`), through the function that
    `argsim rank counterargs` and `CounterRetriever.evaluate` run (`argsim.counter.core.run.rank_counterargs`)."""
    _, records = rank_counterargs(RankRequest(ranker, (COUNTER_SLICE["setting"],), COUNTER_SLICE["split"],
                                              {"model": str(folder)}, limit=COUNTER_SLICE["limit"]), config)
    (summary,) = summarize(records)
    return {"accuracy_at_1": summary.accuracy_at_1, "mrr": summary.mrr, "points": summary.points}


#: the fixed open-collection slice a shipped counter-argument retriever is checked on: argsim's ArguAna replica
#: (`argsim.data.arguana`), validation, the points of one idebate theme as queries over its arguments
ARGUANA_SLICE = {"split": "validation", "themes": ("culture",)}


def arguana_slice(config=None):
    """The `ARGUANA_SLICE` replica (47 validation queries over 417 arguments)."""
    return load_arguana(ARGUANA_SLICE["split"], config.data_dir if config else None, themes=ARGUANA_SLICE["themes"])


def _retriever_slice_figures(folder: Path, config=None) -> dict[str, float]:
    """Both protocols on their slices, through the loader users get: accuracy@1 and MRR on `COUNTER_SLICE` (the
    `emb-cosine` ranker: points as queries, candidates as documents) and nDCG@10 on `ARGUANA_SLICE` (the
    `ArguAnaEvaluator` of `argsim evaluate`)."""
    from argsim.evaluation.arguana import ArguAnaEvaluator

    data = arguana_slice(config)
    result = ArguAnaEvaluator(data, config=config).evaluate(str(folder))
    return {**_counter_slice_figures("emb-cosine", folder, config), "arguana_ndcg_at_10": result["ndcg_at_10"],
            "arguana_queries": result.n, "arguana_documents": len(data.corpus)}


MINUTES_TEST = "runs/minutes-triplets/test.jsonl"
MINUTES_SLICE = 300


def _minutes_slice_figures(folder: Path, config=None) -> dict:
    """The slice (the first MINUTES_SLICE test triplets, file order, of `argsim data triplets minutes`)'s accuracy
    through the shipped loader, and where its triplets are in the minutes (line numbers of
    `argsim.minutes.shipped.corpus`, not their text) with the texts' hash, so a test rebuilds it offline."""
    data_dir = config.data_dir if config else None
    rows = [{k: str(r.get(k, "")) for k in (*TRIPLET_FIELDS, "meeting", "negative_meeting")}
            for r in read_records(under_workdir(MINUTES_TEST), TripletRecord)[:MINUTES_SLICE]]
    pairs = shipped.locate_triplets(rows, data_dir)
    rebuilt = shipped.slice_triplets(pairs, data_dir)
    if rebuilt != [{k: r[k] for k in TRIPLET_FIELDS} for r in rows]:
        raise ArgsimError(f"{MINUTES_TEST}: its triplets are not the ones the PoliInfo minutes rebuild")
    encoder = shipped.load_encoder(folder).configure(None, False, True)
    return {"accuracy": shipped.slice_accuracy(encoder, rebuilt), "triplets": len(rebuilt),
            "texts_sha256": shipped.slice_sha256(rebuilt), "lines": pairs}


#: how the shipped minutes model stores its deltas: int8, every row (chosen on dev accuracy within the size limit;
#: docs/models.md)
MINUTES_PRECISION = "int8"
POLIINFO_LICENCE = ("PoliInfo (NTCIR-14 QA Lab-PoliInfo / NTCIR-15 QA Lab-PoliInfo-2): Tokyo Metropolitan "
                    "Assembly minutes, distributed by NTCIR for research use under its user agreement")

COUNTERARGS_LICENCE = ("counterargs-18 (the ArguAna Counterargs Corpus; idebate.org points and counters): no licence "
                       "text accompanies the corpus, whose readme asks to cite Wachsmuth, Syed and Stein, Retrieval "
                       "of the Best Counterargument without Prior Topic Knowledge, ACL 2018; the shipped heads hold "
                       "no text of it")

ARGKP_LICENCE = ("ArgKP-2021 (IBM Debater ArgKP v1 and the KPA 2021 shared task), Community Data License "
                 "Agreement - Sharing 1.0 (https://cdla.io/sharing-1-0/); Bar-Haim et al., From Arguments to Key "
                 "Points: Towards Automatic Argument Summarization, ACL 2020")

THEMATIC_SLICE_SIZE = 300


def thematic_slice(config=None) -> list[dict]:
    """The fixed slice of the thematic test triplets a shipped thematic encoder is checked on: the first
    `THEMATIC_SLICE_SIZE` triplets-sen test triplets, exactly as `argsim data triplets wikipedia` writes them
    (`argsim.thematic.build.first_test_triplets`)."""
    return first_test_triplets(dataset_dir("wikipedia", config.data_dir if config else None), THEMATIC_SLICE_SIZE)


def _thematic_slice_figures(folder: Path, config=None) -> dict[str, float]:
    """Triplet accuracy on the slice with cosine distance, ties correct (what `argsim eval triplets` reports)."""
    enc = get_encoder(str(folder), config=config, device=None if config else "cpu")
    return {"triplet_accuracy": encoded_triplet_scores(enc, thematic_slice(config)).accuracy}


WIKIPEDIA_LICENCE = ("Wikipedia articles of the IBM Debater Claim Stance Dataset (April 2012 dump), CC BY-SA 3.0 "
                     "(https://creativecommons.org/licenses/by-sa/3.0/); Bar-Haim et al., Stance Classification of "
                     "Context-Dependent Claims, EACL 2017")

#: what the shipped counter-argument models share: gate, figures, data and licence
COUNTER_TASK = {"primary": "val_at1_over_30_best", "figures": ("val_at1_over_30_best", "val_at1_over_30_untrained"),
                "data": "counterargs-18 training split (4,065 point-counter pairs; validation: 1,287 pairs, every "
                        "validation argument a candidate)",
                "licence": COUNTERARGS_LICENCE}
COUNTER_SLICE_TEXT = (f"counterargs-18 {COUNTER_SLICE['split']}, first {COUNTER_SLICE['limit']} points (id order), "
                      f"setting {COUNTER_SLICE['setting']}")

#: what the shipped open-collection retrievers share: task, gate and slice
RETRIEVER_TASK = {"task": "counter-retriever", "primary": "validation_ndcg_at_10",
                  "slice_description": f"{COUNTER_SLICE_TEXT}: accuracy@1 and MRR (emb-cosine); ArguAna replica "
                                       f"{ARGUANA_SLICE['split']}, theme {ARGUANA_SLICE['themes'][0]}: nDCG@10",
                  "slice_figures": _retriever_slice_figures}

TASKS: dict[str, ShippedTask] = {
    "kpm": ShippedTask("kpm", "key point matching bi-encoder: LoRA adapter over MiniLM, contrastive loss",
                       primary="dev_strict_map", figures=("dev_strict_map", "dev_relaxed_map"),
                       data="ArgKP-2021 train (5,583 arguments, 207 key points, 20,635 labelled pairs)",
                       licence=ARGKP_LICENCE,
                       slice_description="ArgKP-2021 dev, first topic (both stances), leaderboard mAP",
                       slice_figures=_kpm_slice_figures,
                       trained_with="train with `argsim train sbert --lora-rank 16`"),
    "thematic": ShippedTask("thematic", "thematic similarity encoder: LoRA adapter over MiniLM, triplet loss on "
                            "Wikipedia section triplets",
                            primary="dev_triplet_accuracy", figures=("dev_triplet_accuracy",),
                            data="Wikipedia section triplets, triplets-sen train (66,159 triplets from 815 articles)",
                            licence=WIKIPEDIA_LICENCE,
                            slice_description=f"the first {THEMATIC_SLICE_SIZE} triplets-sen test triplets, cosine "
                                              "triplet accuracy",
                            slice_figures=_thematic_slice_figures,
                            trained_with="train with `argsim train thematic --arch minilm --lora-rank 16`"),
    "counter-bi-encoder": ShippedTask(
        "counterargs-neural",
        "best counter-argument retrieval Bi-encoder: two linear heads over frozen MiniLM, increasing-hard negatives",
        **COUNTER_TASK, slice_description=f"{COUNTER_SLICE_TEXT}: accuracy@1 and MRR",
        slice_figures=partial(_counter_slice_figures, "bi-encoder"), artifact="heads",
        files=("heads.safetensors", "config.json", "argsim_encoder.json"),
        trained_with="train with `argsim train bipolar --kind bi-encoder` (frozen encoder)"),
    "counter-bipolar": ShippedTask(
        "counterargs-neural", "best counter-argument Bipolar-encoder: a LoRA adapter over MiniLM (one tower for "
        "points and candidates) and its retrieval and classification heads, trained jointly",
        **COUNTER_TASK, slice_description=f"{COUNTER_SLICE_TEXT}: accuracy@1 and MRR of the retrieval top 30 "
                                          "reranked by the classification head",
        slice_figures=partial(_counter_slice_figures, "bipolar"), artifact="lora+heads",
        files=("heads.safetensors", "config.json", "argsim_encoder.json", "point_encoder/adapter_model.safetensors",
               "point_encoder/adapter_config.json"),
        trained_with="train with `argsim train bipolar --kind bipolar --train-encoder --lora-rank 16`"),
    "counter-retriever": ShippedTask(
        description="open-collection counter-argument retriever: LoRA adapter over MiniLM (one tower), cached MNRL "
        "with same-debate hard negatives", **RETRIEVER_TASK, figures=("validation_ndcg_at_10",),
        data="counterargs-18 training pairs without any text of the validation or test split (2,796 of 4,065 "
             "point-counter pairs; validation: the ArguAna replica's validation split)",
        licence=COUNTERARGS_LICENCE.replace("the shipped heads hold", "the shipped adapter holds"),
        trained_with="train with `argsim train counter-retriever`"),
    "counter-fusion": ShippedTask(
        description="counter-argument retrieval by the sum of two models' cosines: counter-bi-encoder (point tower "
        "for points, candidate tower for candidates) and counter-retriever, as one two-tower embedding model (the "
        "concatenation of their L2-normalised vectors)", **RETRIEVER_TASK,
        figures=("validation_ndcg_at_10", "test_ndcg_at_10", "test_epa_accuracy_at_1"),
        data="no training of its own: its parts' data (counter-bi-encoder, counter-retriever); its weights chosen "
             "on the ArguAna replica's validation split",
        licence=COUNTERARGS_LICENCE.replace("the shipped heads hold", "the shipped config holds"),
        artifact="composite", files=("config.json", "argsim_encoder.json"),
        trained_with="write with `argsim.backend.concat.save_composite` and record its figures in train_config.json"),
    "minutes": ShippedTask(
        "minutes", "political Sentence-BERT (Shirafuji et al.): GiNZA word vectors with own word vectors + dense "
        "layer, triplet loss; a sparse delta over GiNZA's table",
        primary="eval_dev_cosine_accuracy", figures=("eval_dev_cosine_accuracy",),
        data="triplets mined from the PoliInfo Tokyo Metropolitan Assembly minutes (`argsim data triplets "
             "minutes`: 42,130 train, 5,046 dev, split by meeting)",
        licence=POLIINFO_LICENCE,
        slice_description=f"the first {MINUTES_SLICE} test triplets of `argsim data triplets minutes`, triplet "
                          "accuracy by cosine",
        slice_figures=_minutes_slice_figures, artifact="delta",
        files=("minutes_delta.safetensors", "words.json", "argsim_encoder.json"),
        trained_with="train with `argsim train minutes-sbert` (ginza backbone; it ships as a delta over GiNZA's "
                     "table)", pack=partial(shipped.pack, precision=MINUTES_PRECISION)),
}


def artifact_of(card: dict) -> str:
    """What a card's folder adds to its base: "lora", "heads" or "lora+heads" (cards written before `artifact`
    say `adapter: lora`)."""
    return str(card.get("artifact") or ("lora" if card.get("adapter") == "lora" else "?"))


def publish(name: str, folder: Path, config=None, dest: Path | None = None) -> dict:
    """Copy the trained model in `folder` into the package as the shipped model `name` when its recorded primary
    figure is at least the shipped one's; returns the card written. ArgsimError (nothing written) otherwise.

    Args:
        name: a shipped model name of `TASKS` (e.g. "kpm", "counter-bi-encoder").
        folder: a folder of the task's artifact (an adapter trained with `--lora-rank`, or a frozen-encoder
            counter model of `argsim train bipolar`, or one with `--train-encoder --lora-rank N`) whose
            train_config.json holds the figures.
        config: the RunConfig (data folder for the slice, device).
        dest: the shipped models' folder (default: the package's `argsim/shipped`).

    Returns:
        The card.json written.

    Example:
        >>> publish("kpm", Path("models/kpm-lora"))["figures"]["dev_strict_map"]  # doctest: +SKIP
        0.83...
    """
    if name not in TASKS:
        raise ArgsimError(f"unknown shipped model '{name}': choose from {', '.join(TASKS)}")
    spec, folder = TASKS[name], Path(folder)
    card = read_card(folder) if is_shipped_folder(folder) else None
    if spec.pack is None and (card is None or artifact_of(card) != spec.artifact
                              or any(not (folder / f).is_file() for f in spec.files)):
        raise ArgsimError(f"{folder}: not a folder that can ship as '{name}' ({spec.trained_with}; it holds "
                          f"{', '.join(spec.files)} and card.json)")
    record = read_json_object(folder / "train_config.json") or {}
    metrics = record.get("metrics") or {}
    missing = [m for m in spec.figures if not isinstance(metrics.get(m), (int, float))]
    if missing:
        raise ArgsimError(f"{folder / 'train_config.json'}: no {missing[0]} recorded (train with the evaluation "
                          "split, e.g. --eval-split dev)")
    figures = {m: float(metrics[m]) for m in spec.figures}
    dest = Path(dest) if dest else SHIPPED_DIR
    target, old = dest / name, dest / f".{name}.replaced"  # the former one moved aside first and removed after
    if old.is_dir() and not target.exists():  # a publish stopped between its two renames: the former one is back
        old.rename(target)
    have = (read_card(target).get("figures") or {}).get(spec.primary) if is_shipped_folder(target) else None
    if isinstance(have, (int, float)) and figures[spec.primary] < have:
        raise ArgsimError(f"{folder}: {spec.primary} {figures[spec.primary]:.4f} is below the shipped '{name}' "
                          f"({have:.4f}); nothing was published")
    staging = dest / f".{name}.publishing"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    if spec.pack is not None:  # the artifact is written from the trained folder; its slice is measured on it
        card, source = spec.pack(folder, staging), staging
    else:
        source = folder
        for file in spec.files:
            (staging / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / file, staging / file)
    # what the model is, how it was trained, and its weights' digests
    adapters = {f: sha256_file(source / f) for f in spec.files if f.endswith(".safetensors") and "/" in f}
    weights = sha256_file(weights_file(source, card))
    card.update({"name": name, "task": spec.task, "description": spec.description, "data": spec.data,
                 "data_licence": spec.licence, **{k: record.get(k) for k in ("command", "seed", "steps")},
                 **{f"training_{k}": record.get(k) for k in ("seconds", "device", "precision", "threads")},
                 "git_commit": record.get("git_commit"), "figures": figures,
                 "adapter_sha256" if spec.artifact == "lora" else "weights_sha256": weights,
                 **({"adapters_sha256": adapters} if spec.artifact == "lora+heads" else {}),
                 "published_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    threshold = (read_json_object(folder / TRAIN_INFO) or {}).get("threshold")
    if isinstance(threshold, dict):  # a key point matcher's decision threshold (argsim.kpm.threshold)
        card["threshold"] = threshold
    write_json(staging / "card.json", card)
    card["slice"] = {"data": spec.slice_description, **spec.slice_figures(source, config)}
    write_json(staging / "card.json", card)
    replacing = target.exists()
    if replacing:
        if old.exists():
            shutil.rmtree(old)
        target.rename(old)
    staging.rename(target)
    if replacing:
        shutil.rmtree(old)
    return card


def shipped_summaries() -> list[dict]:
    """One line per shipped model for `argsim models`: name, task, base, artifact (lora / heads / lora+heads /
    delta) and the size of all its files, figures, slice figures."""
    return [{"name": name, "task": card.get("task", "?"), "base": card["base"], "artifact": artifact_of(card),
             "description": card.get("description", ""),
             "megabytes": round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 2),
             "figures": card.get("figures") or {}, "slice": card.get("slice") or {},
             "command": card.get("command"), "training_seconds": card.get("training_seconds")}
            for name, folder in shipped_models().items() for card in [read_card(folder)]]
