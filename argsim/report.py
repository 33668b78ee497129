"""Render `bench/results/*.json` as markdown (the README's one table, docs/results.md) and rich tables (terminal)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from argsim import markdown
from argsim.errors import ArgsimError, InputError, did_you_mean, examples, warn
from argsim.io import read_json, read_json_as, read_text_file, write_text
from argsim.paths import results_dir
from argsim.published import PUBLISHED, SOURCES, published

START, END = "<!-- results:start -->", "<!-- results:end -->"
COLUMNS = ("method", "model", "split", "setting", "metric", "value", "paper", "seconds", "peak_mb")


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def load_all(folder: Path | None = None) -> list[dict[str, Any]]:
    """Every results file, sorted by task name, each checked against `argsim.schemas.ResultsFile` (a file of
    another shape is one InputError naming file, row and field)."""
    return [read_results_file(p) for p in sorted((folder or results_dir()).glob("*.json"))]


def select_results(task: str | None = None, required: bool = True, folder: Path | None = None) -> list[dict[str, Any]]:
    """The results files `argsim report` shows: every one under `folder` (default: `results_dir()`), or only
    `task`'s; a file without rows is a one-line warning. With `required`, finding none is an error naming the
    tasks there (a misspelt task, or no results yet).

    Example:
        >>> [r["task"] for r in select_results("kpm")]  # doctest: +SKIP
        ['kpm']
    """
    everything = load_all(folder)
    results = [r for r in everything if task is None or r["task"] == task]
    where = folder or results_dir()
    if not results and required:
        names = [r["task"] for r in everything]
        if task is not None and names:
            raise ArgsimError(f"no results for task '{task}'{did_you_mean(task, names)}: the tasks under {where} are "
                              f"{', '.join(names)}")
        raise ArgsimError(f"no results files under {where} (the evaluation commands' --task writes them)")
    if empty := [r["task"] for r in results if not r["rows"]]:
        warn(f"{len(empty)} results file(s) hold no rows ({examples(empty)})")
    return results


def read_results_file(path: Path) -> dict[str, Any]:
    """One results file as a dict, validated (`argsim.schemas.ResultsFile`)."""
    from argsim.schemas import ResultsFile

    return read_json_as(ResultsFile, path, what="a results file {task, rows: [{metric, value, ...}]}")


def table_cells(result: dict[str, Any], conditions: bool = False) -> tuple[list[str], list[list[str]]]:
    """One task's header (the columns any row fills; `conditions`: a last column with each row's timing conditions,
    `conditions_text`) and its rows' cells, as `markdown_table` and `argsim report` show them."""
    rows = result.get("rows", [])
    cols = [c for c in COLUMNS if any(r.get(c) not in (None, "") for r in rows)]
    body = [[_fmt(r.get(c)) for c in cols] + ([conditions_text(r)] if conditions else []) for r in rows]
    return cols + (["conditions"] if conditions else []), body


def _section(result: dict[str, Any], table: str, note: str = "", shown: int | None = None) -> str:
    """A task's markdown section: its table, then the commands that regenerate it (the first `shown` of them)."""
    commands = [c for c in (result.get("commands") or [result.get("command")]) if c]
    regenerate = "; ".join(f"`{c}`" for c in commands[:shown])
    if shown is not None and len(commands) > shown:
        regenerate += f"; and {len(commands) - shown} more (under \"Every row\")"
    return "\n".join([f"#### {result['task']}", "", table, "", f"{note}Regenerate: {regenerate}", ""])


def markdown_table(result: dict[str, Any], conditions: bool = False) -> str:
    """One task's rows as a markdown table (`table_cells`), with the command that regenerates it."""
    return _section(result, markdown.table(*table_cells(result, conditions)))


#: the headline view of each task (docs/results.md): which metrics (and splits), and what becomes a column
HEADLINES: dict[str, dict[str, Any]] = {
    "embed": {"metrics": ["sentences_per_s", "throughput_ratio_vs_raw", "cached_speedup"], "columns": ("metric",)},
    "kpm": {"metrics": ["strict_mAP", "relaxed_mAP"], "columns": ("metric",)},
    "counterargs-ltr": {"metrics": ["accuracy@1"], "splits": ["test"], "columns": ("setting",)},
    "counterargs-neural": {"metrics": ["accuracy@1/10", "accuracy@1/30", "accuracy@1/50"], "splits": ["test"],
                           "columns": ("setting", "metric")},
    "thematic": {"metrics": ["accuracy", "AMI", "ARI", "pearson", "spearman"], "splits": ["test"],
                 "columns": ("setting", "metric"), "rows": ("model",)},
    "arguana": {"metrics": ["ndcg_at_10", "mrr_at_10", "recall_at_100"], "splits": ["test"], "columns": ("metric",),
                "rows": ("model", "setting")},
    "minutes": {"metrics": ["accuracy", "mean_diff", "rouge1-recall"],
                "splits": ["test-full", "test-sample500", "ntcir14-740", "ntcir14-60"],
                "columns": ("split", "setting", "metric")},
}
#: what identifies a figure in a results file
KEY_FIELDS = COLUMNS[:5]


