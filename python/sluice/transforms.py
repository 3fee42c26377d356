"""Transforms with torchvision.transforms.v2's names, arguments and semantics.

A list of these is compiled by :class:`sluice.Loader` into one plan per sample (the crop window is
drawn from the file header, only that region is decoded, and the rest runs as one resampling pass
plus one finish pass). Nothing here touches pixels in Python.

Random parameters come from ``(seed, epoch, sample index, position in the list)``, so a sample
gets the same augmentation whatever the thread count, batch size or device.

The batch transforms at the end of a list (:class:`BatchLambda`, :class:`MixUp`, :class:`CutMix`,
:class:`RandomChoice`) are the exception: the loader applies them in Python (torch or NumPy ops)
to each whole batch, with parameters from ``(seed, epoch, batch index, position in the list)``.
"""
from __future__ import annotations

import enum
import math
import numbers
import weakref
from typing import Any, Iterable, Sequence

from . import _core

_C = _core.transforms

__all__ = [
    "InterpolationMode",
    "Transform",
    "Compose",
    "RandomResizedCrop",
    "Resize",
    "CenterCrop",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "Pad",
    "RandomRotation",
    "RandomAffine",
    "Cutout",
    "RandomErasing",
    "ColorJitter",
    "RandomGrayscale",
    "GaussianBlur",
    "RandAugment",
    "TrivialAugmentWide",
    "GridMask",
    "GaussianNoise",
    "ToTensor",
    "Normalize",
    "Lambda",
    "BatchTransform",
    "BatchLambda",
    "MixUp",
    "CutMix",
    "RandomChoice",
]


class InterpolationMode(enum.Enum):
    """The interpolation modes sluice implements (torchvision's names and values)."""

    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


def _interpolation(owner: str, value: Any) -> Any:
    # Accepts sluice's or torchvision's InterpolationMode, or a string.
    name = getattr(value, "value", value)
    if isinstance(name, str) and name.lower() == "bilinear":
        return _C.Interpolation.BILINEAR
    if isinstance(name, str) and name.lower() == "bicubic":
        return _C.Interpolation.BICUBIC
    raise ValueError(f"{owner}: interpolation must be BILINEAR or BICUBIC, got {value!r}")


def _warp_interpolation(owner: str, value: Any) -> Any:
    name = getattr(value, "value", value)
    if isinstance(name, str) and name.lower() == "nearest":
        return _C.Interpolation.NEAREST
    if isinstance(name, str) and name.lower() == "bilinear":
        return _C.Interpolation.BILINEAR
    raise ValueError(f"{owner}: interpolation must be NEAREST or BILINEAR, got {value!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _size(owner: str, size: Any, name: str = "size") -> tuple[int, int]:
    """torchvision's _setup_size: int -> (s, s); [s] -> (s, s); (h, w) -> (h, w)."""
    if _is_int(size):
        h = w = int(size)
    elif isinstance(size, Sequence) and len(size) in (1, 2) and all(_is_int(s) for s in size):
        h, w = (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))
    else:
        raise TypeError(
            f"{owner}: {name} must be an int or a sequence of one or two ints, got {size!r}")
    if h <= 0 or w <= 0:
        raise ValueError(f"{owner}: {name} must be positive, got {size!r}")
    return h, w


def _pair(owner: str, name: str, value: Any) -> tuple[float, float]:
    if not (isinstance(value, Sequence) and len(value) == 2
            and all(isinstance(v, numbers.Real) for v in value)):
        raise TypeError(f"{owner}: {name} must be a sequence of two numbers, got {value!r}")
    a, b = float(value[0]), float(value[1])
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"{owner}: {name} must be finite, got {value!r}")
    return a, b


