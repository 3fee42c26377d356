"""A transform list as the C++ loader takes it: flattened, split into the per-sample transforms
(compiled to C++ descriptions) and the trailing batch transforms (applied in Python)."""
from __future__ import annotations

import functools
import types
from typing import Any, Sequence

from .. import _core
from .base import Compose, Transform
from .batch import BatchTransform
from .containers import RandomApply
from .finish import GaussianNoise, Normalize, RandomErasing, ToTensor
from .from_torchvision import from_torchvision, is_torchvision
from .functions import Lambda


def compile_specs(transforms: Sequence[Transform], as_torch: bool, holders: list) -> list[Any]:
    """The C++ specs of a flat list. A Lambda after ToTensor or Normalize runs on the finished
    sample (a torch tensor when `as_torch`), before them on the uint8 pixels; the user functions
    go into `holders`, which the caller keeps while the specs are in use. A RandomApply becomes
    its marker (with the number of specs it gates) followed by its transforms' specs."""
    return _compile(transforms, False, as_torch, holders)[0]


def _compile(transforms: Sequence[Transform], finished: bool, as_torch: bool, holders: list) -> tuple[list, bool]:
    """The specs of `transforms`, and whether the sample is finished after them."""
    specs = []
    for t in transforms:
        if isinstance(t, RandomApply):
            inner, _ = _compile(t.transforms, finished, as_torch, holders)
            if inner:  # markers alone (Identity) gate nothing
                specs.append(_core.transforms.make("RandomApply", dict(count=len(inner), p=t.p)))
                specs.extend(inner)
            continue
        if isinstance(t, BatchTransform):  # no C++ spec: the loader applies it to whole batches
            continue
        if isinstance(t, (ToTensor, Normalize)):
            finished = True
        if isinstance(t, Lambda):
            specs.append(t._spec_at(finished, as_torch and finished, holders))
            continue
        if isinstance(t, RandomErasing):  # its value is in the scale of the sample there
            specs.append(_core.transforms.make("RandomErasing", t._fields_at(finished)))
            continue
        if isinstance(t, GaussianNoise) and not finished:
            raise ValueError("GaussianNoise before ToTensor is not supported: it adds noise to the float "
                             "tensor; put it after ToTensor")
        spec = t._spec()
        if spec is not None:
            specs.append(spec)
    return specs, finished


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
    if is_torchvision(transform):
        return from_torchvision(transform)
    if isinstance(transform, (list, tuple)):
        return [t for item in transform for t in flatten(item)]
    if isinstance(transform, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)):
        return [Lambda(transform)]  # a plain function, as torchvision's Lambda would hold it
    raise TypeError(f"transform must be a sluice or torchvision transform, a function, a list of them or a "
                    f"Compose, got {type(transform).__name__}: {transform!r}")
