"""Build every thematic data set of one corpus into a folder: split, triplets-sen/-titles, clustering benchmark."""

from __future__ import annotations

from pathlib import Path

from argsim.data.wikipedia import Article, parse_article
from argsim.errors import InputError
from argsim.io import read_records, read_text_file, regular_files, write_json, write_jsonl
from argsim.progress import track
from argsim.thematic.triplets import (
    SPLITS,
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
    rows = read_records(path, required=["title", "text"], text=["title", "text"])
    return [parse_article(r["text"], str(r["title"]), str(path))
            for r in track(rows, "parsing articles", enabled=not quiet)]


def first_test_triplets(folder: Path, limit: int, seed: int = 13) -> list[dict]:
    """The first `limit` triplets-sen test triplets of the Wikipedia corpus in `folder`, exactly as
    `build_datasets` writes them with its defaults (articles split with `seed`, top-level sections,
    adjacent-section negatives), parsing only the test articles they come from: `sentence_triplets` draws
    article by article from one seeded generator, so the first triplets depend on the first test articles alone.

    Args:
        folder: the `wikipedia` dataset folder (`argsim.data.catalog.dataset_dir("wikipedia")`).
        limit: how many triplets (all test triplets if there are fewer).
        seed: the split and triplet seed (`argsim data triplets wikipedia`'s default: 13).

    Returns:
        Triplet records (anchor, positive, negative, article, section, negative_article, negative_section).

    Example:
        >>> from argsim.data.catalog import dataset_dir
        >>> len(first_test_triplets(dataset_dir("wikipedia"), 5))  # doctest: +SKIP
        5
    """
    from argsim.data.wikipedia import ROOT, parse_article, read_article_index, read_raw_article

    rows: dict[str, dict] = {}
    for row in read_article_index(folder):
        rows.setdefault(row["title"], row)  # the first file of each title, as load_articles keeps
    prepared: list = []
    triplets: list[dict] = []
    for title in split_articles(list(rows), seed=seed)["test"]:
        row = rows[title]
        prepared += prepare([parse_article(read_raw_article(folder / ROOT / row["raw_file"]), title, row["raw_file"])])
        triplets = sentence_triplets(prepared, seed=seed)
        if len(triplets) >= limit:
            break
    return triplets[:limit]


def build_datasets(articles: list[Article], out: Path, negatives: str = "adjacent", level: str = "top",
                   seed: int = 13, min_sections: int = 5) -> dict[str, dict[str, int]]:
    """Write split.json, triplets-sen-<split>.jsonl, triplets-titles-<split>.jsonl and scb-<split>.jsonl.

    Returns counts per split: articles, eligible articles, sen/titles triplets, SCB articles and sentences.
    """
    out = Path(out)
    unique: dict[str, Article] = {}
    for a in articles:
        unique.setdefault(a.title, a)
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
