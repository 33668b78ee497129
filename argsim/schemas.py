"""Declared shapes of argsim's structured inputs, checked with pydantic before any work (docs/errors.md).

A whole JSON file is checked against a schema by `validate`, each record of a CSV/TSV/JSONL file (or a JSON list
of records) against its record kind by `validate_records`: pydantic's first complaint becomes one `InputError`
naming the file, the row and the field or column. Unknown keys are kept (files grow new fields).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NotRequired

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PlainValidator, TypeAdapter, ValidationError, ValidationInfo
from typing_extensions import TypedDict

from argsim.errors import InputError


def _from_csv(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("csv"))


def _is_number(value: Any) -> bool:
    """A number, also a NumPy one (records built from a DataFrame), never true/false."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _id(value: Any, info: ValidationInfo) -> str:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
        return str(int(value))
    if not isinstance(value, str):
        raise ValueError(f"expected text or a whole number, found {describe(value)}")
    if not value.strip():
        raise ValueError("empty value")
    return value


def _as_float(value: Any, info: ValidationInfo) -> float | None:
    """The number `value` is (a CSV cell: the number its text reads as), else None."""
    if isinstance(value, str) and _from_csv(info):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return float(value) if _is_number(value) else None


def _choice(allowed: tuple[int, ...], what: str):
    def check(value: Any, info: ValidationInfo) -> int:
        number = _as_float(value, info)
        if number is None or number not in allowed:
            quoted = (isinstance(value, str) and _from_csv(info)) or (_is_number(value) and math.isfinite(value))
            raise ValueError(f"{what}, not {repr(value) if quoted else describe(value)}")
        return int(number)
    return check


def _number(nan: bool, expected: str = "a finite number"):
    def check(value: Any, info: ValidationInfo) -> float:
        number = _as_float(value, info)
        if number is None:
            found = repr(value[:40]) if isinstance(value, str) and _from_csv(info) else describe(value)
            raise ValueError(f"expected a number, found {found}")
        if math.isinf(number) or (math.isnan(number) and not nan):
            raise ValueError(f"expected {expected}, found {describe(number)}")
        return number
    return check


