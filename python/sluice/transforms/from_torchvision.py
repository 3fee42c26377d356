"""from_torchvision: a torchvision transform list (v1 or v2) as sluice transforms.

Each torchvision transform becomes the sluice transform of the same name, made with the
arguments the torchvision object holds (torchvision keeps its constructor's arguments as
attributes of the same names; an argument it holds as None takes sluice's default, which is
torchvision's). ``Compose`` and ``RandomApply`` are converted with what they hold; the tensor
conversions (``ToTensor``, ``ToImage``, ``PILToTensor``, ``ToDtype``, ``ConvertImageDtype``,
``ToPILImage``) become what they mean in sluice's pipeline. Anything else raises, naming the
item and why.
"""
from __future__ import annotations

import inspect
import sys
from typing import Any

from .base import Compose, Identity, ToImage, Transform
from .containers import RandomApply, RandomChoice, RandomOrder
from .finish import ToTensor
from .functions import Lambda

# Arguments not copied: MixUp's and CutMix's labels_getter is torchvision's own function (sluice
# finds the labels itself).
_NOT_COPIED = {"self", "labels_getter"}
# The tensor conversions, by torchvision's class name: what each is in sluice's pipeline, where
# every sample is an image until the finish step makes the output (the Loader's dtype and layout).
_CONVERSIONS = {"ToImage": ToImage, "PILToTensor": ToImage, "ToPILImage": Identity, "ToTensor": ToTensor}


def is_torchvision(obj: Any) -> bool:
    """Whether `obj` is a torchvision transform (of torchvision.transforms or .v2)."""
    return type(obj).__module__.startswith("torchvision.transforms")


def from_torchvision(transform: Any) -> list[Transform]:
    """``transform`` (a torchvision ``Compose``, a list, or one transform) as a flat list of
    sluice transforms. Raises TypeError or ValueError naming the item (its index in the flat
    list and its class) when it has no sluice equivalent or an argument sluice does not take::

        tf = sluice.transforms.from_torchvision(torchvision.transforms.v2.Compose([...]))
        loader = sluice.Loader("train/", tf, batch_size=256)

    A Loader given a torchvision transform converts it this way itself.
    """
    out: list[Transform] = []
    for item in _items(transform):
        where = f"from_torchvision: item {len(out)} ({type(item).__name__})"
        try:
            _check_not_stacking(item, out)
            out.append(_convert(item))
        except (TypeError, ValueError, NotImplementedError) as e:
            raise type(e)(f"{where}: {e}") from None
    return out


def _check_not_stacking(item: Any, before: list[Transform]) -> None:
    """ValueError for a Lambda after FiveCrop or TenCrop: torchvision's usual
    ``Lambda(lambda crops: torch.stack([...]))``, which sluice's stacked crops make void."""
    crop = next((t for t in before if getattr(t, "_stacks_crops", False)), None)
    if is_torchvision(item):
        is_lambda = type(item).__name__ == "Lambda"
    else:
        is_lambda = callable(item) and not isinstance(item, Transform)
    if crop is not None and is_lambda:
        name = crop._name()
        raise ValueError(f"a Lambda after {name} cannot be converted: sluice's {name} stacks the crops itself (each "
                         f"batch is N x {crop._n_crops} x C x h x w), so drop that Lambda; for ToTensor or Normalize on "
                         f"each crop, put sluice's or torchvision's ToTensor and Normalize after {name} instead")


def _items(transform: Any) -> list[Any]:
    if isinstance(transform, (list, tuple)):
        return [x for t in transform for x in _items(t)]
    if type(transform).__name__ == "Compose" and hasattr(transform, "transforms"):
        return _items(list(transform.transforms))
    return [transform]


def _convert(t: Any) -> Transform:
    if isinstance(t, Transform):
        return t
    if not is_torchvision(t):
        if callable(t):
            return Lambda(t)  # a plain function, as torchvision's Compose would call it
        raise TypeError(f"{t!r} is not a transform")
    name = type(t).__name__
    if name == "RandomApply":
        return RandomApply(from_torchvision(list(t.transforms)), p=t.p)
    if name in ("RandomChoice", "RandomOrder"):  # each item converted first (a MixUp stays a batch one)
        items = [from_torchvision(item) for item in t.transforms]
        items = [i[0] if len(i) == 1 else i for i in items]
        return RandomChoice(items, p=getattr(t, "p", None)) if name == "RandomChoice" else RandomOrder(items)
    if name == "Lambda":
        return Lambda(t.lambd)
    if name in _CONVERSIONS:
        return _CONVERSIONS[name]()
    if name in ("ToDtype", "ConvertImageDtype"):
        return _to_dtype(t)
    cls = vars(sys.modules[__package__]).get(name)
    if not (isinstance(cls, type) and issubclass(cls, Transform)) or cls in (Compose, Transform):
        raise ValueError(f"torchvision's {name} has no sluice equivalent yet (docs/transforms.md lists what sluice has)")
    kwargs = {}
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name in _NOT_COPIED or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or not hasattr(t, p.name):
            continue
        value = getattr(t, p.name)
        if value is None:
            continue  # torchvision's "not set": sluice's default is torchvision's
        kwargs[p.name] = _plain(p.name, value)
    if name == "RandomErasing" and getattr(t, "value", 0) is None:  # torchvision's value="random"
        kwargs["value"] = "random"
    return cls(**kwargs)


def _plain(name: str, value: Any) -> Any:
    """torchvision's stored form of an argument as sluice's constructors take it."""
    if isinstance(value, dict):  # v2's fill per input type: one value for all of them, or refused
        values = {repr(v) for v in value.values()}
        if len(values) != 1:
            raise ValueError(f"{name} differs per input type ({value!r}); sluice takes one value")
        value = next(iter(value.values()))
        return 0 if value is None else value
    return value


def _to_dtype(t: Any) -> Transform:
    """ToDtype / ConvertImageDtype: to a float dtype (scaled to [0, 1]) is ToTensor; to uint8
    leaves the image as it is. The output dtype itself is the Loader's ``dtype``."""
    dtype = getattr(t, "dtype", None)
    if isinstance(dtype, dict):
        dtype = next(iter(dtype.values()))
    text = str(dtype)
    scale = getattr(t, "scale", True)  # ConvertImageDtype always scales
    if "float" in text and scale:
        return ToTensor()
    if text.endswith("uint8"):
        return Identity()
    raise ValueError(f"to {text}{'' if scale else ' without scale=True'} is not supported: the output dtype is the "
                     f"Loader's dtype ('uint8', 'float16', 'float32'), float values scaled to [0, 1]")
