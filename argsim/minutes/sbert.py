"""The political Sentence-BERT (Shirafuji et al., Sec. 3.2-3.3) with the backbones available offline.

No Japanese BERT exists offline, so two backbones are offered (docs/minutes.md tells them in full):
- `ginza` (default): WordEmbeddings(GiNZA's table) -> Pooling(mean) -> Dense(identity) over Sudachi tokens written
  as vector rows ("r123"), with `words` own vectors ("w:<word>"): a deviation from the paper (a Japanese BERT).
- `minilm` or any sentence-transformers folder: fine-tuned as is (its uncased WordPiece strips dakuten).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from argsim.backend import get_encoder
from argsim.backend.device import cast_for_inference
from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.names import write_manifest
from argsim.backend.safety import HF_LOAD
from argsim.io import pipe_docs

SEGMENTED_MARKER = "argsim_segmented.json"


def _ginza_nlp():
    """GiNZA's pipeline, shared with the backend's `ginza` encoder (loaded once per process)."""
    return get_encoder("ginza").nlp


def tokenize(texts: Sequence[str]) -> list[list[tuple[str, int]]]:
    """Each text's Sudachi (split mode C) tokens as (surface form, GiNZA vector row or -1); spaces dropped."""
    nlp = _ginza_nlp()
    vectors, strings = nlp.vocab.vectors, nlp.vocab.strings
    out = []
    with nlp.select_pipes(enable=[]):
        for doc in pipe_docs(nlp, texts, batch_size=256):
            out.append([(t.orth_, int(vectors.find(key=strings[t.orth_]))) for t in doc if t.orth_.strip()])
    return out


def render(tokens: Sequence[Sequence[tuple[str, int]]], words: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Token lists as the model's space-separated tokens: "w:<word>" for a word of `words`, else "r<row>";
    a token with neither is dropped."""
    return [" ".join(f"w:{w}" if w in words else f"r{r}" for w, r in toks if w in words or r >= 0)
            for toks in tokens]


def frequent_words(tokens: Sequence[Sequence[tuple[str, int]]], min_count: int) -> list[str]:
    """Surface forms seen at least `min_count` times, most frequent first (ties by first appearance); a form with
    whitespace inside, which the whitespace tokenizer could not keep whole, is left out."""
    counts = Counter(w for toks in tokens for w, _ in toks if not any(c.isspace() for c in w))
    return [w for w, n in counts.most_common() if n >= min_count]


def segment(texts: Sequence[str], words: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Each text as the model's tokens: "r12 w:予算 r7 ..." (see `render`).

    Without `words`, the space-joined GiNZA vector rows of its tokens (GiNZA keeps 20,000 distinct vectors for
    480k words: words share rows); tokens without a vector are dropped (GiNZA averages them as zeros: same
    direction)."""
    return render(tokenize(texts), words)


def build_ginza_model(update_embeddings: bool = True, words: Sequence[str] = ()):
    """WordEmbeddings(GiNZA's vector table, tokens "r<row>", and "w:<word>" for each of `words`, initialised
    to its row or zero) -> mean pooling -> Dense(300, 300) = identity."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Pooling, WordEmbeddings
    from sentence_transformers.sentence_transformer.modules.tokenizer import WhitespaceTokenizer

    nlp = _ginza_nlp()
    table = np.asarray(nlp.vocab.vectors.data, dtype=np.float32)
    rows = np.array([nlp.vocab.vectors.find(key=nlp.vocab.strings[w]) for w in words], dtype=np.int64)
    word_vectors = np.where((rows >= 0)[:, None], table[rows], np.float32(0))  # a word without a row: zero
    vocab = ["PADDING_TOKEN"] + [f"r{i}" for i in range(len(table))] + [f"w:{w}" for w in words]
    weights = np.concatenate([np.zeros((1, table.shape[1]), dtype=np.float32), table, word_vectors])
    tokenizer = WhitespaceTokenizer(vocab=vocab, stop_words=[], do_lower_case=False)
    emb = WordEmbeddings(tokenizer=tokenizer, embedding_weights=weights, update_embeddings=update_embeddings,
                         max_seq_length=512)
    dim = emb.get_embedding_dimension()
    pooling = Pooling(dim, pooling_mode="mean")
    dense = Dense(dim, dim, bias=True, activation_function=torch.nn.Identity())
    with torch.no_grad():
        dense.linear.weight.copy_(torch.eye(dim))
        dense.linear.bias.zero_()
    return SentenceTransformer(modules=[emb, pooling, dense], device="cpu")


def mark_segmented(folder: str | Path, words: int = 0) -> None:
    """Write the argsim manifest: `get_encoder(folder)` will segment raw text before encoding."""
    folder = write_manifest(folder, "minutes-sbert").parent
    tokens = "w:<word> for the model's own words, else r<vector row>" if words else "r<vector row>"
    (folder / SEGMENTED_MARKER).write_text(json.dumps({"segmenter": "ginza-sudachi-C", "tokens": tokens,
                                                       "own_words": words}), encoding="utf-8")


def model_words(model) -> frozenset[str]:
    """The words with a vector of their own in a ginza-backbone model (its "w:<word>" tokens)."""
    vocab = getattr(getattr(model[0], "tokenizer", None), "vocab", None) or []
    return frozenset(t[2:] for t in vocab if t.startswith("w:"))


class SegmentedSentenceTransformerEncoder(Encoder):
    """A sentence-transformers model over Sudachi tokens: raw Japanese in, vectors out."""

    def __init__(self, folder: str | Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32",
                 model=None, identity: str | None = None, name: str | None = None) -> None:
        """`model` (a SentenceTransformer built elsewhere, e.g. `argsim.minutes.shipped.build_model`) with its
        cache `identity` replaces loading `folder` as a sentence-transformers folder."""
        super().__init__()
        from sentence_transformers import SentenceTransformer

        self.folder = Path(folder)
        if model is None:
            model = SentenceTransformer(str(self.folder), device=device, **HF_LOAD)
        self.model = cast_for_inference(model.to(device), precision)
        self.name, self.device, self.batch_size, self.precision = name or self.folder.name, device, batch_size, \
            precision
        self.identity = identity or f"minutes-sbert:{fingerprint(self.folder)}"
        self.words = model_words(self.model)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        vecs = self.model.encode(segment(texts, self.words), batch_size=self.batch_size, convert_to_numpy=True,
                                 show_progress_bar=False)
        return vecs.astype(np.float32, copy=False)


load_encoder = SegmentedSentenceTransformerEncoder  # the argsim_encoder.json loader (`ENCODER_LOADERS`)
