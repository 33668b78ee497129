"""Vector helpers shared by every layer (pure NumPy, no argsim imports)."""

from __future__ import annotations

import numpy as np

EPS = 1e-12


def l2_normalize(x: np.ndarray, axis: int = -1, eps: float = EPS) -> np.ndarray:
    """`x` scaled to unit L2 norm along `axis`; rows with norm below `eps` are divided by `eps` (stay ~0)."""
    x = np.asarray(x)
    return x / np.maximum(np.linalg.norm(x, axis=axis, keepdims=True), eps)