def _scalar(required: bool):
    def check(value: Any, info: ValidationInfo) -> Any:
        if required and (value is None or (isinstance(value, str) and not value.strip())):
            raise ValueError("empty value")
        if isinstance(value, list | dict):
            raise ValueError(f"expected a single value, found {describe(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"expected a finite number, found {describe(value)}")
        return value
    return check


def _count(value: Any, info: ValidationInfo) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None  # left out: the reader's default
    if isinstance(value, str) and not _from_csv(info):
        raise ValueError(f"expected a whole number, found text {value[:40]!r} (in JSON a count is a number)")
    try:
        return parse_count(value)
    except InputError as exc:
        raise ValueError(exc.problem) from None


#: text, as given (a number, list or object where text is expected is refused, not embedded as its `str()`)
Text = Annotated[str, Field(strict=True)]
#: text with at least one character other than a space
RequiredText = Annotated[str, Field(strict=True, pattern=r"\S")]
#: an id: non-empty text, or a JSON whole number read as its text
Id = Annotated[str, PlainValidator(_id)]
#: a gold label of a pair: 0 or 1 (CSV: "0", "1", "1.0"; JSON: the number)
Label01 = Annotated[int, PlainValidator(_choice((0, 1), "label must be 0 or 1"))]
#: a stance: 1 (pro) or -1 (con)
Stance = Annotated[int, PlainValidator(_choice((1, -1), "stance must be 1 (pro) or -1 (con)"))]
#: one value (text, a number, true/false, null), never a list or an object; numbers finite
Scalar = Annotated[Any, PlainValidator(_scalar(required=False))]
#: a finite number, never true/false (a CSV cell: the number its text reads as)
Number = Annotated[float, PlainValidator(_number(nan=False))]
#: a number that may be NaN (argsim's own files write NaN for an undefined figure), never infinite
NumberOrNaN = Annotated[float, PlainValidator(_number(nan=True, expected="a number or NaN"))]
#: `NumberOrNaN` whose message for an infinity asks for a finite number (the ranking records' `gold_score`)
RecordNumberOrNaN = Annotated[float, PlainValidator(_number(nan=True))]
#: a `Scalar` that is neither null nor blank
RequiredScalar = Annotated[Any, PlainValidator(_scalar(required=True))]
#: a count >= 1 (JSON 3 or 3.0, CSV "3"); blank or null: left out (None)
Count = Annotated[int | None, PlainValidator(_count)]


class _Open(BaseModel):
    """An object whose unknown keys are kept."""

    model_config = ConfigDict(extra="allow")


class ResultRow(_Open):
    """One row of a results file (`argsim.results.ResultRow.as_dict`)."""

    metric: Text
    value: NumberOrNaN  # every row states its figure (NaN where it is undefined)
    method: Text | None = None
    model: Text | None = None
    split: Text | None = None
    setting: Text | None = None
    paper: NumberOrNaN | None = None
    seconds: NumberOrNaN | None = None
    peak_mb: NumberOrNaN | None = None
    env: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None
    command: Text | None = None


class ResultsFile(_Open):
    """`bench/results/<task>.json`: the task, its rows and the commands that made them."""

    task: Text
    rows: list[ResultRow]
    command: Text | None = None
    commands: list[Text | None] | None = None


class EvalRow(_Open):
    """One evaluation logged during training (`train_config.json`'s `evals`)."""

    step: Number | None = None


class TrainConfig(_Open):
    """A trained folder's `train_config.json`: what `argsim models curve` and the model listing read."""

    trainer: Text | None = None
    steps: Number | None = None
    seconds: Number | None = None
    stopped_by: Text | None = None
    losses: list[NumberOrNaN] | None = None
    loss_steps: list[Number] | None = None
    evals: list[EvalRow] | None = None
    metrics: dict[str, Any] | None = None


class TrainRecord(TrainConfig):
    """A training record that argsim rewrites (`argsim.training.record.add_metrics`): it names its trainer."""

    trainer: Text


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

    Speaker: Text | None = None
    Utterance: Text | None = None


class MinutesMeeting(_Open):
    """One meeting of a PoliInfo minutes file (a JSON list of these)."""

    Proceeding: list[MinutesUtterance]
    ProceedingTitle: Text | None = None
    Date: Text | None = None
    URL: Text | None = None


#: a PoliInfo minutes file
Meetings = list[MinutesMeeting]

#: shared-task predictions `{arg_id: {key_point_id: score}}`
Predictions = dict[str, dict[str, Number]]

#: `eval counter-neural --budget`: method -> the training budget, as text or a number
Budgets = dict[str, Text | Number]


class SummaryItem(_Open):
    """One item of a summaries file (`argsim summarize minutes` writes them; `eval rouge` reads them); the budget
    (a count, JSON or CSV text) is checked by `parse_count`."""

    summary: Text | None
    gold: Text | None
    budget: Count = None


class SummariesObject(_Open):
    """A summaries file as `argsim summarize minutes` writes it: the run's settings and its items."""

    summaries: list[SummaryItem]


#: a summaries file: the items alone, or an object holding them under `summaries`
Summaries = list[SummaryItem] | SummariesObject


class ShardManifest(_Open):
    """`_argsim_embeddings.json` of a shard folder (`argsim embed ... --out DIR`)."""

    model: Text
    identity: Text
    dim: Annotated[int, Field(strict=True, ge=0)]
    rows: Annotated[int, Field(strict=True, ge=0)]
    column: Text | None = None
    pooling: Text | None = None
    max_seq_length: Annotated[int, Field(strict=True, ge=1)] | None = None
    normalize: bool | None = None


class SimpleSDWeights(_Open):
    """A Simple-SD weights file (`argsim train simple-sd --tune --out`): the eight weights x1..x8."""

    weights: Annotated[list[Number], Field(min_length=8, max_length=8)]


class LTRMeta(_Open):
    """`ltr.json` of a trained learning-to-rank folder."""

    model: Text
    features: Text
    seed: Annotated[int, Field(strict=True)] = 13
    #: how the training pairs were drawn (counts of pairs and positives), as `argsim train ltr` records it
    sampling: dict[str, Any] | None = None


class KpmCrossInfo(_Open):
    """`argsim_kpm_cross.json` of a key point cross-encoder folder: how its inputs were built."""

    context: Text = "none"
    max_length: Annotated[int, Field(strict=True, ge=1)] | None = None


class CounterCrossMarker(_Open):
    """`argsim_cross_encoder.json` of a counter-argument cross-encoder folder: its training options."""

    max_length: Annotated[int, Field(strict=True, ge=1)] = 256
    lr: Number | None = None
    batch_size: Annotated[int, Field(strict=True, ge=1)] | None = None
    train_pairs: Annotated[int, Field(strict=True, ge=0)] | None = None


class CounterTrainConfig(_Open):
    """The training options a counter model's `history.json` records (`config`)."""

    kind: Text
    train_encoder: bool
    base_model: Text
    lr: Number
    batch_size: Annotated[int, Field(strict=True, ge=1)]
    sampling: Text


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

    members: Annotated[list[Annotated[str, Field(strict=True, min_length=1)]], Field(min_length=1)]


class ConcatConfig(_Open):
    """A thematic concatenation folder's `config.json`: the parts under `parts/`, in order."""

    parts: Annotated[list[Annotated[str, Field(strict=True, min_length=1)]], Field(min_length=1)]


class TransformerConfig(_Open):
    """The fields argsim reads of a transformers `config.json`."""

    hidden_size: Annotated[int, Field(strict=True, ge=1)]


class KeptRow(_Open):
    """One finished (row, setting) of an interrupted `eval counter-neural`: per-point hits for every K."""

    ids: list[Text]
    hits: dict[str, list[Annotated[int, Field(strict=True)] | bool | Number]]
    seconds: Number


class TableState(_Open):
    """The state file of an interrupted `eval counter-neural`: the run's inputs and its finished rows."""

    inputs: dict[str, Any]
    rows: dict[str, KeptRow]


def describe(value: Any) -> str:
    """What a JSON value is, for messages: 'a list', 'text', 'a number', 'true/false', 'null', 'an object'."""
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "infinity"
    kinds = ((bool, "true/false"), (int | float, "a number"), (str, "text"), (list, "a list"), (dict, "an object"))
    return next((word for kind, word in kinds if isinstance(value, kind)), type(value).__name__)


def parse_count(value: Any, path: str | Path | None = None, row: int | None = None, column: str | None = None,
                minimum: int = 1) -> int:
    """A whole number >= `minimum` from a record field (JSON 3 or 3.0, CSV "3"); anything else (true, 2.5, -1,
    "x", nan) is InputError naming file, row and column.

    Args:
        value: the field's value.
        path: the file (for messages).
        row: the record's row.
        column: the field's name.
        minimum: the smallest count accepted.

    Returns:
        The count.

    Example:
        >>> parse_count("12")
        12
    """
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("+-").isdigit() and value.strip().isascii():
        number = int(value.strip())
    if number is None:
        raise InputError(path, f"{value!r} is not a whole number", row=row, column=column)
    if number < minimum:
        raise InputError(path, f"{number} must be at least {minimum}", row=row, column=column)
    return number


_EXPECTED = {"typed_dict_type": "an object", "dict_type": "an object", "model_type": "an object",
             "model_attributes_type": "an object",
             "list_type": "a list", "string_type": "text", "int_type": "a whole number",
             "float_type": "a number", "finite_number": "a finite number"}


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
             what: str | None = None, csv: bool = False) -> Any:
    """`data` checked against `schema` (a pydantic model or a type), or one InputError naming `path`, the row
    and the field of the first problem.

    Args:
        schema: a pydantic model class or a type such as `Predictions`.
        data: the parsed JSON value (a whole file, or one record).
        path: the file, for messages.
        row: the record's row when `data` is one record (of a whole list: the faulty item's index + 1).
        what: what the file holds, for the top-level message ('a results file').
        csv: `data` comes from a CSV/TSV file: labels and numbers are read from their text (in JSON: numbers).

    Returns:
        The validated value (a model instance for a model, plain data otherwise).

    Example:
        >>> validate(Predictions, {"a1": {"k1": 0.5}}, "p.json")
        {'a1': {'k1': 0.5}}
    """
    try:
        return _adapter(schema).validate_python(data, context={"csv": csv})
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
        message = str(err.get("msg", err["type"])).replace("Value error, ", "")
        if err["type"] == "missing":
            message = "missing field"
        elif err["type"] == "string_pattern_mismatch":  # the one pattern: a required text holds a non-space character
            message = "empty value"
        elif err["type"] in _EXPECTED:
            message = f"expected {_EXPECTED[err['type']]}, found {describe(err.get('input'))}"
        if field is None and column is None and row is None and what:
            message = f"not {what}: {message}"
        raise InputError(path, message, row=row, column=column, field=field) from None


