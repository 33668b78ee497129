"""Declared shapes of argsim's structured inputs, checked with pydantic before any work.

Every JSON file argsim reads as a whole (results files, predictions, a trained folder's `train_config.json`,
summaries, budgets) and every record of a JSONL/CSV file that a reader hands on is validated against one of the
schemas here by `validate`, which turns pydantic's first complaint into one `InputError` naming the file, the
row (the list index + 1, or the JSONL line) and the field: a JSON list where records are expected, a string where
an object is, text in a number column end as one line and exit code 2, never as a TypeError deep inside a metric.

Numbers are read strictly where a number is meant (`true`, `"0.5"` and NaN are refused as a score); text fields
accept text only. Unknown keys are kept (files grow new fields), so the schemas name only what is read.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, StrictStr, TypeAdapter, ValidationError

from argsim.errors import InputError
from argsim.io import describe


def _not_infinite(value: float) -> float:
    if math.isinf(value):
        raise ValueError(f"expected a number or NaN, found {describe(value)}")
    return value


#: a finite JSON number (int or float, never true/false or a string)
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
#: a JSON number that may be NaN (argsim's own files write NaN for an undefined figure), never infinite
NumberOrNaN = Annotated[float, Strict(), AfterValidator(_not_infinite)]


class _Open(BaseModel):
    """An object whose unknown keys are kept."""

    model_config = ConfigDict(extra="allow")


class ResultRow(_Open):
    """One row of a results file (`argsim.results.ResultRow.as_dict`)."""

    metric: StrictStr
    value: NumberOrNaN | None = None
    method: StrictStr | None = None
    model: StrictStr | None = None
    split: StrictStr | None = None
    setting: StrictStr | None = None
    paper: NumberOrNaN | None = None
    seconds: NumberOrNaN | None = None
    peak_mb: NumberOrNaN | None = None
    env: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None
    command: StrictStr | None = None


class ResultsFile(_Open):
    """`bench/results/<task>.json`: the task, its rows and the commands that made them."""

    task: StrictStr
    rows: list[ResultRow]
    command: StrictStr | None = None
    commands: list[StrictStr | None] | None = None


class EvalRow(_Open):
    """One evaluation logged during training (`train_config.json`'s `evals`)."""

    step: Number | None = None


class TrainConfig(_Open):
    """A trained folder's `train_config.json`: what `argsim models curve` and the model listing read."""

    trainer: StrictStr | None = None
    steps: Number | None = None
    seconds: Number | None = None
    stopped_by: StrictStr | None = None
    losses: list[NumberOrNaN] | None = None
    loss_steps: list[Number] | None = None
    evals: list[EvalRow] | None = None
    metrics: dict[str, Any] | None = None


class TrainRecord(TrainConfig):
    """A training record that argsim rewrites (`argsim.training.record.add_metrics`): it names its trainer."""

    trainer: StrictStr


class HistoryRow(_Open):
    """One epoch of a counter model's `history.json` (its learning curve)."""

    epoch: Number
    val: NumberOrNaN | None = None
    loss: NumberOrNaN | None = None
    seconds: Number | None = None


class History(_Open):
    """A counter model's `history.json`: the learning-curve table, one row per epoch."""

    history: list[HistoryRow]


class MinutesUtterance(_Open):
    """One utterance of a PoliInfo minutes file."""

    Speaker: StrictStr | None = None
    Utterance: StrictStr | None = None


class MinutesMeeting(_Open):
    """One meeting of a PoliInfo minutes file (a JSON list of these)."""

    Proceeding: list[MinutesUtterance]
    ProceedingTitle: StrictStr | None = None
    Date: StrictStr | None = None
    URL: StrictStr | None = None


#: a PoliInfo minutes file
Meetings = list[MinutesMeeting]

class RankingRecord(_Open):
    """One line of a counter-argument ranking file (`argsim rank counterargs`; ranges are checked by
    `argsim.counter.core.evaluation.check_ranking_records`)."""

    point: StrictStr
    method: StrictStr
    setting: StrictStr
    split: StrictStr | None = None
    pool_size: Number
    gold: StrictStr | None = None
    gold_score: NumberOrNaN | None = None
    gold_better: Number | None = None
    gold_tied: Number | None = None


#: shared-task predictions `{arg_id: {key_point_id: score}}`
Predictions = dict[str, dict[str, Number]]

#: `eval counter-neural --budget`: method -> the training budget, as text or a number
Budgets = dict[str, StrictStr | Number]


class SummaryItem(_Open):
    """One item of a summaries file (`argsim summarize minutes` writes them; `eval rouge` reads them); the budget
    (a count, JSON or CSV text) is checked by `argsim.io.parse_count`."""

    summary: StrictStr | None
    gold: StrictStr | None
    budget: Any = None


class SummariesObject(_Open):
    """A summaries file as `argsim summarize minutes` writes it: the run's settings and its items."""

    summaries: list[SummaryItem]


#: a summaries file: the items alone, or an object holding them under `summaries`
Summaries = list[SummaryItem] | SummariesObject


class ShardManifest(_Open):
    """`_argsim_embeddings.json` of a shard folder (`argsim embed ... --out DIR`)."""

    model: StrictStr
    identity: StrictStr
    dim: Annotated[int, Strict(), Field(ge=0)]
    rows: Annotated[int, Strict(), Field(ge=0)]
    column: StrictStr | None = None
    pooling: StrictStr | None = None
    max_seq_length: Annotated[int, Strict(), Field(ge=1)] | None = None
    normalize: bool | None = None


class SimpleSDWeights(_Open):
    """A Simple-SD weights file (`argsim train simple-sd --tune --out`): the eight weights x1..x8."""

    weights: Annotated[list[Number], Field(min_length=8, max_length=8)]


class LTRMeta(_Open):
    """`ltr.json` of a trained learning-to-rank folder."""

    model: StrictStr
    features: StrictStr
    seed: Annotated[int, Strict()] = 13
    #: how the training pairs were drawn (counts of pairs and positives), as `argsim train ltr` records it
    sampling: dict[str, Any] | None = None


class KpmCrossInfo(_Open):
    """`argsim_kpm_cross.json` of a key point cross-encoder folder: how its inputs were built."""

    context: StrictStr = "none"
    max_length: Annotated[int, Strict(), Field(ge=1)] | None = None


class CounterCrossMarker(_Open):
    """`argsim_cross_encoder.json` of a counter-argument cross-encoder folder: its training options."""

    max_length: Annotated[int, Strict(), Field(ge=1)] = 256
    lr: Number | None = None
    batch_size: Annotated[int, Strict(), Field(ge=1)] | None = None
    train_pairs: Annotated[int, Strict(), Field(ge=0)] | None = None


class CounterTrainConfig(_Open):
    """The training options a counter model's `history.json` records (`config`)."""

    kind: StrictStr
    train_encoder: bool
    base_model: StrictStr
    lr: Number
    batch_size: Annotated[int, Strict(), Field(ge=1)]
    sampling: StrictStr


class ScoredEpoch(HistoryRow):
    """An epoch of a finished training run: validated, timed."""

    val: NumberOrNaN
    seconds: Number = 0.0


class TrainedHistory(_Open):
    """A finished counter model's `history.json`: its options and at least the untrained model's row."""

    history: Annotated[list[ScoredEpoch], Field(min_length=1)]
    config: CounterTrainConfig


class EnsembleManifest(_Open):
    """An MTS ensemble folder's member list: the sub-folders, each a model."""

    members: Annotated[list[Annotated[str, Strict(), Field(min_length=1)]], Field(min_length=1)]


class ConcatConfig(_Open):
    """A thematic concatenation folder's `config.json`: the parts under `parts/`, in order."""

    parts: Annotated[list[Annotated[str, Strict(), Field(min_length=1)]], Field(min_length=1)]


class TransformerConfig(_Open):
    """The fields argsim reads of a transformers `config.json`."""

    hidden_size: Annotated[int, Strict(), Field(ge=1)]


class KeptRow(_Open):
    """One finished (row, setting) of an interrupted `eval counter-neural`: per-point hits for every K."""

    ids: list[StrictStr]
    hits: dict[str, list[Annotated[int, Strict()] | bool | Number]]
    seconds: Number


class TableState(_Open):
    """The state file of an interrupted `eval counter-neural`: the run's inputs and its finished rows."""

    inputs: dict[str, Any]
    rows: dict[str, KeptRow]


def read_json_as(schema: Any, path: str | Path, what: str | None = None) -> Any:
    """A JSON file read with `argsim.io.read_json`'s rules and checked against `schema` by `validate`: every
    problem (no file, not UTF-8, malformed or truncated JSON, another shape) is one InputError naming the file
    (and the row and field).

    Args:
        schema: a pydantic model class or a type.
        path: the file.
        what: what the file holds, for the top-level message.

    Returns:
        The parsed JSON as it is in the file (plain dicts and lists), now known to be of the shape; the fields the
        schema leaves out keep their absence (callers read them with their defaults).

    Example:
        >>> read_json_as(Budgets, "budgets.json")  # doctest: +SKIP
        {'bipolar': '2 epochs'}
    """
    from argsim.io import read_json

    data = read_json(path)
    validate(schema, data, path, what=what)
    return data


_EXPECTED = {"dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
             "list_type": "a list", "string_type": "text", "int_type": "a whole number",
             "float_type": "a number", "finite_number": "a finite number", "missing": None}


def _message(err: dict[str, Any]) -> str:
    kind = err["type"]
    if kind == "missing":
        return "missing field"
    expected = _EXPECTED.get(kind)
    if expected is not None:
        return f"expected {expected}, found {describe(err.get('input'))}"
    return str(err.get("msg", kind)).replace("Value error, ", "")


def _data_path(data: Any, loc: tuple) -> list:
    """The parts of pydantic's error location that index into `data` (a union's branch names dropped)."""
    out, here = [], data
    for i, part in enumerate(loc):
        if isinstance(here, dict) and part in here:
            here = here[part]
        elif isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here):
            here = here[part]
        elif isinstance(part, str) and part in ("int", "float", "str", "none") or "[" in str(part):
            continue
        elif isinstance(part, str) and i < len(loc) - 1 and part[:1].isupper() and part.isidentifier():
            continue  # a union's branch named by its model class (SummariesObject), not a key of the data
        out.append(part)
    return out


