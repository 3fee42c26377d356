"""One epoch of a Loader, as an iterator: the C++ core's batches as torch tensors, NumPy arrays or
JAX arrays on the loader's device, with its batch transforms applied."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._convert import jax_device, stack, to_array, to_device
from ._profiling import record


class EpochIterator:
    """The batches of the epoch a ``Loader.__iter__`` started (``generation``): ``length`` of them
    (fewer than ``len(loader)`` after a resume). ``schedule`` is part of the key of the batch
    transforms' draws (see ``Loader.__iter__``)."""

    def __init__(self, loader: Any, generation: int, length: int, schedule: int = 0):
        self._loader = loader
        self._generation = generation
        self._length = length
        self._schedule = schedule
        self._done = False

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> "EpochIterator":
        return self

    def __next__(self) -> tuple[Any, ...]:
        with record("sluice.next"):
            return self._next()

    def _next(self) -> tuple[Any, ...]:
        loader = self._loader
        with loader._driving():  # threads sharing this iterator take turns, one batch each
            if self._done:
                raise StopIteration
            if self._generation != loader._generation:
                raise RuntimeError("this iterator was invalidated: a newer iter(loader) restarted the loader")
            item = loader._core.next()
            if item is None:
                self._done = True
                raise StopIteration
            # epoch and index: the batch's epoch and number in the epoch's schedule (a resume with the
            # same settings continues the numbers), part of the key of the batch transforms' draws.
            images, labels, indices, epoch, index, padding = item
            loader._last_indices = np.asarray(indices, dtype=np.int64)
        out = loader._output
        # output="jax": the batch transforms run in NumPy (on the CPU: the Loader refuses them on
        # the GPU), and JAX takes their result.
        staged = out == "jax" and bool(loader._batch.transforms)
        images, device = self._images(images, "numpy" if staged else out)
        labels = to_array(labels, "numpy" if staged else out)
        if loader._cuda:
            # torch: from its cached pinned memory, queued on the current stream: a pageable copy
            # would wait for the stream, and under DDP the stream can hold an NCCL kernel that
            # waits for another rank (seen as part of a two-rank hang on two H200s).
            labels = to_device(labels, device, out)
        if loader._batch.transforms:  # lists (variable size) are refused when made, but for FiveCrop
            key = dict(seed=loader._seed, epoch=epoch, index=index, rank=loader.rank, schedule=self._schedule)
            indices = loader._last_indices
            images, labels = loader._batch.apply(images, labels, key, loader._image_size, loader._layout,
                                                 out == "torch", device=device,
                                                 where=lambda i: repr(loader.samples[int(indices[i])][0]))
            if staged:
                images, labels = to_array(images, out), to_array(labels, out)
        if not loader._pad:
            return images, labels
        return images, labels, self._valid(padding, device)

    def _images(self, images: Any, out: str) -> tuple[Any, Any]:
        """The batch's images (a tensor, or a list for variable sizes unless they share one shape,
        as DataLoader's collate stacks them) as `out` (the loader's output, or NumPy), on its device
        (uploaded when the list ran on the CPU), and that device (see _device_of)."""
        loader = self._loader
        if isinstance(images, list):
            images = [to_array(t, out) for t in images]
            if loader._upload:
                target = self._target(out)
                images = [to_device(t, target, out) for t in images]
            if images and all(t.shape == images[0].shape for t in images):
                images = stack(images, out)
            return images, self._device_of(images, out)
        images = to_array(images, out)
        if loader._upload:
            images = to_device(images, self._target(out), out)
        return images, self._device_of(images, out)

    def _device_of(self, images: Any, out: str) -> Any:
        """The device of a batch's images as `out` (None for NumPy and for JAX on the CPU), the
        loader's for an empty list."""
        if out == "numpy" or (out == "jax" and not self._loader._cuda):
            return None
        if isinstance(images, list):
            if not images:
                return self._target(out)
            images = images[0]
        return images.device

    def _target(self, out: str) -> Any:
        """The loader's device as a torch device, or JAX's."""
        if out == "jax":
            return jax_device(self._loader._device)
        import torch
        return torch.device(self._loader._device)

    def _valid(self, padding: bytes, device: Any) -> Any:
        """last_batch="pad": per sample, False for the repeats that fill the last batch."""
        valid = np.frombuffer(padding, dtype=np.uint8) == 0
        if self._loader._output == "jax":
            return to_device(valid, device, "jax") if device is not None else to_array(valid, "jax")
        if self._loader._output != "torch":
            return valid
        import torch
        valid = torch.from_numpy(valid)
        if self._loader._cuda:
            valid = valid.pin_memory().to(device, non_blocking=True)
        return valid