class Transform:
    """Base class: a transform is a description that compiles to a C++ spec."""

    def _spec(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


class Compose(Transform):
    """A sequence of transforms (accepted wherever a list is)."""

    def __init__(self, transforms: Iterable[Transform]):
        self.transforms = list(transforms)
        for i, t in enumerate(self.transforms):
            if not isinstance(t, Transform):
                raise TypeError(f"Compose: item {i} is {t!r}, not a sluice transform")

    def _spec(self):  # pragma: no cover - flattened by the loader
        raise TypeError("Compose is flattened by the loader")


class RandomResizedCrop(Transform):
    """Crop a random area/aspect-ratio window and resize it to ``size`` (antialiased)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias: bool = True):
        owner = "RandomResizedCrop"
        self.size = _size(owner, size)
        self.scale = _pair(owner, "scale", scale)
        self.ratio = _pair(owner, "ratio", ratio)
        if not (0 < self.scale[0] <= self.scale[1]):
            raise ValueError(f"{owner}: scale must be (min, max) with 0 < min <= max, got {scale!r}")
        if not (0 < self.ratio[0] <= self.ratio[1]):
            raise ValueError(f"{owner}: ratio must be (min, max) with 0 < min <= max, got {ratio!r}")
        self.interpolation = interpolation
        self._interp = _interpolation(owner, interpolation)
        self.antialias = bool(antialias)

    def _spec(self):
        s = _C.RandomResizedCrop()
        s.height, s.width = self.size
        s.scale, s.ratio = self.scale, self.ratio
        s.interpolation, s.antialias = self._interp, self.antialias
        return s


class Resize(Transform):
    """Resize to ``(h, w)``, or, given one int, so that the shorter edge has that length."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias: bool = True):
        owner = "Resize"
        if _is_int(size) or (isinstance(size, Sequence) and len(size) == 1):
            self.size = [_size(owner, size)[0]]
        else:
            self.size = list(_size(owner, size))
        if max_size is not None:
            if not _is_int(max_size) or max_size <= 0:
                raise ValueError(f"{owner}: max_size must be a positive int, got {max_size!r}")
            if len(self.size) != 1:
                raise ValueError(f"{owner}: max_size is only allowed when size is a single int, "
                                 f"got size={size!r}")
            if max_size <= self.size[0]:
                raise ValueError(f"{owner}: max_size = {max_size} must be strictly greater than the "
                                 f"requested size for the smaller edge = {self.size[0]}")
        self.max_size = max_size
        self.interpolation = interpolation
        self._interp = _interpolation(owner, interpolation)
        self.antialias = bool(antialias)

    def _spec(self):
        s = _C.Resize()
        s.height = self.size[0]
        s.width = self.size[1] if len(self.size) == 2 else 0
        s.max_size = self.max_size or 0
        s.interpolation, s.antialias = self._interp, self.antialias
        return s


class CenterCrop(Transform):
    """Crop the centre (zero-padded when the image is smaller than ``size``)."""

    def __init__(self, size):
        self.size = _size("CenterCrop", size)

    def _spec(self):
        s = _C.CenterCrop()
        s.height, s.width = self.size
        return s


def _fill(owner: str, fill: Any) -> tuple[int, int, int]:
    if _is_int(fill) or isinstance(fill, numbers.Real):
        vals = [fill] * 3
    elif isinstance(fill, Sequence) and len(fill) in (1, 3):
        vals = list(fill) * (3 if len(fill) == 1 else 1)
    else:
        raise TypeError(f"{owner}: fill must be a number or a sequence of 1 or 3 numbers, got {fill!r}")
    out = []
    for v in vals:
        if not isinstance(v, numbers.Real) or not 0 <= v <= 255:
            raise ValueError(f"{owner}: fill values must be in [0, 255] (pixel values), got {fill!r}")
        out.append(int(round(v)))
    return tuple(out)  # type: ignore[return-value]


def _padding(owner: str, padding: Any, padding_mode: str) -> tuple[int, int, int, int]:
    """torchvision's padding argument as (left, top, right, bottom): an int for every side,
    (left/right, top/bottom), or (left, top, right, bottom)."""
    if _is_int(padding):
        pad = (int(padding),) * 4
    elif isinstance(padding, Sequence) and len(padding) in (1, 2, 4) and all(_is_int(p) for p in padding):
        p = [int(v) for v in padding]
        pad = (p[0],) * 4 if len(p) == 1 else ((p[0], p[1], p[0], p[1]) if len(p) == 2 else tuple(p))
    else:
        raise TypeError(f"{owner}: padding must be an int or a sequence of 1, 2 or 4 ints, got {padding!r}")
    if any(v < 0 for v in pad):
        raise ValueError(f"{owner}: padding must be non-negative, got {padding!r}")
    if padding_mode != "constant":
        raise NotImplementedError(f"{owner}: padding_mode={padding_mode!r} is not supported; only 'constant'")
    return pad  # type: ignore[return-value]


def _probability(owner: str, p: Any) -> float:
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise TypeError(f"{owner}: p must be a number, got {p!r}")
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{owner}: p must be in [0, 1], got {p!r}")
    return float(p)


class RandomCrop(Transform):
    """Crop a random ``size`` window, after optional constant padding."""

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0,
                 padding_mode: str = "constant"):
        owner = "RandomCrop"
        self.size = _size(owner, size)
        self.padding = padding
        self._pad = _padding(owner, 0 if padding is None else padding, padding_mode)
        self.pad_if_needed = bool(pad_if_needed)
        self.fill = fill
        self._fill = _fill(owner, fill)
        self.padding_mode = padding_mode

    def _spec(self):
        s = _C.RandomCrop()
        s.height, s.width = self.size
        s.padding = self._pad
        s.pad_if_needed = self.pad_if_needed
        s.fill = self._fill
        return s


class RandomHorizontalFlip(Transform):
    """Mirror left-right with probability ``p``."""

    def __init__(self, p: float = 0.5):
        self.p = _probability("RandomHorizontalFlip", p)

    def _spec(self):
        s = _C.RandomHorizontalFlip()
        s.p = self.p
        return s


class RandomVerticalFlip(Transform):
    """Mirror top-bottom with probability ``p``."""

    def __init__(self, p: float = 0.5):
        self.p = _probability("RandomVerticalFlip", p)

    def _spec(self):
        s = _C.RandomVerticalFlip()
        s.p = self.p
        return s


class Pad(Transform):
    """Pad every side with a constant ``fill`` (torchvision's ``Pad``; ``padding`` as there: an
    int, (left/right, top/bottom) or (left, top, right, bottom)). Only ``padding_mode="constant"``."""

    def __init__(self, padding, fill=0, padding_mode: str = "constant"):
        self.padding = padding
        self._pad = _padding("Pad", padding, padding_mode)
        self.fill = fill
        self._fill = _fill("Pad", fill)
        self.padding_mode = padding_mode

    def _spec(self):
        s = _C.Pad()
        s.padding = self._pad
        s.fill = self._fill
        return s


def _symmetric_range(owner: str, name: str, value: Any, lengths: tuple[int, ...] = (2,)) -> tuple[float, ...]:
    """torchvision's _setup_number_or_seq: a number v >= 0 gives (-v, v); else a sequence of one
    of the allowed lengths."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{owner}: if {name} is a single number, it must be non-negative, got {value!r}")
        vals = (-float(value), float(value))
    elif (isinstance(value, Sequence) and len(value) in lengths
          and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)):
        vals = tuple(float(v) for v in value)
    else:
        raise TypeError(f"{owner}: {name} must be a number or a sequence of "
                        f"{' or '.join(map(str, lengths))} numbers, got {value!r}")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"{owner}: {name} must be finite, got {value!r}")
    for lo, hi in zip(vals[0::2], vals[1::2]):
        if lo > hi:
            raise ValueError(f"{owner}: {name} must be (min, max) with min <= max, got {value!r}")
    return vals


def _center(owner: str, center: Any) -> tuple[float, float] | None:
    if center is None:
        return None
    return _pair(owner, "center", center)


class RandomRotation(Transform):
    """Rotate by an angle drawn uniformly from ``degrees`` (a number d gives (-d, d)),
    counter-clockwise, about the centre or ``center`` (x, y in pixels), as torchvision's
    ``RandomRotation``: the output keeps the input's size (``expand=False``; ``expand=True`` would
    change the size per sample and is refused), and points from outside the image get ``fill``.
    ``interpolation`` is NEAREST (torchvision's default) or BILINEAR.

    Runs in the same resampling pass as the resizes before it and the crops and flips after it."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand: bool = False,
                 center=None, fill=0):
        owner = "RandomRotation"
        self.degrees = _symmetric_range(owner, "degrees", degrees)
        self.interpolation = interpolation
        self._interp = _warp_interpolation(owner, interpolation)
        if expand:
            raise ValueError(f"{owner}: expand=True is not supported (the output size would change "
                             "per sample); use expand=False and a larger Resize before it")
        self.expand = False
        self.center = _center(owner, center)
        self.fill = fill
        self._fill = _fill(owner, fill)

    def _spec(self):
        s = _C.RandomRotation()
        s.degrees = self.degrees
        s.interpolation = self._interp
        s.fill = self._fill
        if self.center is not None:
            s.has_center, s.center = True, self.center
        return s