#: one TypeAdapter per schema (building one costs more than validating a record)
_cached_adapter = functools.lru_cache(maxsize=256)(TypeAdapter)


def _adapter(schema: Any) -> TypeAdapter:
    """`schema`'s cached TypeAdapter (a new one for a type that cannot be a dict key)."""
    try:
        return _cached_adapter(schema)
    except TypeError:
        return TypeAdapter(schema)


# ---------------------------------------------------------------- record kinds (CSV / TSV / JSONL / JSON lists)
# One TypedDict per kind of record file. A CSV cell is text, so labels and numbers are read from text there; in JSON
# they must be numbers (`"1"` in one line and `1` in the next is refused, not read two ways).


def record_kind(name: str, fields: dict[str, Any]) -> type:
    """A record kind (a TypedDict keeping unknown columns) with `fields`, the columns and their types (`NotRequired`
    for an optional one): for kinds whose column names the user chooses (`embed --column`, the ArgKP readers').

    Example:
        >>> columns(record_kind("Pair", {"a": Text, "b": NotRequired[Id]}))
        (['a'], ['a', 'b'])
    """
    kind = TypedDict(name, fields)  # type: ignore[misc]
    kind.__pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[attr-defined]
    return kind


#: A triplet (`train thematic`, `eval triplets`, the minutes triplets).
TripletRecord = record_kind("TripletRecord", {"anchor": RequiredText, "positive": RequiredText,
                                              "negative": RequiredText})


