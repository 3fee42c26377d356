"""The base of every transform, Compose, and the interpolation modes."""
from __future__ import annotations

import enum
from typing import Any, Iterable

from .. import _core


class InterpolationMode(enum.Enum):
    """The interpolation modes sluice implements (torchvision's names and values)."""

    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


class Transform:
    """Base class: a transform is a description of one op of the C++ op table, made (and its
    arguments checked) when the transform is constructed. A subclass gives its op's fields
    (:meth:`_fields`); one that has no C++ op (a marker, a batch transform) gives None."""

    # Whether the transform draws random parameters per sample: a list without any is
    # evaluation-style, decoded at full resolution by default (exact against torchvision).
    random = True

    def _fields(self) -> dict | None:
        raise NotImplementedError

    def _spec(self) -> Any:
        """The C++ description (``sluice._core.transforms.Spec``), or None. Raises ValueError or
        TypeError naming the transform and the argument when an argument is not allowed."""
        fields = self._fields()
        return None if fields is None else _core.transforms.make(self._op(), fields)

    def _op(self) -> str:
        """The op's name: its sluice class's (a user's subclass of one is that op)."""
        return next(c.__name__ for c in type(self).__mro__ if c.__module__.startswith(__package__))

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

    def _fields(self):  # pragma: no cover - flattened by the loader
        raise TypeError("Compose is flattened by the loader")


class Identity(Transform):
    """torchvision's ``Identity``: leaves the sample as it is."""

    random = False

    def _fields(self):
        return None


class RGB(Identity):
    """torchvision's ``RGB``: sluice decodes every image to RGB already (grayscale and CMYK
    files included), so this leaves the sample as it is."""


class ToImage(Identity):
    """torchvision's ``ToImage``: the loader's samples are images already, so this leaves the
    sample as it is (the output's dtype and layout are the Loader's ``dtype`` and ``layout``)."""
