"""The per-sample containers: RandomApply (transforms applied together, with a probability),
RandomChoice (one of several) and RandomOrder (all, in a random order). Each compiles to a C++
marker followed by the transforms it holds (compile.py)."""
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


class RandomChoice(Transform):
    """torchvision's ``RandomChoice``: one of ``transforms`` per sample, picked with the weights
    ``p`` (default: equal). Each item is a transform or a list or :class:`Compose` of them; items
    follow RandomApply's rules (they keep the output size). Of batch transforms (:class:`MixUp`,
    :class:`CutMix`, :class:`BatchLambda`), it is the per-batch choice instead
    (:class:`~sluice.transforms.batch.BatchRandomChoice`)."""

    def __new__(cls, transforms=(), p=None):
        from .batch import BatchRandomChoice, BatchTransform  # batch imports this module
        items = list(transforms) if isinstance(transforms, Sequence) and not isinstance(transforms, str) else []
        if cls is RandomChoice and items and all(isinstance(t, BatchTransform) for t in items):
            cls = BatchRandomChoice
        return super().__new__(cls)

    def __init__(self, transforms: Sequence[Any], p: Sequence[float] | None = None):
        self.transforms = _items("RandomChoice", transforms)
        self.p = None if p is None else [float(w) for w in p]
        if self.p is not None and (len(self.p) != len(self.transforms) or sum(self.p) <= 0):
            raise ValueError(f"RandomChoice: p must hold one weight per transform ({len(self.transforms)}) with a "
                             f"positive sum, got {p!r}")
        self._marker()  # checks the weights, naming RandomChoice

    def _fields(self) -> dict | None:  # pragma: no cover - compile_specs writes the markers
        raise TypeError("RandomChoice is compiled with the transforms it holds: use compile_specs")

    def _marker(self) -> Any:
        weights = tuple(self.p or [1.0] * len(self.transforms))
        return _core.transforms.make("RandomChoice", dict(num_options=len(self.transforms),
                                                          p=weights + (0.0,) * (8 - len(weights))))


class RandomOrder(Transform):
    """torchvision's ``RandomOrder``: all of ``transforms``, in an order drawn per sample. Each
    item is a transform or a list or :class:`Compose` of them; they are colour transforms and
    filters (ColorJitter, RandomGrayscale, GaussianBlur, RandomSolarize...): sluice resamples the
    geometry before the colour steps, so crops and warps cannot be reordered among them."""

    def __init__(self, transforms: Sequence[Any]):
        self.transforms = _items("RandomOrder", transforms)
        self._marker()

    def _fields(self) -> dict | None:  # pragma: no cover - compile_specs writes the markers
        raise TypeError("RandomOrder is compiled with the transforms it holds: use compile_specs")

    def _marker(self) -> Any:
        return _core.transforms.make("RandomOrder", dict(num_items=len(self.transforms)))


def _items(owner: str, transforms: Any) -> list[list[Transform]]:
    """The items of a RandomChoice or RandomOrder, each as a flat list of sluice transforms."""
    from .compile import flatten  # compile imports this module
    if isinstance(transforms, Compose):
        transforms = transforms.transforms
    if not isinstance(transforms, Sequence) or isinstance(transforms, (str, bytes)) or not transforms:
        raise TypeError(f"{owner}: transforms must be a non-empty sequence of transforms, got {transforms!r}")
    if len(transforms) > 8:
        raise ValueError(f"{owner}: it takes at most 8 transforms, got {len(transforms)}")
    items = []
    from .batch import BatchTransform  # batch imports this module
    for i, t in enumerate(transforms):
        if isinstance(t, BatchTransform):
            raise TypeError(f"{owner}: item {i} is {t!r}, a batch transform, among per-sample transforms: a "
                            f"RandomChoice picks among per-sample transforms (per sample) or among batch "
                            f"transforms (per batch), not both")
        item = flatten(list(t.transforms if isinstance(t, Compose) else t if isinstance(t, Sequence) else [t]))
        for inner in item:
            refused = _refused_inside(inner)
            if refused:
                raise ValueError(f"{owner}: item {i} ({refused}) is not supported inside {owner}; put it after the "
                                 f"{owner}")
        items.append(item)
    return items


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
