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

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, StrictStr, TypeAdapter, ValidationError

from argsim.errors import InputError
from argsim.io import describe

#: a finite JSON number (int or float, never true/false or a string)
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
#: a JSON number that may be NaN (argsim's own files write NaN for an undefined figure)
NumberOrNaN = Annotated[float, Strict()]


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
    for part in loc:
        if isinstance(here, dict) and part in here:
            here = here[part]
        elif isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here):
            here = here[part]
        elif isinstance(part, str) and part in ("int", "float", "str", "none") or "[" in str(part):
            continue
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
