"""RandomApply: transforms applied together, with a probability, per sample."""
from __future__ import annotations

from typing import Any, Sequence

from .. import _core
from .base import Compose, Transform


class RandomApply(Transform):
    """torchvision's ``RandomApply``: with probability ``p``, the ``transforms`` in order;
    otherwise none of them. Drawn per sample like every other transform (from the sample's seed,
    epoch and index). ``transforms`` is a list or a :class:`Compose` of sluice transforms; they
    must keep the output size (a colour change, a blur, a flip, a rotation of a fixed-size image)
    and may not be ``ToTensor``, ``Normalize``, user functions or batch transforms: put those
    after it. A RandomApply may hold another."""

    def __init__(self, transforms: Sequence[Transform] | Compose, p: float = 0.5):
        from .compile import flatten  # compile imports this module
        items = transforms.transforms if isinstance(transforms, Compose) else transforms
        if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
            raise TypeError(f"RandomApply: transforms must be a sequence of transforms, got {type(transforms).__name__}")
        self.transforms = flatten(list(items))
        self.p = p
        for i, t in enumerate(self.transforms):
            refused = _refused_inside(t)
            if refused:
                raise ValueError(f"RandomApply: item {i} ({refused}) is not supported inside RandomApply; put it "
                                 f"after the RandomApply")
        _core.transforms.make("RandomApply", dict(count=1, p=p))  # checks p, naming RandomApply

    def _fields(self) -> dict | None:  # pragma: no cover - compile_specs writes the marker
        raise TypeError("RandomApply is compiled with the transforms it holds: use compile_specs")


def _refused_inside(t: Any) -> str | None:
    """The name of a transform RandomApply cannot hold, or None."""
    from .batch import BatchTransform
    from .finish import Normalize, ToTensor
    from .functions import Lambda
    if isinstance(t, Lambda):
        return t._name()
    if isinstance(t, (BatchTransform, Normalize, ToTensor)):
        return type(t).__name__
    return None
