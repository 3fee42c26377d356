"""sluice.Loader: a torchvision-shaped data loader whose work runs in C++ threads."""
from __future__ import annotations

import atexit
import hashlib
import os
import sys
import weakref
from typing import Any, Iterator, Sequence

import numpy as np

from . import _core
from ._convert import resolve_output, to_array
from .transforms import (BatchLambda, CutMix, Lambda, MixUp, RandomChoice, _common_num_classes,
                         compile_specs, flatten, split_batch_functions)

__all__ = ["Loader"]

_DTYPES = ("uint8", "float16", "float32")
_STATE_FORMAT = "sluice.Loader/1"
# The keys of a state dict besides "format"; the first five are passed to _core.Loader.load_state
# in this order.
_STATE_KEYS = ("epoch", "batches", "epoch_batches", "num_samples", "dataset_digest", "shuffle", "seed",
               "batch_size", "world_size", "last_batch", "next_epoch", "resumed_from")


def _dtype_name(dtype: Any) -> str:
    name = str(dtype).replace("torch.", "")
    name = {"half": "float16", "float": "float32"}.get(name, name)
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES} (or the torch/numpy equivalent), got {dtype!r}")
    return name


def _int_arg(name: str, value: Any, minimum: int, allow_none: bool = False) -> int:
    if value is None and allow_none:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _shard(rank: Any, world_size: Any) -> tuple[int, int]:
    """(rank, world_size): the arguments, else torch.distributed's, else RANK/WORLD_SIZE, else
    (0, 1). A rank outside [0, world_size) is the C++ side's error, which names both."""
    if (rank is None) != (world_size is None):
        raise ValueError("pass both rank and world_size, or neither (then they come from "
                         "torch.distributed or the RANK and WORLD_SIZE environment variables)")
    if rank is None:
        dist = sys.modules.get("torch.distributed")
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank, world_size = dist.get_rank(), dist.get_world_size()
        elif "RANK" in os.environ or "WORLD_SIZE" in os.environ:
            try:
                rank, world_size = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
            except ValueError:
                raise ValueError(f"RANK={os.environ.get('RANK')!r} and WORLD_SIZE="
                                 f"{os.environ.get('WORLD_SIZE')!r} must be integers") from None
        else:
            rank, world_size = 0, 1
    return _int_arg("rank", rank, 0), _int_arg("world_size", world_size, 1)


def _choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


# Loaders still open; closed at exit: a worker thread that calls a user function (Lambda) while
# the interpreter shuts down would otherwise be stopped inside C++ (and abort the process).
_LIVE: "weakref.WeakSet[Loader]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for loader in list(_LIVE):
        loader.close()


