"""torchvision v2's random resizes (RandomResize, RandomShortestSize, ScaleJitter) and
RandomZoomOut: a size or canvas drawn per sample, so that a batch of them is a list unless a
fixed-size crop or resize follows."""
from __future__ import annotations

from typing import Sequence

from . import _forms
from .base import InterpolationMode, Transform


class RandomResize(Transform):
    """torchvision's ``RandomResize``: the shorter side an integer drawn from
    ``[min_size, max_size)``, the other side as ``Resize(int)`` gives it."""

    def __init__(self, min_size: int, max_size: int, interpolation=InterpolationMode.BILINEAR, antialias: bool = True):
        self.min_size, self.max_size = min_size, max_size
        self.interpolation, self.antialias = interpolation, antialias
        self._spec()

    def _fields(self):
        return dict(min_size=self.min_size, max_size=self.max_size,
                    interpolation=_forms.interpolation(self.interpolation), antialias=self.antialias)


class RandomShortestSize(Transform):
    """torchvision's ``RandomShortestSize``: the shorter side one of ``min_size`` (an int or up to
    16 of them), drawn per sample, the longer side at most ``max_size``; both sides scaled by
    that ratio and truncated."""

    def __init__(self, min_size, max_size: int | None = None, interpolation=InterpolationMode.BILINEAR,
                 antialias: bool = True):
        sizes = [min_size] if _forms.is_int(min_size) else list(min_size) if isinstance(min_size, Sequence) else None
        if not sizes or not all(_forms.is_int(s) for s in sizes) or len(sizes) > 16:
            raise TypeError(f"RandomShortestSize: min_size must be an int or a sequence of 1 to 16 ints, got {min_size!r}")
        self.min_size, self.max_size = [int(s) for s in sizes], max_size
        self.interpolation, self.antialias = interpolation, antialias
        self._spec()

    def _fields(self):
        return dict(min_size=tuple(self.min_size) + (0,) * (16 - len(self.min_size)), num_sizes=len(self.min_size),
                    max_size=self.max_size or 0, interpolation=_forms.interpolation(self.interpolation),
                    antialias=self.antialias)


class ScaleJitter(Transform):
    """torchvision's ``ScaleJitter``: the image fitted into ``target_size`` (h, w), times a scale
    drawn from ``scale_range``, both sides truncated."""

    def __init__(self, target_size, scale_range=(0.1, 2.0), interpolation=InterpolationMode.BILINEAR,
                 antialias: bool = True):
        self.target_size = _forms.size("ScaleJitter", target_size, "target_size")
        self.scale_range = _forms.pair("ScaleJitter", "scale_range", scale_range)
        self.interpolation, self.antialias = interpolation, antialias
        self._spec()

    def _fields(self):
        return dict(target_height=self.target_size[0], target_width=self.target_size[1], scale_range=self.scale_range,
                    interpolation=_forms.interpolation(self.interpolation), antialias=self.antialias)


class RandomZoomOut(Transform):
    """torchvision's ``RandomZoomOut``: with probability ``p``, the image at a random place on a
    canvas ``side_range`` times its size (drawn per sample), the rest ``fill``."""

    def __init__(self, fill=0, side_range=(1.0, 4.0), p: float = 0.5):
        self.fill = fill
        self._fill = _forms.fill("RandomZoomOut", fill)
        self.side_range = _forms.pair("RandomZoomOut", "side_range", side_range)
        self.p = p
        self._spec()

    def _fields(self):
        return dict(fill=self._fill, side_range=self.side_range, p=self.p)
