"""Device and numeric-precision choice, resolved once before any work starts (docs/training.md, "Device,
precision, threads": what each option does; a device the machine lacks is an `ArgsimError`, one line, exit 2).

Readings chosen: `--precision auto` is fp32 on MPS (MPS autocast is incomplete); on the CPU it is fp32, bf16 on CPUs
with native bf16 only where `CPU_AUTO_BF16` is switched on. Inference (`inference_precision`)
casts the weights themselves (no autocast): auto is fp16 on CUDA (bf16 only when asked); an explicit bf16 on any
CPU is allowed (torch runs bf16 matmuls there; vectors differ from fp32 in the 2nd-3rd digit), fp16 on the CPU and
bf16 on MPS are refused as in training. Encoders that run no transformer stay fp32 and say so in their `precision`.
Under `accelerate launch` / `torchrun` every process uses the GPU of its LOCAL_RANK; a single process asked for
`cuda:N` pins CUDA_VISIBLE_DEVICES=N before CUDA starts (so the Trainer neither picks cuda:0 nor uses DataParallel).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from argsim import measure
from argsim.config import PRECISIONS, check_device_name
from argsim.errors import ArgsimError


def launched_processes() -> int:
    """WORLD_SIZE of an `accelerate launch` / `torchrun` run (1 for a plain process)."""
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def pin_cuda_index(device: str) -> None:
    """`cuda:N` in a single process: make GPU N the only visible one, before CUDA is initialised."""
    device = check_device_name(device)
    if not device.startswith("cuda:") or launched_processes() > 1 or "CUDA_VISIBLE_DEVICES" in os.environ:
        return
    import torch

    if not torch.cuda.is_initialized():
        os.environ["CUDA_VISIBLE_DEVICES"] = device[5:]


def resolve_device(device: str = "auto") -> str:
    """Return a concrete torch device string for `device` (`ArgsimError` when the machine lacks it)."""
    import torch

    device = check_device_name(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ArgsimError(f"device '{device}' requested but CUDA is not available on this machine")
        if ":" in device and os.environ.get("CUDA_VISIBLE_DEVICES") == device[5:]:
            return "cuda:0"  # pinned by pin_cuda_index: GPU N is the only visible one
        if ":" in device and int(device[5:]) >= torch.cuda.device_count():
            raise ArgsimError(f"device '{device}' requested but this machine has {torch.cuda.device_count()} "
                              "CUDA device(s)")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ArgsimError("device 'mps' requested but MPS is not available on this machine")
    return device


def resolve_precision(precision: str, device: str) -> str:
    """The precision actually used on the resolved `device`: fp32, fp16 or bf16."""
    import torch

    precision = (precision or "auto").lower()
    if precision not in PRECISIONS:
        raise ArgsimError(f"unknown precision '{precision}': choose one of {', '.join(PRECISIONS)}")
    cuda = device.startswith("cuda")
    bf16_ok = cuda and torch.cuda.is_bf16_supported()
    if precision == "auto":  # training: bf16 autocast where the GPU computes it (the CPU: `CPU_AUTO_BF16`)
        if cuda:
            return "bf16" if bf16_ok else "fp16"
        return "bf16" if device == "cpu" and CPU_AUTO_BF16 and cpu_bf16_native() else "fp32"
    if precision == "fp16" and not cuda:
        raise ArgsimError(f"precision fp16 needs a CUDA GPU (device is {device}): use bf16 or fp32")
    if precision == "bf16" and cuda and not bf16_ok:
        raise ArgsimError("precision bf16 is not supported by this GPU: use fp16 or fp32")
    if precision == "bf16" and device == "mps":
        raise ArgsimError("precision bf16 is not supported on MPS: use fp32")
    return precision


#: CPU flags of native bf16 matrix products: AVX512_BF16 and AMX (amx_bf16)
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
#: whether `--precision auto` is bf16 on a CPU with native bf16 (torch inference, training autocast). Off, though bf16
#: passed (docs/backends.md, "The default, and why"): a command gives the same figures on every CPU
CPU_AUTO_BF16 = False


def cpu_bf16_native(flags: Iterable[str] | None = None) -> bool:
    """Whether the CPU computes bf16 natively: one of `BF16_FLAGS` among `flags` (default: /proc/cpuinfo's, read by
    `argsim.measure.cpu_info`; where that lists none, torch's own CPU detection). Without them torch still
    runs bf16 (the same bf16 rounding of weights and activations) but forms the products through fp32 in software.

    Example:
        >>> cpu_bf16_native(["avx2", "avx512f", "avx512_bf16"]), cpu_bf16_native(["avx2", "avx512f"])
        (True, False)
    """
    if flags is None:
        if not (flags := measure.cpu_info()["flags"]):
            import torch

            return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    return any(f in BF16_FLAGS for f in flags)


def inference_precision(precision: str, device: str, backend: str = "torch") -> str:
    """The precision inference runs in on the resolved `device` with `backend` (see the module doc): fp32, fp16 or
    bf16; auto is training's (`resolve_precision`) but fp16 on CUDA and fp32 in an exported ONNX Runtime / OpenVINO
    graph."""
    if (precision or "auto").lower() == "auto" and (device.startswith("cuda") or backend != "torch"):
        return "fp16" if device.startswith("cuda") else "fp32"
    return resolve_precision(precision, device)


def cast_for_inference(module, precision: str):
    """`module` with its floating-point weights in `precision` (a resolved one), in eval mode; returned for
    chaining."""
    if precision != "fp32":
        import torch

        module = module.to({"fp16": torch.float16, "bf16": torch.bfloat16}[precision])
    return module.eval()