class RandomAffine(Transform):
    """torchvision's ``RandomAffine``: a rotation from ``degrees``, a translation of up to
    ``translate = (a, b)`` times the width and height (whole pixels), a scale from
    ``scale = (min, max)``, and shears from ``shear`` (a number s gives an x shear in (-s, s); two
    numbers an x range; four numbers x and y ranges), about the centre or ``center``. The output
    keeps the input's size; ``fill`` and ``interpolation`` as in :class:`RandomRotation`."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        owner = "RandomAffine"
        self.degrees = _symmetric_range(owner, "degrees", degrees)
        self.translate = None
        if translate is not None:
            t = _pair(owner, "translate", translate)
            if not all(0.0 <= v <= 1.0 for v in t):
                raise ValueError(f"{owner}: translate values should be between 0 and 1, got {translate!r}")
            self.translate = t
        self.scale = None
        if scale is not None:
            sc = _pair(owner, "scale", scale)
            if not all(v > 0 for v in sc) or sc[0] > sc[1]:
                raise ValueError(f"{owner}: scale values should be positive, (min, max), got {scale!r}")
            self.scale = sc
        self.shear = None
        if shear is not None:
            sh = _symmetric_range(owner, "shear", shear, (2, 4))
            if not all(abs(v) < 90 for v in sh):
                raise ValueError(f"{owner}: shear angles must lie in (-90, 90) degrees, got {shear!r}")
            self.shear = sh
        self.interpolation = interpolation
        self._interp = _warp_interpolation(owner, interpolation)
        self.fill = fill
        self._fill = _fill(owner, fill)
        self.center = _center(owner, center)

    def _spec(self):
        s = _C.RandomAffine()
        s.degrees = self.degrees
        if self.translate is not None:
            s.translate = self.translate
        if self.scale is not None:
            s.scale = self.scale
        if self.shear is not None:
            s.shear = tuple(self.shear) + ((0.0, 0.0) if len(self.shear) == 2 else ())
        s.interpolation = self._interp
        s.fill = self._fill
        if self.center is not None:
            s.has_center, s.center = True, self.center
        return s


def _jitter_range(name: str, value: Any, center: float, bound: tuple[float, float],
                  clip_first_on_zero: bool) -> tuple[float, float]:
    """torchvision ColorJitter._check_input: a number v gives [center - v, center + v] (the low
    end clipped at 0 for the factors), a pair is (min, max); both must lie within `bound`."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"ColorJitter: if {name} is a single number, it must be non negative, got {value!r}")
        lo, hi = center - float(value), center + float(value)
        if clip_first_on_zero:
            lo = max(lo, 0.0)
    elif (isinstance(value, Sequence) and len(value) == 2
          and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)):
        lo, hi = float(value[0]), float(value[1])
    else:
        raise TypeError(f"ColorJitter: {name} should be a single number or a sequence of two numbers, "
                        f"got {value!r}")
    if not (bound[0] <= lo <= hi <= bound[1]):
        raise ValueError(f"ColorJitter: {name} values should be between {bound}, but got ({lo}, {hi})")
    return lo, hi


