"""Batches from the C++ core to torch tensors (zero-copy, through DLPack) or NumPy arrays."""
from __future__ import annotations

from typing import Any

_torch: Any = None
_torch_checked = False


def torch_module() -> Any:
    """torch if it can be imported, else None (checked once)."""
    global _torch, _torch_checked
    if not _torch_checked:
        _torch_checked = True
        try:
            import torch  # noqa: PLC0415

            _torch = torch
        except ImportError:
            _torch = None
    return _torch


def resolve_output(output: str) -> str:
    if output not in ("auto", "torch", "numpy"):
        raise ValueError(f"output must be 'auto', 'torch' or 'numpy', got {output!r}")
    if output == "auto":
        return "torch" if torch_module() is not None else "numpy"
    if output == "torch" and torch_module() is None:
        raise ImportError("output='torch' needs PyTorch; install torch or pass output='numpy'")
    return output


def to_array(t: Any, output: str) -> Any:
    """A sluice DLPackTensor as a torch tensor or a NumPy array sharing its memory."""
    if output == "torch":
        return torch_module().from_dlpack(t)
    import numpy as np  # noqa: PLC0415

    return np.from_dlpack(t)
