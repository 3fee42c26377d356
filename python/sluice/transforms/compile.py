"""A transform list as the C++ loader takes it: flattened, split into the per-sample transforms
(compiled to C++ descriptions) and the trailing batch transforms (applied in Python)."""
from __future__ import annotations

import functools
import types
from typing import Any, Sequence

from .. import _core
from .base import Compose, Identity, Transform
from .batch import BatchLambda, BatchTransform
from .containers import RandomApply, RandomChoice, RandomOrder
from .finish import GaussianNoise, Normalize, RandomErasing, ToTensor
from .from_torchvision import from_torchvision, is_torchvision
from .functions import Lambda
from .multi_crop import FiveCrop


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
        if isinstance(t, (RandomChoice, RandomOrder)):  # a marker, then each item behind its own
            specs.append(t._marker())
            for item in t.transforms:
                inner, _ = _compile(item, finished, as_torch, holders)
                specs.append(_core.transforms.make("ChoiceOption" if isinstance(t, RandomChoice) else "OrderItem",
                                                   dict(count=len(inner))))
                specs.extend(inner)
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


# What may follow FiveCrop/TenCrop: per-pixel finishing and the no-ops, which commute with
# cropping, so they are applied before it, to each sample.
_COMMUTES_WITH_CROPS = (ToTensor, Normalize, Identity)


def runs_on_cpu(transforms: Sequence[Transform]) -> bool:
    """Whether a per-sample list holds a transform only the CPU path runs (a user function, an
    ElasticTransform), also inside RandomApply, RandomChoice or RandomOrder."""
    for t in transforms:
        if isinstance(t, Lambda) or getattr(t, "cpu_only", False):
            return True
        inner = getattr(t, "transforms", None)
        if isinstance(t, (RandomApply, RandomChoice, RandomOrder)) and runs_on_cpu(
                [x for item in inner for x in (item if isinstance(item, list) else [item])]):
            return True
    return False


def split_batch_functions(transforms: Sequence[Transform]) -> tuple[list[Transform], list[BatchTransform]]:
    """A flat list as (the per-sample transforms, the trailing batch transforms in order:
    BatchLambda, MixUp, CutMix, RandomChoice, in any order among themselves; or FiveCrop or
    TenCrop first, then only BatchLambda). ToTensor, Normalize (and Identity, RGB, ToImage) right
    after a FiveCrop or TenCrop are moved before it, to the per-sample transforms: they work per
    pixel, so they commute with cropping. Raises ValueError, naming both, when anything else
    comes after a batch transform, FiveCrop or TenCrop is not the first batch transform, or
    MixUp, CutMix or RandomChoice follows it."""
    per_sample, batch, _ = split_positions(transforms)
    return per_sample, batch


def split_positions(transforms: Sequence[Transform]) -> tuple[list[Transform], list[BatchTransform], list[int]]:
    """split_batch_functions's two lists, and the batch transforms' positions in `transforms`."""
    per_sample: list[Transform] = []
    batch: list[BatchTransform] = []
    positions: list[int] = []
    for i, t in enumerate(transforms):
        if isinstance(t, BatchTransform):
            _check_after(batch, t)
            batch.append(t)
            positions.append(i)
        elif not batch or (isinstance(t, _COMMUTES_WITH_CROPS) and isinstance(batch[-1], FiveCrop)):
            per_sample.append(t)
        else:
            last = batch[-1]
            what = t._name() if isinstance(t, Lambda) else type(t).__name__
            hint = (" (only ToTensor and Normalize may follow it: they work per pixel, so they are applied "
                    "before it)" if isinstance(last, FiveCrop) else "")
            raise ValueError(f"{what} after {last._name()} is not supported: {type(last).__name__} runs on whole "
                             f"finished batches, so it must come after every other transform{hint}")
    return per_sample, batch, positions


def _check_after(batch: list[BatchTransform], t: BatchTransform) -> None:
    """ValueError when batch transform `t` may not follow those of `batch`: FiveCrop and TenCrop
    come first, and only BatchLambda after them."""
    if isinstance(t, FiveCrop) and batch:
        raise ValueError(f"{t._name()} after {batch[-1]._name()} is not supported: {t._name()} must be the first "
                         "batch transform (its batches gain a crop axis)")
    if batch and isinstance(batch[0], FiveCrop) and not isinstance(t, BatchLambda):
        raise ValueError(f"{t._name()} after {batch[0]._name()} is not supported: only BatchLambda may follow "
                         f"{batch[0]._name()} (its batches are stacks of crops, N x {batch[0]._n_crops} x ...)")


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