class ColorJitter(Transform):
    """Randomly change brightness, contrast, saturation and hue, in a random order per sample
    (torchvision's ``ColorJitter``, with ``transforms.v2.functional``'s uint8 formulas).

    Each argument is a number ``v`` (factors drawn from ``[max(0, 1 - v), 1 + v]``; for hue,
    shifts from ``[-v, v]`` with ``0 <= v <= 0.5``) or a ``(min, max)`` pair. Colour transforms
    run on the image the crops and resizes before them produce; put them after those."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        inf = float("inf")
        self.brightness = _jitter_range("brightness", brightness, 1.0, (0.0, inf), True)
        self.contrast = _jitter_range("contrast", contrast, 1.0, (0.0, inf), True)
        self.saturation = _jitter_range("saturation", saturation, 1.0, (0.0, inf), True)
        self.hue = _jitter_range("hue", hue, 0.0, (-0.5, 0.5), False)

    def _spec(self):
        s = _C.ColorJitter()
        s.brightness, s.contrast, s.saturation, s.hue = self.brightness, self.contrast, self.saturation, self.hue
        return s


class RandomGrayscale(Transform):
    """With probability ``p``, the image's luma (0.2989 R + 0.587 G + 0.114 B) in all three
    channels (torchvision's ``RandomGrayscale``)."""

    def __init__(self, p: float = 0.1):
        self.p = _probability("RandomGrayscale", p)

    def _spec(self):
        s = _C.RandomGrayscale()
        s.p = self.p
        return s


class GaussianBlur(Transform):
    """torchvision's ``GaussianBlur``: a Gaussian kernel of ``kernel_size`` (an odd int, or
    (width, height), at most 63) with sigma drawn uniformly from ``sigma`` (a number, or
    ``(min, max)``) per sample, reflect padding. Runs on the uint8 image like the colour
    transforms (on the GPU, one kernel per batch); put it after the crops and resizes."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        owner = "GaussianBlur"
        if _is_int(kernel_size):
            ks = (int(kernel_size), int(kernel_size))
        elif (isinstance(kernel_size, Sequence) and len(kernel_size) in (1, 2)
              and all(_is_int(k) for k in kernel_size)):
            ks = (int(kernel_size[0]), int(kernel_size[-1]))
        else:
            raise TypeError(f"{owner}: kernel_size must be an int or a sequence of two ints, got {kernel_size!r}")
        if not all(k > 0 and k % 2 == 1 for k in ks):
            raise ValueError(f"{owner}: kernel_size values should be odd and positive, got {kernel_size!r}")
        if max(ks) > 63:
            raise ValueError(f"{owner}: kernel_size values of at most 63 are supported, got {kernel_size!r}")
        if isinstance(sigma, numbers.Real) and not isinstance(sigma, bool):
            sg = (float(sigma), float(sigma))
            if not sg[0] > 0:
                raise ValueError(f"{owner}: if sigma is a single number, it must be positive, got {sigma!r}")
        elif (isinstance(sigma, Sequence) and len(sigma) in (1, 2)
              and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in sigma)):
            sg = (float(sigma[0]), float(sigma[-1]))
        else:
            raise TypeError(f"{owner}: sigma must be a number or a sequence of two numbers, got {sigma!r}")
        if not (0.0 < sg[0] <= sg[1] and math.isfinite(sg[1])):
            raise ValueError(f"{owner}: sigma values should be positive and of the form (min, max), got {sigma!r}")
        self.kernel_size, self.sigma = ks, sg

    def _spec(self):
        s = _C.GaussianBlur()
        s.kernel_w, s.kernel_h = self.kernel_size
        s.sigma = self.sigma
        return s


def _augment_args(owner: str, num_magnitude_bins: Any, interpolation: Any, fill: Any):
    if not _is_int(num_magnitude_bins) or num_magnitude_bins < 2:
        raise ValueError(f"{owner}: num_magnitude_bins must be an int of at least 2, got {num_magnitude_bins!r}")
    return _warp_interpolation(owner, interpolation), _fill(owner, 0 if fill is None else fill)


class RandAugment(Transform):
    """torchvision's ``RandAugment`` on the uint8 image: ``num_ops`` ops drawn per sample from its
    14 (Identity, ShearX, ShearY, TranslateX, TranslateY, Rotate, Brightness, Color, Contrast,
    Sharpness, Posterize, Solarize, AutoContrast, Equalize), each at bin ``magnitude`` of
    ``num_magnitude_bins`` with torchvision's magnitudes and random signs. Shears, translations
    and rotations use ``interpolation`` (NEAREST or BILINEAR) and ``fill``. Put it after the crops,
    resizes and flips (no flip may follow it); on the GPU each op is at most two kernels."""

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        owner = "RandAugment"
        if not _is_int(num_ops) or not 0 <= num_ops <= 4:
            raise ValueError(f"{owner}: num_ops must be an int in [0, 4], got {num_ops!r}")
        self._interp, self._fill = _augment_args(owner, num_magnitude_bins, interpolation, fill)
        if not _is_int(magnitude) or not 0 <= magnitude < num_magnitude_bins:
            raise ValueError(f"{owner}: magnitude must be an int in [0, num_magnitude_bins - 1] = "
                             f"[0, {num_magnitude_bins - 1}], got {magnitude!r}")
        self.num_ops, self.magnitude, self.num_magnitude_bins = int(num_ops), int(magnitude), int(num_magnitude_bins)
        self.interpolation, self.fill = interpolation, fill

    def _spec(self):
        s = _C.RandAugment()
        s.num_ops, s.magnitude, s.num_magnitude_bins = self.num_ops, self.magnitude, self.num_magnitude_bins
        s.interpolation, s.fill = self._interp, self._fill
        return s


class TrivialAugmentWide(Transform):
    """torchvision's ``TrivialAugmentWide``: one op per sample from RandAugment's 14, at a
    magnitude bin drawn uniformly from ``num_magnitude_bins``, with the wide ranges. Placement,
    ``interpolation`` and ``fill`` as :class:`RandAugment`."""

    def __init__(self, num_magnitude_bins: int = 31, interpolation=InterpolationMode.NEAREST, fill=None):
        self._interp, self._fill = _augment_args("TrivialAugmentWide", num_magnitude_bins, interpolation, fill)
        self.num_magnitude_bins, self.interpolation, self.fill = int(num_magnitude_bins), interpolation, fill

    def _spec(self):
        s = _C.TrivialAugmentWide()
        s.num_magnitude_bins, s.interpolation, s.fill = self.num_magnitude_bins, self._interp, self._fill
        return s


def _range(owner: str, name: str, value: Any) -> tuple[float, float]:
    """A number v gives (v, v) (fixed); a pair is (min, max) drawn uniformly per sample."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        lo = hi = float(value)
    elif (isinstance(value, Sequence) and len(value) == 2
          and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)):
        lo, hi = float(value[0]), float(value[1])
    else:
        raise TypeError(f"{owner}: {name} must be a number or a (min, max) pair, got {value!r}")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"{owner}: {name} must be finite with min <= max, got {value!r}")
    return lo, hi


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
        if _is_int(tile):
            tl = (int(tile), int(tile))
        elif isinstance(tile, Sequence) and len(tile) == 2 and all(_is_int(v) for v in tile):
            tl = (int(tile[0]), int(tile[1]))
        else:
            raise TypeError(f"{owner}: tile must be an int or a (min, max) pair of ints, got {tile!r}")
        if not 0 < tl[0] <= tl[1]:
            raise ValueError(f"{owner}: tile must be positive, with min <= max, got {tile!r}")
        if not isinstance(ratio, numbers.Real) or isinstance(ratio, bool) or not 0.0 <= ratio <= 1.0:
            raise ValueError(f"{owner}: ratio must be a number in [0, 1], got {ratio!r}")
        self.tile, self.ratio = tl, float(ratio)
        self.angle = _range(owner, "angle", angle)
        self.shift_x = _range(owner, "shift_x", shift_x)
        self.shift_y = _range(owner, "shift_y", shift_y)

    def _spec(self):
        s = _C.GridMask()
        s.tile, s.ratio, s.angle, s.shift_x, s.shift_y = self.tile, self.ratio, self.angle, self.shift_x, self.shift_y
        return s


