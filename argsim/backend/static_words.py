"""A model2vec static model's word vectors as gensim KeyedVectors: the word-vector source of WMD, Simple-SD, the
learning-to-rank features and the thematic BiLSTM, beside GloVe 6B 50d (docs/backends.md, "Static word vectors").
`argsim distill MODEL` (`argsim.backend.static`; Tulkens and van Dongen, "Model2Vec: fast state-of-the-art static
embeddings", 2024) writes the folder; `load_word_vectors(FOLDER)` reads it through `static_word_vectors`.

Ambiguity: what a word's vector is. Set aside: whole-word tokens only (rarer words, "vaccination" = va ##cci
##nation, would vanish from the bags) and one bag entry per WordPiece token (it changes the bags, so a comparison
with GloVe would no longer vary only the vectors). Chosen: the static model's own encoding of the word
(`StaticModel.encode([word])`: the mean of its WordPiece tokens' vectors, L2-normalised when the config says
`normalize`), exactly the vector `--model FOLDER` gives the one-word text; argsim's own word tokens (`tokenize_en`)
stay the bags' words for every source. The whole-word tokens (no `##` pieces, no `[SPECIAL]` tokens) load at once;
other words are composed in one batch when a method first meets them (`cover_words`) and come after the
`vocabulary_size` whole words; a word whose tokens are all unknown stays unknown (dropped, as GloVe drops it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from gensim.models import KeyedVectors

from argsim.backend.safety import check_model_folder
from argsim.backend.static import is_model2vec_folder
from argsim.errors import ModelError


class StaticWordVectors(KeyedVectors):
    """gensim KeyedVectors over a model2vec static model: whole-word tokens at load, other words on request.

    Args:
        model: a loaded `model2vec.StaticModel`.

    Example:
        >>> kv = static_word_vectors("models/minilm-static")  # doctest: +SKIP
        >>> kv.cover_words(["vaccination"]); kv["vaccination"].shape  # doctest: +SKIP
        (256,)
    """

    def __init__(self, model) -> None:
        super().__init__(vector_size=int(model.dim))
        self.model = model
        self.add_words(t for t in model.tokens if not (t.startswith("##") or (t.startswith("[") and t.endswith("]"))))
        #: the whole-word tokens come first; words composed later follow them
        self.vocabulary_size = len(self.index_to_key)

    def add_words(self, words: Iterable[str]) -> int:
        """Add, in one batch, the static model's encoding (float32) of each of `words` not yet present, leaving out
        words whose tokens are all unknown.

        Args:
            words: any words (repeats and present ones are skipped).

        Returns:
            The number of words added.
        """
        new = [w for w in dict.fromkeys(words) if isinstance(w, str) and w and w not in self.key_to_index]
        if kept := [w for w, ids in zip(new, self.model.tokenize(new), strict=True) if ids]:
            vectors = self.model.encode(kept, show_progress_bar=False, use_multiprocessing=False, batch_size=4096)
            self.add_vectors(kept, np.asarray(vectors, dtype=np.float32))
            self.norms = None  # gensim caches the norms; the new rows need theirs
        return len(kept)


def cover_words(keyed_vectors, words: Iterable[str]) -> None:
    """Let `keyed_vectors` hold a vector for each of `words` it can make (a `StaticWordVectors` composes them from
    sub-word tokens); fixed vocabularies (GloVe, word2vec files) are left as they are.

    Args:
        keyed_vectors: gensim KeyedVectors.
        words: the words a method is about to look up.

    Example:
        >>> cover_words(load_word_vectors("models/minilm-static"), ["counterargument"])  # doctest: +SKIP
    """
    getattr(keyed_vectors, "add_words", lambda _words: None)(words)


def static_word_vectors(folder: str | Path) -> StaticWordVectors:
    """The word vectors of the model2vec static model in `folder` (checked as data first).

    Args:
        folder: a folder `argsim distill` wrote (or any model2vec folder).

    Returns:
        A `StaticWordVectors`.

    Example:
        >>> static_word_vectors("models/minilm-static").vector_size  # doctest: +SKIP
        256
    """
    folder = Path(folder)
    check_model_folder(folder)
    if not is_model2vec_folder(folder):
        raise ModelError(f"{folder}: not a model2vec static model folder (model.safetensors, tokenizer.json and a "
                         "model2vec config.json); word vectors come from glove50, a word2vec file or such a folder")
    try:
        from model2vec import StaticModel
    except ImportError:
        raise ModelError("model2vec word vectors need model2vec: pip install 'argsim[cpu]'") from None
    return StaticWordVectors(StaticModel.from_pretrained(str(folder)))