@functools.cache
def text_records(column: str = "text", id_column: str | None = None) -> type:
    """The records of a file of texts (`embed`, `read_texts`): the text `column`, and the id column when named."""
    return record_kind(f"TextRecord[{column}]", {column: RequiredText, **({id_column: Id} if id_column else {})})


#: A text of a collection to search (`rank counter-search`): `text`, optional `id`.
CollectionRecord = record_kind("CollectionRecord", {"text": RequiredText, "id": NotRequired[Id]})

#: A sentence to cluster (`cluster sentences`): `text`, optional gold `label` and `article` (its group).
SentenceRecord = record_kind("SentenceRecord", {"text": RequiredText, "label": NotRequired[Scalar],
                                                "article": NotRequired[Scalar]})

#: A sentence with its gold section (`eval clustering`, the MTEB clustering task); optional `cluster`.
LabelledSentenceRecord = record_kind("LabelledSentenceRecord", {"text": RequiredText, "label": RequiredScalar,
                                                                "article": NotRequired[Scalar],
                                                                "cluster": NotRequired[Scalar]})

#: A user's article (`data triplets wikipedia --articles FILE`): its title and wikitext.
ArticleRecord = record_kind("ArticleRecord", {"title": RequiredText, "text": RequiredText})

#: A row of the Wikipedia corpus's `article_info.csv`.
ArticleIndexRecord = record_kind("ArticleIndexRecord", {"raw_file": RequiredText, "title": RequiredText})


@functools.cache
def argkp_items(id_column: str, text_column: str, blank: bool = False) -> type:
    """An argument (`arg_id`) or key point (`key_point_id`) of an ArgKP-style file with its text column; with
    `blank` its text and topic may be empty (records the Python API builds: plain lists of texts have no topic,
    a frame of pairs scored by the metric needs no text)."""
    text = Text if blank else RequiredText
    return record_kind(f"ArgKPItem[{text_column}]", {id_column: Id, text_column: text, "topic": text,
                                                     "stance": Stance})