class GaussianNoise(Transform):
    """torchvision's ``GaussianNoise`` on the float tensor: ``x + mean + sigma * N(0, 1)`` per
    element, clamped to [0, 1] when ``clip``. Put it after ``ToTensor`` (before ``Normalize`` it
    acts on [0, 1] values, after it on normalized ones, as torchvision) and before any erasing.
    The noise comes from the loader's seed (per sample and element), not torch's generator. Runs
    in the finish step; needs a float ``dtype``."""

    def __init__(self, mean: float = 0.0, sigma: float = 0.1, clip: bool = True):
        owner = "GaussianNoise"
        for name, v in (("mean", mean), ("sigma", sigma)):
            if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{owner}: {name} must be a finite number, got {v!r}")
        if sigma < 0:
            raise ValueError(f"{owner}: sigma shouldn't be negative, got {sigma!r}")
        self.mean, self.sigma, self.clip = float(mean), float(sigma), bool(clip)

    def _spec(self):
        s = _C.GaussianNoise()
        s.mean, s.sigma, s.clip = self.mean, self.sigma, self.clip
        return s


class Cutout(Transform):
    """Cutout (DeVries and Taylor): ``n_holes`` squares of side ``length``, centres drawn
    uniformly over the image, clipped at its edges, zeroed, as the authors' ``Cutout`` class that
    seed pipelines carry. After ``Normalize`` (where that class usually sits) the output is 0
    there; before it, the pixels are 0. It runs in the loader's finish step (on the GPU, inside
    the kernel that writes the sample); put it after the geometric and colour transforms."""

    def __init__(self, n_holes: int = 1, length: int = 16):
        if not _is_int(n_holes) or not 1 <= n_holes <= 16:
            raise ValueError(f"Cutout: n_holes must be an int in [1, 16], got {n_holes!r}")
        if not _is_int(length) or length <= 0:
            raise ValueError(f"Cutout: length must be a positive int, got {length!r}")
        self.n_holes, self.length = int(n_holes), int(length)

    def _spec(self):
        s = _C.Cutout()
        s.n_holes, s.length = self.n_holes, self.length
        return s


class RandomErasing(Transform):
    """torchvision's ``RandomErasing``: with probability ``p``, a rectangle of area fraction in
    ``scale`` and aspect ratio in ``ratio`` (10 tries, else nothing), set to ``value`` (a number
    or one per channel) in the scale of the sample at that point of the list: after
    ``ToTensor``, values in [0, 1] (normalized values after ``Normalize``); before it, pixel
    values 0-255. ``value="random"`` is not supported. Runs in the loader's finish step; put it
    after the geometric and colour transforms."""

    def __init__(self, p: float = 0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace: bool = False):
        owner = "RandomErasing"
        self.p = _probability(owner, p)
        self.scale = _pair(owner, "scale", scale)
        self.ratio = _pair(owner, "ratio", ratio)
        if not 0.0 <= self.scale[0] <= self.scale[1] <= 1.0:
            raise ValueError(f"{owner}: scale must be (min, max) with 0 <= min <= max <= 1, got {scale!r}")
        if not 0.0 < self.ratio[0] <= self.ratio[1]:
            raise ValueError(f"{owner}: ratio must be (min, max) with 0 < min <= max, got {ratio!r}")
        if isinstance(value, str):
            raise NotImplementedError(f"{owner}: value={value!r} is not supported; give a number or one per channel")
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            vals = (float(value),) * 3
        elif (isinstance(value, Sequence) and len(value) in (1, 3)
              and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)):
            vals = tuple(float(v) for v in value) * (3 if len(value) == 1 else 1)
        else:
            raise TypeError(f"{owner}: value must be a number or a sequence of 1 or 3 numbers, got {value!r}")
        if not all(math.isfinite(v) for v in vals):
            raise ValueError(f"{owner}: value must be finite, got {value!r}")
        self.value = value
        self._value = vals
        self.inplace = inplace

    def _spec(self):
        return self._spec_at(True)

    def _spec_at(self, tensor_scale: bool):
        if not tensor_scale and not all(0.0 <= v <= 255.0 for v in self._value):
            raise ValueError(f"RandomErasing: value must be in [0, 255] on uint8 pixels (before ToTensor), "
                             f"got {self.value!r}")
        s = _C.RandomErasing()
        s.p, s.scale, s.ratio, s.value, s.tensor_scale = self.p, self.scale, self.ratio, self._value, tensor_scale
        return s


class ToTensor(Transform):
    """torchvision's ``ToTensor``: from here on the sample is a float CHW tensor in [0, 1]. The
    loader's output already is (``dtype="float32"`` or ``"float16"``, ``layout="NCHW"``), so this
    only marks the place, for seed pipelines that have it; it contradicts ``dtype="uint8"``."""

    def _spec(self):
        return None


class _Holder:
    __slots__ = ("fn", "__weakref__")

    def __init__(self, fn):
        self.fn = fn


