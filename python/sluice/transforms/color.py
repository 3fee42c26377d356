"""Pixel transforms on the resampled uint8 image: colour adjustments, blur, and the automatic
augmentation policies. They run after the crops, resizes and padding of the list."""
from __future__ import annotations

import enum
from typing import Any, Sequence

from . import _forms
from .base import InterpolationMode, Transform


def _jitter_range(name: str, value: Any, center: float, clip_first_on_zero: bool) -> tuple[float, float]:
    """torchvision ColorJitter._check_input's forms: a number v gives [center - v, center + v]
    (the low end clipped at 0 for the factors), a pair is (min, max)."""
    if _forms.is_number(value):
        if value < 0:
            raise ValueError(f"ColorJitter: if {name} is a single number, it must be non negative, got {value!r}")
        lo, hi = center - float(value), center + float(value)
        return (max(lo, 0.0) if clip_first_on_zero else lo), hi
    if isinstance(value, Sequence) and len(value) == 2 and all(_forms.is_number(v) for v in value):
        return float(value[0]), float(value[1])
    raise TypeError(f"ColorJitter: {name} should be a single number or a sequence of two numbers, got {value!r}")


class ColorJitter(Transform):
    """Randomly change brightness, contrast, saturation and hue, in a random order per sample
    (torchvision's ``ColorJitter``, with ``transforms.v2.functional``'s uint8 formulas).

    Each argument is a number ``v`` (factors drawn from ``[max(0, 1 - v), 1 + v]``; for hue,
    shifts from ``[-v, v]`` with ``0 <= v <= 0.5``) or a ``(min, max)`` pair. Colour transforms
    run on the image the crops and resizes before them produce; put them after those."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = _jitter_range("brightness", brightness, 1.0, True)
        self.contrast = _jitter_range("contrast", contrast, 1.0, True)
        self.saturation = _jitter_range("saturation", saturation, 1.0, True)
        self.hue = _jitter_range("hue", hue, 0.0, False)
        self._spec()

    def _fields(self):
        return dict(brightness=self.brightness, contrast=self.contrast, saturation=self.saturation, hue=self.hue)


class RandomGrayscale(Transform):
    """With probability ``p``, the image's luma (0.2989 R + 0.587 G + 0.114 B) in all three
    channels (torchvision's ``RandomGrayscale``)."""

    def __init__(self, p: float = 0.1):
        self.p = p
        self._spec()

    def _fields(self):
        return dict(p=self.p)


class RandomSolarize(Transform):
    """torchvision's ``RandomSolarize``: with probability ``p``, every channel value at or above
    ``threshold`` (a pixel value) becomes ``255 - value``. Put it after the crops and resizes."""

    def __init__(self, threshold: float, p: float = 0.5):
        self.threshold, self.p = threshold, p
        self._spec()

    def _fields(self):
        return dict(threshold=self.threshold, p=self.p)


class RandomInvert(Transform):
    """torchvision's ``RandomInvert``: with probability ``p``, every channel value ``v`` becomes
    ``255 - v``. Put it after the crops and resizes."""

    def __init__(self, p: float = 0.5):
        self.p = p
        self._spec()

    def _fields(self):
        return dict(p=self.p)


class RandomPosterize(Transform):
    """torchvision's ``RandomPosterize``: with probability ``p``, every channel value keeps its
    ``bits`` high bits (0 to 8; 8 leaves the image alone)."""

    def __init__(self, bits: int, p: float = 0.5):
        self.bits, self.p = bits, p
        self._spec()

    def _fields(self):
        return dict(bits=self.bits, p=self.p)


class RandomAutocontrast(Transform):
    """torchvision's ``RandomAutocontrast``: with probability ``p``, each channel stretched so
    that its darkest value becomes 0 and its brightest 255 (a flat channel is left alone)."""

    def __init__(self, p: float = 0.5):
        self.p = p
        self._spec()

    def _fields(self):
        return dict(p=self.p)


class RandomEqualize(Transform):
    """torchvision's ``RandomEqualize``: with probability ``p``, each channel's histogram
    equalized (PIL's ``ImageOps.equalize`` table, as torchvision's)."""

    def __init__(self, p: float = 0.5):
        self.p = p
        self._spec()

    def _fields(self):
        return dict(p=self.p)


class RandomAdjustSharpness(Transform):
    """torchvision's ``RandomAdjustSharpness``: with probability ``p``, the image blended with
    its 3 x 3 smoothed copy by ``sharpness_factor`` (0: smoothed, 1: unchanged, 2: twice as
    sharp; the border pixels are kept). A filter pass like :class:`GaussianBlur`."""

    def __init__(self, sharpness_factor: float, p: float = 0.5):
        self.sharpness_factor, self.p = sharpness_factor, p
        self._spec()

    def _fields(self):
        return dict(sharpness_factor=self.sharpness_factor, p=self.p)


class RandomChannelPermutation(Transform):
    """torchvision's ``RandomChannelPermutation``: the three channels in an order drawn per sample,
    uniformly from the six (the unchanged order among them). Put it after the crops and resizes."""

    def __init__(self):
        self._spec()

    def _fields(self):
        return {}


class RandomPhotometricDistort(Transform):
    """torchvision's ``RandomPhotometricDistort``: with probability ``p`` each, a brightness,
    contrast, saturation and hue adjustment (ColorJitter's formulas) with its factor drawn from
    its ``(min, max)`` range; the contrast before the saturation or after the hue at even odds;
    then, with probability ``p``, the channels in a random order."""

    def __init__(self, brightness=(0.875, 1.125), contrast=(0.5, 1.5), saturation=(0.5, 1.5),
                 hue=(-0.05, 0.05), p: float = 0.5):
        self.brightness, self.contrast, self.saturation, self.hue, self.p = brightness, contrast, saturation, hue, p
        self._spec()

    def _fields(self):
        return dict(brightness=tuple(self.brightness), contrast=tuple(self.contrast),
                    saturation=tuple(self.saturation), hue=tuple(self.hue), p=self.p)


class Grayscale(Transform):
    """torchvision's ``Grayscale``: the image's luma in every channel, always (as
    :class:`RandomGrayscale` with ``p=1``). sluice's outputs have 3 channels, so
    ``num_output_channels`` must be 3."""

    random = False

    def __init__(self, num_output_channels: int = 1):
        if num_output_channels != 3:
            raise ValueError(f"Grayscale: num_output_channels={num_output_channels!r} is not supported: sluice's "
                             f"outputs have 3 channels; use Grayscale(num_output_channels=3), the luma in all three")
        self.num_output_channels = num_output_channels
        self._spec()

    def _op(self) -> str:
        return "RandomGrayscale"

    def _fields(self):
        return dict(p=1.0)


class GaussianBlur(Transform):
    """torchvision's ``GaussianBlur``: a Gaussian kernel of ``kernel_size`` (an odd int, or
    (width, height), at most 63) with sigma drawn uniformly from ``sigma`` (a number, or
    ``(min, max)``) per sample, reflect padding. Runs on the uint8 image like the colour
    transforms (on the GPU, one kernel per batch); put it after the crops and resizes."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        owner = "GaussianBlur"
        if _forms.is_int(kernel_size):
            ks = (int(kernel_size), int(kernel_size))
        elif (isinstance(kernel_size, Sequence) and len(kernel_size) in (1, 2)
              and all(_forms.is_int(k) for k in kernel_size)):
            ks = (int(kernel_size[0]), int(kernel_size[-1]))
        else:
            raise TypeError(f"{owner}: kernel_size must be an int or a sequence of two ints, got {kernel_size!r}")
        if _forms.is_number(sigma):
            if not sigma > 0:
                raise ValueError(f"{owner}: if sigma is a single number, it must be positive, got {sigma!r}")
            sg = (float(sigma), float(sigma))
        elif isinstance(sigma, Sequence) and len(sigma) in (1, 2) and all(_forms.is_number(v) for v in sigma):
            sg = (float(sigma[0]), float(sigma[-1]))
        else:
            raise TypeError(f"{owner}: sigma must be a number or a sequence of two numbers, got {sigma!r}")
        self.kernel_size, self.sigma = ks, sg
        self._spec()

    def _fields(self):
        return dict(kernel_w=self.kernel_size[0], kernel_h=self.kernel_size[1], sigma=self.sigma)


class RandAugment(Transform):
    """torchvision's ``RandAugment`` on the uint8 image: ``num_ops`` ops drawn per sample from its
    14 (Identity, ShearX, ShearY, TranslateX, TranslateY, Rotate, Brightness, Color, Contrast,
    Sharpness, Posterize, Solarize, AutoContrast, Equalize), each at bin ``magnitude`` of
    ``num_magnitude_bins`` with torchvision's magnitudes and random signs. Shears, translations
    and rotations use ``interpolation`` (NEAREST or BILINEAR) and ``fill``. Put it after the crops,
    resizes and flips (no flip may follow it); on the GPU each op is at most two kernels."""

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        self.num_ops, self.magnitude, self.num_magnitude_bins = num_ops, magnitude, num_magnitude_bins
        self.interpolation, self.fill = interpolation, fill
        self._fill = _forms.fill("RandAugment", 0 if fill is None else fill)
        self._spec()

    def _fields(self):
        return dict(num_ops=self.num_ops, magnitude=self.magnitude, num_magnitude_bins=self.num_magnitude_bins,
                    interpolation=_forms.interpolation(self.interpolation), fill=self._fill)


class AutoAugmentPolicy(enum.Enum):
    """torchvision's AutoAugmentPolicy: the policies learned on each dataset."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


class AutoAugment(Transform):
    """torchvision's ``AutoAugment``: per sample, one of the ``policy``'s 25 sub-policies; each of
    its two ops applied with its probability, at its magnitude (RandAugment's ops and tables with
    10 bins, and Invert). ``policy`` is an :class:`AutoAugmentPolicy` (or torchvision's, or its
    name). Placement, ``interpolation`` and ``fill`` as :class:`RandAugment`."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        name = getattr(policy, "value", policy)
        names = [p.value for p in AutoAugmentPolicy]
        if name not in names:
            raise ValueError(f"AutoAugment: policy must be one of {names} (AutoAugmentPolicy), got {policy!r}")
        self.policy = AutoAugmentPolicy(name)
        self.interpolation, self.fill = interpolation, fill
        self._fill = _forms.fill("AutoAugment", 0 if fill is None else fill)
        self._spec()

    def _fields(self):
        return dict(policy=[p for p in AutoAugmentPolicy].index(self.policy),
                    interpolation=_forms.interpolation(self.interpolation), fill=self._fill)


class AugMix(Transform):
    """torchvision's ``AugMix``: per sample, ``mixture_width`` chains of ``chain_depth`` ops (1 to
    3, drawn, when -1) from the auto-augment ops (with brightness, color, contrast and sharpness
    when ``all_ops``), each at a magnitude bin below ``severity``, mixed with the image by
    Dirichlet(``alpha``) weights. Put it after the crops and resizes. Computed on the CPU
    threads: with ``device="cuda"`` a list with it runs there and its batches are copied over."""

    cpu_only = True

    def __init__(self, severity: int = 3, mixture_width: int = 3, chain_depth: int = -1, alpha: float = 1.0,
                 all_ops: bool = True, interpolation=InterpolationMode.BILINEAR, fill=None):
        self.severity, self.mixture_width, self.chain_depth = severity, mixture_width, chain_depth
        self.alpha, self.all_ops, self.interpolation, self.fill = alpha, all_ops, interpolation, fill
        self._fill = _forms.fill("AugMix", 0 if fill is None else fill)
        self._spec()

    def _fields(self):
        return dict(severity=self.severity, mixture_width=self.mixture_width, chain_depth=self.chain_depth,
                    alpha=self.alpha, all_ops=self.all_ops, interpolation=_forms.interpolation(self.interpolation),
                    fill=self._fill, has_fill=self.fill is not None)


class TrivialAugmentWide(Transform):
    """torchvision's ``TrivialAugmentWide``: one op per sample from RandAugment's 14, at a
    magnitude bin drawn uniformly from ``num_magnitude_bins``, with the wide ranges. Placement,
    ``interpolation`` and ``fill`` as :class:`RandAugment`."""

    def __init__(self, num_magnitude_bins: int = 31, interpolation=InterpolationMode.NEAREST, fill=None):
        self.num_magnitude_bins, self.interpolation, self.fill = num_magnitude_bins, interpolation, fill
        self._fill = _forms.fill("TrivialAugmentWide", 0 if fill is None else fill)
        self._spec()

    def _fields(self):
        return dict(num_magnitude_bins=self.num_magnitude_bins, interpolation=_forms.interpolation(self.interpolation),
                    fill=self._fill)
