"""Batch transforms: BatchLambda, MixUp, CutMix and RandomChoice of them. They run in Python (torch
or NumPy ops) on each whole batch the loader hands out, with parameters from ``(seed, epoch,
batch index, position in the list)``; they come last in a list."""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Sequence

from . import _forms
from .base import Transform
from .containers import RandomChoice


def _size(owner: str, height: Any, width: Any) -> tuple[int, int]:
    """The batch's (height, width), for a draw."""
    if not (_forms.is_int(height) and _forms.is_int(width)):
        raise TypeError(f"{owner}.draw: (height, width) must be two ints, got {(height, width)!r}")
    if height <= 0 or width <= 0:
        raise ValueError(f"{owner}.draw: (height, width) must be positive, got {(height, width)!r}")
    return int(height), int(width)


# Mixed into every batch-transform key, so that these draws share no stream with anything else
# seeded from the same numbers.
_BATCH_DOMAIN = 0x736C756963652D62  # "sluice-b"


def _key_part(owner: str, name: str, value: Any) -> int:
    if not _forms.is_int(value) or value < 0:
        raise ValueError(f"{owner}.draw: {name} must be an int >= 0, got {value!r}")
    return int(value)


class BatchTransform(Transform):
    """Base of the transforms that run on whole batches: :class:`BatchLambda`, :class:`MixUp`,
    :class:`CutMix` and :class:`RandomChoice` of them. They have no C++ spec: the loader applies
    them, in list order, to each batch it hands out (in the process that iterates it, when the
    batch is taken), after every per-sample transform, so they come last in the list (in any
    order among themselves).

    Their random choices come from a NumPy ``Generator`` (PCG64) seeded with
    ``(seed, epoch, batch index, position)``, plus the rank and, for an epoch resumed under
    other settings, a digest of what was consumed before (:meth:`draw`), never from torch's or
    NumPy's global generator: the same loader settings give the same draws, whatever the
    device, thread count or timing."""

    _random = False  # whether draw() consumes random numbers

    def _name(self) -> str:  # the name users write (RandomChoice makes a BatchRandomChoice)
        return "RandomChoice" if isinstance(self, RandomChoice) else type(self).__name__

    def _fields(self):
        return None  # applied by the loader in Python, to whole batches

    def _mixers(self) -> list:
        """The label-mixing transforms (MixUp, CutMix) in this one, nested ones included."""
        return []

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        return {}

    def draw(self, seed: int, epoch: int, batch_index: int, position: int, height: int, width: int,
             *, rank: int = 0, schedule: int = 0) -> dict:
        """The random parameters this transform uses for one batch: the loader's ``seed``, the
        ``epoch``, the batch's number within the epoch (``batch_index``, 0 first, as counted by
        the loader's schedule, so a resumed epoch goes on with the numbers the interrupted run
        would have used), the transform's ``position`` in the loader's flattened transform list,
        the images' ``height`` and ``width``, the loader's ``rank`` and ``schedule`` (0 unless
        the epoch was resumed with another batch size, world size or last_batch; then a digest
        of the samples consumed before). The same arguments give the same dict."""
        owner = self._name()
        h, w = _size(owner, height, width)
        if not self._random:
            return self._draw(None, h, w)
        import numpy as np  # noqa: PLC0415

        key = [_key_part(owner, n, v) for n, v in (("seed", seed), ("epoch", epoch),
                                                    ("batch_index", batch_index), ("position", position),
                                                    ("rank", rank), ("schedule", schedule))]
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([_BATCH_DOMAIN, *key])))
        return self._draw(rng, h, w)


class BatchLambda(BatchTransform):
    """Run ``fn`` on each whole batch of images, once per batch, in the process that iterates
    the loader (when the batch is taken), after every per-sample transform: it must come last
    in the list (several in a row run in order, mixed with other batch transforms in any
    order). Labels are not passed.

    ``fn`` gets the batch as the loader yields it: a torch tensor ``N x C x H x W`` (``N x H x W
    x C`` with ``layout="NHWC"``) in the loader's ``dtype``, on the loader's device, and returns
    a tensor of the same shape, dtype and device (or changes its argument in place and returns
    it). With ``device="cuda"`` it runs on a CUDA stream the loader owns, which first waits for
    the stream current when the batch is taken; that stream then waits for it, so the result
    is ready there as a batch without ``BatchLambda`` is. With ``output="numpy"`` (or without
    torch) ``fn`` gets a NumPy array and returns an array of the same shape and dtype (or
    changes its argument in place and returns it). It is not called for an empty batch (``on_error="skip"`` when every file of a batch
    failed).

    A return of another kind, shape, dtype or device raises TypeError or ValueError naming
    ``BatchLambda(<fn's name>)``; an exception raised by ``fn`` propagates with a note naming it
    (on Python < 3.11, which has no notes, as a RuntimeError naming it, chained to the original).
    The images must have a fixed size (batches that are tensors, not lists), or it must come after
    :class:`FiveCrop` or :class:`TenCrop`: then ``fn`` gets their stacked crops, ``N x 5 x C x h x w``."""

    def __init__(self, fn):
        if not callable(fn):
            raise TypeError(f"BatchLambda: argument should be callable, got {type(fn).__name__}")
        self.fn = fn

    def _name(self) -> str:
        name = getattr(self.fn, "__name__", None) or type(self.fn).__name__
        return f"BatchLambda({name})"