class Lambda(Transform):
    """Run ``lambd`` on each sample, on the loader's CPU threads (the GIL is held only while it
    runs), as torchvision's ``Lambda``. It gets the sample as the transforms before it leave it:
    an ``H x W x 3`` uint8 NumPy array before ``ToTensor``/``Normalize``; after them, the
    finished sample as a torch tensor (``3 x H x W`` float with the default ``dtype`` and
    ``layout``; a NumPy array with ``output="numpy"``). It returns the same kind, shape and dtype
    (or changes its argument in place). The argument is valid during the call only.

    User functions come after every geometric and colour transform; with ``device="cuda"`` the
    loader runs the list on the CPU and copies the batches to the GPU."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def _name(self) -> str:
        fn = self.lambd
        name = getattr(fn, "__name__", None) or type(fn).__name__
        return f"Lambda({name})"

    def _spec(self):  # pragma: no cover - the loader calls _spec_at
        raise TypeError("Lambda needs its place in the list: use compile_specs")

    def _spec_at(self, finished: bool, as_torch: bool, holders: list):
        name = self._name()
        kind = "torch.Tensor" if as_torch else "numpy.ndarray"
        # The C++ loader holds the runner; the runner reaches the function only through a weak
        # reference to a holder the Python Loader keeps. A strong one would make a cycle through
        # C++ (loader -> runner -> fn -> its module's globals -> loader) that no GC can break.
        holder = _Holder(self.lambd)
        holders.append(holder)
        ref = weakref.ref(holder)

        def runner(buffer, shape, dtype):
            import numpy as np
            held = ref()
            if held is None:
                return f"{name}: the loader is gone"
            fn = held.fn
            try:
                view = np.frombuffer(buffer, dtype=dtype).reshape(shape)
                if as_torch:
                    import torch
                    arg = torch.from_numpy(view)
                else:
                    arg = view
                out = fn(arg)
                if as_torch:
                    import torch
                    if not isinstance(out, torch.Tensor):
                        return f"{name}: returned {type(out).__name__}, expected {kind}"
                    if out.device.type != "cpu":
                        return f"{name}: returned a tensor on {out.device}, expected one on the CPU"
                    got_dtype = str(out.dtype).replace("torch.", "")
                    arr = out.detach().numpy() if out is not arg else None
                else:
                    if not isinstance(out, np.ndarray):
                        return f"{name}: returned {type(out).__name__}, expected {kind}"
                    got_dtype = str(out.dtype)
                    arr = out if out is not arg else None
                if tuple(out.shape) != tuple(shape) or got_dtype != dtype:
                    return (f"{name}: returned shape {tuple(out.shape)} and dtype {got_dtype}, expected "
                            f"shape {tuple(shape)} and dtype {dtype}")
                if arr is not None:
                    np.copyto(view, arr)
                return None
            except Exception as e:  # the sample fails, naming the function; the loader adds the file
                return f"{name} raised {type(e).__name__}: {e}"

        return _C.Lambda(runner, finished, name)


# Mixed into every batch-transform key, so that these draws share no stream with anything else
# seeded from the same numbers.
_BATCH_DOMAIN = 0x736C756963652D62  # "sluice-b"


def _key_part(owner: str, name: str, value: Any) -> int:
    if not _is_int(value) or value < 0:
        raise ValueError(f"{owner}.draw: {name} must be an int >= 0, got {value!r}")
    return int(value)


class BatchTransform(Transform):
    """Base of the transforms that run on whole batches: :class:`BatchLambda`, :class:`MixUp`,
    :class:`CutMix` and :class:`RandomChoice` of them. They have no C++ spec: the loader applies
    them, in list order, to each batch it hands out (in the process that iterates it, when the
    batch is taken), after every per-sample transform, so they come last in the list (in any
    order among themselves).

    Their random choices come from a NumPy ``Generator`` (PCG64) seeded with
    ``(seed, epoch, batch index, position)``, plus the rank and, for an epoch resumed under
    other settings, a digest of what was consumed before (:meth:`draw`), never from torch's or
    NumPy's global generator: the same loader settings give the same draws, whatever the
    device, thread count or timing."""

    _random = False  # whether draw() consumes random numbers

    def _name(self) -> str:
        return type(self).__name__

    def _spec(self):
        return None  # applied by the loader in Python, to whole batches

    def _mixers(self) -> list:
        """The label-mixing transforms (MixUp, CutMix) in this one, nested ones included."""
        return []

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        return {}

    def draw(self, seed: int, epoch: int, batch_index: int, position: int, height: int, width: int,
             *, rank: int = 0, schedule: int = 0) -> dict:
        """The random parameters this transform uses for one batch: the loader's ``seed``, the
        ``epoch``, the batch's number within the epoch (``batch_index``, 0 first, as counted by
        the loader's schedule, so a resumed epoch goes on with the numbers the interrupted run
        would have used), the transform's ``position`` in the loader's flattened transform list,
        the images' ``height`` and ``width``, the loader's ``rank`` and ``schedule`` (0 unless
        the epoch was resumed with another batch size, world size or last_batch; then a digest
        of the samples consumed before). The same arguments give the same dict."""
        owner = self._name()
        h, w = _size(f"{owner}.draw", (height, width), "(height, width)")
        if not self._random:
            return self._draw(None, h, w)
        import numpy as np  # noqa: PLC0415

        key = [_key_part(owner, n, v) for n, v in (("seed", seed), ("epoch", epoch),
                                                    ("batch_index", batch_index), ("position", position),
                                                    ("rank", rank), ("schedule", schedule))]
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([_BATCH_DOMAIN, *key])))
        return self._draw(rng, h, w)


class BatchLambda(BatchTransform):
    """Run ``fn`` on each whole batch of images, once per batch, in the process that iterates
    the loader (when the batch is taken), after every per-sample transform: it must come last
    in the list (several in a row run in order, mixed with other batch transforms in any
    order). Labels are not passed.

    ``fn`` gets the batch as the loader yields it: a torch tensor ``N x C x H x W`` (``N x H x W
    x C`` with ``layout="NHWC"``) in the loader's ``dtype``, on the loader's device, and returns
    a tensor of the same shape, dtype and device (or changes its argument in place and returns
    it). With ``device="cuda"`` it runs on a CUDA stream the loader owns, which first waits for
    the stream current when the batch is taken; that stream then waits for it, so the result
    is ready there as a batch without ``BatchLambda`` is. With ``output="numpy"`` (or without
    torch) ``fn`` gets a read-only NumPy array and returns a new array of the same shape and
    dtype. It is not called for an empty batch (``on_error="skip"`` when every file of a batch
    failed).

    A return of another kind, shape, dtype or device raises TypeError or ValueError naming
    ``BatchLambda(<fn's name>)``; an exception raised by ``fn`` propagates with a note naming it
    (on Python < 3.11, which has no notes, as a RuntimeError naming it, chained to the original).
    The images must have a fixed size (batches that are tensors, not lists)."""

    def __init__(self, fn):
        if not callable(fn):
            raise TypeError(f"BatchLambda: argument should be callable, got {type(fn).__name__}")
        self.fn = fn

    def _name(self) -> str:
        name = getattr(self.fn, "__name__", None) or type(self.fn).__name__
        return f"BatchLambda({name})"


class _MixBase(BatchTransform):
    """MixUp and CutMix: arguments as torchvision.transforms.v2's (keyword-only)."""

    _random = True

    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None,
                 labels_getter: Any = "default"):
        owner = type(self).__name__
        if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool):
            raise TypeError(f"{owner}: alpha must be a number, got {alpha!r}")
        if not float(alpha) > 0:
            raise ValueError(f"{owner}: alpha must be > 0, got {alpha!r}")
        if not math.isfinite(float(alpha)):
            raise ValueError(f"{owner}: alpha must be finite, got {alpha!r}")
        if num_classes is None:
            raise ValueError(f"{owner}: num_classes is required: the loader's labels are class indices, "
                             f"which become one-hot rows of num_classes columns (e.g. "
                             f"{owner}(num_classes=len(loader.classes)))")
        if not _is_int(num_classes):
            raise TypeError(f"{owner}: num_classes must be a positive int, got {num_classes!r}")
        if num_classes < 1:
            raise ValueError(f"{owner}: num_classes must be a positive int, got {num_classes!r}")
        if not (isinstance(labels_getter, str) and labels_getter == "default"):
            raise ValueError(f"{owner}: labels_getter must be 'default' (the loader passes the batch's "
                             f"labels itself), got {labels_getter!r}")
        self.alpha = float(alpha)
        self.num_classes = int(num_classes)

    def _mixers(self) -> list:
        return [self]


