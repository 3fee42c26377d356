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

from .base import RGB, Compose, Identity, InterpolationMode, ToImage, Transform
from .batch import BatchLambda, BatchRandomChoice, BatchTransform, CutMix, MixUp, _common_num_classes
from .color import (AugMix, AutoAugment, AutoAugmentPolicy, ColorJitter, GaussianBlur, Grayscale, RandAugment, RandomAdjustSharpness,
                    RandomAutocontrast, RandomChannelPermutation, RandomEqualize, RandomGrayscale, RandomInvert,
                    RandomPhotometricDistort, RandomPosterize, RandomSolarize, TrivialAugmentWide)
from .compile import compile_specs, flatten, split_batch_functions
from .containers import RandomApply, RandomChoice, RandomOrder
from .from_torchvision import from_torchvision
from .finish import Cutout, GaussianNoise, GridMask, Normalize, RandomErasing, ToTensor
from .functions import Lambda
from .multi_crop import FiveCrop, TenCrop
from .geometry import (CenterCrop, ElasticTransform, Pad, RandomAffine, RandomCrop, RandomHorizontalFlip,
                       RandomPerspective, RandomResizedCrop, RandomRotation, RandomVerticalFlip, Resize)
from .random_size import RandomResize, RandomShortestSize, RandomZoomOut, ScaleJitter

__all__ = [
    "InterpolationMode",
    "Transform",
    "Compose",
    "RandomApply",
    "RandomOrder",
    "Identity",
    "RGB",
    "ToImage",
    "RandomResizedCrop",
    "Resize",
    "CenterCrop",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "Pad",
    "RandomResize",
    "RandomShortestSize",
    "ScaleJitter",
    "RandomZoomOut",
    "RandomRotation",
    "RandomAffine",
    "RandomPerspective",
    "ElasticTransform",
    "Cutout",
    "RandomErasing",
    "ColorJitter",
    "RandomGrayscale",
    "Grayscale",
    "RandomSolarize",
    "RandomInvert",
    "RandomPosterize",
    "RandomAutocontrast",
    "RandomEqualize",
    "RandomAdjustSharpness",
    "RandomChannelPermutation",
    "RandomPhotometricDistort",
    "GaussianBlur",
    "RandAugment",
    "TrivialAugmentWide",
    "AutoAugment",
    "AugMix",
    "AutoAugmentPolicy",
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
    "FiveCrop",
    "TenCrop",
    "from_torchvision",
]
