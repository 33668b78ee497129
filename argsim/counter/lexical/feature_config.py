"""The choices behind the point-candidate features, apart from the feature code (`argsim.counter.lexical.features`)
so that reading them (the CLI builds `argsim train ltr`'s options from these fields) imports no torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from argsim.counter.lexical.stopwords import DEFAULT_STOPWORDS
from argsim.options import setting


@dataclass
class FeatureConfig:
    """Choices behind the features (Wachsmuth et al. 2018, Table 1), recorded with every model and result.

    Example:
        >>> FeatureConfig().stopwords, FeatureConfig.from_dict({"bm25_idf": "okapi", "workers": 2}).bm25_idf
        ('gensim', 'okapi')
    """

    word_vectors: str = setting("glove50", "WMD word vectors: glove50, w2v-training, a word2vec file, or a "
                                "static model folder (argsim distill).")
    bert_model: str = setting("minilm", "Encoder for the BERT-cosine features (x17..x20).", option="--model",
                              aliases=("--bert-model",))
    bert_pooling: Literal["cls", "mean"] = setting("cls", "Pooling of the BERT-cosine features' encoder (cls: the "
                                                   "[CLS] vector, as the paper's BERT).")
    bm25_idf: Literal["lucene", "okapi"] = setting("lucene", "IDF of the BM25 features (lucene or okapi).")
    stopwords: Literal["gensim", "none"] = setting(
        DEFAULT_STOPWORDS, "Stop words dropped for Manhattan, WMD and TF cosine: gensim (gensim's English list) or "
        "none (BM25 keeps every token).")

    @classmethod
    def from_dict(cls, values: dict) -> FeatureConfig:
        """From a saved config; keys that are not feature choices (e.g. `workers` of older models) are ignored."""
        return cls(**{k: v for k, v in values.items() if k in cls.__dataclass_fields__})
