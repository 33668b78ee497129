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
