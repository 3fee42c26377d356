"""The finish step's transforms: ToTensor and Normalize (scale, normalize, cast and lay out the
sample into the batch), GaussianNoise, and the erasing transforms (Cutout, RandomErasing,
GridMask), all applied where the finished sample is written."""
from __future__ import annotations

from typing import Sequence

from . import _forms
from .base import Transform


class GridMask(Transform):
    """DALI's ``grid_mask``: zeroes a grid of squares. Tiles of side ``tile`` pixels, rotated by
    ``angle`` radians about the top-left pixel and shifted by ``shift_x``, ``shift_y`` pixels; in
    each tile a square of side ``ratio * tile`` is black. ``tile``, ``angle``, ``shift_x`` and
    ``shift_y`` are each a number (fixed, as DALI's arguments) or a ``(min, max)`` range drawn
    uniformly per sample. Before ``Normalize`` the pixels become 0; after it the output is 0
    there (as :class:`Cutout`). Runs in the finish step; put it after the geometric and colour
    transforms."""

    def __init__(self, tile=100, ratio: float = 0.5, angle=0.0, shift_x=0.0, shift_y=0.0):
        owner = "GridMask"
        if _forms.is_int(tile):
            self.tile = (int(tile), int(tile))
        elif isinstance(tile, Sequence) and len(tile) == 2 and all(_forms.is_int(v) for v in tile):
            self.tile = (int(tile[0]), int(tile[1]))
        else:
            raise TypeError(f"{owner}: tile must be an int or a (min, max) pair of ints, got {tile!r}")
        self.ratio = ratio
        self.angle = _forms.min_max(owner, "angle", angle)
        self.shift_x = _forms.min_max(owner, "shift_x", shift_x)
        self.shift_y = _forms.min_max(owner, "shift_y", shift_y)
        self._spec()

    def _fields(self):
        return dict(tile=self.tile, ratio=self.ratio, angle=self.angle, shift_x=self.shift_x, shift_y=self.shift_y)


class GaussianNoise(Transform):
    """torchvision's ``GaussianNoise`` on the float tensor: ``x + mean + sigma * N(0, 1)`` per
    element, clamped to [0, 1] when ``clip``. Put it after ``ToTensor`` (before ``Normalize`` it
    acts on [0, 1] values, after it on normalized ones, as torchvision) and before any erasing.
    The noise comes from the loader's seed (per sample and element), not torch's generator. Runs
    in the finish step; needs a float ``dtype``."""

    def __init__(self, mean: float = 0.0, sigma: float = 0.1, clip: bool = True):
        self.mean, self.sigma, self.clip = mean, sigma, bool(clip)
        self._spec()

    def _fields(self):
        return dict(mean=self.mean, sigma=self.sigma, clip=self.clip)


class Cutout(Transform):
    """Cutout (DeVries and Taylor): ``n_holes`` squares of side ``length``, centres drawn
    uniformly over the image, clipped at its edges, zeroed, as the authors' ``Cutout`` class that
    seed pipelines carry. After ``Normalize`` (where that class usually sits) the output is 0
    there; before it, the pixels are 0. It runs in the loader's finish step (on the GPU, inside
    the kernel that writes the sample); put it after the geometric and colour transforms."""

    def __init__(self, n_holes: int = 1, length: int = 16):
        self.n_holes, self.length = n_holes, length
        self._spec()

    def _fields(self):
        return dict(n_holes=self.n_holes, length=self.length)


class RandomErasing(Transform):
    """torchvision's ``RandomErasing``: with probability ``p``, a rectangle of area fraction in
    ``scale`` and aspect ratio in ``ratio`` (10 tries, else nothing), set to ``value`` (a number
    or one per channel) in the scale of the sample at that point of the list: after
    ``ToTensor``, values in [0, 1] (normalized values after ``Normalize``); before it, pixel
    values 0-255. ``value="random"``: a standard normal per pixel and channel (after ``ToTensor``;
    normalized too when a ``Normalize`` follows), drawn from the loader's seed. Runs in the
    loader's finish step; put it after the geometric and colour transforms."""

    def __init__(self, p: float = 0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace: bool = False):
        owner = "RandomErasing"
        self.p = p
        self.scale = _forms.pair(owner, "scale", scale)
        self.ratio = _forms.pair(owner, "ratio", ratio)
        if isinstance(value, str) and value != "random":
            raise ValueError(f"{owner}: value must be a number, one per channel, or 'random', got {value!r}")
        self.value = value
        self._random = value == "random"
        self._value = (0.0, 0.0, 0.0) if self._random else _forms.one_or_three(owner, "value", value)
        self.inplace = inplace
        self._spec()

    def _fields(self):
        return self._fields_at(True)

    def _fields_at(self, tensor_scale: bool) -> dict:
        """Its fields where it stands in the list: on the tensor (after ToTensor or Normalize) or
        on the uint8 pixels."""
        return dict(p=self.p, scale=self.scale, ratio=self.ratio, value=self._value, tensor_scale=tensor_scale,
                    random_value=self._random)


class ToTensor(Transform):
    """torchvision's ``ToTensor``: from here on the sample is a float CHW tensor in [0, 1]. The
    loader's output already is (``dtype="float32"`` or ``"float16"``, ``layout="NCHW"``), so this
    only marks the place, for seed pipelines that have it; it contradicts ``dtype="uint8"``."""

    random = False

    def _fields(self):
        return None


class Normalize(Transform):
    """``(x - mean) / std`` per channel on values scaled to [0, 1], as torchvision."""

    random = False

    def __init__(self, mean, std, inplace: bool = False):
        self.mean = _forms.one_or_three("Normalize", "mean", mean)
        self.std = _forms.one_or_three("Normalize", "std", std)
        self.inplace = inplace
        self._spec()

    def _fields(self):
        return dict(mean=self.mean, std=self.std)
