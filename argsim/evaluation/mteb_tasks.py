"""argsim's tasks as MTEB 2.x task objects (Muennighoff, Tazi, Magne & Reimers, "MTEB: Massive Text Embedding
Benchmark", EACL 2023) that read argsim's local data, so `mteb.evaluate(model, tasks=argsim.mteb_tasks())` runs
offline, and the writer of MTEB's result files for figures argsim measured itself. The tasks (scored by MTEB's own code
throughout): docs/arguana.md; where a task's metric is not the paper's, its docstring says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from argsim.extras import need

need("mteb", "argsim's MTEB tasks")

# mteb and its dependency, after the one-line check of the extra
from datasets import Dataset
from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.sts import AbsTaskSTS
from mteb.abstasks.task_metadata import TaskMetadata

from argsim.data.argkp import load_argkp
from argsim.data.arguana import load_arguana
from argsim.data.catalog import dataset_dir
from argsim.data.sick import load_sick
from argsim.errors import ArgsimError, check_count
from argsim.io import atomic_path, read_records
from argsim.schemas import LabelledSentenceRecord

_COMMON = dict(category="t2t", modalities=["text"], eval_splits=["test"], eval_langs=["eng-Latn"],
               annotations_creators="derived", dialect=[], sample_creation="found")


def _metadata(name: str, description: str, type_: str, main_score: str, source: str, **extra: Any) -> TaskMetadata:
    return TaskMetadata(name=name, description=description, type=type_, main_score=main_score,
                        dataset={"path": f"local:{source}", "revision": "local"}, **(_COMMON | extra))


class _Local:
    """A task whose data argsim reads from its data folder (`data_dir`, None: `$ARGSIM_DATA`), first `limit` units;
    each task's `_local_dataset()` builds MTEB's dataset dict."""

    def __init__(self, data_dir: str | Path | None = None, limit: int | None = None,
                 themes: Sequence[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_dir, self.limit, self.themes = data_dir, limit, themes

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if not self.data_loaded:
            self.dataset = self._local_dataset()
            self.data_loaded = True


def _retrieval_split(queries: Mapping[str, str], corpus: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                     top_ranked: Mapping[str, list[str]] | None = None) -> dict:
    return {"corpus": Dataset.from_dict({"id": list(corpus), "text": list(corpus.values())}),
            "queries": Dataset.from_dict({"id": list(queries), "text": list(queries.values())}),
            "relevant_docs": {q: dict(r) for q, r in qrels.items()}, "top_ranked": top_ranked}


class ArgsimArguAna(_Local, AbsTaskRetrieval):
    """MTEB's ArguAna on argsim's replica (`argsim.data.arguana`: 1,406 queries, 8,676 documents): the same scoring
    as MTEB's ArguAna (identical ids ignored, nDCG@10); the replica differs from BEIR's data as that module says."""

    ignore_identical_ids = True
    metadata = _metadata(
        "ArgsimArguAna", "ArguAna (BEIR) rebuilt from counterargs-18: retrieve the best counterargument of a point "
        "from all points and counters", "Retrieval", "ndcg_at_10", "argsim/counterargs18",
        domains=["Social", "Web", "Written"], prompt={"query": "Given a claim, find documents that refute the claim"})

    def _local_dataset(self) -> dict:
        data = load_arguana("test", data_dir=self.data_dir, themes=self.themes).head(self.limit)
        return {"default": {"test": _retrieval_split(data.queries, data.corpus, data.qrels)}}


class ArgsimSICKR(_Local, AbsTaskSTS):
    """SICK relatedness (Marelli et al., SemEval-2014 Task 1) as MTEB STS: Spearman of the zero-shot cosine with
    the 1-5 gold relatedness on the 4,927 test pairs, not the Pearson r of the trained regression that `argsim eval
    sick` reports (`argsim.evaluation.sick`)."""

    min_score, max_score = 1, 5
    metadata = _metadata("ArgsimSICK-R", "SICK relatedness of sentence pairs (SemEval-2014 test split)", "STS",
                         "cosine_spearman", "argsim/sick", domains=["Web", "Written"])

    def _local_dataset(self) -> dict:
        pairs = load_sick(dataset_dir("sick", self.data_dir), "test")[: self.limit]
        return {"test": Dataset.from_dict({"sentence1": [p.sentence_a for p in pairs],
                                           "sentence2": [p.sentence_b for p in pairs],
                                           "score": [p.relatedness for p in pairs]})}


class ArgsimArgKPReranking(_Local, AbsTaskRetrieval):
    """Key point matching (ArgKP-2021, dev) as MTEB Reranking: each argument with a matching key point is a query that
    reranks the key points of its topic and stance; relevant = labelled matching. MTEB scores MAP@1000 per argument;
    the shared task (Friedman et al., ArgMining 2021) ranks every argument's single best key point across arguments
    by score and reports strict / relaxed mAP (`argsim.metrics.kpa_map`), which this task does not compute."""

    metadata = _metadata("ArgsimArgKPReranking", "ArgKP-2021 dev: rerank the key points of an argument's topic and "
                         "stance", "Reranking", "map_at_1000", "argsim/argkp", domains=["Social", "Written"],
                         eval_splits=["test"])

    def _local_dataset(self) -> dict:
        data = load_argkp("dev", data_dir=self.data_dir)
        positives: dict[str, dict[str, int]] = {}
        for (arg_id, kp_id), label in data.labels.items():
            if label == 1:
                positives.setdefault(arg_id, {})[kp_id] = 1
        args = [a for a in data.arguments if a.arg_id in positives][: self.limit]
        split = _retrieval_split({a.arg_id: a.text for a in args}, {kp.kp_id: kp.text for kp in data.key_points},
                                 {a.arg_id: positives[a.arg_id] for a in args},
                                 {a.arg_id: [k.kp_id for k in data.candidates(a)] for a in args})
        return {"default": {"test": split}}


class ArgsimThematicClustering(_Local, AbsTaskClusteringLegacy):
    """Thematic sentence clustering (Ein Dor et al., ACL 2018, sec. 5): the sentences of each article clustered into
    its sections, one MTEB cluster set per article, scored by MTEB's V-measure of k-means (k = the article's number
    of sections). The paper reports MI / AMI / RI / ARI (`argsim eval clustering`), not V-measure.

    Args:
        sentences: a JSONL/CSV file with text, label (the section) and article, as `argsim thematic build` writes.
    """

    metadata = _metadata("ArgsimThematicClustering", "Wikipedia sentences clustered into their article's sections",
                         "Clustering", "v_measure", "argsim/wikipedia", domains=["Encyclopaedic", "Written"])

    def __init__(self, sentences: str | Path, limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(limit=limit, **kwargs)
        self.sentences = Path(sentences)

    def _local_dataset(self) -> dict:
        articles: dict[str, list[dict]] = {}
        for r in read_records(self.sentences, LabelledSentenceRecord):
            articles.setdefault(str(r.get("article", "")), []).append(r)
        sets = list(articles.values())[: self.limit]
        label_ids = [{lab: i for i, lab in enumerate(dict.fromkeys(str(r["label"]) for r in s))} for s in sets]
        return {"test": Dataset.from_dict({"sentences": [[str(r["text"]) for r in s] for s in sets],
                                           "labels": [[ids[str(r["label"])] for r in s]
                                                      for s, ids in zip(sets, label_ids, strict=True)]})}


#: argsim's task name (results, `argsim evaluate`) -> its MTEB task class
TASKS: dict[str, type] = {"arguana": ArgsimArguAna, "sick": ArgsimSICKR, "kpm": ArgsimArgKPReranking,
                          "thematic-clustering": ArgsimThematicClustering}


def mteb_tasks(names: Sequence[str] | None = None, data_dir: str | Path | None = None, limit: int | None = None,
               sentences: str | Path | None = None, themes: Sequence[str] | None = None) -> list:
    """argsim's tasks as MTEB task objects reading the local data (no download).

    Args:
        names: argsim task names (`TASKS`: arguana, sick, kpm, thematic-clustering); None: every task whose data is
            there (thematic-clustering only with `sentences`).
        data_dir: the dataset root (None: `$ARGSIM_DATA`, else the per-user data folder).
        limit: the first `limit` queries / pairs / articles of each task (quick checks); None: all.
        sentences: the clustering task's sentence file (`argsim thematic build`'s scb-test.jsonl).
        themes: ArguAna built from these idebate themes only (a small corpus for quick checks); None: all.

    Returns:
        MTEB task objects for `mteb.evaluate`.

    Example:
        >>> [t.metadata.name for t in mteb_tasks(["arguana", "sick"], limit=5)]  # the data loads when MTEB runs
        ['ArgsimArguAna', 'ArgsimSICK-R']
    """
    if limit is not None:
        check_count(limit, "limit")
    chosen = list(names) if names is not None else [n for n in TASKS if n != "thematic-clustering" or sentences]
    if unknown := [n for n in chosen if n not in TASKS]:
        raise ArgsimError(f"unknown MTEB task {', '.join(unknown)}: choose from {', '.join(TASKS)}")
    if "thematic-clustering" in chosen and sentences is None:
        raise ArgsimError("thematic-clustering needs its sentence file (sentences=..., from `argsim thematic build`)")
    return [ArgsimThematicClustering(sentences, limit=limit) if name == "thematic-clustering"
            else TASKS[name](data_dir=data_dir, limit=limit, themes=themes) for name in chosen]


def write_mteb_result(model_name: str, task: str, split: str, metrics: Mapping[str, float], folder: str | Path,
                      evaluation_time: float | None = None) -> Path:
    """Write MTEB's result file of one model on one of argsim's tasks, measured by argsim.

    The file is what `mteb.evaluate` writes (`mteb.TaskResult`): `<folder>/<model_name with / as __>/
    no_revision_available/<MTEB task name>.json` with `task_name`, `mteb_version` and `scores[split]` = one entry
    holding `main_score` (the task's main metric) and the metrics under MTEB's names (e.g. `ndcg_at_10`).

    Args:
        model_name: the model's name (e.g. "sentence-transformers/all-MiniLM-L6-v2" or an argsim name).
        task: argsim's task name (`TASKS`) or the MTEB task name of one of them (e.g. "ArgsimArguAna").
        split: the split the metrics are of (e.g. "test").
        metrics: metric name (MTEB's) -> value; must include the task's main score.
        folder: the results folder.
        evaluation_time: seconds the evaluation took (None: unknown).

    Returns:
        The path written.

    Example:
        >>> write_mteb_result("minilm", "arguana", "test", {"ndcg_at_10": 0.5}, "mteb-results")  # doctest: +SKIP
        PosixPath('mteb-results/minilm/no_revision_available/ArgsimArguAna.json')
    """
    from mteb import TaskResult

    by_mteb_name = {cls.metadata.name: cls for cls in TASKS.values()}
    if (cls := TASKS.get(task) or by_mteb_name.get(task)) is None:
        raise ArgsimError(f"unknown MTEB task {task!r}: choose from {', '.join([*TASKS, *by_mteb_name])}")
    main = cls.metadata.main_score
    if main not in metrics:
        raise ArgsimError(f"{cls.metadata.name}: its main score {main} is not among the metrics "
                          f"({', '.join(metrics) or 'none'})")
    scores = {split: {"default": {**{k: float(v) for k, v in metrics.items()}, "main_score": float(metrics[main])}}}
    result = TaskResult.from_task_results(cls, scores, evaluation_time=evaluation_time or 0.0)
    result.evaluation_time = evaluation_time
    path = Path(folder) / model_name.replace("/", "__").replace(" ", "_") / "no_revision_available" / (
        f"{cls.metadata.name}.json")
    with atomic_path(path) as tmp:
        result.to_disk(Path(tmp))
    return path
