"""`summarize_minutes`: extractive summaries of assembly minutes with EmbedRank++ (Shirafuji et al., Eq. 6) or
the baselines, as `argsim summarize minutes` makes them (`argsim.minutes.summarize.run_summaries`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from argsim.config import RunConfig
from argsim.errors import ArgsimError, check_count
from argsim.io import as_texts
from argsim.minutes.summarize import MinutesItem, SummarizeOptions, run_summaries, topic_text
from argsim.minutes.text import utterance_sentences

if TYPE_CHECKING:
    import pandas as pd


def summarize_minutes(sentences: str | Sequence[str], topic: str = "", subtopic: str = "",
                      budget: int = 100, model: str | Path = "ginza", options: SummarizeOptions | None = None,
                      config: RunConfig | None = None) -> list[str]:
    """Pick the sentences of an utterance that summarise it within a character budget.

    EmbedRank++ as the minutes paper's Eq. 6 (`argsim.minutes.mmr`; key size = budget / chars_per_key, Eq. 7),
    picking sentences greedily while they fit the budget.

    Args:
        sentences: The utterance: a text (cleaned of speaker tags and stage directions and split into sentences
            after 。！？) or a list of its sentences (many items at once: `summarize_minutes_frame`).
        topic: The main topic (headline) of the item.
        subtopic: Its subtopic.
        budget: The summary's character budget.
        model: The encoder (``"ginza"``, the default, docs/models.md; ``"minutes"``; ``"e5-multilingual"``; a
            folder trained by `argsim train minutes-sbert`).
        options: How sentences are picked (`argsim.minutes.summarize.SummarizeOptions`, the options of
            `argsim summarize minutes`: method, the Eq. 6 weights, chars_per_key, cap); None: the defaults.
        config: The run options (device, seed of ``"random"``, cache); None: the defaults.

    Returns:
        The selected sentences in document order (joined, they are the summary; if none fits, the best
        sentence cut to the budget).

    Example:
        >>> import argsim
        >>> argsim.summarize_minutes(
        ...     "保育所の待機児童が増えています。本日は晴天です。区は保育所を三か所新設します。",
        ...     topic="待機児童対策", subtopic="保育所の整備", budget=30)
        ['保育所の待機児童が増えています。']
    """
    import pandas as pd

    check_count(budget, "budget (characters)")
    if hasattr(sentences, "columns"):
        raise ArgsimError("a frame of items is summarised by summarize_minutes_frame (one row per item)")
    sents = (utterance_sentences(sentences) if isinstance(sentences, str)
             else [x for x in as_texts(sentences, "sentences") if x.strip()])
    if not sents:
        raise ArgsimError("no sentences to summarise")
    item = pd.DataFrame({"id": ["input"], "sentences": [sents], "topic": [topic], "subtopic": [subtopic]})
    row = summarize_minutes_frame(item, budget, model, options, config).iloc[0]
    return row["selected"] or ([row["summary"]] if row["summary"] else [])


def _column(frame: pd.DataFrame, *names: str) -> str | None:
    return next((n for n in names if n in frame.columns), None)


def summarize_minutes_frame(frame: pd.DataFrame, budget: int = 100, model: str | Path = "ginza",
                            options: SummarizeOptions | None = None, config: RunConfig | None = None) -> pd.DataFrame:
    """`summarize_minutes` over many items at once (one embedding pass for all of them).

    Args:
        frame: The items as ``load_dataset("poliinfo")`` returns them: columns ``id``, ``sentences`` (a list) or
            ``text``, and optional ``main_topic``/``topic``, ``sub_topic``/``subtopic``, ``length``/``budget``
            (the item's character budget), ``summary`` (its gold summary).
        budget: The budget of items without a ``length``/``budget`` column.
        model, options, config: As `summarize_minutes`.

    Returns:
        A DataFrame, one row per item: ``id, summary, budget, gold`` (the item's ``summary``, "" without one) and
        ``selected`` (the sentences in document order).

    Example:
        >>> import argsim
        >>> import pandas as pd
        >>> items = pd.DataFrame({"id": ["u1"], "budget": [20], "text": ["待機児童が増えています。本日は晴天です。"]})
        >>> lead = argsim.SummarizeOptions(method="lead")
        >>> argsim.summarize_minutes_frame(items, options=lead)["summary"].tolist()
        ['待機児童が増えています。']
    """
    import pandas as pd

    text_col = _column(frame, "sentences", "text")
    if text_col is None:
        raise ArgsimError("the items frame needs a 'sentences' (list) or 'text' column")
    topic_col, sub_col = _column(frame, "main_topic", "topic"), _column(frame, "sub_topic", "subtopic")
    len_col, gold_col = _column(frame, "length", "budget"), _column(frame, "summary")
    items = []
    for i, row in enumerate(frame.to_dict("records")):
        raw = row[text_col]
        sents = utterance_sentences(raw) if isinstance(raw, str) else [str(x) for x in raw if str(x).strip()]
        if not sents:
            raise ArgsimError(f"item {row.get('id', i)!r} (row {i + 1}) has no sentences")
        b = int(row[len_col]) if len_col and row[len_col] == row[len_col] else budget
        if b < 1:
            raise ArgsimError(f"item {row.get('id', i)!r} (row {i + 1}): budget {b} must be at least 1 character")
        items.append(MinutesItem(str(row.get("id", i)), sents, topic_text(str(row[topic_col] or "")) if topic_col
                                 else "", str(row[sub_col] or "") if sub_col else "", b,
                                 str(row[gold_col] or "") if gold_col else ""))
    config = config or RunConfig()
    records, _ = run_summaries(items, str(model), replace(options or SummarizeOptions(), seed=config.seed), config)
    return pd.DataFrame([(r["id"], r["summary"], r["budget"], r["gold"],
                          [x["sentence"] for x in sorted(r["selected"], key=lambda x: x["index"])]) for r in records],
                        columns=["id", "summary", "budget", "gold", "selected"])