class _MixBase(BatchTransform):
    """MixUp and CutMix: arguments as torchvision.transforms.v2's (keyword-only)."""

    _random = True

    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None,
                 labels_getter: Any = "default"):
        owner = type(self).__name__
        if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool):
            raise TypeError(f"{owner}: alpha must be a number, got {alpha!r}")
        if not float(alpha) > 0:
            raise ValueError(f"{owner}: alpha must be > 0, got {alpha!r}")
        if not math.isfinite(float(alpha)):
            raise ValueError(f"{owner}: alpha must be finite, got {alpha!r}")
        if num_classes is None:
            raise ValueError(f"{owner}: num_classes is required: the loader's labels are class indices, "
                             f"which become one-hot rows of num_classes columns (e.g. "
                             f"{owner}(num_classes=len(loader.classes)))")
        if not _forms.is_int(num_classes):
            raise TypeError(f"{owner}: num_classes must be a positive int, got {num_classes!r}")
        if num_classes < 1:
            raise ValueError(f"{owner}: num_classes must be a positive int, got {num_classes!r}")
        if not (isinstance(labels_getter, str) and labels_getter == "default"):
            raise ValueError(f"{owner}: labels_getter must be 'default' (the loader passes the batch's "
                             f"labels itself), got {labels_getter!r}")
        self.alpha = float(alpha)
        self.num_classes = int(num_classes)

    def _mixers(self) -> list:
        return [self]


class MixUp(_MixBase):
    """torchvision.transforms.v2's ``MixUp`` on each batch the loader hands out: with
    ``lam ~ Beta(alpha, alpha)`` drawn per batch (:meth:`draw` gives ``{"lam": lam}``),
    ``images = lam * images + (1 - lam) * images.roll(1, 0)``, and the labels, made one-hot,
    mixed the same way.

    Labels: with any MixUp or CutMix in the list, every batch's labels come out as float32
    ``N x num_classes`` (one-hot, then mixed; one-hot alone for a batch no mixing transform
    touched, e.g. one where a :class:`RandomChoice` picked a BatchLambda), on the labels' device.
    Every label of the dataset must lie in ``[0, num_classes)``: the loader checks when it is
    made. ``num_classes`` is required (the loader's labels are class indices).

    Images: float32 or float16 only (``dtype="uint8"`` is refused when the loader is made);
    computed in float32 (float16 batches are converted and the result rounded back), as
    ``images.roll(1, 0) * (1 - lam) + images * lam`` with both factors rounded to float32, the
    same on the CPU and on the GPU. Like :class:`BatchLambda` it runs in the process that
    iterates the loader, on the loader's CUDA stream with ``device="cuda"``, on NumPy arrays
    with ``output="numpy"``.

    The pairing is ``roll(1, 0)`` over the batch as it arrives: a short last batch, a batch
    with ``on_error="skip"`` gaps, or a ``last_batch="pad"`` batch mixes what it holds (padding
    repeats included; ``valid`` still marks the repeats, whose content may now be in their
    neighbours); in a batch of one the image is mixed with itself. An empty batch is left as it
    is (its labels are ``0 x num_classes``)."""

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        return {"lam": float(rng.beta(self.alpha, self.alpha))}


