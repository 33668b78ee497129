"""Static embeddings distilled from a transformer (model2vec): `argsim distill MODEL --out DIR` (docs/backends.md).

model2vec (Tulkens and van Dongen, "Model2Vec: fast state-of-the-art static embeddings", 2024) runs the
sentence-transformers model once over its vocabulary, reduces the token vectors with PCA (`pca_dims`) and weights
them by Zipf-based SIF weights; a sentence is the mean of its tokens' static vectors, no transformer at inference.
The folder written is data: `--model DIR` loads it through `Model2VecEncoder` (a folder with pickles is refused).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.folders import model_path
from argsim.backend.runtime import _atomic_build
from argsim.errors import ModelError


def is_model2vec_folder(folder: Path) -> bool:
    """Whether `folder` holds a model2vec static model: weights as `model.safetensors` and a `tokenizer.json`, with
    `config.json`'s model_type `model2vec` or a `modules.json` whose first module is sentence-transformers'
    StaticEmbedding (what model2vec's `save_pretrained` writes)."""
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        return False
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if isinstance(config, dict) and config.get("model_type") == "model2vec":
            return True
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        first = modules[0] if isinstance(modules, list) and modules else {}
        return isinstance(first, dict) and str(first.get("type", "")).endswith(".StaticEmbedding")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


class Model2VecEncoder(Encoder):
    """A model2vec static model: the mean of its tokens' static vectors (no transformer; CPU, fp32 output)."""

    chunk_batches = 16

    def __init__(self, folder: str | Path, name: str | None = None, batch_size: int = 1024) -> None:
        super().__init__()
        try:
            from model2vec import StaticModel
        except ImportError:
            raise ModelError("a model2vec folder needs model2vec: pip install 'argsim[cpu]'") from None
        folder = Path(folder)
        self.model = StaticModel.from_pretrained(str(folder))
        self.name, self.device, self.batch_size = name or folder.name, "cpu", batch_size
        self.identity = f"model2vec:{fingerprint(folder)}"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        vecs = self.model.encode(texts, batch_size=self.batch_size, show_progress_bar=False,
                                 use_multiprocessing=False)
        return np.asarray(vecs, dtype=np.float32)


@dataclass(frozen=True)
class DistillResult:
    """What `distill` wrote: the folder, the vocabulary size, the dimension and the seconds it took."""

    out: Path
    vocabulary: int
    dim: int
    seconds: float


def distill(model: str, out: str | Path, pca_dims: int | None = 256, device: str = "cpu") -> DistillResult:
    """Distill the transformer `model` (a registry name or a sentence-transformers folder) into a model2vec static
    model in `out` (written to a temporary folder first, then renamed: never half written).

    Args:
        model: the source model (e.g. `minilm`).
        out: the new folder (must not exist).
        pca_dims: PCA dimensions of the static vectors (None: the model's own dimension, no reduction).
        device: where the one pass over the vocabulary runs.

    Returns:
        A `DistillResult`.

    Example:
        >>> distill("minilm", "models/minilm-static")  # doctest: +SKIP
        DistillResult(out=PosixPath('models/minilm-static'), vocabulary=29528, dim=256, seconds=74.0)
    """
    out = Path(out)
    if out.exists():
        raise ModelError(f"{out}: already exists; choose a new folder for the static model")
    try:
        from model2vec.distill import distill as m2v_distill
    except ImportError as exc:
        raise ModelError(f"argsim distill needs model2vec and skeletoken ({exc}): pip install 'argsim[cpu]'") from None
    source = model_path(model)
    start = time.perf_counter()
    static = m2v_distill(model_name=str(source), pca_dims=pca_dims, device=device)

    def save(tmp: Path) -> None:
        static.save_pretrained(str(tmp))
        (tmp / "README.md").unlink(missing_ok=True)  # the model card names the library's hub defaults, not this run

    _atomic_build(out, save)
    vectors = np.asarray(static.embedding)
    return DistillResult(out=out, vocabulary=int(vectors.shape[0]), dim=int(vectors.shape[1]),
                         seconds=round(time.perf_counter() - start, 1))
