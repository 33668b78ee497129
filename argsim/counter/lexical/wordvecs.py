"""Word vectors for WMD: GloVe 6B 50d (for ConceptNet Numberbatch), word2vec trained on counterargs-18 training, a
word2vec file, or the word vectors of a model2vec static model folder (`argsim.backend.static_words`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from argsim.backend import load_word_vectors
from argsim.backend.models import tokenize_en
from argsim.config import SEED
from argsim.data.counterargs import load_counterargs
from argsim.extras import need
from argsim.io import atomic_path
from argsim.paths import workdir


@lru_cache(maxsize=4)
def word_vectors(name: str = "glove50"):
    """'glove50', 'w2v-training' (trained once with gensim on the training split, then loaded), a word2vec file or
    a static model folder (`argsim distill`)."""
    return train_word2vec() if name == "w2v-training" else load_word_vectors(name)


def train_word2vec(out_dir: str | Path | None = None, dim: int = 50, epochs: int = 10, seed: int = SEED,
                   data_dir: str | Path | None = None):
    """Skip-gram word2vec (gensim) on every point and counter of the training split; cached in word2vec's binary
    format (never a pickle) under `out_dir`, by default `<workdir>/models/counter` (see `argsim.paths`)."""
    models = need("gensim.models", "training word2vec")
    path = Path(out_dir or workdir() / "models" / "counter") / f"w2v-training-{dim}d-s{seed}.bin"
    if path.exists():
        return models.KeyedVectors.load_word2vec_format(str(path), binary=True)
    sentences = [tokenize_en(a.text) for a in load_counterargs(data_dir).split("training")]
    model = models.Word2Vec(sentences, vector_size=dim, window=5, min_count=2, sg=1, epochs=epochs, seed=seed,
                            workers=1)
    with atomic_path(path) as tmp:
        model.wv.save_word2vec_format(str(tmp), binary=True)
    return model.wv
