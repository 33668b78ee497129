"""Embedding a file of texts into sharded Parquet (ids + vectors), locally or with a Ray Data actor pool.

Shard format (one folder): `part-*.parquet` files with columns `id` (string: the `--id-column` value, else the
text's SHA-1 in hex), `key` (binary(20): SHA-1 of the text, the embedding cache's key) and `vector`
(fixed_size_list<float32>[dim]), plus `_argsim_embeddings.json` (model, identity, dim, rows, normalised or not,
engine). Row order inside the folder is not the input order (Ray streams blocks); `id`/`key` say which row is
which. `read_shards` reads a folder back; `import_shards` merges one into the embedding cache.

- `local`: the backend's `Encoder.encode` (de-duplicated, length-sorted, cached, resumable), then shards.
- `ray`: Ray Data streams the input (`read_dataset`) through `EmbedActor` on an actor pool (`actor_pool`: one
  model per actor, one actor per CPU or GPU of the cluster) and writes the shards. Workers do not use the local
  cache (they may be other machines): import the shards to cache them.
The folder appears only when the run finished (written under a temporary name, then renamed).
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from argsim.backend.cache import EmbeddingCache, text_key
from argsim.backend.encoder import MAX_BATCH_SIZE
from argsim.config import RunConfig
from argsim.engine.ray_engine import RayEngine, worker_errors
from argsim.errors import ArgsimError, InputError
from argsim.io import atomic_folder, check_input_file, check_output_path, parse_json, read_json_as, read_texts
from argsim.options import check_settings, setting

if TYPE_CHECKING:
    from argsim.backend.encoder import Encoder

MANIFEST = "_argsim_embeddings.json"
#: CPUs reserved by the read and write tasks: none, so that an actor per CPU can never starve them (they are I/O)
IO_CPUS = 0
#: CPUs reserved per CPU actor. Each actor runs torch with one thread, but reserves half a CPU: Ray Data's own
#: file-listing task asks for a whole CPU, and with one full CPU per actor on every CPU it would never be
#: scheduled (a deadlock seen with Parquet input on 2 CPUs and 2 actors).
ACTOR_CPUS = 0.5
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".parquet")


@dataclass(frozen=True)
class EmbedSpec:
    """What to embed and with which model (everything the workers need to rebuild the encoder): the options of
    `argsim embed` and the `spec` of `argsim.api.encode.embed_file`.

    Example:
        >>> EmbedSpec(model="mpnet", normalize=True).batch_size
        64
    """

    column: str = setting("text", "Column/field holding the text (CSV/JSONL).")
    id_column: str | None = setting(None, "Column/field holding each text's id, written into .csv and .parquet "
                                          "outputs (default: the row number, 0-based).")
    model: str = setting("minilm", "Registry name (see `argsim models`) or a local model folder.",
                         option=("--model", "-m"))
    pooling: Literal["model", "mean", "cls", "cls-last4"] | None = setting(
        None, "Transformer pooling (default: the model's own).")
    max_seq_length: int | None = setting(None, "Truncate inputs to this many tokens.", min=1)
    batch_size: int = setting(64, "Texts per forward pass.", min=1, max=MAX_BATCH_SIZE)
    normalize: bool = setting(False, "L2-normalise the vectors.", option="--normalize/--no-normalize")
    device: str = setting("cpu", "The workers' device.", cli=False)
    #: the global --precision, resolved by each worker for its device (its identity then says so)
    precision: str = setting("auto", "The global --precision.", cli=False)
    role: Literal["query", "document"] | None = setting(
        None, "What the texts are to a retrieval model: query (points seeking counters) or document (candidates). "
              "Needed by two-tower models (counter-bi-encoder: point / candidate tower); one-tower models ignore "
              "it or apply their own prompt for it.")

    def __post_init__(self) -> None:
        check_settings(self)  # as the options generated from these fields check them


def check_shard_out(out: Path) -> None:
    """One line before the work if `out` cannot become a new shard folder."""
    if out.exists() and not out.is_dir():
        raise ArgsimError(f"{out}: exists and is not a folder (shards need a folder)")
    if out.is_dir() and any(out.iterdir()):
        raise ArgsimError(f"{out}: folder is not empty (choose a new folder for the shards)")
    check_output_path(out, "folder")  # creatable: no file on the way, a folder we can write into (root included)


def shard_table(texts: list[str], ids: list[str] | None, vectors: np.ndarray):
    """The Parquet table of one shard: the texts' keys, their `ids` (None: each key in hex) and vectors."""
    import pyarrow as pa

    keys = [text_key(t) for t in texts]
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    return pa.table({"id": pa.array([k.hex() for k in keys] if ids is None else ids, type=pa.string()),
                     "key": pa.array(keys, type=pa.binary(20)),
                     "vector": pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])})


