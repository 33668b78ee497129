"""A composite embedding model: the concatenation of other models' vectors, each optionally L2-normalised and
weighted, for any task (docs/models.md, "counter-retriever and counter-fusion").

A concatenation folder holds `argsim_encoder.json` (`{"loader": "concat"}`; the thematic models' folders say
`thematic-concat`, the same loader) and `config.json`, e.g.
`{"parts": ["counter-bi-encoder", "counter-retriever"], "normalize_parts": true, "weights": [1.0, 1.0]}`. A part is
a sub-folder `parts/<name>` when there is one (the thematic `save_concat` copies models there), else a registry or
shipped model name; nothing else loads. With `normalize_parts` each part's vectors are L2-normalised and part i is
scaled by sqrt(w_i), so the inner product of two composite vectors is sum_i w_i cos_i (score fusion written as one
embedding model; the composite norms are constant, so the ranking by cosine is the ranking by that sum); without it
the raw vectors are joined, scaled alike (the thematic triplets-sen-titles = [triplets-sen ; triplets-titles]).
When a part has two towers (`Encoder.roles`), so has the composite (`ConcatEncoder.for_role`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field, Strict

from argsim.backend.encoder import CompositeEncoder, Encoder, check_role
from argsim.backend.names import part_source, write_manifest
from argsim.backend.registry import get_encoder, member_options
from argsim.errors import ModelError
from argsim.io import read_json_as, write_json
from argsim.schemas import ConcatConfig
from argsim.vectors import l2_normalize


class CompositeConfig(ConcatConfig):
    """A concatenation folder's `config.json`: the parts in order, whether each part's vectors are L2-normalised
    before joining, and a non-negative weight per part (its cosine's weight in the inner product)."""

    normalize_parts: Annotated[bool, Strict()] = False
    weights: list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = None


class ConcatEncoder(CompositeEncoder):
    """The concatenation of its parts' vectors, part i's L2-normalised when `normalize` and scaled by sqrt(w_i).

    Args:
        name: the model's name (its folder's, or the shipped name).
        parts: the member encoders, in order.
        normalize: L2-normalise each part's vectors before joining them.
        weights: one non-negative weight per part (None: 1 each).

    Example:
        >>> parts = [get_encoder("counter-bi-encoder"), get_encoder("minilm")]  # doctest: +SKIP
        >>> enc = ConcatEncoder("fused", parts, normalize=True)  # doctest: +SKIP
        >>> enc.for_role("query").encode(["Ban fast food."]).shape  # doctest: +SKIP
        (1, 768)
    """

    def __init__(self, name: str, parts: list[Encoder], normalize: bool = False,
                 weights: list[float] | None = None) -> None:
        super().__init__()
        if weights is not None and len(weights) != len(parts):
            raise ModelError(f"{name}: {len(weights)} weight(s) for {len(parts)} part(s)")
        self.parts, self.name, self.normalize = list(parts), name, normalize
        self.weights = None if weights is None or all(w == 1 for w in weights) else [float(w) for w in weights]
        self.device, self.precision = parts[0].device, parts[0].precision
        self.roles = next((dict(p.roles) for p in parts if p.roles), None)
        # the thematic concatenation's key as it was; normalisation and weights change the vectors, so they key too
        self.identity = ("concat:" + "+".join(p.identity for p in parts) + (":normalized" if normalize else "")
                         + (":w=" + ",".join(f"{w:g}" for w in self.weights) if self.weights else ""))
        if ran := [p for p in parts if p.backend != "torch"]:  # a part's transformer runs in ONNX Runtime / OpenVINO
            self.backend, self.quantize = ran[0].backend, ran[0].quantize
        self._bound: dict[str, ConcatEncoder] = {}

    def for_role(self, role: str | None) -> Encoder:
        """The concatenation of every part's `for_role(role)` encoder (a one-tower part encodes both roles alike;
        itself for a one-tower composite); a two-tower composite refuses None (`Encoder.for_role`)."""
        if self.roles is None or role is None:
            return super().for_role(role)
        check_role(role)
        if role not in self._bound:
            bound = ConcatEncoder(self.name, [p.for_role(role) for p in self.parts], self.normalize, self.weights)
            bound.configure(self.cache_dir, self.use_cache, self.quiet)
            bound.batch_size, bound.recipe = self.batch_size, self.recipe
            self._bound[role] = bound
        return self._bound[role]

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        outs = []
        for i, part in enumerate(self.parts):
            vectors = part.encode(texts, show_progress=False)
            vectors = l2_normalize(vectors) if self.normalize else vectors
            outs.append(vectors * math.sqrt(self.weights[i]) if self.weights else vectors)
        return np.concatenate(outs, axis=1)


def save_composite(folder: Path, parts: list[str], normalize_parts: bool = True,
                   weights: list[float] | None = None) -> Path:
    """Write a concatenation folder over `parts` (registry / shipped names, or sub-folders already under
    `folder/parts/`): its `config.json` and `argsim_encoder.json` (`{"loader": "concat"}`).

    Example:
        >>> save_composite(Path("models/fused"), ["counter-bi-encoder", "counter-retriever"])  # doctest: +SKIP
    """
    folder = Path(folder)  # write_json creates it
    config: dict = {"parts": list(parts), "normalize_parts": normalize_parts}
    if weights is not None:
        config["weights"] = [float(w) for w in weights]
    write_json(folder / "config.json", config)
    return write_manifest(folder, "concat").parent


def load_concat_encoder(folder: Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32",
                        runtime: dict | None = None, name: str | None = None) -> ConcatEncoder:
    """The `concat` (and `thematic-concat`) loader; `runtime` (`--backend onnx|openvino`): every transformer part
    runs there; `name`: the shipped model's name, for a shipped folder."""
    folder = Path(folder)
    config = read_json_as(CompositeConfig, folder / "config.json",
                          what="a concatenation's config {parts: [...], normalize_parts, weights}")
    parts = [get_encoder(part_source(folder, part), device=device if runtime is None else None,
                         batch_size=batch_size, precision=precision, **member_options(runtime))
             for part in config["parts"]]
    return ConcatEncoder(name or folder.name, parts, bool(config.get("normalize_parts", False)),
                         config.get("weights"))
