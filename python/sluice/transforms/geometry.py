"""Geometric transforms: crops, resizes, flips, padding, rotations and affine warps. A list's
geometry is composed per sample into as few resampling passes as exact semantics allow, over
just the region of the file the crop keeps."""
from __future__ import annotations

from typing import Sequence

from . import _forms
from .base import InterpolationMode, Transform


class RandomResizedCrop(Transform):
    """Crop a random area/aspect-ratio window and resize it to ``size`` (antialiased)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias: bool = True):
        owner = "RandomResizedCrop"
        self.size = _forms.size(owner, size)
        self.scale = _forms.pair(owner, "scale", scale)
        self.ratio = _forms.pair(owner, "ratio", ratio)
        self.interpolation = interpolation
        self.antialias = bool(antialias)
        self._spec()

    def _fields(self):
        return dict(height=self.size[0], width=self.size[1], scale=self.scale, ratio=self.ratio,
                    interpolation=_forms.interpolation(self.interpolation), antialias=self.antialias)


class Resize(Transform):
    """Resize to ``(h, w)``, or, given one int, so that the shorter edge has that length."""

    random = False

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias: bool = True):
        one = _forms.is_int(size) or (isinstance(size, Sequence) and len(size) == 1)
        h, w = _forms.size("Resize", size)
        self.size = [h] if one else [h, w]
        # None is "no cap"; the C++ description says so with 0, so an explicit 0 is refused here.
        if max_size is not None and (not _forms.is_int(max_size) or max_size <= 0):
            raise ValueError(f"Resize: max_size must be a positive int, got {max_size!r}")
        self.max_size = max_size
        self.interpolation = interpolation
        self.antialias = bool(antialias)
        self._spec()

    def _fields(self):
        return dict(height=self.size[0], width=self.size[1] if len(self.size) == 2 else 0,
                    max_size=self.max_size or 0, interpolation=_forms.interpolation(self.interpolation),
                    antialias=self.antialias)


class CenterCrop(Transform):
    """Crop the centre (zero-padded when the image is smaller than ``size``)."""

    random = False

    def __init__(self, size):
        self.size = _forms.size("CenterCrop", size)
        self._spec()

    def _fields(self):
        return dict(height=self.size[0], width=self.size[1])


class RandomCrop(Transform):
    """Crop a random ``size`` window, after optional constant padding."""

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0,
                 padding_mode: str = "constant"):
        owner = "RandomCrop"
        self.size = _forms.size(owner, size)
        self.padding = padding
        self._pad = _forms.padding(owner, 0 if padding is None else padding, padding_mode)
        self.pad_if_needed = bool(pad_if_needed)
        self.fill = fill
        self._fill = _forms.fill(owner, fill)
        self.padding_mode = padding_mode
        self._spec()

    def _fields(self):
        return dict(height=self.size[0], width=self.size[1], padding=self._pad, pad_if_needed=self.pad_if_needed,
                    fill=self._fill, padding_mode=self.padding_mode)


class RandomHorizontalFlip(Transform):
    """Mirror left-right with probability ``p``."""

    def __init__(self, p: float = 0.5):
        self.p = p
        self._spec()

    def _fields(self):
        return dict(p=self.p)


class RandomVerticalFlip(Transform):
    """Mirror top-bottom with probability ``p``."""

    def __init__(self, p: float = 0.5):
        self.p = p
        self._spec()

    def _fields(self):
        return dict(p=self.p)


class Pad(Transform):
    """torchvision's ``Pad``: ``padding`` as there (an int, (left/right, top/bottom) or (left, top,
    right, bottom)); ``padding_mode`` "constant" (``fill``), "edge", "reflect" or "symmetric"."""

    random = False

    def __init__(self, padding, fill=0, padding_mode: str = "constant"):
        self.padding = padding
        self._pad = _forms.padding("Pad", padding, padding_mode)
        self.fill = fill
        self._fill = _forms.fill("Pad", fill)
        self.padding_mode = padding_mode
        self._spec()

    def _fields(self):
        return dict(padding=self._pad, fill=self._fill, padding_mode=self.padding_mode)


def _center_fields(owner: str, center) -> dict:
    if center is None:
        return dict(has_center=False)
    return dict(has_center=True, center=_forms.pair(owner, "center", center))


class RandomRotation(Transform):
    """Rotate by an angle drawn uniformly from ``degrees`` (a number d gives (-d, d)),
    counter-clockwise, about the centre or ``center`` (x, y in pixels), as torchvision's
    ``RandomRotation``: the output keeps the input's size, or with ``expand=True`` is the rotated
    image's bounding box (so its size follows each sample's angle: put a fixed-size crop or resize
    after it for tensor batches), and points from outside the image get ``fill``.
    ``interpolation`` is NEAREST (torchvision's default) or BILINEAR.

    Runs in the same resampling pass as the resizes before it and the crops and flips after it."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand: bool = False,
                 center=None, fill=0):
        owner = "RandomRotation"
        self.degrees = _forms.symmetric_range(owner, "degrees", degrees)
        self.interpolation = interpolation
        self.expand = bool(expand)
        self.center = None if center is None else _forms.pair(owner, "center", center)
        self.fill = fill
        self._fill = _forms.fill(owner, fill)
        self._spec()

    def _fields(self):
        return dict(degrees=self.degrees, interpolation=_forms.interpolation(self.interpolation), fill=self._fill,
                    expand=self.expand, **_center_fields("RandomRotation", self.center))


