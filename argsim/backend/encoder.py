"""The `Encoder` interface: `encode(texts) -> float32 array`, with batching, caching and progress."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from argsim.backend.cache import EmbeddingCache
from argsim.config import default_cache_dir
from argsim.errors import BackendError, ModelError, warn
from argsim.io import as_texts
from argsim.progress import progress_bar
from argsim.vectors import l2_normalize

PROGRESS_MIN_TEXTS = 256  # smaller encodes finish before a bar is worth drawing
#: what a text is to a retrieval model: a query (a point that seeks its counter) or a document (a candidate)
ROLES = ("query", "document")


def check_role(role: str | None) -> None:
    """ModelError (one line) for a role that is not None, "query" or "document"."""
    if role is not None and role not in ROLES:
        raise ModelError(f"unknown role {role!r}: choose query or document")


#: the most texts one forward pass may hold: larger batches bring no speed on any device (MiniLM's throughput on
#: a GPU levels off well below it) and only risk running out of memory
MAX_BATCH_SIZE = 8192


def check_batch_size(batch_size: object) -> int:
    """`batch_size` if it is a whole number from 1 to `MAX_BATCH_SIZE`, else a `BackendError` saying so.

    Example:
        >>> check_batch_size(64)
        64
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise BackendError(f"batch size {batch_size!r} is out of range: give a whole number from 1 to "
                           f"{MAX_BATCH_SIZE:,}")
    return batch_size


