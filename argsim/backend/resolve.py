"""`resolve_model`: the one way every public entry point turns "a model" (see its Args) into something that scores:
an `Encoder`, a `SentenceTransformer` wrapped as one (`ObjectEncoder`), or argsim's one pair scorer (`PairScorer`,
for a `CrossEncoder` object; `pair_scorer` loads one by name).

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

from argsim.backend.device import inference_precision, resolve_device
from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.folders import model_path
from argsim.backend.models import STModelEncoder, kept_mode
from argsim.backend.registry import get_cross_encoder, get_encoder, runtime_spec
from argsim.config import RunConfig
from argsim.errors import ModelError

ACCEPTED = ("a registered name, a model folder, a Hugging Face id in the local cache, an argsim Encoder, "
            "a SentenceTransformer, or a CrossEncoder")


def is_cross_encoder_object(model: Any) -> bool:
    """True for a sentence-transformers `CrossEncoder` object."""
    from sentence_transformers import CrossEncoder

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
    """A `SentenceTransformer` object as an argsim `Encoder`, cached under a digest of its weights (see the module
    docstring)."""

    def __init__(self, model: Any, batch_size: int = 64, config: RunConfig | None = None) -> None:
        config, digest = config or RunConfig(), weights_digest(model)
        dtype = str(getattr(next(model.parameters(), None), "dtype", "torch.float32"))
        super().__init__(model, f"SentenceTransformer@{digest[:8]}", f"st-weights:{digest}:model",
                         str(getattr(model, "device", "cpu")), batch_size,
                         {"torch.float16": "fp16", "torch.bfloat16": "bf16"}.get(dtype, "fp32"))
        self.configure(config.resolved_cache_dir(), config.use_cache, config.quiet)


class PairScorer:
    """A cross-encoder as argsim's one pair scorer: a `CrossEncoder` object (`resolve_model`), or a folder, registry
    name or Hugging Face id loaded once per process through the backend's model cache (`pair_scorer`: the run's
    device, precision and `--backend onnx|openvino` runtime).

    `score(pairs)` is the log-probability of the model's last label (a match / the best counter) in float64
    (`log_positive`): it orders pairs as the probability does but never saturates (a float32 sigmoid or softmax
    rounds every pair whose logits differ by more than about 17 to 1.0, and those pairs would tie).
    `probability(pairs)` is its exponential (key point matching's thresholds). The model's train/eval mode is left
    as it was. The logits are cached as embeddings are (`PairLogits`; docs/usage.md) under `identity`; without
    one (a model under training) nothing is cached.

    Example:
        >>> scorer = resolve_model(CrossEncoder(folder))  # doctest: +SKIP
        >>> scorer.probability([("Uniforms stop bullying.", "Uniforms reduce bullying")])  # doctest: +SKIP
        array([0.93])
    """

    def __init__(self, model: Any, batch_size: int = 64, name: str | None = None, precision: str = "fp32",
                 runtime: dict | None = None, identity: str | None = None, config: RunConfig | None = None) -> None:
        self.model, self.batch_size, self.precision = model, batch_size, precision
        self.name = name or f"CrossEncoder@{weights_digest(model)[:8]}"
        self.backend, self.quantize = (runtime["backend"], runtime["quantize"]) if runtime else ("torch", "none")
        config = config or RunConfig()
        self.pairs = PairLogits(self, identity)
        self.pairs.configure(config.resolved_cache_dir(), identity is not None and config.use_cache, config.quiet)

    def logits(self, pairs: Sequence[tuple[str, str]], show_progress: bool = False) -> np.ndarray:
        """The logits (len(pairs), labels) in float64, in input order."""
        pairs = [tuple(p) for p in pairs]
        if not pairs:
            return np.zeros((0, 1))
        if getattr(self.model, "needs_calibration", False):  # OpenVINO int8 not built yet: calibrated on these
            self.model.prepare([a for a, _ in pairs], [b for _, b in pairs])  # pairs before the cache key is read
        with kept_mode(self.model):
            got = self.pairs.encode([pair_text(p) for p in pairs], show_progress=show_progress,
                                    description="cross-encoder")
        return got.astype(np.float64)

    def score(self, pairs: Sequence[tuple[str, str]], show_progress: bool = False) -> np.ndarray:
        """log P(last label) of every pair (float64), in input order."""
        return log_positive(self.logits(pairs, show_progress))

    def probability(self, pairs: Sequence[tuple[str, str]], show_progress: bool = False) -> np.ndarray:
        """P(last label) of every pair (float64), in input order."""
        return np.exp(self.score(pairs, show_progress))


def pair_text(pair: tuple[str, str]) -> str:
    """A pair as one text (a JSON list), the key of its logits in the embedding cache; `PairLogits` reads it back.

    Example:
        >>> pair_text(("a claim", "its counter"))
        '["a claim", "its counter"]'
    """
    first, second = pair
    return json.dumps([first, second], ensure_ascii=False)


class PairLogits(Encoder):
    """A `PairScorer`'s logits as an `Encoder` of pairs (`pair_text`), so that pairs are scored as texts are
    embedded (`Encoder.encode`: de-duplicated, length-sorted, cached chunk by chunk), keyed apart from every
    encoder by the ``pairs:`` prefix of its identity."""

    def __init__(self, scorer: PairScorer, identity: str | None) -> None:
        super().__init__()
        self.scorer, self.name, self.batch_size = scorer, scorer.name, scorer.batch_size
        self.identity = f"pairs:{identity}" if identity else ""
        self.precision, self.backend, self.quantize = scorer.precision, scorer.backend, scorer.quantize

    @property
    def runtime(self) -> str:  # an export's backend, quantization and calibration digest; empty for torch
        return getattr(self.scorer.model, "runtime", "") if self.backend != "torch" else ""

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import torch

        pairs = [tuple(json.loads(t)) for t in texts]
        model, size = self.scorer.model, self.scorer.batch_size
        got = model.logits(pairs, size) if hasattr(model, "logits") else \
            model.predict(pairs, batch_size=size, activation_fn=torch.nn.Identity(), show_progress_bar=False,
                          convert_to_numpy=True)
        return np.asarray(got, dtype=np.float32).reshape(len(pairs), -1)


def log_positive(logits: np.ndarray) -> np.ndarray:
    """log P(last label) of cross-encoder logits (n, labels) in float64, numerically stable:
    -logsumexp(x - x_last), a one-label model's logit x read as the labels (0, x) (its sigmoid), so a pair whose
    last label leads by d scores -log(1 + e^-d) (about -e^-d), never 0 for a finite lead.

    Example:
        >>> log_positive(np.array([[40.0], [30.0]]))  # both 1.0 as float32 sigmoids; apart here
        array([-4.24835426e-18, -9.35762297e-14])
        >>> float(np.exp(log_positive(np.array([[0.0, 0.0]])))[0])
        0.5
    """
    logits = np.asarray(logits, dtype=np.float64)
    if logits.shape[1] == 1:  # a sigmoid is the softmax of (0, logit)
        logits = np.concatenate([np.zeros_like(logits), logits], axis=1)
    return -np.logaddexp.reduce(logits - logits[:, -1:], axis=1)


def pair_scorer(name: str | Path, config: RunConfig | None = None, max_length: int | None = None,
                batch_size: int = 64) -> PairScorer:
    """A cross-encoder folder (or registry name, Hugging Face id) as a `PairScorer`, its model loaded once per
    process (`argsim.backend.registry.get_cross_encoder`) in the run's device, precision and runtime.

    Args:
        name: the model.
        config: the run options (device, precision, backend, quantize, threads, cache folder); None: the defaults.
        max_length: the pair's token limit (None: the model's).
        batch_size: pairs per forward pass.

    Returns:
        The `PairScorer`.

    Example:
        >>> pair_scorer("models/kpm-cross").probability([("We should ban guns", "Guns kill")])  # doctest: +SKIP
        array([0.93])
    """
    config = config or RunConfig()
    runtime = runtime_spec(config)
    device = resolve_device(config.device) if runtime is None else "cpu"
    precision = inference_precision(config.precision, device, config.backend)
    model = get_cross_encoder(name, device, precision, runtime, max_length)
    identity = f"cross:{fingerprint(model_path(str(name)))}:{model.max_seq_length}"  # an export: its baked-in limit
    return PairScorer(model, batch_size, name=Path(name).name, precision=precision, runtime=runtime,
                      identity=identity, config=config)


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
    if isinstance(model, (str, Path)):
        return get_encoder(str(model), batch_size=batch_size, config=config)
    from sentence_transformers import SentenceTransformer

    if isinstance(model, SentenceTransformer):
        return ObjectEncoder(model, batch_size=batch_size, config=config)
    if is_cross_encoder_object(model):
        if not cross_encoder:
            raise ModelError("a CrossEncoder scores pairs, not single texts: this task needs an embedding model "
                             f"({ACCEPTED.removesuffix(', or a CrossEncoder')})")
        digest = weights_digest(model)
        return PairScorer(model, batch_size, name=f"CrossEncoder@{digest[:8]}", config=config,
                          identity=f"ce-weights:{digest}:{model.max_seq_length}")
    shown = repr(model) if len(repr(model)) <= 40 else repr(model)[:37] + "..."
    raise ModelError(f"model {shown} ({type(model).__name__}): give {ACCEPTED}")