class MixUp(_MixBase):
    """torchvision.transforms.v2's ``MixUp`` on each batch the loader hands out: with
    ``lam ~ Beta(alpha, alpha)`` drawn per batch (:meth:`draw` gives ``{"lam": lam}``),
    ``images = lam * images + (1 - lam) * images.roll(1, 0)``, and the labels, made one-hot,
    mixed the same way.

    Labels: with any MixUp or CutMix in the list, every batch's labels come out as float32
    ``N x num_classes`` (one-hot, then mixed; one-hot alone for a batch no mixing transform
    touched, e.g. one where a :class:`RandomChoice` picked a BatchLambda), on the labels' device.
    Every label of the dataset must lie in ``[0, num_classes)``: the loader checks when it is
    made. ``num_classes`` is required (the loader's labels are class indices).

    Images: float32 or float16 only (``dtype="uint8"`` is refused when the loader is made);
    computed in float32 (float16 batches are converted and the result rounded back), as
    ``images.roll(1, 0) * (1 - lam) + images * lam`` with both factors rounded to float32, the
    same on the CPU and on the GPU. Like :class:`BatchLambda` it runs in the process that
    iterates the loader, on the loader's CUDA stream with ``device="cuda"``, on NumPy arrays
    with ``output="numpy"``.

    The pairing is ``roll(1, 0)`` over the batch as it arrives: a short last batch, a batch
    with ``on_error="skip"`` gaps, or a ``last_batch="pad"`` batch mixes what it holds (padding
    repeats included; ``valid`` still marks the repeats, whose content may now be in their
    neighbours); in a batch of one the image is mixed with itself. An empty batch is left as it
    is (its labels are ``0 x num_classes``)."""

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        return {"lam": float(rng.beta(self.alpha, self.alpha))}


class CutMix(_MixBase):
    """torchvision.transforms.v2's ``CutMix`` on each batch the loader hands out: per batch,
    ``lam ~ Beta(alpha, alpha)``, a centre ``r_x`` in ``[0, W)`` and ``r_y`` in ``[0, H)``; the box
    of half-sides ``int(0.5 * sqrt(1 - lam) * W)`` and ``int(0.5 * sqrt(1 - lam) * H)`` about it,
    clipped to the image (:meth:`cut_box`), is pasted from ``images.roll(1, 0)`` into every image
    of the batch, and the one-hot labels are mixed as ``lam_adjusted * labels + (1 -
    lam_adjusted) * labels.roll(1, 0)`` with ``lam_adjusted = 1 - box area / (H * W)``.
    :meth:`draw` gives ``{"lam", "center": (r_x, r_y), "box": (x1, y1, x2, y2),
    "lam_adjusted"}``. The box is in the image's rows and columns with either ``layout``.

    Labels, pairing, short, padded and empty batches, and where it runs: as :class:`MixUp`.
    Images keep their values and dtype (pixels are copied, not blended), so uint8 batches are
    accepted."""

    @staticmethod
    def cut_box(lam: float, r_x: int, r_y: int, height: int, width: int) -> tuple[tuple[int, int, int, int], float]:
        """((x1, y1, x2, y2), lam_adjusted): torchvision's CutMix box for ``lam`` and the centre
        ``(r_x, r_y)``, on an image of ``height x width``; rows ``y1:y2``, columns ``x1:x2``."""
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * width), int(r * height)
        x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
        x2, y2 = min(r_x + r_w_half, width), min(r_y + r_h_half, height)
        return (x1, y1, x2, y2), float(1.0 - (x2 - x1) * (y2 - y1) / (width * height))

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        lam = float(rng.beta(self.alpha, self.alpha))
        r_x, r_y = int(rng.integers(width)), int(rng.integers(height))
        box, lam_adjusted = self.cut_box(lam, r_x, r_y, height, width)
        return {"lam": lam, "center": (r_x, r_y), "box": box, "lam_adjusted": lam_adjusted}


def _common_num_classes(transforms: Iterable[BatchTransform]) -> int | None:
    """The num_classes every MixUp and CutMix among `transforms` has (None if there are none);
    ValueError naming two that differ."""
    first = None
    for t in transforms:
        for m in t._mixers():
            if first is None:
                first = m
            elif m.num_classes != first.num_classes:
                raise ValueError(
                    f"{m._name()}: num_classes={m.num_classes} differs from {first._name()}'s "
                    f"num_classes={first.num_classes}; the labels become one N x num_classes array, so "
                    "every MixUp and CutMix of a loader needs the same num_classes")
    return None if first is None else first.num_classes