def headline_table(result: dict[str, Any]) -> str:
    """A task's headline rows pivoted: one line per method/model, one column per setting/metric; cells read
    `value (paper)` where a published figure exists."""
    if (spec := HEADLINES.get(result["task"])) is None:
        return markdown_table(result)
    rows = [r for r in result.get("rows", []) if r.get("metric") in spec["metrics"]
            and ("splits" not in spec or r.get("split") in spec["splits"])]
    col_fields = spec["columns"]
    row_fields = list(spec.get("rows", ())) or [f for f in KEY_FIELDS if f not in col_fields
                                                and len({str(r.get(f)) for r in rows}) > 1] or ["method"]
    columns: dict[tuple, None] = {}
    cells: dict[tuple, dict[tuple, str]] = {}
    for r in rows:
        ck = tuple(str(r.get(f)) for f in col_fields)
        rk = tuple(str(r.get(f) if r.get(f) is not None else "") for f in row_fields)
        columns.setdefault(ck, None)
        paper = f" ({_fmt(r['paper'])})" if r.get("paper") is not None else ""
        cells.setdefault(rk, {})[ck] = _fmt(r.get("value")) + paper
    header = list(row_fields) + [" ".join(c for c in ck if c != "None") for ck in columns]
    table = markdown.table(header, [list(rk) + [row.get(ck, "") for ck in columns] for rk, row in cells.items()])
    return _section(result, table, "Published figures in parentheses. ", shown=3)


#: a selector value that stands for the command that trained a shipped model (its card's `command`)
KPM_SHIPPED = ("shipped", "kpm")
#: the README's one table: the best model of each task beside the paper. `value` (and `also`) select a results
#: row by its fields (the last match counts); `train` lists rows whose `seconds` add up to the training time, or
#: gives it as text where no row holds it; `paper` is the published figure (`argsim.published`) it is compared with.
VS_PAPERS: list[dict[str, Any]] = [
    {"task": "Key point matching", "model": "`kpm`: a LoRA adapter over MiniLM that ships with argsim",
     "data": "ArgKP-2021 dev, strict / relaxed mAP", "results": "kpm",
     "value": {"method": "sbert-lora", "metric": "strict_mAP", "command": KPM_SHIPPED},
     "also": {"method": "sbert-lora", "metric": "relaxed_mAP", "command": KPM_SHIPPED},
     "paper": [("kpm", "mts/strict_mAP"), ("kpm", "mts/relaxed_mAP")], "paper_model": "MTS, RoBERTa, mean of 7 folds",
     "train": [{"method": "sbert-lora", "metric": "strict_mAP", "command": KPM_SHIPPED}]},
    {"task": "Best counter-argument retrieval",
     "model": "`counter-fusion`: the shipped Bi-encoder's and open-collection retriever's cosines summed",
     "data": "counterargs-18 test, epa, accuracy@1", "results": "counter-retriever",
     "value": {"model": "counter-fusion", "split": "test", "setting": "epa", "metric": "accuracy_at_1"},
     "paper": [("counterargs-neural", "Bipolar-encoder/accuracy@1/10")],
     "paper_model": "Bipolar-encoder, BERT; its Bi-encoder: 0.149",
     "train": "the retriever: 22.8 min for steps 51-88 of 88, resumed (its card's training_seconds); the "
              "Bi-encoder's heads: 1.3 min once the texts' embeddings are cached"},
    {"task": "Thematic similarity", "model": "`thematic`: a LoRA adapter over MiniLM that ships with argsim",
     "data": "Wikipedia sentence triplets test, accuracy", "results": "thematic",
     "value": {"model": "thematic", "method": "triplet-eval", "metric": "accuracy"},
     "paper": [("thematic", "tdc/triplets-sen")], "paper_model": "BiLSTM triplet network",
     "train": "~2 h for the epoch (the shipped adapter: 2,038 steps in 3.4 min on one GPU)"},
    {"task": "Minutes: political Sentence-BERT",
     "model": "`minutes`: GiNZA vectors, own word vectors + trained layer, that ships with argsim",
     "data": "PoliInfo mined triplets test, accuracy", "results": "minutes",
     "value": {"method": "triplet-eval", "model": "minutes", "split": "test", "metric": "accuracy"},
     "paper": [("minutes", "triplets-trained-accuracy")], "paper_model": "Japanese Political SBERT",
     "train": [{"method": "minutes-sbert-words", "metric": "dev_accuracy"}]},
]