class Encoder(ABC):
    """Base class of every embedding model in argsim.

    Subclasses implement `_encode_batch(texts)` for one batch; `encode` handles validation, de-duplication,
    the disk cache, length-sorted batching, progress and optional L2 normalisation. Output rows follow the
    input order exactly. Cache rows are committed chunk by chunk as they finish (an interrupted encode resumes
    with only the missing texts).

    Run options are the instance's own, set by `get_encoder` from the command's `RunConfig`: `cache_dir` (None:
    `default_cache_dir()`), `use_cache` (the default of `encode`'s `use_cache`), `quiet` (no progress bars).
    """

    name: str = "encoder"
    #: model fingerprint + pooling + max length; with the precision and runtime, the cache's key (`cache_key`)
    identity: str = ""
    device: str = "cpu"
    #: the precision the encoder actually computes in (fp32, fp16, bf16; see argsim.backend.device)
    precision: str = "fp32"
    #: the runtime it computes in (torch, onnx, openvino; argsim.backend.runtime) and its quantization (none, int8)
    backend: str = "torch"
    quantize: str = "none"
    #: what else changes its vectors besides `identity` and `precision` (backend, quantization, calibration
    #: digest); empty for torch
    runtime: str = ""
    batch_size: int = 64
    #: how many batches one call of `_encode_batch` may receive (larger chunks amortise Python overhead)
    chunk_batches: int = 8
    cache_dir: Path | None = None
    use_cache: bool = True
    quiet: bool = False
    #: how another process rebuilds this encoder, `get_encoder(**recipe)` (set by `get_encoder`); None: it cannot
    #: (an encoder built around weights held in memory), so engine workers cannot embed for it
    recipe: dict | None = None
    #: a two-tower model's tower per role, e.g. {"query": "point", "document": "candidate"}; None: one tower
    #: encodes every text
    roles: dict[str, str] | None = None

    def __init__(self) -> None:
        self._cache: EmbeddingCache | None = None

    def for_role(self, role: str | None) -> Encoder:
        """The encoder of texts in `role` ("query", "document", None: unspecified), as sentence-transformers'
        `encode_query` / `encode_document`: a one-tower model returns itself (`STModelEncoder` prefixes a role's
        prompt), a two-tower model (`roles` set) its role's tower, keyed apart, and refuses None (one tower's
        vectors for both sides would compare texts the model never compares).

        Raises:
            ModelError: an unknown role, or None for a two-tower model.

        Example:
            >>> get_encoder("counter-bi-encoder").for_role("query").encode(["Ban fast food."]).shape  # doctest: +SKIP
            (1, 384)
        """
        check_role(role)
        if self.roles is None:
            return self
        towers = ", ".join(f"{r}: its {t} tower" for r, t in self.roles.items())
        raise ModelError(f"{self.name} has two towers ({towers}): give a role, query or document")

    def configure(self, cache_dir: Path | None = None, use_cache: bool = True, quiet: bool = False) -> Encoder:
        """Set the run options (see the class docstring); returns self."""
        if cache_dir != self.cache_dir and self._cache is not None:
            self._cache.close()
            self._cache = None
        self.cache_dir, self.use_cache, self.quiet = cache_dir, use_cache, quiet
        return self

    @abstractmethod
    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        """Encode texts (already sorted by length; any count up to chunk_batches * batch_size)."""

    @property
    def dim(self) -> int:
        return int(self.encode(["dimension probe"], use_cache=False).shape[1])

    @property
    def cache_key(self) -> str:
        """What keys the embedding cache: `identity`, plus the precision when it is not fp32 and the runtime when it
        is not torch (their vectors differ), so vectors of one backend never answer another's request."""
        key = self.identity if self.precision == "fp32" else f"{self.identity}:{self.precision}"
        return f"{key}:{self.runtime}" if self.runtime else key

    def set_runtime(self, runtime: str) -> None:
        """Set `runtime` (an OpenVINO int8 model calibrated now: its digest keys the vectors)."""
        self.runtime = runtime
        self._close_stale_cache()

    def _close_stale_cache(self) -> None:
        """Close a cache opened under a key that is no longer `cache_key` (it opens again under the new one)."""
        if self._cache is not None and self._cache.identity != self.cache_key:
            self._cache.close()
            self._cache = None

    def cache(self) -> EmbeddingCache:
        if self._cache is None:
            self._cache = EmbeddingCache(self.cache_dir or default_cache_dir(), self.cache_key)
        return self._cache

    def calibrate(self, texts: str | Sequence[str]) -> None:
        """Build a runtime that calibrates on the texts first asked for (OpenVINO int8); nothing here."""
        return None

    def encode(self, texts: Sequence[str], normalize: bool = False, batch_size: int | None = None,
               use_cache: bool | None = None, show_progress: bool | None = None,
               description: str | None = None) -> np.ndarray:
        """Embed `texts` (list of str) into a float32 array of shape (len(texts), dim)."""
        if self.roles is not None:
            self.for_role(None)  # two towers and no role: refused, one line
        self.calibrate(texts)  # OpenVINO int8 without calibration texts: the first texts asked for
        self._close_stale_cache()  # a model calibrated since: its digest keys the vectors
        texts, batch_size = as_texts(texts, "texts"), check_batch_size(batch_size or self.batch_size)
        use_cache = self.use_cache if use_cache is None else use_cache
        unique = list(dict.fromkeys(texts))
        found: dict[str, np.ndarray] = self.cache().get_many(unique) if use_cache and unique else {}
        if found:
            self._drop_foreign(found)
        missing = [t for t in unique if t not in found]
        if missing:
            store = self.cache().put_many if use_cache else None
            computed = self._compute(missing, batch_size, show_progress, description, store)
            if found:
                self._drop_foreign(found, computed)
                if len(found) + len(missing) < len(unique):  # foreign rows: computed now, their rows replaced
                    again = [t for t in unique if t not in found and t not in set(missing)]
                    found.update(zip(again, self._compute(again, batch_size, show_progress,
                                                          description, store), strict=True))
            found.update(zip(missing, computed, strict=True))
        if not texts:  # as sentence-transformers: no rows, the model's width
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.stack([found[t] for t in texts]).astype(np.float32, copy=False)
        return l2_normalize(out) if normalize else out

    def known_dim(self) -> int | None:
        """The dimension of this model's vectors when the model states it without encoding (None: unknown)."""
        return None

    def _drop_foreign(self, found: dict[str, np.ndarray], computed: np.ndarray | None = None) -> None:
        """Drop (with a warning) cached vectors not of `known_dim` (else the just computed vectors') dimension."""
        dim = self.known_dim() if computed is None or not len(computed) else int(computed.shape[-1])
        if dim is None:
            return
        wrong = [t for t, v in found.items() if v.shape[-1] != dim]
        if wrong:
            warn(f"embedding cache {self.cache().path}: {len(wrong)} stored vector(s) are not {dim}-d as "
                 f"{self.name}'s are; they are computed again")
            for t in wrong:
                del found[t]

    def _compute(self, texts: list[str], batch_size: int, show_progress: bool | None,
                 description: str | None, store: Callable[[list[str], np.ndarray], None] | None = None) -> np.ndarray:
        """Vectors of `texts` in chunks of length-sorted batches, each `store(chunk_texts, vectors)`d as it ends."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        step = batch_size * max(1, self.chunk_batches)
        show = (len(texts) >= PROGRESS_MIN_TEXTS and not self.quiet) if show_progress is None else show_progress
        parts: list[np.ndarray] = []
        with progress_bar(len(texts), description or f"encoding with {self.name}", enabled=show) as bar:
            for start in range(0, len(order), step):
                chunk = [texts[i] for i in order[start:start + step]]
                parts.append(np.asarray(self._encode_batch(chunk), dtype=np.float32))
                if store is not None:
                    store(chunk, parts[-1])
                bar.advance(len(chunk))
        return np.concatenate(parts, axis=0)[np.argsort(order)]  # back in input order

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, device={self.device!r}, precision={self.precision!r}, "
                f"backend={self.backend!r}, quantize={self.quantize!r})")


class CompositeEncoder(Encoder):
    """An encoder whose vectors combine those of other encoders, its `parts` (an MTS fold ensemble, a thematic
    concatenation): its runtime is the parts' runtimes, and OpenVINO int8 parts calibrate on the texts before its
    cache key is read, since their calibration digests key the combined vectors."""

    parts: Sequence[Encoder] = ()

    @property
    def runtime(self) -> str:  # the parts' runtimes (their calibration digests included); empty for torch
        return "+".join(p.runtime for p in self.parts) if any(p.runtime for p in self.parts) else ""

    def calibrate(self, texts: str | Sequence[str]) -> None:
        for p in self.parts:
            p.calibrate(texts)
