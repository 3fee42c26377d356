"""The batch transforms of a loader's list (BatchLambda, MixUp, CutMix, RandomChoice, FiveCrop,
TenCrop), applied
to each batch it hands out, in the process that iterates it: on the batch's device, on a CUDA
stream of the loader's when the batch is on a GPU."""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from .transforms import BatchLambda, CutMix, FiveCrop, MixUp, _common_num_classes
from .transforms.batch import BatchRandomChoice as RandomChoice
from .transforms.compile import split_positions


class BatchFunctions:
    """The trailing batch transforms of a flat transform list, with what they need: their
    positions in the list (part of the key of their draws), the one-hot label width (MixUp,
    CutMix), and the CUDA streams they run on."""

    def __init__(self, transforms: Sequence[Any]):
        self.per_sample, self.transforms, self.positions = split_positions(transforms)
        # FiveCrop or TenCrop, which comes first when there is one, else None.
        self.crop = next((t for t in self.transforms[:1] if isinstance(t, FiveCrop)), None)
        self.dtype = "float32"  # the loader's (check_dtype), for the crops of an empty list batch
        self.num_classes = _common_num_classes(self.transforms)
        self.mixers = [m for t in self.transforms for m in t._mixers()]
        self._streams: dict = {}  # CUDA device index -> the stream they run on

    def check_dtype(self, dtype: str) -> None:
        self.dtype = dtype
        if dtype == "uint8" and any(isinstance(m, MixUp) for m in self.mixers):
            raise ValueError("MixUp needs float images (dtype float32 or float16), got dtype='uint8': it "
                             "blends pixel values; use dtype='float32' or 'float16' (CutMix, which copies "
                             "pixels, accepts uint8)")

    def check_loader(self, image_size: Any, samples: Any) -> None:
        """ValueError when the loader's batches cannot take them: images of varying size (but for
        FiveCrop and TenCrop), images smaller than FiveCrop's or TenCrop's crops, or a label
        outside [0, num_classes) for MixUp and CutMix."""
        if self.crop is not None and image_size is not None:
            self.crop.check_fits(*image_size, lambda: "the images (the transforms before it end in that size)")
        if self.transforms and self.crop is None and image_size is None:
            raise ValueError(
                f"{self.transforms[0]._name()} needs images of one size (batches that are one tensor), "
                "but these transforms do not end in a fixed size, so batches would be lists: end the "
                "per-sample transforms with a crop, RandomResizedCrop or Resize((h, w))")
        if self.mixers:
            bad = _label_outside(samples, self.num_classes)
            if bad is not None:
                raise ValueError(
                    f"{self.mixers[0]._name()}: label {bad[1]} of {bad[0]!r} is outside [0, num_classes) with "
                    f"num_classes={self.num_classes}: every label must be a class index below num_classes")

    def output_size(self, image_size: Any) -> Any:
        """The (height, width) of the images of the batches handed out: FiveCrop's or TenCrop's
        size when there is one, else that of the per-sample transforms' output."""
        return image_size if self.crop is None else self.crop.size

    def steps(self, key: dict, height: Any, width: Any) -> list[tuple[Any, dict]]:
        """(transform, its draw) per batch transform for the batch of `key` (seed, epoch, index,
        rank, schedule), a RandomChoice replaced by what it picked. The images are ``height x
        width`` (None for a list batch, which only FiveCrop and TenCrop take); after FiveCrop and
        TenCrop, their size."""
        out = []
        for position, t in zip(self.positions, self.transforms):
            if t is self.crop:
                out.append((t, {}))
                height, width = t.size
                continue
            params = t.draw(key["seed"], key["epoch"], key["index"], position, height, width, rank=key["rank"],
                            schedule=key["schedule"])
            while isinstance(t, RandomChoice):
                t, params = params["transform"], params["params"]
            out.append((t, params))
        return out

    def apply(self, images: Any, labels: Any, key: dict, size: tuple[int, int] | None, layout: str,
              as_torch: bool, *, where: Any = None, device: Any = None) -> tuple[Any, Any]:
        """The batch transforms applied in order to a batch (a tensor or an array; `size` its
        images' (height, width); with FiveCrop or TenCrop, also a list of images, `size` None)
        and its labels (made one-hot when there is a MixUp or CutMix), with the draws of `key`.
        `where(i)` names the batch's i-th sample in an error; `device` is where the crops of an
        empty list go. On the GPU they run on a stream of the loader's that waits for the current
        one, which then waits for it."""
        if len(images) == 0 and self.num_classes is None and self.crop is None:
            return images, labels
        steps = self.steps(key, *(size or (None, None)))
        crop = functools.partial(self._crop, layout=layout, as_torch=as_torch, where=where, device=device)
        first = images[0] if isinstance(images, list) and images else images
        if not as_torch or isinstance(first, list) or first.device.type != "cuda":
            return self._run(steps, images, labels, layout, as_torch, crop)
        import torch
        device = first.device
        with torch.cuda.device(device):
            side = self._streams.get(device.index)
            if side is None:
                side = self._streams[device.index] = torch.cuda.Stream(device)
            current = torch.cuda.current_stream(device)
            side.wait_stream(current)  # the batch (and its labels) are ready on the current stream
            try:
                with torch.cuda.stream(side):
                    out, out_labels = self._run(steps, images, labels, layout, True, crop)
            finally:
                # Also after an exception: the batch's memory is released on the current stream,
                # which must not go ahead of what fn queued on the side stream.
                current.wait_stream(side)
            # Allocated on the side stream, used on the current one.
            out.record_stream(current)
            out_labels.record_stream(current)
        return out, out_labels

    def _crop(self, images: Any, *, layout: str, as_torch: bool, where: Any, device: Any) -> Any:
        """FiveCrop's or TenCrop's stacked crops of a batch (a tensor, an array or a list)."""
        def empty(shape: tuple) -> Any:
            if not as_torch:
                return np.empty(shape, dtype=self.dtype)
            import torch
            return torch.empty(shape, dtype=getattr(torch, self.dtype), device=device)
        return self.crop.crop_batch(images, layout, as_torch, where or (lambda i: f"sample {i} of the batch"),
                                    empty)

    def _run(self, steps: list, images: Any, labels: Any, layout: str, as_torch: bool,
             crop: Any) -> tuple[Any, Any]:
        if self.num_classes is not None:
            labels = _one_hot(labels, self.num_classes, as_torch)
        if steps and steps[0][0] is self.crop:  # FiveCrop or TenCrop comes first
            images, steps = crop(images), steps[1:]
        if images.shape[0] == 0:  # on_error="skip" left nothing: no function is called
            return images, labels
        owned = as_torch  # the loader's torch batch may change in place; its NumPy arrays are read-only
        for t, params in steps:
            if isinstance(t, BatchLambda):
                out = _call_batch_lambda(t, images, as_torch)
                owned = owned and out is images
                images = out
            elif isinstance(t, MixUp):
                images, labels = _mix(images, params["lam"], as_torch), _mix(labels, params["lam"], as_torch)
                owned = True
            elif isinstance(t, CutMix):
                out = _cut(images, params["box"], layout, as_torch, owned)
                owned = owned or out is not images  # a copy is ours
                images, labels = out, _mix(labels, params["lam_adjusted"], as_torch)
            else:  # pragma: no cover - split_positions and RandomChoice admit no other kind
                raise TypeError(f"{type(t).__name__} is not a batch transform")
        return images, labels


