"""Backend loaders for trained MTS folders and fold ensembles (named in their `argsim_encoder.json`).

MTS needs topic and stance besides the text: `encode_statements(texts, topics, stances, engine)` packs the
three into one string per statement and goes through `argsim.engine.encode` (locally `Encoder.encode`), so
de-duplication, the disk cache and batching apply, and `--engine ray` embeds the packed strings on Ray's actor
pool (an actor rebuilds the MTS folder through its manifest). A plain `encode(texts)` treats each text as a
statement without topic (stance 0). A fold ensemble embeds member by member, each on the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from argsim.backend import Encoder
from argsim.backend.encoder import CompositeEncoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.names import write_manifest
from argsim.engine import Engine, encode
from argsim.errors import ModelError
from argsim.io import read_json_as, write_json
from argsim.vectors import l2_normalize

SEP = "\x1f"
ENSEMBLE_FILE = "ensemble.json"


def pack(text: str, topic: str, stance: int) -> str:
    return f"{int(stance):+d}{SEP}{topic}{SEP}{text}"


def unpack(packed: str) -> tuple[str, str, int]:
    parts = packed.split(SEP, 2)
    return (parts[2], parts[1], int(parts[0])) if len(parts) == 3 else (packed, "", 0)


class MTSEncoder(Encoder):
    """A trained MTS / QA / SimAKP network as a backend encoder (the `kpm-mts` loader of `argsim_encoder.json`).

    `runtime` (`--backend onnx|openvino`, `--quantize int8`; the spec `get_encoder` passes): the backbone with its
    pooling (the saved `backbone/` folder, `cls-last4` or the trained pooling) is exported once and computes the
    features in that runtime; the stance layer and the projection stay torch. OpenVINO int8 calibrates on the
    statements (QA: the topic-statement pairs) of the first `encode` call unless calibration texts were given.
    Vectors are cached apart per runtime."""

    def __init__(self, folder: Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32",
                 runtime: dict | None = None) -> None:
        super().__init__()
        import torch

        from argsim.backend.device import cast_for_inference
        from argsim.kpm.mts.network import load_net

        self.net = cast_for_inference(load_net(folder, device), precision) if runtime is None else \
            load_net(folder, "cpu", backbone=False)  # the backbone runs in the export
        self.name, self.device, self.batch_size, self.precision = f"mts:{folder.name}", device, batch_size, precision
        self.identity = f"mts:{fingerprint(folder)}"
        self._torch = torch
        self.exported = None
        if runtime is not None:
            from argsim.backend.runtime import exported_model

            cfg = self.net.cfg
            self.exported = exported_model(folder / "backbone", cfg.pooling, runtime, precision,
                                           max_length=cfg.max_seq_length)
            self.net.exported = lambda first, second, max_len: self.exported.run(first, second, max_len,
                                                                               batch_size=self.batch_size)
            self.device, self.backend, self.quantize = "cpu", runtime["backend"], runtime["quantize"]
            self.runtime = self.exported.runtime

    def calibrate(self, texts: str | Sequence[str]) -> None:
        """OpenVINO int8 not built yet: build it calibrated on the statements of `texts` (packed; nothing otherwise)."""
        if self.exported is not None and self.exported.needs_calibration and len(texts):
            t, tp, _ = zip(*(unpack(p) for p in ([texts] if isinstance(texts, str) else texts)), strict=True)
            cfg = self.net.cfg
            if cfg.variant == "qa":
                self.exported.prepare(list(tp), list(t), cfg.topic_max_seq_length + cfg.max_seq_length)
            else:
                self.exported.prepare(list(t), max_length=cfg.max_seq_length)
            self.set_runtime(self.exported.runtime)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        outs = []
        with self._torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                t, tp, s = zip(*(unpack(p) for p in texts[start:start + self.batch_size]), strict=True)
                outs.append(self.net(list(t), list(tp), list(s)).float().cpu().numpy())
        return np.concatenate(outs, axis=0)

    def encode_statements(self, texts: Sequence[str], topics: Sequence[str], stances: Sequence[int],
                          engine: Engine | None = None) -> np.ndarray:
        """Embeddings of statements in their context, on `engine` (None: this process)."""
        return encode(engine, self, [pack(t, tp, s) for t, tp, s in zip(texts, topics, stances, strict=True)])


class EnsembleEncoder(CompositeEncoder):
    """Fold ensemble: concatenated L2-normalised member embeddings / sqrt(k), so cosine = mean member cosine."""

    def __init__(self, members: list[Encoder], name: str) -> None:
        super().__init__()
        self.parts, self.name = members, name
        self.device, self.precision = members[0].device, members[0].precision
        self.identity = "ensemble:" + "+".join(m.identity for m in members)

    @property
    def members(self) -> list[Encoder]:  # the folds' encoders: the composite's parts
        return list(self.parts)

    def _combine(self, parts: list[np.ndarray]) -> np.ndarray:
        return (np.concatenate([l2_normalize(p) for p in parts], axis=1) / np.sqrt(len(parts))).astype(np.float32)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self._combine([m.encode(texts, use_cache=False) for m in self.parts])

    def encode_statements(self, texts: Sequence[str], topics: Sequence[str], stances: Sequence[int],
                          engine: Engine | None = None) -> np.ndarray:
        """The members' embeddings of the statements (each on `engine`), combined."""
        from argsim.kpm.scoring import embed_statements

        return self._combine([embed_statements(m, texts, topics, stances, engine=engine) for m in self.parts])


def load_ensemble(folder: str | Path, device: str = "cpu", batch_size: int = 64,
                  precision: str = "fp32", runtime: dict | None = None) -> EnsembleEncoder:
    from argsim.backend import get_encoder
    from argsim.backend.registry import member_options
    from argsim.backend.safety import model_files
    from argsim.schemas import EnsembleManifest

    folder = Path(folder)
    with model_files(folder, "MTS ensemble"):
        members = read_json_as(EnsembleManifest, folder / ENSEMBLE_FILE)["members"]
    paths = [folder / m for m in members]
    for p in paths:  # an ensemble of ensembles, or one naming itself, would load without end
        if (p / ENSEMBLE_FILE).exists() or p.resolve() in (folder.resolve(), *folder.resolve().parents):
            raise ModelError(f"{folder}: member {p.name or p} is an ensemble or contains this one; members are "
                             "single trained models")
    if missing := [str(p) for p in paths if not p.is_dir()]:
        raise ModelError(f"{folder}: ensemble member folder(s) missing: {', '.join(missing)}")
    options = member_options(runtime)  # every member's backbone in the run's runtime
    ensemble = EnsembleEncoder([get_encoder(str(p), device=device if runtime is None else None,
                                            batch_size=batch_size, precision=precision, **options)
                                for p in paths], f"ensemble:{folder.name}")
    if runtime is not None:
        ensemble.backend, ensemble.quantize = runtime["backend"], runtime["quantize"]
    return ensemble


def write_ensemble(folder: Path, members: list[str]) -> None:
    write_json(folder / ENSEMBLE_FILE, {"members": members})
    write_manifest(folder, "kpm-mts-ensemble")
