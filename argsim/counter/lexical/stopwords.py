"""Stop-word lists of the bag-of-words features (a light module: the CLI reads its default at start-up)."""

from __future__ import annotations

from functools import cache

from argsim.backend.models import tokenize_en
from argsim.extras import need

STOPWORD_LISTS = ("gensim", "none")
DEFAULT_STOPWORDS = "gensim"  # of the similarity features (Manhattan, WMD, TF cosine); BM25 uses "none"


@cache
def stopword_set(stopwords: str) -> frozenset[str]:
    """The stop words of a named list ('gensim': gensim's English list; 'none': empty)."""
    if stopwords == "none":
        return frozenset()
    if stopwords == "gensim":
        return frozenset(need("gensim.parsing.preprocessing", "the gensim stop-word list").STOPWORDS)
    raise ValueError(f"unknown stop-word list '{stopwords}': choose one of {', '.join(STOPWORD_LISTS)}")


def content_tokens(text: str, stopwords: str = "none") -> list[str]:
    """`tokenize_en` tokens of a text without the stop words of the named list."""
    drop = stopword_set(stopwords)
    return [t for t in tokenize_en(text) if t not in drop]
