"""Build every thematic data set of one corpus into a folder: split, triplets-sen/-titles, clustering benchmark."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from argsim.config import SEED
from argsim.data.wikipedia import ROOT, Article, parse_article, read_article_index, read_raw_article
from argsim.errors import InputError, check_choice
from argsim.io import read_records, read_text_file, regular_files, write_json, write_jsonl
from argsim.progress import track
from argsim.schemas import ArticleRecord
from argsim.thematic.triplets import (
    SPLITS,
    PreparedArticle,
    clustering_benchmark,
    prepare,
    sentence_triplets,
    split_articles,
    title_triplets,
)


def read_user_articles(path: Path, quiet: bool = False) -> list[Article]:
    """A user's own articles: a folder of wikitext files (*.txt / *.wiki, title = file name) or a JSONL/CSV with
    columns `title` and `text` (wikitext); `quiet`: no progress bar."""
    path = Path(path)
    if path.is_dir():
        files = regular_files(sorted([*path.glob("*.txt"), *path.glob("*.wiki")]), path, "wikitext files")
        if not files:
            raise InputError(path, "no *.txt or *.wiki wikitext files in this folder")
        return [parse_article(read_text_file(f), f.stem.replace("_", " "), str(f))
                for f in track(files, "parsing articles", enabled=not quiet)]
    return [parse_article(r["text"], str(r["title"]), str(path))
            for r in track(read_records(path, ArticleRecord), "parsing articles", enabled=not quiet)]


def prepared_split(folder: Path, split: str = "test", seed: int = SEED) -> Iterator[PreparedArticle]:
    """The prepared articles of one split of the Wikipedia corpus in `folder`, in the order `build_datasets` takes
    them (the first file of each title, top-level sections), parsed one at a time as they are asked for.

    Args:
        folder: the `wikipedia` dataset folder (`argsim.data.catalog.dataset_dir("wikipedia")`).
        split: ``"train"``, ``"dev"`` or ``"test"``.
        seed: the split seed.

    Returns:
        An iterator of `PreparedArticle` (those with too few kept sections skipped, as `prepare` does).

    Example:
        >>> from argsim.data.catalog import dataset_dir
        >>> next(prepared_split(dataset_dir("wikipedia"))).title  # doctest: +SKIP
        'Abortion'
    """
    check_choice(split, "split", SPLITS)
    rows = {row["title"]: row for row in reversed(read_article_index(folder))}  # the first row of each title
    for title in split_articles(list(rows), seed=seed)[split]:
        row = rows[title]
        yield from prepare([parse_article(read_raw_article(folder / ROOT / row["raw_file"]), title, row["raw_file"])])


def first_test_triplets(folder: Path, limit: int | None, seed: int = SEED, split: str = "test") -> list[dict]:
    """The first `limit` triplets-sen triplets of a split of the Wikipedia corpus in `folder`, exactly as
    `build_datasets` writes them with its defaults, parsing only the articles they come from (`sentence_triplets`
    draws article by article from one seeded generator, so the first triplets depend on the first articles alone).

    Args:
        folder: the `wikipedia` dataset folder (`argsim.data.catalog.dataset_dir("wikipedia")`).
        limit: how many triplets (None, or more than there are: all the split's triplets).
        seed: the split and triplet seed.
        split: ``"train"``, ``"dev"`` or ``"test"``.

    Returns:
        Triplet records (anchor, positive, negative, article, section, negative_article, negative_section).

    Example:
        >>> from argsim.data.catalog import dataset_dir
        >>> len(first_test_triplets(dataset_dir("wikipedia"), 5))  # doctest: +SKIP
        5
    """
    prepared: list = []
    for article in prepared_split(folder, split, seed):
        prepared.append(article)
        if limit is not None and len(sentence_triplets(prepared, seed=seed)) >= limit:
            break
    return sentence_triplets(prepared, seed=seed)[:limit]


def first_scb_rows(folder: Path, articles: int | None, split: str = "test", seed: int = SEED) -> list[dict]:
    """The sentence clustering benchmark rows (article, section, label, text) of the first `articles` benchmark
    articles of a split, as `build_datasets` writes `scb-<split>.jsonl` (None: all of them).

    Example:
        >>> from argsim.data.catalog import dataset_dir
        >>> len({r["article"] for r in first_scb_rows(dataset_dir("wikipedia"), 2)})  # doctest: +SKIP
        2
    """
    chunks = filter(None, (clustering_benchmark([article]) for article in prepared_split(folder, split, seed)))
    return [row for chunk in islice(chunks, None if articles is None else max(articles, 0)) for row in chunk]


def build_datasets(articles: list[Article], out: Path, negatives: str = "adjacent", level: str = "top",
                   seed: int = SEED, min_sections: int = 5) -> dict[str, dict[str, int]]:
    """Write split.json, triplets-sen-<split>.jsonl, triplets-titles-<split>.jsonl and scb-<split>.jsonl.

    Returns counts per split: articles, eligible articles, sen/titles triplets, SCB articles and sentences."""
    out = Path(out)
    unique = {a.title: a for a in reversed(articles)}  # the first article of each title
    splits = split_articles(list(unique), seed=seed)
    write_json(out / "split.json", {"seed": seed, "level": level, "negatives": negatives, **splits})
    counts: dict[str, dict[str, int]] = {}
    suffix = "" if negatives == "adjacent" else f"-{negatives}"
    for split in SPLITS:
        prepared = prepare([unique[t] for t in splits[split]], level=level, min_sections=min_sections)
        sen = sentence_triplets(prepared, negatives=negatives, seed=seed)
        titles = title_triplets(prepared)
        scb = clustering_benchmark(prepared)
        for rows in (sen, titles, scb):
            for r in rows:
                r["split"] = split
        write_jsonl(out / f"triplets-sen{suffix}-{split}.jsonl", sen)
        if not suffix:
            write_jsonl(out / f"triplets-titles-{split}.jsonl", titles)
            write_jsonl(out / f"scb-{split}.jsonl", scb)
        counts[split] = {"articles": len(splits[split]), "eligible": len(prepared), "sen": len(sen),
                         "titles": len(titles), "scb_articles": len({r["article"] for r in scb}),
                         "scb_sentences": len(scb)}
    write_json(out / f"counts{suffix}.json", counts)
    return counts