class RandomPerspective(Transform):
    """torchvision's ``RandomPerspective``: with probability ``p``, a perspective warp moving each
    corner inward by up to ``distortion_scale`` times half the image's side, drawn per sample;
    points from outside the image get ``fill``. ``interpolation`` BILINEAR (the default) or
    NEAREST; the output keeps the input's size."""

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        self.distortion_scale, self.p, self.interpolation = distortion_scale, p, interpolation
        self.fill = fill
        self._fill = _forms.fill("RandomPerspective", fill)
        self._spec()

    def _fields(self):
        return dict(distortion_scale=self.distortion_scale, p=self.p,
                    interpolation=_forms.interpolation(self.interpolation), fill=self._fill)


class ElasticTransform(Transform):
    """torchvision's ``ElasticTransform``: every pixel moved by a displacement drawn per sample
    (uniform noise blurred by a Gaussian of ``sigma``, times ``alpha``; a number or (x, y) each),
    points from outside the image get ``fill``. A filter on the resampled image (put it after the
    crops and resizes), computed on the CPU threads: with ``device="cuda"`` a list with it runs
    there and its batches are copied to the GPU."""

    cpu_only = True

    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        self.alpha, self.sigma, self.interpolation, self.fill = alpha, sigma, interpolation, fill
        self._fill = _forms.fill("ElasticTransform", fill)
        self._spec()

    def _fields(self):
        pair = lambda v: (float(v), float(v)) if _forms.is_number(v) else tuple(float(x) for x in v)  # noqa: E731
        return dict(alpha=pair(self.alpha), sigma=pair(self.sigma),
                    interpolation=_forms.interpolation(self.interpolation), fill=self._fill)


class RandomAffine(Transform):
    """torchvision's ``RandomAffine``: a rotation from ``degrees``, a translation of up to
    ``translate = (a, b)`` times the width and height (whole pixels), a scale from
    ``scale = (min, max)``, and shears from ``shear`` (a number s gives an x shear in (-s, s); two
    numbers an x range; four numbers x and y ranges), about the centre or ``center``. The output
    keeps the input's size; ``fill`` and ``interpolation`` as in :class:`RandomRotation`."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        owner = "RandomAffine"
        self.degrees = _forms.symmetric_range(owner, "degrees", degrees)
        self.translate = None if translate is None else _forms.pair(owner, "translate", translate)
        self.scale = None if scale is None else _forms.pair(owner, "scale", scale)
        self.shear = None if shear is None else _forms.symmetric_range(owner, "shear", shear, (2, 4))
        self.interpolation = interpolation
        self.fill = fill
        self._fill = _forms.fill(owner, fill)
        self.center = None if center is None else _forms.pair(owner, "center", center)
        self._spec()

    def _fields(self):
        fields = dict(degrees=self.degrees, interpolation=_forms.interpolation(self.interpolation), fill=self._fill,
                      **_center_fields("RandomAffine", self.center))
        if self.translate is not None:
            fields["translate"] = self.translate
        if self.scale is not None:
            fields["scale"] = self.scale
        if self.shear is not None:
            fields["shear"] = tuple(self.shear) + ((0.0, 0.0) if len(self.shear) == 2 else ())
        return fields
