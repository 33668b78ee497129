"""One engine-aware embedding call: `encode(engine, encoder, texts)`, the same vectors on every engine (locally the
backend's `Encoder.encode`; on `ray` the uncached texts on `embedding.embed_texts_ray`'s actor pool, each finished
block merged into the encoder's cache, with `--no-cache` kept in memory: docs/scale.md).

Equality with `local`: the missing texts are sent length-sorted in blocks of the local encoder's chunk size
(`batch_size * chunk_batches`), so every actor runs the same batches as the local encoder would; the vectors
agree to float tolerance (an actor runs torch with one thread, so sums may round differently).
Workers rebuild the encoder from its `recipe` (`get_encoder` arguments, precision included); the model identity
they report (`Encoder.cache_key`: with the precision when not fp32) must equal the local one, otherwise nothing is
stored. An encoder without a recipe (one wrapping weights held in memory, e.g. a fine-tuned counter-argument
tower) cannot be rebuilt on a worker: it is encoded locally, with a one-line warning.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from argsim.backend.cache import text_key
from argsim.backend.encoder import Encoder
from argsim.engine.base import Engine
from argsim.errors import ArgsimError, warn
from argsim.io import as_texts
from argsim.vectors import l2_normalize


def encode(engine: Engine | None, encoder: Encoder, texts: Sequence[str], normalize: bool = False) -> np.ndarray:
    """`encoder.encode(texts)` on `engine` (see the module docstring): float32 (len(texts), dim), input order."""
    texts = as_texts(texts, "texts")
    if engine is None or engine.name == "local" or not texts:
        return encoder.encode(texts, normalize=normalize)
    unique = list(dict.fromkeys(texts))
    found = encoder.cache().get_many(unique) if encoder.use_cache else {}
    missing = [t for t in unique if t not in found]  # distinct, uncached, in first-seen order
    recipe = encoder.recipe
    if missing and (recipe is None or encoder.backend != "torch"):  # actors run torch; ONNX / OpenVINO: here
        warn(f"{encoder.name}: this encoder cannot be rebuilt on engine workers; {len(missing):,} text(s) are "
             "encoded in this process")
        return encoder.encode(texts, normalize=normalize)
    computed: dict[bytes, np.ndarray] = {}
    if missing:
        from argsim.engine import embedding

        # the spec an actor rebuilds the encoder from (raw vectors, as the cache stores them)
        spec = embedding.EmbedSpec(column="text", model=recipe["name"], pooling=recipe["pooling"],
                                   max_seq_length=recipe["max_seq_length"], batch_size=recipe["batch_size"],
                                   normalize=False, precision=recipe.get("precision", "auto"))
        chunk = encoder.batch_size * max(1, encoder.chunk_batches)
        ordered = sorted(missing, key=len, reverse=True)  # longest first (stable), as Encoder._compute orders them
        for keys, vectors, identity in embedding.embed_texts_ray(engine, spec, ordered, chunk, quiet=encoder.quiet):
            if identity != encoder.cache_key:  # model identity, and precision when not fp32
                raise ArgsimError(f"engine workers built model identity {identity}, this process {encoder.cache_key}"
                                  " (another model or library version on the workers); their vectors were not stored")
            if encoder.use_cache:
                encoder.cache().put_keys(keys, vectors)
            else:
                computed.update(zip(keys, vectors, strict=True))
    if encoder.use_cache:
        return encoder.encode(texts, normalize=normalize, show_progress=False)  # every text is cached now
    out = np.stack([computed[text_key(t)] for t in texts]).astype(np.float32, copy=False)
    return l2_normalize(out) if normalize else out