def input_columns(path: Path) -> list[str]:
    """Column names of a CSV/TSV/JSONL/Parquet file (read from its header / first record / schema)."""
    suffix = path.suffix.lower()
    if not path.is_dir():
        check_input_file(path)  # a FIFO is never opened; the message names what the path is
    if suffix == ".parquet" or path.is_dir():
        import pyarrow.dataset as pads

        return list(pads.dataset(str(path), format="parquet").schema.names)
    with open(path, "rb") as fh:  # binary lines end at \n only (a U+2028 or lone CR stays inside its line)
        if suffix in (".jsonl", ".ndjson"):
            for n, raw in enumerate(fh, start=1):
                line = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
                if line.strip():
                    obj = parse_json(line, path, n)
                    return list(obj) if isinstance(obj, dict) else []
            return []
        delim = "\t" if suffix in (".tsv", ".tab") else ","
        first = fh.readline().decode("utf-8", errors="replace")
        return [h.strip().lstrip("\ufeff") for h in next(csv.reader([first.rstrip("\r\n")], delimiter=delim), [])]


def embed_folder(path: Path, out: Path, spec: EmbedSpec, config: RunConfig) -> tuple[dict, float]:
    """`argsim embed` into the shard folder `out` on the run's engine (`embed_local`, or `embed_ray`'s actor pool on
    a `RayEngine` of the run's --ray-address and --threads), at the run's precision, the input checked first: (the
    folder's manifest, seconds)."""
    from argsim.measure import timed

    spec = replace(spec, precision=config.precision)
    if path.suffix.lower() not in TABLE_SUFFIXES and not path.is_dir():  # plain text: one implicit column
        check_input_file(path)
        if spec.id_column is not None:
            raise InputError(path, "--id-column needs a CSV/TSV/JSONL/Parquet input (plain text has no columns)")
    else:
        found = input_columns(path)
        for col in (spec.column, spec.id_column):
            if col is not None and col not in found:
                raise InputError(path, f"missing column(s) {col}; found {', '.join(found)}", column=col)
    with timed() as t:
        manifest = embed_local(path, out, spec, config=config) if config.engine != "ray" else \
            embed_ray(path, out, spec, RayEngine(config.ray_address, config.threads, config.quiet), quiet=config.quiet)
    return manifest, t["seconds"]


def embed_local(path: Path, out: Path, spec: EmbedSpec, config=None, rows_per_shard: int = 100_000) -> dict:
    """Encode with the backend (the run's cache, resumable) and write the shard folder."""
    import pyarrow.parquet as pq

    from argsim.backend import get_encoder  # read when called: argsim.backend.get_encoder may be replaced
    from argsim.io import count_texts, record_chunks, text_chunks, warn_duplicate_ids
    from argsim.schemas import text_records

    ids = None  # the first pass checks every record before any work, holding one chunk (and the ids)
    if spec.id_column is not None:
        ids = [r[spec.id_column] for chunk in record_chunks(path, text_records(spec.column, spec.id_column))
               for _, r in chunk]
        warn_duplicate_ids(ids, path, spec.id_column)
    total = len(ids) if ids is not None else count_texts(path, spec.column)
    enc = get_encoder(spec.model, pooling=spec.pooling, max_seq_length=spec.max_seq_length,
                      batch_size=spec.batch_size, config=config).for_role(spec.role)
    dim = 0
    with atomic_folder(out) as tmp:
        # one shard's texts and vectors at a time: memory is bounded by rows_per_shard, not by the file's length
        for n, texts in enumerate(text_chunks(path, total, spec.column, rows_per_shard)):
            part = None if ids is None else ids[n * rows_per_shard:n * rows_per_shard + len(texts)]
            vectors = enc.encode(texts, normalize=spec.normalize)
            dim = int(vectors.shape[1])
            pq.write_table(shard_table(texts, part, vectors), tmp / f"part-{n:05d}.parquet")
        return _manifest(tmp, spec, enc.cache_key, dim, total, "local", path)