def validate(schema: Any, data: Any, path: str | Path | None, row: int | None = None,
             what: str | None = None) -> Any:
    """`data` checked against `schema` (a pydantic model or a type), or one InputError naming `path`, the row
    and the field of the first problem.

    Args:
        schema: a pydantic model class or a type such as `Predictions`.
        data: the parsed JSON value (a whole file, or one record).
        path: the file, for messages.
        row: the record's row (a JSONL line, a CSV row) when `data` is one record; for a whole file whose top
            level is a list, the list index + 1 becomes the row.
        what: what the file holds, for the top-level message ('a results file').

    Returns:
        The validated value (a model instance for a model, plain data otherwise).

    Example:
        >>> validate(Predictions, {"a1": {"k1": 0.5}}, "p.json")
        {'a1': {'k1': 0.5}}
    """
    try:
        return TypeAdapter(schema).validate_python(data)
    except ValidationError as exc:
        # the most specific complaint first: of a union, pydantic reports every branch
        err = max(exc.errors(), key=lambda e: len(e["loc"]))
        loc = _data_path(data, err["loc"])
        record = row is not None  # one record of a record file: its top-level keys are its columns
        if row is None and loc and isinstance(loc[0], int) and isinstance(data, list):
            row = loc.pop(0) + 1
            record = True
        column = str(loc.pop(0)) if record and len(loc) == 1 else None
        field = ".".join(str(p) for p in loc) or None
        message = _message(err)
        if field is None and column is None and row is None and what:
            message = f"not {what}: {message}"
        raise InputError(path, message, row=row, column=column, field=field) from None
