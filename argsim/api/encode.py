"""`encode`: texts to vectors with any backend model (a registry name or a model folder)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argsim.config import RunConfig
from argsim.engine.embedding import EmbedSpec
from argsim.errors import InputError, ModelError
from argsim.io import (
    RECORD_SUFFIXES,
    VECTOR_SUFFIXES,
    as_texts,
    atomic_path,
    check_output_path,
    count_texts,
    read_records,
    read_texts,
    text_chunks,
    warn_duplicate_ids,
    write_vectors,
)

if TYPE_CHECKING:
    from argsim.backend.encoder import Encoder


def encoder(model: Any = "minilm", pooling: str | None = None, max_seq_length: int | None = None,
            batch_size: int = 64, config: RunConfig | None = None, role: str | None = None) -> Encoder:
    """The backend encoder `model` for texts in `role` (`Encoder.for_role`: a two-tower model's tower; refused
    without a role for such a model): a name or folder loaded once per process (`argsim.backend.get_encoder`), or
    a model object (`argsim.backend.resolve.resolve_model`: an argsim `Encoder`, a `SentenceTransformer`)."""
    from argsim.backend import get_encoder
    from argsim.backend.resolve import resolve_model

    if isinstance(model, (str, Path)):
        return get_encoder(str(model), pooling=pooling, max_seq_length=max_seq_length, batch_size=batch_size,
                           config=config).for_role(role)
    if pooling is not None or max_seq_length is not None:
        raise ModelError("pooling and max_seq_length apply to a model loaded by name or folder, not to a model "
                         "object (set them on the object)")
    return resolve_model(model, config, cross_encoder=False, batch_size=batch_size).for_role(role)


def encode(texts: str | Sequence[str], model: Any = "minilm", batch_size: int = 64, normalize: bool = False,
           pooling: str | None = None, max_seq_length: int | None = None,
           config: RunConfig | None = None, role: str | None = None) -> np.ndarray:
    """Embed texts with a backend model; vectors are cached on disk, so a second call over the same texts is fast.

    Args:
        texts: A list of strings (or one string).
        model: A registry name (`argsim models` lists them: minilm, e5-multilingual, ginza, ...), a model
            folder (sentence-transformers, transformers, or one that `argsim train ...` wrote), a Hugging Face id
            in the local cache, or a model object (an argsim `Encoder`, a `SentenceTransformer`).
        batch_size: Texts per forward pass.
        normalize: L2-normalise each vector (then a dot product is the cosine).
        pooling: None (the model's own), or "mean", "cls", "cls-last4" for a plain transformer.
        max_seq_length: Truncate inputs to this many tokens (None: the model's limit).
        config: The run options (device, precision, cache folder, quiet); None: the defaults.
        role: "query" for the texts that seek (a point), "document" for the texts searched (candidates), as
            sentence-transformers' `encode_query` / `encode_document`, or None: a one-tower model ignores it (or
            applies its prompt), a two-tower model (the shipped `counter-bi-encoder`) needs it (ModelError without
            one); the vectors are cached per tower.

    Returns:
        A float32 array of shape (len(texts), dim), rows in input order; for one string, shape (dim,).

    Example:
        >>> import argsim
        >>> v = argsim.encode(["Nuclear power is clean.", "Reactors emit no CO2."], normalize=True)
        >>> v.shape, v.dtype
        ((2, 384), dtype('float32'))
        >>> round(float(v[0] @ v[1]), 2)  # the cosine: the vectors are unit length
        0.48
    """
    single, texts = isinstance(texts, str), as_texts(texts, "texts")  # refused as the CLI's readers refuse
    vectors = encoder(model, pooling, max_seq_length, batch_size, config, role).encode(texts, normalize=normalize)
    return vectors[0] if single else vectors


def _role_encode(role: str, tower: str):
    """`encode` with the role fixed: sentence-transformers' `encode_query` / `encode_document`."""

    def encode_role(texts: str | Sequence[str], model: str = "minilm", **options: object) -> np.ndarray:
        return encode(texts, model, role=role, **options)

    encode_role.__name__ = encode_role.__qualname__ = f"encode_{role}"
    encode_role.__doc__ = f"""`encode(texts, model, role="{role}", ...)` (sentence-transformers' name); a two-tower
    model (the shipped `counter-bi-encoder`) embeds the texts with its {role} ({tower}) tower.

    Args:
        texts: one text or a sequence of texts.
        model: a name, a folder or a model object, as `encode` takes.
        options: `encode`'s other options (normalize, batch_size, config, ...).

    Returns:
        float32 array (n_texts, dim), rows in input order.

    Example:
        >>> import argsim
        >>> q = argsim.encode_query(["Uniforms stop bullying."], model="counter-bi-encoder", normalize=True)
        >>> d = argsim.encode_document(["Uniforms do not stop bullying.", "Taxes fund schools."],
        ...                            model="counter-bi-encoder", normalize=True)
        >>> (q @ d.T).round(2)
        array([[0.62, 0.1 ]], dtype=float32)
    """
    return encode_role


encode_query = _role_encode("query", "point")
encode_document = _role_encode("document", "candidate")


@dataclass
class EmbedFileResult:
    """What `embed_file` did: the number of texts, the output, the vectors' shape and the encoder used."""

    texts: int
    out: Path
    shape: tuple[int, ...]
    model: str
    device: str
    precision: str
    seconds: float


def embed_file(input: str | Path, out: str | Path, spec: EmbedSpec | None = None,
               config: RunConfig | None = None) -> EmbedFileResult:
    """Embed the texts of a file (CSV/TSV, JSONL/JSON or plain text) and save the vectors (`argsim embed`).

    Args:
        input: The file; `spec.column` holds the text (CSV/JSONL), plain text has one text a line.
        out: A .npy (float32, input order), .csv (id, one column per dimension) or .parquet (id, vector) file.
        spec: What to embed with which model (`argsim.engine.embedding.EmbedSpec`: column, id_column (the ids of
            .csv/.parquet rows; None: the 0-based row number), model, pooling, max_seq_length, batch_size,
            normalize, role, as `encode`); None: the defaults.
        config: The run options; None: the defaults.

    Returns:
        An `EmbedFileResult`.

    Example:
        >>> embed_file("texts.txt", "vectors.npy", EmbedSpec(model="minilm"))  # doctest: +SKIP
    """
    from argsim.schemas import text_records

    spec = spec or EmbedSpec()
    column, id_column = spec.column, spec.id_column
    input, out = Path(input), check_output_path(out, "file", VECTOR_SUFFIXES)
    if id_column is not None and input.suffix.lower() not in RECORD_SUFFIXES:
        raise InputError(input, "--id-column needs a CSV/TSV/JSON/JSONL input (plain text has no columns)")
    stream, ids = out.suffix.lower() == ".npy", None  # .npy: streamed, one chunk of texts and of vectors at a time
    if stream:
        if id_column is not None:
            raise InputError(out, "--id-column applies to .csv / .parquet outputs and shard folders; a .npy file "
                                  "holds the vectors alone (row i = text i)")
        total = count_texts(input, column)  # every text checked before any work, one chunk held
    elif id_column is not None:  # .csv / .parquet outputs hold every vector (and id) at once
        records = read_records(input, text_records(column, id_column))
        texts, ids = [r[column] for r in records], [r[id_column] for r in records]
        del records
        warn_duplicate_ids(ids, input, id_column)
    else:
        texts = read_texts(input, column=column)
    enc = encoder(spec.model, spec.pooling, spec.max_seq_length, spec.batch_size, config, spec.role)
    start = time.perf_counter()
    if not stream:
        vectors = enc.encode(texts, normalize=spec.normalize)
        seconds = time.perf_counter() - start
        write_vectors(out, vectors, ids)
        return EmbedFileResult(len(texts), out, tuple(vectors.shape), enc.name, enc.device, enc.precision, seconds)
    with atomic_path(out) as tmp, open(tmp, "wb") as fh:  # the matrix is written as it is computed, atomically
        dim = 0
        for n, chunk in enumerate(text_chunks(input, total, column, STREAM_ROWS)):
            vectors = np.ascontiguousarray(enc.encode(chunk, normalize=spec.normalize), dtype=np.float32)
            if n == 0:
                dim = int(vectors.shape[1])
                np.lib.format.write_array_header_1_0(fh, {"descr": np.lib.format.dtype_to_descr(vectors.dtype),
                                                          "fortran_order": False, "shape": (total, dim)})
            fh.write(vectors.tobytes())
    return EmbedFileResult(total, out, (total, dim), enc.name, enc.device, enc.precision, time.perf_counter() - start)


#: texts encoded at a time when a long file is embedded into .npy (the matrix is written as it is computed)
STREAM_ROWS = 50_000
