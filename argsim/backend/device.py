"""Device choice: `auto` picks CUDA, then MPS, then CPU."""

from __future__ import annotations

from argsim.errors import ArgsimError

DEVICES = ("auto", "cpu", "cuda", "mps")


def resolve_device(device: str = "auto") -> str:
    """Return a concrete torch device string for `device`."""
    import torch

    device = (device or "auto").lower()
    if device not in DEVICES and not device.startswith("cuda:"):
        raise ArgsimError(f"unknown device '{device}': choose one of {', '.join(DEVICES)}")
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ArgsimError("device 'cuda' requested but CUDA is not available on this machine")
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ArgsimError("device 'mps' requested but MPS is not available on this machine")
    return device


def uses_half_precision(device: str) -> bool:
    """Half precision on GPUs (CUDA); CPU and MPS stay in float32."""
    return device.startswith("cuda")