def _batch_function_result(t: BatchLambda, out: Any, batch: Any, as_torch: bool) -> Any:
    """`out` if it is a batch like `batch` (kind, shape, dtype, device), else the error naming t."""
    name = t._name()
    if as_torch:
        import torch
        kind, dtype = "torch.Tensor", str(batch.dtype).replace("torch.", "")
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"{name}: returned {type(out).__name__}, expected a {kind} of shape "
                            f"{tuple(batch.shape)}, dtype {dtype} on {batch.device}")
        got = (tuple(out.shape), str(out.dtype).replace("torch.", ""), str(out.device))
        want = (tuple(batch.shape), dtype, str(batch.device))
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"{name}: returned {type(out).__name__}, expected a numpy.ndarray of "
                            f"shape {tuple(batch.shape)}, dtype {batch.dtype}")
        got = (tuple(out.shape), str(out.dtype), "cpu")
        want = (tuple(batch.shape), str(batch.dtype), "cpu")
    if got != want:
        raise ValueError(f"{name}: returned shape {got[0]}, dtype {got[1]} on {got[2]}, expected the "
                         f"batch's shape {want[0]}, dtype {want[1]} on {want[2]}")
    return out


def _call_batch_lambda(t: BatchLambda, images: Any, as_torch: bool) -> Any:
    try:
        out = t.fn(images)
    except Exception as e:
        note = (f"in {t._name()}, called on a batch of shape {tuple(images.shape)}, "
                f"dtype {str(images.dtype).replace('torch.', '')}")
        if not hasattr(e, "add_note"):  # Python < 3.11
            raise RuntimeError(f"{t._name()} raised {type(e).__name__}: {e} ({note})") from e
        e.add_note(note)
        raise
    return _batch_function_result(t, out, images, as_torch)