def conditions_text(row: dict[str, Any]) -> str:
    """A row's timing conditions (`env["conditions"]`: CPU, flags, cores, threads, load) as one short line."""
    cond = (row.get("env") or {}).get("conditions") or {}
    return "; ".join(f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in cond.items()
                     if v not in (None, "", []))


def _shipped_command(name: str) -> str | None:
    """The command that trained the shipped model `name` (its card in argsim/shipped/NAME/card.json), or None."""
    card = Path(__file__).resolve().parent / "shipped" / name / "card.json"
    try:
        return read_json(card).get("command")
    except (ArgsimError, OSError, ValueError, AttributeError):  # no card: no command to match
        return None


def _select(rows: list[dict[str, Any]], fields: dict[str, Any]) -> dict[str, Any] | None:
    fields = {k: _shipped_command(v[1]) if isinstance(v, tuple) and v[:1] == ("shipped",) else v
              for k, v in fields.items()}
    return next((r for r in reversed(rows) if all(r.get(k) == v for k, v in fields.items())), None)


def papers_table(folder: Path | None = None) -> str:
    """The README's table: each task's best model in argsim beside the paper's figure (`VS_PAPERS`)."""
    by_task = {r["task"]: r.get("rows", []) for r in load_all(folder)}
    out = []
    for spec in VS_PAPERS:
        rows = by_task.get(spec["results"], [])
        found = [_select(rows, spec["value"])] + ([_select(rows, spec["also"])] if "also" in spec else [])
        ours = " / ".join(f"{r['value']:.3f}" if r else "?" for r in found)
        paper = " / ".join(f"{v:.3f}" if (v := published(t, n)) is not None else "?" for t, n in spec["paper"])
        if isinstance(spec["train"], str):
            train = spec["train"]
        else:
            secs = [(_select(rows, sel) or {}).get("seconds") for sel in spec["train"]]
            train = f"{sum(secs) / 60:.{1 if sum(secs) < 600 else 0}f} min" if all(
                isinstance(x, int | float) for x in secs) else "?"
        out.append([spec["task"], spec["model"], spec["data"], f"**{ours}**", f"{paper} ({spec['paper_model']})",
                    train])
    return markdown.table(["task", "argsim's best model", "data, metric", "argsim", "paper", "training, 2 CPU cores"],
                          out)


def render_markdown(folder: Path | None = None, headline: bool = True) -> str:
    return "\n".join((headline_table if headline else markdown_table)(r) for r in load_all(folder))


def published_table() -> str:
    """The published figures every `paper` cell comes from (`argsim.published`), one line per figure."""
    lines = ["## Published figures", "", "From `argsim/published.py`, the one table results, benchmarks and this "
             "report read (fractions).", ""]
    for task, figures in PUBLISHED.items():
        lines += [f"#### {task}", "", f"Source: {SOURCES.get(task, '')}", "",
                  markdown.table(["figure", "value"], [[name, _fmt(value)] for name, value in figures.items()]), ""]
    return "\n".join(lines)


def write_full_results(path: Path, folder: Path | None = None) -> Path:
    """The results page: each task's headline view (one line per method/model), then every row of every results
    file, then the published figures (generated; the README shows only `papers_table`)."""
    head = ("# Results\n\nGenerated by `argsim report --readme README.md --full docs/results.md` from "
            "`bench/results/*.json`; do not edit by hand. Metrics are fractions in [0, 1]; published figures are "
            "in parentheses. Every row in the JSON also carries its `env` (versions, git commit, device, seed and "
            "the conditions of its timings: CPU, threads, load) and the `command` that produced it; "
            "`argsim report --conditions` prints the conditions.\n\n## Headline view per task\n\n")
    return write_text(path, head + render_markdown(folder, headline=True) + "\n## Every row\n\n"
                      + render_markdown(folder, headline=False) + "\n" + published_table())


def update_readme(readme: Path, folder: Path | None = None) -> bool:
    """Replace the README's results block (between the markers) with `papers_table(folder)`; returns whether it
    changed."""
    text = read_text_file(readme)
    if START not in text or END not in text:
        raise InputError(readme, f"no {START} ... {END} block: only that block is rewritten, so nothing was written")
    new = re.sub(re.escape(START) + r".*?" + re.escape(END),
                 lambda _: f"{START}\n{papers_table(folder)}\n{END}", text, flags=re.S)
    if new != text:
        write_text(readme, new)
    return new != text