class EmbedActor:
    """One model per actor: `__call__` turns a pyarrow batch of texts into a shard batch (id, key, vector)."""

    def __init__(self, spec: EmbedSpec) -> None:
        from argsim.backend import get_encoder

        self.spec = spec
        if spec.device == "cpu":
            import torch

            torch.set_num_threads(1)  # one actor per CPU
        self.encoder = get_encoder(spec.model, pooling=spec.pooling, max_seq_length=spec.max_seq_length,
                                   batch_size=spec.batch_size, device=spec.device, precision=spec.precision,
                                   config=RunConfig(use_cache=False, quiet=True)).for_role(spec.role)

    def __call__(self, batch):
        import pyarrow as pa
        import pyarrow.compute as pc

        column = batch.column(self.spec.column)
        if column.null_count:
            raise InputError(None, f"{column.null_count} empty value(s) in column '{self.spec.column}'")
        texts = pc.cast(column, pa.string()).to_pylist()
        vectors = self.encoder.encode(texts, normalize=self.spec.normalize, use_cache=False, show_progress=False)
        ids = (None if self.spec.id_column is None
               else pc.cast(batch.column(self.spec.id_column), pa.string()).to_pylist())
        table = shard_table(texts, ids, vectors)
        return table.append_column("identity", pa.array([self.encoder.cache_key] * len(texts)).dictionary_encode())


def read_dataset(path: Path, spec: EmbedSpec):
    """A streaming Ray dataset of the input's text (and id) columns."""
    import ray.data

    suffix = path.suffix.lower()
    columns = [spec.column] + ([spec.id_column] if spec.id_column else [])
    if suffix == ".parquet" or path.is_dir():
        return ray.data.read_parquet(str(path), columns=columns, num_cpus=IO_CPUS)
    if suffix in (".csv", ".tsv", ".tab"):
        import pyarrow.csv as pacsv

        delim = "\t" if suffix in (".tsv", ".tab") else ","
        strings = pacsv.ConvertOptions(column_types={c: "string" for c in columns}, include_columns=columns)
        return ray.data.read_csv(str(path), parse_options=pacsv.ParseOptions(delimiter=delim),
                                 convert_options=strings, file_extensions=None, num_cpus=IO_CPUS)
    if suffix in (".jsonl", ".ndjson"):
        return ray.data.read_json(str(path), lines=True, file_extensions=None, num_cpus=IO_CPUS)
    return ray.data.read_text(str(path), drop_empty_lines=True, file_extensions=None, num_cpus=IO_CPUS)  # "text"


def quiet_data(ray, quiet: bool) -> None:
    """Ray Data's progress bars and start-up lines off when `quiet`."""
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = ctx.print_on_execution_start = not quiet
    if quiet:
        logging.getLogger("ray.data").setLevel(logging.WARNING)


def actor_pool(ds, spec: EmbedSpec, engine, batch_rows: int, workers: int | None = None):
    """`ds` (a text column `spec.column`) mapped by `EmbedActor` on an actor pool: one actor per GPU of the
    cluster, else one per CPU (at most `workers`); returns (dataset of shard batches, actors)."""
    import ray.data

    gpus = engine.gpus()
    actors = workers or (gpus if gpus else engine.workers)
    ds = ds.map_batches(
        EmbedActor, fn_constructor_kwargs={"spec": replace(spec, device="cuda" if gpus else "cpu")},
        batch_size=batch_rows, batch_format="pyarrow", compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=0 if gpus else ACTOR_CPUS, num_gpus=1 if gpus else 0)
    return ds, actors


def embed_ray(path: Path, out: Path, spec: EmbedSpec, engine, batch_rows: int = 256,
              rows_per_shard: int = 100_000, workers: int | None = None, quiet: bool = True) -> dict:
    """Embed with a Ray Data actor pool and write the shard folder (the engine's cluster does the work)."""
    import pyarrow.dataset as pads

    ray = engine.session()  # connect first (the dataset needs a session)
    quiet_data(ray, quiet)
    if path.suffix.lower() not in TABLE_SUFFIXES and not path.is_dir():  # plain text: one text a line
        spec = replace(spec, column="text", id_column=None)
    ds, actors = actor_pool(read_dataset(path, spec), spec, engine, batch_rows, workers)
    with atomic_folder(out) as tmp:
        with worker_errors(ray, f"{path}: "):
            ds.write_parquet(str(tmp), min_rows_per_file=min(rows_per_shard, 10_000),
                             ray_remote_args={"num_cpus": IO_CPUS})
        if not (files := sorted(tmp.glob("*.parquet"))):
            raise InputError(path, "no texts")
        table = pads.dataset([str(f) for f in files], format="parquet").to_table(columns=["identity"])
        identities = set(table.column("identity").to_pylist())
        if len(identities) != 1:
            raise ArgsimError(f"{path}: workers embedded with different model identities {sorted(identities)}")
        first = pads.dataset(str(files[0]), format="parquet").schema.field("vector").type.list_size
        return _manifest(tmp, spec, identities.pop(), int(first), table.num_rows, "ray", path, actors=actors)