class RandomChoice(BatchTransform):
    """torchvision's ``RandomChoice`` for batch transforms: per batch, one of ``transforms``
    (:class:`MixUp`, :class:`CutMix`, :class:`BatchLambda` or another RandomChoice), picked
    with the weights ``p`` (default: equal; normalized to sum 1, as torchvision does), e.g.
    ``RandomChoice([CutMix(num_classes=1000), MixUp(num_classes=1000)])``. The pick and the
    picked transform's parameters come from the same per-batch generator; :meth:`draw` gives
    ``{"index": i, "transform": transforms[i], "params": transforms[i]'s draw}``. With a MixUp or
    CutMix among ``transforms``, every batch's labels are one-hot (see :class:`MixUp`), whichever
    is picked. Per-sample transforms are refused: they go before it in the loader's list."""

    _random = True

    def __init__(self, transforms: Sequence[BatchTransform], p: Sequence[float] | None = None):
        owner = "RandomChoice"
        if not isinstance(transforms, Sequence) or isinstance(transforms, (str, bytes)):
            raise TypeError(f"{owner}: transforms must be a sequence of batch transforms, got "
                            f"{type(transforms).__name__}")
        items = list(transforms)
        if not items:
            raise ValueError(f"{owner}: transforms must not be empty")
        for i, t in enumerate(items):
            if not isinstance(t, BatchTransform):
                raise TypeError(f"{owner}: item {i} is {t!r}, not a batch transform: RandomChoice picks one "
                                "of MixUp, CutMix, BatchLambda or RandomChoice per batch (per-sample "
                                "transforms go before it in the loader's list)")
        if p is None:
            weights = [1.0] * len(items)
        else:
            if not isinstance(p, Sequence) or isinstance(p, (str, bytes)) or len(p) != len(items):
                raise ValueError(f"{owner}: p must hold one weight per transform ({len(items)}), got {p!r}")
            if not all(isinstance(w, numbers.Real) and not isinstance(w, bool) for w in p):
                raise TypeError(f"{owner}: p must hold numbers, got {p!r}")
            weights = [float(w) for w in p]
            if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
                raise ValueError(f"{owner}: p must hold finite weights >= 0 with a positive sum, got {p!r}")
        _common_num_classes(items)
        total = sum(weights)
        self.transforms = items
        self.p = [w / total for w in weights]

    def _mixers(self) -> list:
        return [m for t in self.transforms for m in t._mixers()]

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        i = int(rng.choice(len(self.transforms), p=self.p))
        chosen = self.transforms[i]
        return {"index": i, "transform": chosen, "params": chosen._draw(rng, height, width)}


class Normalize(Transform):
    """``(x - mean) / std`` per channel on values scaled to [0, 1], as torchvision."""

    def __init__(self, mean, std, inplace: bool = False):
        def three(name, v):
            if isinstance(v, numbers.Real):
                v = [v]
            if not isinstance(v, Sequence) or len(v) not in (1, 3):
                raise TypeError(f"Normalize: {name} must be a number or a sequence of 1 or 3 "
                                f"numbers (RGB), got {v!r}")
            vals = [float(x) for x in v] * (3 if len(v) == 1 else 1)
            if not all(math.isfinite(x) for x in vals):
                raise ValueError(f"Normalize: {name} must be finite, got {v!r}")
            return tuple(vals)

        self.mean = three("mean", mean)
        self.std = three("std", std)
        if any(s == 0 for s in self.std):
            raise ValueError("Normalize: std evaluated to zero, leading to division by zero")
        self.inplace = inplace

    def _spec(self):
        s = _C.Normalize()
        s.mean, s.std = self.mean, self.std
        return s


def compile_specs(transforms: Sequence[Transform], as_torch: bool, holders: list) -> list[Any]:
    """The C++ specs of a flat list. A Lambda after ToTensor or Normalize runs on the finished
    sample (a torch tensor when `as_torch`), before them on the uint8 pixels; the user functions
    go into `holders`, which the caller keeps while the specs are in use."""
    specs, finished = [], False
    for t in transforms:
        if isinstance(t, BatchTransform):  # no C++ spec: the loader applies it to whole batches
            continue
        if isinstance(t, (ToTensor, Normalize)):
            finished = True
        if isinstance(t, Lambda):
            specs.append(t._spec_at(finished, as_torch and finished, holders))
            continue
        if isinstance(t, RandomErasing):  # its value is in the scale of the sample there
            specs.append(t._spec_at(finished))
            continue
        if isinstance(t, GaussianNoise) and not finished:
            raise ValueError("GaussianNoise before ToTensor is not supported: it adds noise to the float "
                             "tensor; put it after ToTensor")
        spec = t._spec()
        if spec is not None:
            specs.append(spec)
    return specs


def split_batch_functions(transforms: Sequence[Transform]) -> tuple[list[Transform], list[BatchTransform]]:
    """A flat list as (the per-sample transforms, the trailing batch transforms in order:
    BatchLambda, MixUp, CutMix, RandomChoice, in any order among themselves). Raises ValueError
    when anything else comes after a batch transform."""
    for i, t in enumerate(transforms):
        if isinstance(t, BatchTransform):
            for later in transforms[i + 1:]:
                if not isinstance(later, BatchTransform):
                    what = later._name() if isinstance(later, Lambda) else type(later).__name__
                    raise ValueError(
                        f"{what} after {t._name()} is not supported: {type(t).__name__} runs on whole "
                        f"finished batches, so it must come after every other transform")
            return list(transforms[:i]), list(transforms[i:])  # type: ignore[return-value]
    return list(transforms), []


def flatten(transform: Any) -> list[Transform]:
    """A transform, a list of them or a Compose, as a flat list."""
    if transform is None:
        return []
    if isinstance(transform, Compose):
        return [t for item in transform.transforms for t in flatten(item)]
    if isinstance(transform, Transform):
        return [transform]
    if isinstance(transform, (list, tuple)):
        return [t for item in transform for t in flatten(item)]
    raise TypeError(f"transform must be a sluice transform, a list of them or sluice.transforms."
                    f"Compose, got {type(transform).__name__}: {transform!r}")
