"""Bag-of-words representations computed once per text: term-count matrices, BM25 weights, TF cosine.

Tokens are `argsim.backend.models.tokenize_en` (lower-cased words and numbers, apostrophe suffixes kept), no
stemming; `stopwords="gensim"` drops gensim's English stop-word list (337 words), as the WMD literature does.
Every text is tokenised once; pairs are scored with sparse matrix products over the whole pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from argsim.counter.lexical.stopwords import content_tokens


@dataclass
class TermMatrix:
    """Texts as rows of a sparse term-count matrix over one shared vocabulary."""

    vocab: dict[str, int]
    counts: sp.csr_matrix  # (n_texts, n_vocab) float64 counts

    def l1(self) -> sp.csr_matrix:
        """Rows divided by their token count (empty rows stay zero)."""
        return sp.csr_matrix(sp.diags(1.0 / np.maximum(np.asarray(self.counts.sum(axis=1)).ravel(), 1.0)) @ self.counts)


def shared_term_matrices(*groups: Sequence[str], stopwords: str = "none") -> list[TermMatrix]:
    """Term-count matrices of several text groups over one vocabulary (columns in first-seen order)."""
    vocab: dict[str, int] = {}
    cols = [[[vocab.setdefault(tok, len(vocab)) for tok in content_tokens(text, stopwords)] for text in texts]
            for texts in groups]
    mats = []
    for rows in cols:
        lengths = [len(row) for row in rows]
        where = (np.repeat(np.arange(len(rows)), lengths), [c for row in rows for c in row])
        counts = sp.csr_matrix((np.ones(sum(lengths)), where), shape=(len(rows), len(vocab)))
        counts.sum_duplicates()
        mats.append(TermMatrix(vocab, counts))
    return mats


def manhattan_distance(queries: sp.csr_matrix, docs: sp.csr_matrix) -> np.ndarray:
    """L1 distances between rows of two L1-normalised non-negative matrices, all pairs (n_q, n_d):
    |a - b|_1 = |a|_1 + |b|_1 - 2 * sum_t min(a_t, b_t), per query on the query's own terms only."""
    qa, da = (np.asarray(m.sum(axis=1)).ravel() for m in (queries, docs))
    docs_csc = docs.tocsc()
    out = np.empty((queries.shape[0], docs.shape[0]), dtype=np.float64)
    for i in range(queries.shape[0]):
        lo, hi = queries.indptr[i], queries.indptr[i + 1]
        terms, weights = queries.indices[lo:hi], queries.data[lo:hi]
        if len(terms) == 0:
            out[i] = da
            continue
        sub = docs_csc[:, terms].toarray()  # (n_d, |q|)
        overlap = np.minimum(sub, weights[None, :]).sum(axis=1)
        out[i] = qa[i] + da - 2.0 * overlap
    return np.maximum(out, 0.0)


def cosine_similarity(queries: sp.csr_matrix, docs: sp.csr_matrix) -> np.ndarray:
    """Cosine of term-frequency rows, all pairs (0 where either text is empty)."""
    unit = []  # rows as unit vectors; empty rows stay zero
    for m in (queries, docs):
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        unit.append(sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ m))
    return np.asarray((unit[0] @ unit[1].T).toarray())


BM25_IDFS = ("lucene", "okapi")


@dataclass
class BM25Index:
    """BM25 document weights of a document collection, so that score(query, d) = sum_t qtf_t * W[d, t].

    `idf="okapi"` is rank-bm25's `BM25Okapi` exactly (idf = log((N - n + 0.5) / (n + 0.5)), negative values
    floored to `epsilon * mean idf`); `idf="lucene"` uses log(1 + (N - n + 0.5) / (n + 0.5)), which is never
    zero or negative, so tiny collections (a debate's few arguments) still rank by term overlap.
    """

    weights: sp.csr_matrix  # (n_docs, n_vocab)

    @classmethod
    def fit(cls, docs: TermMatrix, k1: float = 1.5, b: float = 0.75, idf: str = "lucene",
            epsilon: float = 0.25) -> BM25Index:
        if idf not in BM25_IDFS:
            raise ValueError(f"unknown BM25 idf '{idf}': choose one of {', '.join(BM25_IDFS)}")
        counts = docs.counts.tocsr()
        n_docs = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        if idf == "okapi":
            present = df > 0
            raw = np.log((n_docs - df + 0.5) / (df + 0.5))
            # rank-bm25 averages over the collection's terms, then floors the negative ones
            mean_idf = raw[present].sum() / max(present.sum(), 1)
            idf_v = np.where(raw < 0, epsilon * mean_idf, raw)
        else:
            idf_v = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        dl = np.asarray(counts.sum(axis=1)).ravel()
        avgdl = dl.mean() if n_docs else 1.0
        w = counts.copy()
        row_of = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
        w.data = idf_v[w.indices] * w.data * (k1 + 1) / (w.data + k1 * (1 - b + b * dl[row_of] / avgdl))
        return cls(weights=w)

    def scores(self, queries: sp.csr_matrix) -> np.ndarray:
        """(n_queries, n_docs) BM25 scores; query rows are term counts over the documents' vocabulary (build both
        with `shared_term_matrices`)."""
        return np.asarray((queries @ self.weights.T).toarray())