def embed_texts_ray(engine, spec: EmbedSpec, texts: list[str], chunk_rows: int,
                    quiet: bool = True) -> Iterator[tuple[list[bytes], np.ndarray, str]]:
    """Embed in-memory `texts` on the engine's actor pool (`actor_pool`, the same actors as `embed_ray`); yields
    (text keys, float32 vectors, model identity) per finished block of `chunk_rows` texts, in no fixed order; a
    block is one actor's batch, the texts its `Encoder.encode` sees (why: `argsim.engine.encoding`)."""
    import pyarrow as pa

    ray = engine.session()
    quiet_data(ray, quiet)
    blocks = [pa.table({spec.column: pa.array(texts[i:i + chunk_rows], type=pa.string())})
              for i in range(0, len(texts), chunk_rows)]
    if not blocks:
        return
    ds, _ = actor_pool(ray.data.from_arrow(blocks), spec, engine, chunk_rows, min(engine.workers, len(blocks)))
    with worker_errors(ray):
        for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None, prefetch_batches=0):
            if batch.num_rows == 0:
                continue
            identities = set(batch.column("identity").to_pylist())
            if len(identities) != 1:
                raise ArgsimError(f"workers embedded with different model identities {sorted(identities)}")
            vectors = _flat(batch.column("vector")).reshape(batch.num_rows, -1)
            yield batch.column("key").to_pylist(), vectors, identities.pop()


def read_manifest(folder: Path) -> dict:
    """The shard folder's manifest, its fields typed (InputError, one line, otherwise)."""
    from argsim.schemas import ShardManifest

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "not a folder" if folder.exists() else "folder not found")
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(folder, f"not an argsim shard folder (no {MANIFEST})")
    return read_json_as(ShardManifest, path, what="a shard manifest {model, identity, dim, rows, ...}")