class CutMix(_MixBase):
    """torchvision.transforms.v2's ``CutMix`` on each batch the loader hands out: per batch,
    ``lam ~ Beta(alpha, alpha)``, a centre ``r_x`` in ``[0, W)`` and ``r_y`` in ``[0, H)``; the box
    of half-sides ``int(0.5 * sqrt(1 - lam) * W)`` and ``int(0.5 * sqrt(1 - lam) * H)`` about it,
    clipped to the image (:meth:`cut_box`), is pasted from ``images.roll(1, 0)`` into every image
    of the batch, and the one-hot labels are mixed as ``lam_adjusted * labels + (1 -
    lam_adjusted) * labels.roll(1, 0)`` with ``lam_adjusted = 1 - box area / (H * W)``.
    :meth:`draw` gives ``{"lam", "center": (r_x, r_y), "box": (x1, y1, x2, y2),
    "lam_adjusted"}``. The box is in the image's rows and columns with either ``layout``.

    Labels, pairing, short, padded and empty batches, and where it runs: as :class:`MixUp`.
    Images keep their values and dtype (pixels are copied, not blended), so uint8 batches are
    accepted."""

    @staticmethod
    def cut_box(lam: float, r_x: int, r_y: int, height: int, width: int) -> tuple[tuple[int, int, int, int], float]:
        """((x1, y1, x2, y2), lam_adjusted): torchvision's CutMix box for ``lam`` and the centre
        ``(r_x, r_y)``, on an image of ``height x width``; rows ``y1:y2``, columns ``x1:x2``."""
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * width), int(r * height)
        x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
        x2, y2 = min(r_x + r_w_half, width), min(r_y + r_h_half, height)
        return (x1, y1, x2, y2), float(1.0 - (x2 - x1) * (y2 - y1) / (width * height))

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        lam = float(rng.beta(self.alpha, self.alpha))
        r_x, r_y = int(rng.integers(width)), int(rng.integers(height))
        box, lam_adjusted = self.cut_box(lam, r_x, r_y, height, width)
        return {"lam": lam, "center": (r_x, r_y), "box": box, "lam_adjusted": lam_adjusted}


def _common_num_classes(transforms: Iterable[BatchTransform]) -> int | None:
    """The num_classes every MixUp and CutMix among `transforms` has (None if there are none);
    ValueError naming two that differ."""
    first = None
    for t in transforms:
        for m in t._mixers():
            if first is None:
                first = m
            elif m.num_classes != first.num_classes:
                raise ValueError(
                    f"{m._name()}: num_classes={m.num_classes} differs from {first._name()}'s "
                    f"num_classes={first.num_classes}; the labels become one N x num_classes array, so "
                    "every MixUp and CutMix of a loader needs the same num_classes")
    return None if first is None else first.num_classes


class BatchRandomChoice(BatchTransform, RandomChoice):
    """torchvision's ``RandomChoice`` of batch transforms (what ``RandomChoice`` of them makes): per
    batch, one of ``transforms``
    (:class:`MixUp`, :class:`CutMix`, :class:`BatchLambda` or another RandomChoice), picked
    with the weights ``p`` (default: equal; normalized to sum 1, as torchvision does), e.g.
    ``RandomChoice([CutMix(num_classes=1000), MixUp(num_classes=1000)])``. The pick and the
    picked transform's parameters come from the same per-batch generator; :meth:`draw` gives
    ``{"index": i, "transform": transforms[i], "params": transforms[i]'s draw}``. With a MixUp or
    CutMix among ``transforms``, every batch's labels are one-hot (see :class:`MixUp`), whichever
    is picked."""

    _random = True

    def __init__(self, transforms: Sequence[BatchTransform], p: Sequence[float] | None = None):
        owner = "RandomChoice"
        if not isinstance(transforms, Sequence) or isinstance(transforms, (str, bytes)):
            raise TypeError(f"{owner}: transforms must be a sequence of batch transforms, got "
                            f"{type(transforms).__name__}")
        items = list(transforms)
        if not items:
            raise ValueError(f"{owner}: transforms must not be empty")
        for i, t in enumerate(items):
            if not isinstance(t, BatchTransform):
                raise TypeError(f"{owner}: item {i} is {t!r}, not a batch transform: RandomChoice picks one "
                                "of MixUp, CutMix, BatchLambda or RandomChoice per batch (per-sample "
                                "transforms go before it in the loader's list)")
            if getattr(t, "_stacks_crops", False):
                raise ValueError(f"{owner}: item {i} is {t._name()}, which gives every batch a crop axis: it "
                                 "cannot be a random pick (put it first among the batch transforms)")
        if p is None:
            weights = [1.0] * len(items)
        else:
            if not isinstance(p, Sequence) or isinstance(p, (str, bytes)) or len(p) != len(items):
                raise ValueError(f"{owner}: p must hold one weight per transform ({len(items)}), got {p!r}")
            if not all(isinstance(w, numbers.Real) and not isinstance(w, bool) for w in p):
                raise TypeError(f"{owner}: p must hold numbers, got {p!r}")
            weights = [float(w) for w in p]
            if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
                raise ValueError(f"{owner}: p must hold finite weights >= 0 with a positive sum, got {p!r}")
        _common_num_classes(items)
        total = sum(weights)
        self.transforms = items
        self.p = [w / total for w in weights]

    def _mixers(self) -> list:
        return [m for t in self.transforms for m in t._mixers()]

    def _draw(self, rng: Any, height: int, width: int) -> dict:
        i = int(rng.choice(len(self.transforms), p=self.p))
        chosen = self.transforms[i]
        return {"index": i, "transform": chosen, "params": chosen._draw(rng, height, width)}
