"""Word vectors for WMD: GloVe 6B 50d (for ConceptNet Numberbatch), word2vec trained on counterargs-18 training, a
word2vec file, or the word vectors of a model2vec static model folder (`argsim.backend.static_words`)."""

from __future__ import annotations

from functools import lru_cache

from argsim.backend import load_word_vectors
from argsim.backend.models import tokenize_en
from argsim.config import SEED
from argsim.data.counterargs import load_counterargs
from argsim.extras import need
from argsim.io import atomic_path
from argsim.paths import workdir


@lru_cache(maxsize=4)
def word_vectors(name: str = "glove50"):
    """'glove50', 'w2v-training', a word2vec file or a static model folder (`argsim distill`). 'w2v-training':
    skip-gram word2vec (gensim, 50 dimensions) on every point and counter of the training split, trained once and
    cached in word2vec's binary format (never a pickle) under `<workdir>/models/counter` (see `argsim.paths`)."""
    if name != "w2v-training":
        return load_word_vectors(name)
    models = need("gensim.models", "training word2vec")
    path = workdir() / "models" / "counter" / f"w2v-training-50d-s{SEED}.bin"
    if path.exists():
        return models.KeyedVectors.load_word2vec_format(str(path), binary=True)
    sentences = [tokenize_en(a.text) for a in load_counterargs().split("training")]
    model = models.Word2Vec(sentences, vector_size=50, window=5, min_count=2, sg=1, epochs=10, seed=SEED, workers=1)
    with atomic_path(path) as tmp:
        model.wv.save_word2vec_format(str(tmp), binary=True)
    return model.wv