def read_shards(folder: str | Path) -> tuple[list[str], list[bytes], np.ndarray, dict]:
    """(ids, text keys, float32 vectors (n, dim), manifest) of a shard folder, in file order."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    folder = Path(folder)
    manifest = read_manifest(folder)
    files = sorted(str(f) for f in folder.glob("*.parquet") if f.is_file())
    try:
        table = pads.dataset(files, format="parquet").to_table(columns=["id", "key", "vector"])
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(folder, f"unreadable shards ({str(exc).splitlines()[0][:160]})") from None
    col = table.column("vector")
    dim = int(manifest["dim"])
    if (size := getattr(col.type, "list_size", None)) != dim:
        raise InputError(folder, f"the shards hold {size}-d vectors but the manifest says {dim}")
    return table.column("id").to_pylist(), table.column("key").to_pylist(), _flat(col).reshape(-1, dim), manifest


def _flat(column) -> np.ndarray:
    """The values of a column of fixed-size float lists (a pyarrow ChunkedArray), flat, as float32."""
    return np.asarray(column.combine_chunks().flatten().to_numpy(zero_copy_only=False), dtype=np.float32)


#: how many imported rows are encoded again and compared; the smallest cosine accepted
VERIFY_ROWS = 16
VERIFY_MIN_COSINE = 0.99


def verify_shards(folder: Path, keys: list[bytes], vectors: np.ndarray, manifest: dict, encoder: Encoder,
                  source: Path, rows: int = VERIFY_ROWS, seed: int = 0) -> None:
    """Refuse (ArgsimError, one line) shards whose vectors are not `encoder`'s: the identity and dimension must be
    the encoder's, every vector finite, and `rows` seeded random rows, encoded again from their texts in `source`
    (without the cache), must agree with the stored ones (cosine >= VERIFY_MIN_COSINE).

    A manifest is a label anyone can edit; only vectors computed here are trusted.

    Example:
        >>> verify_shards(folder, keys, vectors, manifest, get_encoder("minilm"), Path("texts.txt"))  # doctest: +SKIP
    """
    if manifest["identity"] != encoder.cache_key:
        raise ArgsimError(f"{folder}: the shards were made by {manifest['identity']!r}, but model "
                          f"{manifest['model']!r} here is {encoder.cache_key!r}; nothing was imported")
    if len(vectors) and not np.isfinite(vectors).all():
        raise ArgsimError(f"{folder}: the shards hold non-finite values; nothing was imported")
    if not len(keys):
        return
    if not source.exists():
        raise ArgsimError(f"{folder}: the source file {source} is not here, so the vectors cannot be checked "
                          "against the model; give it with --source FILE; nothing was imported")
    column = manifest.get("column") or "text"  # the source's texts, read as `embed` read them
    if source.suffix.lower() == ".parquet" or source.is_dir():
        import pyarrow.dataset as pads

        src = [str(t) for t in pads.dataset(str(source), format="parquet").to_table(columns=[column])
               .column(column).to_pylist()]
    else:
        src = read_texts(source, column=column)
    texts = dict(zip(map(text_key, src), src, strict=True))
    pick = np.random.default_rng(seed).choice(len(keys), size=min(rows, len(keys)), replace=False)
    if missing := [int(i) for i in pick if bytes(keys[i]) not in texts]:
        raise ArgsimError(f"{folder}: row {missing[0] + 1}'s text is not in the source {source}; nothing was "
                          "imported")
    fresh = encoder.encode([texts[bytes(keys[i])] for i in pick], use_cache=False, show_progress=False)
    if fresh.shape[1] != vectors.shape[1]:
        raise ArgsimError(f"{folder}: the shards hold {vectors.shape[1]}-d vectors; {manifest['model']!r} makes "
                          f"{fresh.shape[1]}-d ones; nothing was imported")
    stored = vectors[pick]
    norms = np.linalg.norm(stored, axis=1) * np.linalg.norm(fresh, axis=1)  # NaN or 0: cosine 0 (refused)
    cos = np.where(norms > 0, (stored * fresh).sum(axis=1) / np.maximum(norms, 1e-30), 0.0)
    worst = int(np.argmin(cos))
    if cos[worst] < VERIFY_MIN_COSINE:
        raise ArgsimError(f"{folder}: row {int(pick[worst]) + 1} is not {manifest['model']!r}'s vector of its text "
                          f"(cosine {cos[worst]:.4f} with the vector computed now); nothing was imported")


def import_shards(folder: str | Path, cache_dir: str | Path, chunk: int = 50_000, config=None,
                  source: str | Path | None = None) -> tuple[int, dict]:
    """Merge a shard folder into the embedding cache of its model identity; returns (rows stored, manifest).

    The rows enter the cache only after `verify_shards` accepts them (the model the manifest names is loaded
    with `config`'s options; `source` overrides the manifest's source file)."""
    from argsim.backend import get_encoder

    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest.get("normalize"):
        raise ArgsimError(f"{folder}: shards hold L2-normalised vectors; the cache stores the model's raw vectors "
                          "(embed again without --normalize to import)")
    _, keys, vectors, _ = read_shards(folder)
    encoder = get_encoder(manifest["model"], pooling=manifest.get("pooling"),  # typed by read_manifest
                          max_seq_length=manifest.get("max_seq_length"), config=config).for_role(manifest.get("role"))
    verify_shards(folder, keys, vectors, manifest, encoder,
                  Path(source) if source is not None else Path(str(manifest.get("source", ""))))
    with closing(EmbeddingCache(cache_dir, manifest["identity"])) as cache:
        for start in range(0, len(keys), chunk):
            cache.put_keys(keys[start:start + chunk], vectors[start:start + chunk])
    return len(keys), manifest


def _manifest(tmp: Path, spec: EmbedSpec, identity: str, dim: int, rows: int, engine: str, source: Path,
              **extra) -> dict:
    """The shard folder's manifest, written into `tmp`."""
    from argsim.io import write_json
    manifest = {"model": spec.model, "identity": identity, "pooling": spec.pooling,
                "max_seq_length": spec.max_seq_length, "normalize": spec.normalize, "dim": dim, "rows": rows,
                "engine": engine, "source": str(Path(source).resolve()), "column": spec.column,
                "id_column": spec.id_column, "role": spec.role, **extra}
    write_json(tmp / MANIFEST, manifest)
    return manifest
