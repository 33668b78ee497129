"""`resolve_model`: the one way every public entry point turns "a model" into something that scores.

Accepted: a registered name (`argsim models`), a model folder, a Hugging Face id in the local cache (all three
through `get_encoder`), an argsim `Encoder` (returned as is), a sentence-transformers `SentenceTransformer` object
(wrapped as an `Encoder`, `ObjectEncoder`) and a `CrossEncoder` object (wrapped as a pair scorer,
`PairScorer`). Anything else is one `ModelError` line naming what is accepted.

An object's cache identity is a digest of its weights and configuration (`weights_digest`), taken when it is
resolved: the same weights in memory and in a saved folder give the same vectors, and a model whose weights
changed since (a model under training) never reads another state's cache rows. Resolve again after changing the
weights (the task evaluators resolve at each call).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from argsim.backend.encoder import Encoder
from argsim.backend.models import STModelEncoder, kept_mode
from argsim.config import RunConfig
from argsim.errors import ModelError

ACCEPTED = ("a registered name, a model folder, a Hugging Face id in the local cache, an argsim Encoder, "
            "a SentenceTransformer, or a CrossEncoder")


def _is_sentence_transformer(model: Any) -> bool:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:  # pragma: no cover - a dependency of argsim
        return False
    return isinstance(model, SentenceTransformer)


def is_cross_encoder_object(model: Any) -> bool:
    """True for a sentence-transformers `CrossEncoder` object."""
    try:
        from sentence_transformers import CrossEncoder
    except ImportError:  # pragma: no cover
        return False
    return isinstance(model, CrossEncoder)


def weights_digest(model: Any) -> str:
    """A digest of a torch module's parameters and buffers (names, dtypes, shapes, bytes) and of what configures
    it (a sentence-transformers model's modules and `max_seq_length`): equal for equal weights, whatever object
    or folder they came from.

    Example:
        >>> import torch
        >>> weights_digest(torch.nn.Linear(2, 2)) == weights_digest(torch.nn.Linear(2, 2))
        False
    """
    import torch

    h = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        t = tensor.detach().to("cpu").contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    conf = {"class": type(model).__name__, "max_seq_length": getattr(model, "max_seq_length", None),
            "modules": [type(m).__name__ for m in model.children()]}
    pooling = next((m for m in model.children() if type(m).__name__ == "Pooling"), None)
    if pooling is not None and hasattr(pooling, "get_config_dict"):
        conf["pooling"] = pooling.get_config_dict()
    h.update(json.dumps(conf, sort_keys=True, default=str).encode())
    return h.hexdigest()[:20]


class ObjectEncoder(STModelEncoder):
    """A `SentenceTransformer` object as an argsim `Encoder` (its own pooling, normalisation and query / document
    prompts: `for_role`), cached under a digest of its weights (see the module docstring). Its train/eval mode is
    left as it was after each encode."""

    def __init__(self, model: Any, batch_size: int = 64, config: RunConfig | None = None) -> None:
        super().__init__()
        config = config or RunConfig()
        self.model, self.batch_size = model, batch_size
        self.name = f"SentenceTransformer@{weights_digest(model)[:8]}"
        self.identity = f"st-weights:{weights_digest(model)}:model:{model.max_seq_length}"
        self.device = str(getattr(model, "device", "cpu"))
        dtype = str(getattr(next(model.parameters(), None), "dtype", "torch.float32"))
        self.precision = {"torch.float16": "fp16", "torch.bfloat16": "bf16"}.get(dtype, "fp32")
        self.configure(config.resolved_cache_dir(), config.use_cache, config.quiet)


class PairScorer:
    """A `CrossEncoder` object as a pair scorer: `score(pairs) -> float array`, the probability of its last label
    (a match / the best counter): a one-label model's activation (sigmoid by default: trained with BCE, a
    probability); a model with several labels, the softmax over them (sentence-transformers' `apply_softmax`), so
    a two-label model ranks as the difference of its two logits does. Its train/eval mode is left as it was.

    Example:
        >>> scorer = resolve_model(CrossEncoder(folder))  # doctest: +SKIP
        >>> scorer.score([("Uniforms stop bullying.", "Uniforms reduce bullying")])  # doctest: +SKIP
        array([0.93], dtype=float32)
    """

    def __init__(self, model: Any, batch_size: int = 64) -> None:
        self.model, self.batch_size = model, batch_size
        self.name = f"CrossEncoder@{weights_digest(model)[:8]}"

    def score(self, pairs: Sequence[tuple[str, str]], show_progress: bool = False) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        with kept_mode(self.model):
            scores = self.model.predict([tuple(p) for p in pairs], batch_size=self.batch_size, apply_softmax=True,
                                        show_progress_bar=show_progress, convert_to_numpy=True)
        scores = np.asarray(scores, dtype=np.float32)
        return scores[:, -1] if scores.ndim == 2 else scores


def resolve_model(model: Any, config: RunConfig | None = None, cross_encoder: bool = True,
                  batch_size: int = 64) -> Encoder | PairScorer:
    """The `Encoder` (or, for a `CrossEncoder` object, the `PairScorer`) that `model` names.

    Args:
        model: a registered name, a model folder, a Hugging Face id in the local cache, an argsim `Encoder`
            (returned as is), a `SentenceTransformer` or a `CrossEncoder` object.
        config: the run options of a model loaded or wrapped here (device, precision, cache folder, quiet).
        cross_encoder: whether the caller can use a pair scorer; False: a `CrossEncoder` is refused in one line.
        batch_size: texts (pairs) per forward pass of a wrapped object.

    Returns:
        An `Encoder`, or a `PairScorer` for a `CrossEncoder` object.

    Raises:
        ModelError: one line naming what is accepted.

    Example:
        >>> resolve_model(42)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        argsim.errors.ModelError: model 42 (int): give a registered name, a model folder, ..., or a CrossEncoder
    """
    if isinstance(model, Encoder):
        return model
    if isinstance(model, Path):
        model = str(model)
    if isinstance(model, str):
        from argsim.backend.registry import get_encoder

        return get_encoder(model, batch_size=batch_size, config=config)
    if _is_sentence_transformer(model):
        return ObjectEncoder(model, batch_size=batch_size, config=config)
    if is_cross_encoder_object(model):
        if not cross_encoder:
            raise ModelError("a CrossEncoder scores pairs, not single texts: this task needs an embedding model "
                             f"({ACCEPTED.removesuffix(', or a CrossEncoder')})")
        return PairScorer(model, batch_size=batch_size)
    shown = repr(model) if len(repr(model)) <= 40 else repr(model)[:37] + "..."
    raise ModelError(f"model {shown} ({type(model).__name__}): give {ACCEPTED}")