def _label_outside(samples: Any, num_classes: int) -> tuple[str, int] | None:
    """The first (path, label) of `samples` whose label is not in [0, num_classes), else None."""
    labels = np.fromiter((label for _, label in samples), dtype=np.int64, count=len(samples))
    bad = np.flatnonzero((labels < 0) | (labels >= num_classes))
    if bad.size == 0:
        return None
    path, label = samples[int(bad[0])]
    return path, int(label)


def _one_hot(labels: Any, num_classes: int, as_torch: bool) -> Any:
    """int64 labels (N) as float32 one-hot rows (N x num_classes), on their device."""
    n = labels.shape[0]
    if as_torch:
        import torch
        out = torch.zeros((n, num_classes), dtype=torch.float32, device=labels.device)
        return out.scatter_(1, labels.view(n, 1), 1.0)
    out = np.zeros((n, num_classes), dtype=np.float32)
    out[np.arange(n), labels] = 1.0
    return out


def _mix(x: Any, lam: float, as_torch: bool) -> Any:
    """torchvision's MixUp formula, ``x.roll(1, 0) * (1 - lam) + x * lam``, computed in float32
    (float16 input converted, the result rounded back) with both factors rounded to float32:
    the same values from torch on the CPU or the GPU and from NumPy. A new array."""
    a, b = float(np.float32(lam)), float(np.float32(1.0 - lam))
    if as_torch:
        import torch
        work = x if x.dtype == torch.float32 else x.float()
        out = work.roll(1, 0).mul_(b).add_(work.mul(a))
        return out if out.dtype == x.dtype else out.to(x.dtype)
    work = x.astype(np.float32, copy=False)
    out = np.roll(work, 1, axis=0)
    out *= np.float32(b)
    out += work * np.float32(a)
    return out.astype(x.dtype, copy=False)


def _cut(x: Any, box: tuple[int, int, int, int], layout: str, as_torch: bool, owned: bool) -> Any:
    """CutMix's images: the box (rows y1:y2, columns x1:x2) of every image replaced by that of
    the image before it in the batch (``roll(1, 0)``). In place when `owned` (a batch of the
    loader's or one made here, not yet handed out), else on a copy."""
    x1, y1, x2, y2 = box
    if x2 <= x1 or y2 <= y1:
        return x
    rows, cols = slice(y1, y2), slice(x1, x2)
    region = (Ellipsis, rows, cols) if layout == "NCHW" else (slice(None), rows, cols, slice(None))
    if as_torch:
        out = x if owned else x.clone()
        out[region] = x[region].roll(1, 0)  # roll copies the region first
        return out
    out = x if owned else x.copy()
    out[region] = np.roll(x[region], 1, axis=0)
    return out
