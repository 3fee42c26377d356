"""Batches from the C++ core to torch tensors, NumPy arrays or JAX arrays (zero-copy, through
DLPack; JAX copies a buffer that is not 64-byte aligned on the CPU, and int64 labels become its
default int32 unless jax_enable_x64 is set)."""
from __future__ import annotations

import functools
import importlib
from typing import Any


@functools.cache
def _optional(name: str) -> Any:
    """The module `name` if it can be imported, else None (checked once)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def torch_module() -> Any:
    return _optional("torch")


def jax_module() -> Any:
    return _optional("jax") if _optional("jax.dlpack") is not None else None


def resolve_output(output: str, cuda: bool = False, batch_transforms: bool = False) -> str:
    """The output kind for the Loader's `output` argument; ImportError when its package is missing,
    ValueError for what it cannot take on the GPU."""
    if output not in ("auto", "torch", "numpy", "jax"):
        raise ValueError(f"output must be 'auto', 'torch', 'numpy' or 'jax', got {output!r}")
    if output == "auto":
        output = "torch" if torch_module() is not None else "numpy"
    if output == "torch" and torch_module() is None:
        raise ImportError("output='torch' needs PyTorch; install torch or pass output='numpy'")
    if output == "jax" and jax_module() is None:
        raise ImportError("output='jax' needs JAX; install jax (pip install \"jax[cpu]\") or pass output='numpy'")
    if cuda and output == "numpy":
        raise ValueError("device='cuda' yields torch CUDA tensors (or JAX arrays with output='jax'): install "
                         "torch, or use device='cpu' for NumPy output")
    if cuda and output == "jax" and batch_transforms:
        raise ValueError("output='jax' runs the batch transforms (BatchLambda, MixUp, CutMix, RandomChoice) in "
                         "NumPy on the CPU: use device='cpu', or apply them in JAX to the GPU batches")
    return output


def to_array(t: Any, output: str) -> Any:
    """A sluice DLPackTensor (or a NumPy array) as a torch tensor, a NumPy array or a jax.Array sharing
    its memory (JAX: unless it must copy, see above); the jax.Array keeps the batch's buffer alive."""
    if output == "torch":
        return torch_module().from_dlpack(t)
    if output == "jax":
        return jax_module().dlpack.from_dlpack(t)
    import numpy as np  # noqa: PLC0415

    return np.from_dlpack(t)


def jax_device(name: str) -> Any:
    """The JAX device of a device name ("cuda", "cuda:1"): the GPU of that CUDA ordinal."""
    index = int(name.partition(":")[2] or 0)
    for d in jax_module().local_devices(backend="gpu"):
        if d.local_hardware_id == index:
            return d
    raise ValueError(f"device={name!r}: JAX has no GPU {index} (jax.local_devices(backend='gpu'))")


def to_device(x: Any, device: Any, output: str) -> Any:
    """A host batch part (labels, the valid mask, an uploaded image) on `device` (torch's or JAX's)."""
    if output == "jax":
        return jax_module().device_put(x, device)
    return x.pin_memory().to(device, non_blocking=True)


def stack(images: list, output: str) -> Any:
    """Images of one shape (a non-empty list) as one batch (a copy, as DataLoader's collate)."""
    if output == "torch":
        return images[0].unsqueeze(0) if len(images) == 1 else torch_module().stack(images)
    if output == "jax":
        return jax_module().numpy.stack(images)
    import numpy as np  # noqa: PLC0415

    return np.stack(images)
