"""The political Sentence-BERT as a small artifact over the installed GiNZA table: what ships as `minutes`.

Training a ginza-backbone model (`argsim.minutes.sbert`) changes only the rows its texts use, so the artifact keeps
the dense layer and the changed rows' deltas over the installed table (docs/models.md, "How loading works").
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from importlib import metadata
from pathlib import Path

import numpy as np

from argsim.backend.adapters import _sha256_cached
from argsim.backend.encoder import Encoder
from argsim.backend.names import CARD, read_card, write_manifest
from argsim.errors import InputError, ModelError
from argsim.io import atomic_path, sha256_file, write_json
from argsim.metrics.triplets import TRIPLET_FIELDS, encoded_triplet_scores
from argsim.minutes import sbert

DELTA_FILE = "minutes_delta.safetensors"
WORDS_FILE = "words.json"
LOADER_NAME = "minutes-delta"
ARTIFACT = "delta"  # the card's `artifact` (argsim.backend.adapters): a sparse delta over the base's table
BASE = "ginza"
BASE_FILES = ("vocab/vectors", "vocab/key2row")
PRECISIONS = ("fp32", "fp16", "int8")


def base_hashes() -> dict[str, str]:
    """SHA-256 of the installed GiNZA word table and its word-to-row map ({"vocab/vectors": ..., ...}); ModelError
    when no ja_ginza with vocab/vectors is installed."""
    spec = importlib.util.find_spec("ja_ginza")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("model 'ginza' is not installed (pip install ja-ginza)")
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(p.parent.parent for p in root.glob("*/vocab/vectors"))
    if not found:
        raise ModelError(f"{root}: the installed ja-ginza has no vocab/vectors")
    stats = {name: (found[-1] / name).stat() for name in BASE_FILES}
    return {name: _sha256_cached(str(found[-1] / name), st.st_size, st.st_mtime) for name, st in stats.items()}


def check_base(folder: Path, card: dict) -> None:
    """The installed GiNZA must be the one the model was trained over (both files' hashes); one line otherwise."""
    if card.get("base") != BASE:
        raise ModelError(f"{folder / CARD}: base {card.get('base')!r} is not '{BASE}'; nothing was loaded")
    try:
        have = base_hashes()
    except ModelError:
        raise ModelError(f"{folder}: its base model '{BASE}' is not installed (pip install ja-ginza); nothing "
                         "was loaded") from None
    want = card.get("base_files") or {}
    for name in BASE_FILES:
        if want.get(name) != have[name]:
            raise ModelError(f"{folder / CARD}: the installed base '{BASE}' ({name} sha256 {have[name][:12]}) is "
                             f"not the one this model was trained on ({str(want.get(name))[:12]}); nothing was "
                             "loaded")


def pack(trained: Path, out: Path, precision: str = "fp16", delta_rows: int | None = None) -> dict:
    """Write the artifact of a trained ginza-backbone minutes model into `out`; returns its card entries.

    Args:
        trained: a folder saved by `train minutes-sbert` (ginza backbone).
        out: the folder to write (created).
        precision: fp32 | fp16 | int8, the stored deltas' precision (the dense layer stays fp32).
        delta_rows: keep only this many changed rows, those with the largest delta norms (None: every changed
            row; a dropped row falls back to its start value).

    Returns:
        The card entries: base, base_sha256, base_files, base_version, artifact, weights, precision, rows, own
        words, the weights file's hash.

    Example:
        >>> pack(Path("models/minutes-sbert-words"), Path("runs/minutes-pack"))["precision"]  # doctest: +SKIP
        'fp16'
    """
    from safetensors.numpy import save_file
    from sentence_transformers import SentenceTransformer

    from argsim.backend.safety import HF_LOAD, check_model_folder

    if precision not in PRECISIONS:
        raise ModelError(f"precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
    out, trained = Path(out), Path(trained)
    check_model_folder(trained)
    if not (trained / sbert.SEGMENTED_MARKER).is_file():
        raise ModelError(f"{trained}: not a ginza-backbone minutes model (no {sbert.SEGMENTED_MARKER})")
    model = SentenceTransformer(str(trained), device="cpu", **HF_LOAD)
    vocab = list(model[0].tokenizer.vocab)
    words = [t[2:] for t in vocab if t.startswith("w:")]
    start = sbert.build_ginza_model(update_embeddings=False, words=words)  # the installed table with its own words
    if list(start[0].tokenizer.vocab) != vocab or len(model) != 3:
        raise ModelError(f"{trained}: its vocabulary or modules are not those of the installed GiNZA table with "
                         "its own words; it cannot be stored as a delta over it")
    delta = model[0].emb_layer.weight.detach().float().numpy() - start[0].emb_layer.weight.detach().float().numpy()
    norms = np.linalg.norm(delta, axis=1)
    index = np.flatnonzero(norms > 0)
    if delta_rows is not None and len(index) > delta_rows:
        index = np.sort(index[np.argsort(-norms[index], kind="stable")[:delta_rows]])
    dense, values = model[2].linear, delta[index]
    tensors = {"dense.weight": dense.weight.detach().float().numpy(),
               "dense.bias": dense.bias.detach().float().numpy(), "delta.index": index.astype(np.int32)}
    if precision == "int8":  # absmax/127, one fp32 scale per row
        scale = np.abs(values).max(axis=1) / 127.0
        scale[scale == 0] = 1.0
        tensors |= {"delta.values": np.round(values / scale[:, None]).astype(np.int8),
                    "delta.scale": scale.astype(np.float32)}
    else:
        tensors["delta.values"] = values.astype(np.float32 if precision == "fp32" else np.float16)
    with atomic_path(out / DELTA_FILE) as tmp:
        save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(tmp))
    write_json(out / WORDS_FILE, words)
    write_manifest(out, LOADER_NAME)
    hashes = base_hashes()
    card = {"base": BASE, "base_sha256": hashes["vocab/vectors"], "base_files": hashes,
            "base_version": metadata.version("ja-ginza"), "artifact": ARTIFACT, "weights": DELTA_FILE,
            "precision": precision, "rows_changed": int((norms > 0).sum()), "rows_stored": int(len(index)),
            "rows_total": int(len(vocab)), "own_words": len(words), "weights_sha256": sha256_file(out / DELTA_FILE)}
    existing = json.loads((out / CARD).read_text(encoding="utf-8")) if (out / CARD).is_file() else {}
    write_json(out / CARD, existing | card)
    return card


def build_model(folder: Path):
    """The SentenceTransformer of an artifact folder: the start matrix over the installed GiNZA table, the deltas
    added, the dense layer set (after the base check).

    Example:
        >>> model = build_model(Path("argsim/shipped/minutes"))  # doctest: +SKIP
    """
    import torch
    from safetensors.numpy import load_file

    folder = Path(folder)
    check_base(folder, read_card(folder))
    try:
        words = json.loads((folder / WORDS_FILE).read_text(encoding="utf-8"))
        tensors = load_file(str(folder / DELTA_FILE))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        raise ModelError(f"{folder}: unreadable model files ({str(exc)[:160]})") from None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ModelError(f"{folder / WORDS_FILE}: not a list of words")
    model = sbert.build_ginza_model(update_embeddings=False, words=words)
    emb = model[0].emb_layer.weight
    index = tensors["delta.index"].astype(np.int64)
    values = tensors["delta.values"].astype(np.float32)
    if "delta.scale" in tensors:  # int8: one scale per row
        values = values * tensors["delta.scale"].astype(np.float32)[:, None]
    if index.size and (index.min() < 0 or index.max() >= emb.shape[0] or values.shape != (len(index), emb.shape[1])):
        raise ModelError(f"{folder / DELTA_FILE}: its deltas do not fit the {emb.shape[0]} x {emb.shape[1]} table")
    with torch.no_grad():
        emb[torch.from_numpy(index)] += torch.from_numpy(values)
        model[2].linear.weight.copy_(torch.from_numpy(tensors["dense.weight"]))
        model[2].linear.bias.copy_(torch.from_numpy(tensors["dense.bias"]))
    return model.eval()


def load_encoder(folder: str | Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32",
                 name: str | None = None) -> Encoder:
    """The loader named `minutes-delta` in `argsim_encoder.json` (`get_encoder("minutes")` for the shipped one;
    `argsim.backend.registry` refuses --max-seq-length for it before loading).

    Example:
        >>> enc = load_encoder(Path("argsim/shipped/minutes"), name="minutes")  # doctest: +SKIP
    """
    folder = Path(folder)
    model = build_model(folder)
    identity = f"minutes-delta:{read_card(folder)['base_sha256'][:16]}:{sha256_file(folder / DELTA_FILE)[:16]}"
    return sbert.SegmentedSentenceTransformerEncoder(folder, device=device, batch_size=batch_size, precision=precision,
                                                     model=model, identity=identity, name=name)


def corpus(data_dir: str | Path | None = None) -> list:
    """The cleaned lines of every PoliInfo minutes file, in the order `data triplets minutes` mines them (its
    default cleaning settings)."""
    from argsim.data.catalog import dataset_dir
    from argsim.data.poliinfo import load_meetings
    from argsim.minutes.mining import corpus_lines

    return corpus_lines(load_meetings(dataset_dir("poliinfo", data_dir)))


def locate_triplets(rows: list[dict], data_dir: str | Path | None = None) -> list[list[int]]:
    """[anchor line, negative line] in `corpus()` for each mined triplet (its positive is the line after the
    anchor): how a card names its slice without copying the minutes' text. InputError for a triplet the corpus
    does not hold (other data, other cleaning settings)."""
    lines = corpus(data_dir)
    # the first line of each key: built backwards, so the earliest one is written last
    where = {(line.meeting, line.text): i for i, line in reversed(list(enumerate(lines)))}
    anchors = {(lines[i].meeting, lines[i].text, lines[i + 1].text): i for i in reversed(range(len(lines) - 1))}
    out = []
    for n, row in enumerate(rows, start=1):
        a = anchors.get((row.get("meeting"), row["anchor"], row["positive"]))
        j = where.get((row.get("negative_meeting"), row["negative"]))
        if a is None or j is None:
            raise InputError(None, "a triplet the PoliInfo minutes do not hold (other data or cleaning)", row=n)
        out.append([a, j])
    return out


def slice_triplets(pairs: list[list[int]], data_dir: str | Path | None = None) -> list[dict]:
    """The triplets a card's slice names (see `locate_triplets`), rebuilt from the PoliInfo minutes."""
    lines = corpus(data_dir)
    return [{"anchor": lines[a].text, "positive": lines[a + 1].text, "negative": lines[j].text} for a, j in pairs]


def slice_sha256(rows: list[dict]) -> str:
    """SHA-256 of the slice's texts (anchor, positive, negative of each triplet, tab- and newline-joined)."""
    text = "\n".join("\t".join(r[k] for k in TRIPLET_FIELDS) for r in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def slice_accuracy(encoder: Encoder, rows: list[dict]) -> float:
    """Triplet accuracy by cosine of `encoder` on `rows`, ties counted correct (as `argsim eval triplets`)."""
    return encoded_triplet_scores(encoder, rows, use_cache=False).accuracy