#: A gold label of an (argument, key point) pair.
LabelRecord = record_kind("LabelRecord", {"arg_id": Id, "key_point_id": Id, "label": Label01})

#: A user's argument (`rank counterargs --input`; see `argsim.counter.core.userdata`).
UserArgumentRecord = record_kind("UserArgumentRecord", {"id": Id, "text": RequiredText,
                                                        "conclusion": NotRequired[Text | None],
                                                        "kind": NotRequired[Text | None],
                                                        "counter": NotRequired[Scalar], "theme": NotRequired[Scalar],
                                                        "debate": NotRequired[Scalar], "stance": NotRequired[Scalar]})

#: A user's utterance to summarise (`summarize minutes --input`): rows of one `id` form one item.
UtteranceRecord = record_kind("UtteranceRecord", {"id": Id, "text": RequiredText, "topic": RequiredText,
                                                  "subtopic": RequiredText, "summary": NotRequired[Text | None],
                                                  "length": NotRequired[Count]})

#: A summary with its gold summary and optional character budget (`eval rouge` on CSV / JSONL).
SummaryRecord = record_kind("SummaryRecord", {"summary": RequiredText, "gold": RequiredText,
                                              "budget": NotRequired[Count]})

#: A (point, counter) training pair (`train bipolar --pairs`).
CounterPairRecord = record_kind("CounterPairRecord", {"point": RequiredText, "counter": RequiredText})

#: One line of a counter-argument ranking file (`argsim rank counterargs`; ranges are checked by
#: `argsim.counter.core.evaluation.check_ranking_records`).
RankingRecord = record_kind("RankingRecord", {"point": RequiredText, "method": RequiredText, "setting": RequiredText,
                                              "split": NotRequired[Text | None], "pool_size": Number,
                                              "gold": NotRequired[Text | None],
                                              "gold_score": NotRequired[RecordNumberOrNaN | None],
                                              "gold_better": NotRequired[Number | None],
                                              "gold_tied": NotRequired[Number | None]})


def columns(kind: type) -> tuple[list[str], list[str]]:
    """(required, all) columns of a record kind, in declaration order (as pydantic reads the kind: under
    postponed annotations `__required_keys__` would count a `NotRequired` column as required).

    Example:
        >>> columns(CollectionRecord)
        (['text'], ['text', 'id'])
    """
    schema = _adapter(kind).core_schema
    while schema.get("type") != "typed-dict":
        schema = schema["schema"]
    fields = schema["fields"]
    return [name for name, f in fields.items() if f.get("required", True)], list(fields)


def validate_records(kind: type, numbered: Sequence[tuple[int, Any]], path: str | Path,
                     csv: bool = False) -> list[tuple[int, dict]]:
    """The records of a file checked against a record kind in one pydantic pass, or one InputError naming the
    file, the row and the column of the first record that does not fit.

    Args:
        kind: a record kind (a TypedDict of this module, or one made by `record_kind`).
        numbered: (row, record) pairs as read, the row being the one errors name.
        path: the file, for messages.
        csv: the records come from a CSV/TSV file (all cells text).

    Returns:
        (row, record) pairs, each record a dict with its values read (ids as text, labels as ints).

    Example:
        >>> validate_records(LabelRecord, [(2, {"arg_id": "a", "key_point_id": 7, "label": "1"})], "l.csv", csv=True)
        [(2, {'arg_id': 'a', 'key_point_id': '7', 'label': 1})]
    """
    try:
        values = _adapter(list[kind]).validate_python([rec for _, rec in numbered], context={"csv": csv})
    except ValidationError as exc:
        row, rec = numbered[min(e["loc"][0] for e in exc.errors() if e["loc"] and isinstance(e["loc"][0], int))]
        validate(kind, rec, path, row=row, csv=csv)  # raises: the first bad record's message
        raise  # pragma: no cover - validate refuses what the list refused
    return [(row, value) for (row, _), value in zip(numbered, values, strict=True)]
