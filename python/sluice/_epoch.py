"""One epoch of a Loader, as an iterator: the C++ core's batches as torch tensors or NumPy arrays
on the loader's device, with its batch transforms applied."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._convert import to_array


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
        images, device = self._images(images)
        labels = to_array(labels, loader._output)
        if loader._cuda:
            # From torch's cached pinned memory, queued on the current stream: a pageable copy
            # would wait for the stream, and under DDP the stream can hold an NCCL kernel that
            # waits for another rank (seen as part of a two-rank hang on two H200s).
            labels = labels.pin_memory().to(device, non_blocking=True)
        if loader._batch.transforms:  # lists (variable size) are refused when the loader is made
            key = dict(seed=loader._seed, epoch=epoch, index=index, rank=loader.rank, schedule=self._schedule)
            images, labels = loader._batch.apply(images, labels, key, loader._image_size, loader._layout,
                                                 loader._output == "torch")
        if not loader._pad:
            return images, labels
        return images, labels, self._valid(padding, device)

    def _images(self, images: Any) -> tuple[Any, Any]:
        """The batch's images (a tensor, or a list for variable sizes unless they share one shape,
        as DataLoader's collate stacks them) as the loader's output, on its device (uploaded when
        the list ran on the CPU), and that device (None for NumPy)."""
        loader = self._loader
        out = loader._output
        if isinstance(images, list):
            images = [to_array(t, out) for t in images]
            if loader._upload:
                images = [t.pin_memory().to(loader._device, non_blocking=True) for t in images]
            if images and all(t.shape == images[0].shape for t in images):
                if out != "torch":
                    return np.stack(images), None
                import torch
                return (images[0].unsqueeze(0) if len(images) == 1 else torch.stack(images)), images[0].device
            if out != "torch":
                return images, None
            import torch
            return images, images[0].device if images else torch.device(loader._device)
        images = to_array(images, out)
        if loader._upload:
            images = images.pin_memory().to(loader._device, non_blocking=True)
        return images, images.device if out == "torch" else None

    def _valid(self, padding: bytes, device: Any) -> Any:
        """last_batch="pad": per sample, False for the repeats that fill the last batch."""
        valid = np.frombuffer(padding, dtype=np.uint8) == 0
        if self._loader._output != "torch":
            return valid
        import torch
        valid = torch.from_numpy(valid)
        if self._loader._cuda:
            valid = valid.pin_memory().to(device, non_blocking=True)
        return valid