class Loader:
    """Reads, decodes and augments images in C++ threads and yields ``(images, labels)`` batches.

    Args:
        source: an ImageFolder root (one sub-folder per class, labelled as torchvision's
            ``ImageFolder`` labels them), or a sequence of ``(path, label)`` pairs.
        transform: sluice transforms (a list or ``sluice.transforms.Compose``). When they end in
            a fixed size (a crop, ``RandomResizedCrop`` or ``Resize((h, w))``), images come as
            one ``N x 3 x H x W`` tensor; otherwise (e.g. ``Resize(256)`` alone) as a list of
            ``3 x H x W`` tensors, one per sample.
        batch_size: samples per batch.
        device: ``"cpu"``, or ``"cuda"`` / ``"cuda:N"`` for the GPU path: JPEGs are decoded by
            the GPU's JPEG engines, nvJPEG's hybrid decoder and libjpeg-turbo together, and
            everything after decoding runs as one kernel per batch. Images (and labels) come as
            CUDA tensors, ready on the stream that is current when the batch is taken.
        shuffle: a new permutation of the dataset every epoch.
        seed: drives the shuffle and every random transform.
        last_batch: ``"partial"`` keeps a short last batch, ``"drop"`` drops it, ``"pad"``
            fills it with samples repeated from the start of the epoch's order and yields
            ``(images, labels, valid)``, ``valid`` a bool tensor that is False for the repeats.
            Under sharding every rank yields the same number of batches with every policy.
        rank, world_size: this process's part of every epoch: positions ``rank``,
            ``rank + world_size``, ... of the epoch's global permutation, the same on every rank
            without communication. Default: ``torch.distributed``'s when it is initialized, else
            the ``RANK`` and ``WORLD_SIZE`` environment variables (torchrun sets them), else 0
            and 1.
        dtype: ``"float32"``, ``"float16"`` (values scaled to [0, 1], then normalized) or
            ``"uint8"`` (raw pixels). torch dtypes are accepted.
        layout: ``"NCHW"`` or ``"NHWC"``.
        on_error: ``"raise"`` raises at the batch that holds a bad file, naming it;
            ``"skip"`` leaves bad samples out and lists them in :meth:`stats`.
        num_threads: compute threads (default: every CPU this process may use, divided among
            the processes torchrun starts on this machine, ``LOCAL_WORLD_SIZE``).
        io_threads: file-reading threads (default 2; 4 on the GPU, where they also parse headers).
        prefetch: batches prepared ahead of the consumer (default 2 on the CPU, 3 on the GPU,
            whose batches pass through more stages).
        dct_scaling: decode JPEGs at 1/2, 1/4 or 1/8 when the resize shrinks at least that much.
        output: ``"torch"``, ``"numpy"`` or ``"auto"`` (torch when installed).
        decode_route: GPU path only. ``"auto"`` splits each batch between the JPEG engines and
            the CPU-side decoders by what the batches before it measured (not reproducible bit
            for bit: which decoder a sample gets depends on timing); ``"hardware"``, ``"hybrid"`` or ``"cpu"`` pin one (files a
            route cannot take fall back: hardware, then hybrid, then cpu). With several ranks
            (``world_size > 1``) ``"auto"`` means ``"hardware"``: on two GPUs under DDP, "auto"
            was seen to hang (nvJPEG freeing memory while an NCCL kernel held the device).
        gpu_memory_budget: GPU path only: bytes of GPU memory (and of pinned host memory) the
            loader may hold, nvJPEG's buffers included (default 1 GiB). Batches are prepared
            ahead only while they fit; ``stats()["gpu_memory_peak"]`` reports the peak.

    Iterating starts an epoch: the one given to :meth:`set_epoch`, else the one after the last
    (0 first). Batches are yielded in order; images are ``N x 3 x H x W`` (or NHWC) or a list
    (see ``transform``), labels int64 (N), or float32 ``N x num_classes`` when the transforms
    end with :class:`~sluice.transforms.MixUp` or :class:`~sluice.transforms.CutMix` (one-hot,
    mixed; on the images' device).
    """

    def __init__(self, source: Any, transform: Any = None, *, batch_size: int = 256,
                 device: Any = "cpu", shuffle: bool = False, seed: int = 0,
                 last_batch: str = "partial", dtype: Any = "float32", layout: str = "NCHW",
                 on_error: str = "raise", num_threads: int | None = None,
                 io_threads: int | None = None, prefetch: int | None = None, dct_scaling: bool = True,
                 output: str = "auto", decode_route: str = "auto",
                 gpu_memory_budget: int | None = None, rank: int | None = None,
                 world_size: int | None = None):
        if isinstance(source, os.PathLike):
            source = os.fspath(source)
        if not isinstance(source, str):
            if not isinstance(source, Sequence) or isinstance(source, (bytes, bytearray)):
                raise TypeError("source must be a directory path or a sequence of (path, label) pairs, "
                                f"got {type(source).__name__}")
            pairs = []
            for i, item in enumerate(source):
                if not (isinstance(item, Sequence) and len(item) == 2):
                    raise TypeError(f"source[{i}] must be a (path, label) pair, got {item!r}")
                path, label = item
                if isinstance(label, bool) or not isinstance(label, int):
                    raise TypeError(f"source[{i}]: label must be an int, got {label!r}")
                pairs.append((os.fspath(path), int(label)))
            source = pairs
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}")
        self._transforms = flatten(transform)
        # Trailing batch transforms (BatchLambda, MixUp, CutMix, RandomChoice) are applied here, to
        # whole batches; the rest compiles to C++.
        per_sample, self._batch_fns = split_batch_functions(self._transforms)
        # Their positions in the flat list (part of the key of their random draws).
        self._batch_positions = list(range(len(per_sample), len(self._transforms)))
        self._batch_streams: dict = {}  # CUDA device index -> the stream the batch functions run on
        # MixUp / CutMix: the labels become float32 one-hot rows of this many columns.
        self._num_classes = _common_num_classes(self._batch_fns)
        mixers = [m for t in self._batch_fns for m in t._mixers()]
        if _dtype_name(dtype) == "uint8" and any(isinstance(m, MixUp) for m in mixers):
            raise ValueError("MixUp needs float images (dtype float32 or float16), got dtype='uint8': it "
                             "blends pixel values; use dtype='float32' or 'float16' (CutMix, which copies "
                             "pixels, accepts uint8)")
        if _dtype_name(dtype) == "uint8" and any(type(t).__name__ == "ToTensor" for t in self._transforms):
            raise ValueError("dtype='uint8' contradicts ToTensor in the transforms (it scales to float in "
                             "[0, 1]); use dtype='float32' or 'float16', or drop ToTensor")
        self._output = resolve_output(output)
        device = str(device)
        self._device = device
        self._cuda = device.startswith("cuda")
        # User functions run on the CPU: such a list runs there, and batches are copied over.
        self._upload = self._cuda and any(isinstance(t, Lambda) for t in per_sample)
        if self._cuda and self._output != "torch":
            raise ValueError("device='cuda' yields torch CUDA tensors: install torch, or use device='cpu' "
                             "for NumPy output")
        self._batch_size = _int_arg("batch_size", batch_size, 1)
        if prefetch is None:
            prefetch = 3 if self._cuda else 2
        self._rank, self._world_size = _shard(rank, world_size)
        self._pad = last_batch == "pad"
        self._functions: list = []  # user functions (Lambda): the C++ loader reaches them weakly
        self._core = _core.Loader.create(
            source, compile_specs(per_sample, self._output == "torch", self._functions), self._batch_size,
            bool(shuffle), seed,
            _choice("last_batch", last_batch, ("partial", "drop", "pad")), _dtype_name(dtype),
            _choice("layout", layout, ("NCHW", "NHWC")), _choice("on_error", on_error, ("raise", "skip")),
            "cpu" if self._upload else device, _int_arg("num_threads", num_threads, 1, allow_none=True),
            _int_arg("io_threads", io_threads, 1, allow_none=True), _int_arg("prefetch", prefetch, 1),
            bool(dct_scaling), _choice("decode_route", decode_route, ("auto", "hardware", "hybrid", "cpu")),
            _int_arg("gpu_memory_budget", gpu_memory_budget, 1, allow_none=True), self._rank,
            self._world_size)
        _LIVE.add(self)  # closed at exit, before the interpreter stops running Python code
        if self._batch_fns and self._core.output_size is None:
            self._core.close()
            raise ValueError(
                f"{self._batch_fns[0]._name()} needs images of one size (batches that are one tensor), "
                "but these transforms do not end in a fixed size, so batches would be lists: end the "
                "per-sample transforms with a crop, RandomResizedCrop or Resize((h, w))")
        if mixers:
            bad = _label_outside(source if not isinstance(source, str) else self._core.samples,
                                 self._num_classes)
            if bad is not None:
                self._core.close()
                raise ValueError(
                    f"{mixers[0]._name()}: label {bad[1]} of {bad[0]!r} is outside [0, num_classes) with "
                    f"num_classes={self._num_classes}: every label must be a class index below num_classes")
        self._seed = seed
        self._layout = layout
        self._image_size = self._core.output_size
        self._next_epoch: int | None = None
        self._pending_state: dict | None = None  # from load_state_dict, until the next iteration
        self._last_indices = np.zeros(0, dtype=np.int64)
        self._last_epoch = -1
        self._generation = 0

    def __len__(self) -> int:
        """Batches per epoch (exact for the last_batch policy)."""
        return self._core.num_batches

    @property
    def last_indices(self) -> np.ndarray:
        """Dataset indices (positions in :attr:`samples`) of the batch last yielded, in its order:
        which files a batch holds, e.g. to check what each rank saw or to log per-sample losses."""
        return self._last_indices

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._world_size

    @property
    def num_samples(self) -> int:
        return self._core.num_samples

    @property
    def output_size(self) -> tuple[int, int] | None:
        """(height, width) of every image, or None when it varies (batches are lists)."""
        return self._core.output_size

    @property
    def classes(self) -> list[str]:
        """Class names of an ImageFolder source, in label order."""
        return self._core.classes

    @property
    def samples(self) -> list[tuple[str, int]]:
        """The (path, label) list, as torchvision's ``ImageFolder.samples``."""
        return self._core.samples

    @property
    def transforms(self) -> list:
        return list(self._transforms)

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` for the next iteration (reshuffles and redraws augmentations)."""
        self._next_epoch = _int_arg("epoch", epoch, 0)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        epoch = self._next_epoch if self._next_epoch is not None else self._last_epoch + 1
        self._next_epoch = None
        self._pending_state = None
        self._last_epoch = epoch
        self._generation += 1
        self._core.start_epoch(epoch)
        core = self._core.state()
        # Part of the key of the batch transforms' draws: 0 for an epoch as scheduled (or resumed
        # with the same settings, whose batches keep their numbers), else a digest of what the
        # epoch's resumed schedule excludes, so that its batch numbers, which start at 0 again,
        # get draws of their own.
        flags = core["resumed_from"]
        schedule = int.from_bytes(hashlib.blake2b(flags, digest_size=8).digest(), "little") if flags else 0
        return _EpochIterator(self, self._generation, core["epoch_batches"] - core["batches"], schedule)

    def state_dict(self) -> dict:
        """Where this loader stands, for a checkpoint: the epoch, the batches of it this rank has
        taken, and what that depends on (the dataset's digest, seed, shuffle, batch size, world
        size, last_batch). A plain dict of ints, strings and bytes (a few bytes, plus one bit per
        sample when the epoch was itself resumed): ``torch.save`` it with the model.

        Ranks that step together (DDP) have the same state, so saving rank 0's is enough::

            if rank == 0:
                torch.save({"model": model.state_dict(), "loader": loader.state_dict()}, path)
        """
        pending = self._pending_state
        if pending is not None and self._next_epoch == pending["next_epoch"]:
            return dict(pending)  # loaded, not yet iterated
        core = self._core.state()
        if self._next_epoch is not None:  # set_epoch(e), not yet iterated: nothing of e taken
            core.update(epoch=self._next_epoch, batches=0, epoch_batches=len(self), resumed_from=b"")
            next_epoch = self._next_epoch
        else:
            done = self._last_epoch >= 0 and core["batches"] >= core["epoch_batches"]
            next_epoch = core["epoch"] + 1 if done else core["epoch"]
        flags = np.frombuffer(core.pop("resumed_from"), dtype=np.uint8)
        return {"format": _STATE_FORMAT, **core, "next_epoch": next_epoch,
                "resumed_from": np.packbits(flags).tobytes() if flags.size else b""}

    def load_state_dict(self, state: dict) -> None:
        """Continue where ``state`` (from :meth:`state_dict`) left off: the next iteration (the
        epoch it was in, or the one after when that epoch was finished) yields the rest of it.

        With the same batch size, world size and last_batch, the batches are exactly those the
        interrupted run had still to yield, pixels included. With another world size or batch
        size (an elastic resume), every sample the interrupted run had not delivered comes
        exactly once, spread over the new ranks. Raises ValueError for a state from another
        dataset (other files, labels or size), seed or shuffle setting, or a malformed one.
        """
        if not isinstance(state, dict):
            raise TypeError(f"load_state_dict: state must be a dict from Loader.state_dict(), got "
                            f"{type(state).__name__}")
        if state.get("format") != _STATE_FORMAT:
            raise ValueError(f"load_state_dict: not a sluice.Loader state (format {state.get('format')!r}, "
                             f"expected {_STATE_FORMAT!r})")
        missing = [k for k in _STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"load_state_dict: the state is missing {', '.join(map(repr, missing))}")
        flags = b""
        if state["resumed_from"]:
            bits = np.unpackbits(np.frombuffer(state["resumed_from"], dtype=np.uint8))
            n = state["num_samples"]
            if bits.size < n or bits[n:].any():
                raise ValueError("load_state_dict: malformed state: resumed_from does not hold "
                                 f"{n} flags")
            flags = bits[:n].tobytes()
        try:
            args = [int(state[k]) for k in _STATE_KEYS[:5]] + [bool(state["shuffle"])] + \
                   [int(state[k]) for k in ("seed", "batch_size", "world_size")]
        except (TypeError, ValueError) as e:
            raise ValueError(f"load_state_dict: malformed state: {e}") from None
        self._core.load_state(*args, str(state["last_batch"]), flags)
        self._next_epoch = _int_arg("next_epoch", state["next_epoch"], 0)
        self._pending_state = {k: state[k] for k in ("format",) + _STATE_KEYS}
        self._generation += 1  # an iteration in progress ends here

    def stats(self) -> dict:
        """Counters since creation or :meth:`reset_stats`: samples, batches, seconds per stage
        (summed over threads), time the consumer waited, skipped files with reasons."""
        return self._core.stats()

    def reset_stats(self) -> None:
        self._core.reset_stats()

    def close(self) -> None:
        """Stops the loader's threads and cancels the work in flight (also at exit and when the
        loader is garbage-collected). Iterating a closed loader raises."""
        core = getattr(self, "_core", None)
        if core is not None:
            core.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"sluice.Loader({self.num_samples} samples, batch_size={self._batch_size}, "
                f"{len(self)} batches, transforms={self._transforms!r})")


class _EpochIterator:
    def __init__(self, loader: Loader, generation: int, length: int, schedule: int = 0):
        self._loader = loader
        self._generation = generation
        self._length = length  # batches left in this epoch (fewer than len(loader) after a resume)
        self._schedule = schedule  # see Loader.__iter__
        self._done = False

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> "_EpochIterator":
        return self

    def __next__(self) -> tuple[Any, Any]:
        if self._done:
            raise StopIteration
        if self._generation != self._loader._generation:
            raise RuntimeError("this iterator was invalidated: a newer iter(loader) restarted the loader")
        item = self._loader._core.next()
        if item is None:
            self._done = True
            raise StopIteration
        # epoch and index: the batch's epoch and number in the epoch's schedule (a resume with the
        # same settings continues the numbers), part of the key of the batch transforms' draws.
        images, labels, indices, epoch, index, padding = item
        self._loader._last_indices = np.asarray(indices, dtype=np.int64)
        out = self._loader._output
        if isinstance(images, list):
            images = [to_array(t, out) for t in images]
            if self._loader._upload:
                images = [t.pin_memory().to(self._loader._device, non_blocking=True) for t in images]
            device = None
            if out == "torch":
                import torch
                device = images[0].device if images else torch.device(self._loader._device)
        else:
            images = to_array(images, out)
            if self._loader._upload:
                images = images.pin_memory().to(self._loader._device, non_blocking=True)
            device = images.device if out == "torch" else None
        labels = to_array(labels, out)
        if self._loader._cuda:
            # From torch's cached pinned memory, queued on the current stream: a pageable copy
            # would wait for the stream, and under DDP the stream can hold an NCCL kernel that
            # waits for another rank (seen as part of a two-rank hang on two H200s).
            labels = labels.pin_memory().to(device, non_blocking=True)
        if self._loader._batch_fns:  # lists (variable size) are refused when the loader is made
            images, labels = _apply_batch_functions(self._loader, images, labels, epoch, index,
                                                    self._schedule)
        if not self._loader._pad:
            return images, labels
        valid = np.frombuffer(padding, dtype=np.uint8) == 0
        if out == "torch":
            import torch
            valid = torch.from_numpy(valid)
            if self._loader._cuda:
                valid = valid.pin_memory().to(device, non_blocking=True)
        return images, labels, valid


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


def _batch_steps(loader: Loader, epoch: int, index: int, schedule: int) -> list[tuple[Any, dict]]:
    """(transform, its draw) per batch transform of the loader for this batch, a RandomChoice
    replaced by what it picked."""
    height, width = loader._image_size
    steps = []
    for position, t in zip(loader._batch_positions, loader._batch_fns):
        params = t.draw(loader._seed, epoch, index, position, height, width, rank=loader._rank,
                        schedule=schedule)
        while isinstance(t, RandomChoice):
            t, params = params["transform"], params["params"]
        steps.append((t, params))
    return steps


def _run_batch_steps(loader: Loader, steps: list, images: Any, labels: Any, as_torch: bool) -> tuple[Any, Any]:
    if loader._num_classes is not None:
        labels = _one_hot(labels, loader._num_classes, as_torch)
    if images.shape[0] == 0:  # on_error="skip" left nothing: no function is called
        return images, labels
    owned = as_torch  # the loader's torch batch may change in place; its NumPy arrays are read-only
    for t, params in steps:
        if isinstance(t, BatchLambda):
            out = _call_batch_lambda(t, images, as_torch)
            owned = owned and out is images
            images = out
        elif isinstance(t, MixUp):
            images, labels, owned = _mix(images, params["lam"], as_torch), _mix(labels, params["lam"], as_torch), True
        elif isinstance(t, CutMix):
            out = _cut(images, params["box"], loader._layout, as_torch, owned)
            owned = owned or out is not images  # a copy is ours
            images, labels = out, _mix(labels, params["lam_adjusted"], as_torch)
        else:  # pragma: no cover - split_batch_functions and RandomChoice admit no other kind
            raise TypeError(f"{type(t).__name__} is not a batch transform")
    return images, labels


def _apply_batch_functions(loader: Loader, images: Any, labels: Any, epoch: int, index: int,
                           schedule: int) -> tuple[Any, Any]:
    """The loader's batch transforms applied in order to a batch (a tensor or an array; batches
    of variable size are refused when the loader is made) and its labels (made one-hot when
    there is a MixUp or CutMix), with the draws of (seed, epoch, index, position, rank,
    schedule). On the GPU they run on a stream of the loader's that waits for the current one,
    which then waits for it."""
    if images.shape[0] == 0 and loader._num_classes is None:
        return images, labels
    steps = _batch_steps(loader, epoch, index, schedule)
    as_torch = loader._output == "torch"
    if not as_torch or images.device.type != "cuda":
        return _run_batch_steps(loader, steps, images, labels, as_torch)
    import torch
    device = images.device
    with torch.cuda.device(device):
        side = loader._batch_streams.get(device.index)
        if side is None:
            side = loader._batch_streams[device.index] = torch.cuda.Stream(device)
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)  # the batch (and its labels) are ready on the current stream
        try:
            with torch.cuda.stream(side):
                out, out_labels = _run_batch_steps(loader, steps, images, labels, True)
        finally:
            # Also after an exception: the batch's memory is released on the current stream,
            # which must not go ahead of what fn queued on the side stream.
            current.wait_stream(side)
        # Allocated on the side stream, used on the current one.
        out.record_stream(current)
        out_labels.record_stream(current)
    return out, out_labels
