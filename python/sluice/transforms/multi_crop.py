"""FiveCrop and TenCrop: torchvision's test-time crops, as batch transforms. The loader crops
each batch it hands out in Python (torch or NumPy slicing) and stacks the crops: ``N x 5 x C x
h x w`` (``N x 10 x ...`` for TenCrop; ``N x 5 x h x w x C`` with ``layout="NHWC"``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from . import _forms
from .batch import BatchTransform


def _crop_size(owner: str, size: Any) -> tuple[int, int]:
    """torchvision's size argument (an int, or a sequence of one or two ints) as (h, w)."""
    if _forms.is_int(size):
        values = (size, size)
    elif isinstance(size, Sequence) and not isinstance(size, (str, bytes)) and len(size) in (1, 2):
        values = (size[0], size[0]) if len(size) == 1 else (size[0], size[1])
    else:
        raise ValueError(f"{owner}: size must be an int or a sequence (h, w), got {size!r}")
    if not all(_forms.is_int(v) for v in values):
        raise TypeError(f"{owner}: size must hold ints, got {size!r}")
    if not all(v > 0 for v in values):
        raise ValueError(f"{owner}: size must be positive, got {size!r}")
    return int(values[0]), int(values[1])


def crop_windows(height: int, width: int, h: int, w: int) -> list[tuple[int, int]]:
    """(top, left) of torchvision's five_crop windows of ``h x w`` in an image of ``height x
    width``: top-left, top-right, bottom-left, bottom-right, center (center_crop's rounding)."""
    top, left = int(round((height - h) / 2.0)), int(round((width - w) / 2.0))
    return [(0, 0), (0, width - w), (height - h, 0), (height - h, width - w), (top, left)]


class FiveCrop(BatchTransform):
    """torchvision's ``FiveCrop(size)`` on each batch the loader hands out: the four corner crops
    and the center crop of ``size`` (an int: square; or ``(h, w)``) of every image, in
    torchvision's order (top-left, top-right, bottom-left, bottom-right, center), stacked as
    ``N x 5 x C x h x w`` (``N x 5 x h x w x C`` with ``layout="NHWC"``), what ``torch.stack`` of
    torchvision's tuple gives; labels are unchanged. Images of varying size (batches that would be
    lists) are accepted: the crops all have ``size``. A crop larger than an image raises
    ValueError naming the sizes (and the file), when the loader is made if the transforms before
    end in a fixed size, else at the batch.

    It is the first batch transform of the list; ``ToTensor`` and ``Normalize`` (per pixel, so they
    commute with cropping) may follow it and are applied before it, to each sample; then only
    :class:`BatchLambda` (which gets the stacked crops). ``loader.output_size`` is ``(h, w)``."""

    _n_crops = 5
    _stacks_crops = True  # its batches gain a crop axis (refused inside RandomChoice)

    def __init__(self, size):
        self.size = _crop_size(type(self).__name__, size)

    def _flip_axis(self) -> int | None:
        return None  # TenCrop: the image axis its second five crops are flipped along

    def check_fits(self, height: int, width: int, what: Callable[[], str]) -> None:
        """ValueError when ``size`` is larger than an image of ``height x width`` (``what()``
        names it)."""
        h, w = self.size
        if h > height or w > width:
            raise ValueError(f"{self._name()}: requested crop size {(h, w)} is bigger than input size "
                             f"{(height, width)} of {what()}")

    def crop_batch(self, images: Any, layout: str, as_torch: bool, where: Callable[[int], str],
                   empty: Callable[[tuple], Any]) -> Any:
        """The stacked crops of a batch: a tensor or array ``N x C x H x W`` (NHWC), or a list of
        ``C x H x W`` (HWC) images. ``where(i)`` names the batch's i-th sample for an error;
        ``empty(shape)`` makes the result of an empty list batch."""
        nhwc = layout == "NHWC"
        if isinstance(images, list):
            if not images:
                h, w = self.size
                return empty((0, self._n_crops) + ((h, w, 3) if nhwc else (3, h, w)))
            parts = [self._crops(x[None], nhwc, as_torch, lambda _, i=i: where(i)) for i, x in enumerate(images)]
            return _cat(parts, as_torch)
        return self._crops(images, nhwc, as_torch, where)

    def _crops(self, x: Any, nhwc: bool, as_torch: bool, where: Callable[[int], str]) -> Any:
        """``x``'s (a batch of one size) crops, stacked on a new axis 1."""
        rows, cols = (1, 2) if nhwc else (-2, -1)
        height, width = int(x.shape[rows]), int(x.shape[cols])
        self.check_fits(height, width, lambda: where(0))
        h, w = self.size
        sources = [x]
        axis = self._flip_axis()
        if axis is not None:
            sources.append(x.flip((rows, cols)[axis]) if as_torch else x[_flip(nhwc, axis)])
        crops = [s[_window(nhwc, top, left, h, w)] for s in sources for top, left in crop_windows(height, width, h, w)]
        if as_torch:
            import torch  # noqa: PLC0415
            return torch.stack(crops, 1)
        import numpy as np  # noqa: PLC0415
        return np.stack(crops, 1)


class TenCrop(FiveCrop):
    """torchvision's ``TenCrop(size, vertical_flip=False)`` on each batch: :class:`FiveCrop`'s five
    crops of every image, then those of the image flipped horizontally (vertically with
    ``vertical_flip=True``), stacked as ``N x 10 x C x h x w`` (``N x 10 x h x w x C`` with
    ``layout="NHWC"``). Where it stands, sizes and errors: as :class:`FiveCrop`."""

    _n_crops = 10

    def __init__(self, size, vertical_flip: bool = False):
        super().__init__(size)
        self.vertical_flip = bool(vertical_flip)

    def _flip_axis(self) -> int | None:
        return 0 if self.vertical_flip else 1  # rows, or columns


def _window(nhwc: bool, top: int, left: int, h: int, w: int) -> tuple:
    rows, cols = slice(top, top + h), slice(left, left + w)
    return (slice(None), rows, cols, slice(None)) if nhwc else (Ellipsis, rows, cols)


def _flip(nhwc: bool, axis: int) -> tuple:
    """The index that reverses a batch's rows (axis 0) or columns (axis 1)."""
    index = [slice(None)] * 2
    index[axis] = slice(None, None, -1)
    return (slice(None), *index, slice(None)) if nhwc else (Ellipsis, *index)


def _cat(parts: list, as_torch: bool) -> Any:
    if as_torch:
        import torch  # noqa: PLC0415
        return torch.cat(parts, 0)
    import numpy as np  # noqa: PLC0415
    return np.concatenate(parts, 0)
