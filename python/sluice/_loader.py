"""sluice.Loader: a torchvision-shaped data loader whose work runs in C++ threads."""
from __future__ import annotations

import hashlib
import threading
from typing import Any, Iterator

import numpy as np

from . import _core, _state
from ._batch_functions import BatchFunctions
from ._convert import resolve_output
from ._cuda_queues import warn_if_narrow_under_nccl
from ._epoch import EpochIterator
from ._live import LIVE
from ._options import DEFAULTS, cache_bytes, dtype_name, epoch_arg, make_options, shard, source_arg, weighted
from .transforms import compile_specs, flatten
from .transforms.compile import runs_on_cpu
from ._videos import Videos
from .transforms.functions import running_for

__all__ = ["Loader"]

class Loader:
    """Reads, decodes and augments images in C++ threads and yields ``(images, labels)`` batches.

    Args:
        source: an ImageFolder root (one sub-folder per class, labelled as torchvision's
            ``ImageFolder`` labels them), a sequence of ``(path, label)`` pairs (paths as str,
            bytes or path-like; labels any integer, NumPy's and torch's included), or a
            :class:`~sluice.WebDataset` (tar shards), or :class:`~sluice.Videos` (clips).
            ``loader.dataset`` gives it back.
        transform: sluice transforms (a list or ``sluice.transforms.Compose``). When they end in
            a fixed size (a crop, ``RandomResizedCrop`` or ``Resize((h, w))``), images come as
            one ``N x 3 x H x W`` tensor; otherwise (e.g. ``Resize(256)`` alone) as one tensor
            when the batch's images share a shape (batch size 1 included), else as a list of
            ``3 x H x W`` tensors, one per sample (DataLoader's collate would refuse those).
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
        io_threads: file-reading threads (default 2; on the GPU, where they also parse headers, 4,
            and 8 for batches of over 64).
        prefetch: batches prepared ahead of the consumer (default 2; on the GPU, enough batches
            for 128 images, 2 to 8, at least 4 for batches of up to 64). The automatic values
            (``None`` or ``"auto"``) are decided in C++; the tuner adjusts them while it runs
            (``stats()["tuning"]`` says what and why).
        dct_scaling: decode JPEGs at 1/2, 1/4 or 1/8 when the resize shrinks at least that much
            (faster; pixels differ a little from a full decode, see docs/guide.md). Default
            (None): on when a transform draws random parameters (training lists), off for
            evaluation-style lists (``Resize``, ``CenterCrop``, ``Normalize``...), which are then
            exact against torchvision.
        max_file_bytes: files larger than this (default 1 GiB) are bad samples, refused before
            they are read (``on_error`` applies).
        cache: ``"memory"`` keeps the files' (or shards' samples') encoded bytes in host memory
            after their first read, so later epochs do not read storage; ``None`` (default): no
            cache. Samples are kept as first read until ``cache_budget`` bytes are held (default:
            a quarter of the machine's memory), then the same ones are served every epoch.
            ``stats()["cache"]`` reports hits, misses and bytes held.
        weights: one weight per sample (a sequence, NumPy array or tensor): each epoch's
            ``len(source)`` positions are drawn with these odds, as PyTorch's
            ``WeightedRandomSampler`` (``replacement=True``: samples may repeat; ``False``: each
            once, heavier ones earlier). Positions are sharded, resumed and delivered exactly once
            like any epoch's; ``shuffle`` stays False. Not for streamed shards.
        output: ``"torch"``, ``"numpy"``, ``"jax"`` or ``"auto"`` (torch when installed). JAX
            arrays share the batch's memory (tested on the CPU only); labels are int32 unless
            ``jax_enable_x64``; batch transforms run in NumPy first (CPU only).
        decode_route: GPU path only. ``"auto"`` splits each batch between the JPEG engines and
            the CPU-side decoders by what the batches before it measured (not reproducible bit
            for bit: which decoder a sample gets depends on timing); ``"hardware"``, ``"hybrid"``
            or ``"cpu"`` pin one (files a route cannot take fall back: hardware, then hybrid,
            then cpu).
        gpu_memory_budget: GPU path only: bytes of GPU memory (and of pinned host memory) the
            loader may hold, nvJPEG's buffers included (default 1.5 GiB). Batches are prepared
            ahead only while they fit; ``stats()["gpu_memory_peak"]`` reports the peak.

    Iterating starts an epoch: the one given to :meth:`set_epoch`, else the one after the last
    (0 first). An iteration from which no batch was taken uses up no epoch: without
    :meth:`set_epoch`, the next one starts (or resumes) that epoch again, as :meth:`state_dict`
    says; so a probe ``iter()`` that is dropped (Lightning makes one before training) shifts
    nothing. Batches are yielded in order; images are ``N x 3 x H x W`` (or NHWC) or a list
    (see ``transform``), labels int64 (N), or float32 ``N x num_classes`` when the transforms
    end with :class:`~sluice.transforms.MixUp` or :class:`~sluice.transforms.CutMix` (one-hot,
    mixed; on the images' device).
    """

    def __init__(self, source: Any, transform: Any = None, *, batch_size: int = DEFAULTS.batch_size,
                 device: Any = "cpu", shuffle: bool = DEFAULTS.shuffle, seed: int = DEFAULTS.seed,
                 last_batch: str = DEFAULTS.last_batch, dtype: Any = DEFAULTS.dtype, layout: str = DEFAULTS.layout,
                 on_error: str = DEFAULTS.on_error, num_threads: int | None = None, io_threads: int | None = None,
                 prefetch: int | None = None, dct_scaling: bool | None = None, output: str = "auto",
                 decode_route: str = DEFAULTS.decode_route, gpu_memory_budget: int | None = None,
                 rank: int | None = None, world_size: int | None = None,
                 max_file_bytes: int = DEFAULTS.max_file_bytes, cache: str | None = None,
                 cache_budget: int | None = None, weights: Any = None, replacement: bool = True):
        self._transforms = flatten(transform)
        # Trailing batch transforms (BatchLambda, MixUp, CutMix, RandomChoice) are applied here, to
        # whole batches; the rest compiles to C++.
        self._batch = BatchFunctions(self._transforms)
        self._device = str(device)
        self._cuda = self._device.startswith("cuda")
        self._output = resolve_output(output, self._cuda, bool(self._batch.transforms))
        # User functions run on the CPU: batches are copied over (_create: also some video lists).
        self._upload = self._cuda and runs_on_cpu(self._batch.per_sample)
        rank, world_size = shard(rank, world_size)
        options = make_options(
            batch_size=batch_size, shuffle=shuffle, seed=seed, last_batch=last_batch, dtype=dtype_name(dtype),
            layout=layout, on_error=on_error, device="cpu" if self._upload else self._device,
            num_threads=num_threads, io_threads=io_threads, prefetch=prefetch,
            dct_scaling=any(t.random for t in self._batch.per_sample) if dct_scaling is None else dct_scaling,
            decode_route="auto" if self._upload else decode_route, gpu_memory_budget=gpu_memory_budget, rank=rank, world_size=world_size,
            max_file_bytes=max_file_bytes, memory_cache_bytes=cache_bytes(cache, cache_budget))
        self._check_dtype(options.dtype)
        if self._cuda and not self._upload:
            warn_if_narrow_under_nccl(decode_route)
        self._functions: list = []  # user functions (Lambda): the C++ loader reaches them weakly
        # Serializes iterating (starting an epoch, taking a batch) and load_state_dict between
        # threads; close() and stats() do not take it.
        self._lock = threading.Lock()
        specs = compile_specs(self._batch.per_sample, self._output == "torch", self._functions)
        self._core = self._create(lambda: _core.Loader.create(
            weighted(source, source_arg(source), weights, replacement, shuffle), specs, options), source, options)
        self._dataset = source
        LIVE.add(self)  # closed at exit, before the interpreter stops running Python code
        try:
            self._batch.check_loader(self._core.output_size, self._core.samples)
        except ValueError:
            self._core.close()
            raise
        self._seed, self._layout, self._pad = options.seed, options.layout, options.last_batch == "pad"
        self._image_size = self._core.output_size
        self._next_epoch: int | None = None
        self._pending_state: dict | None = None  # from load_state_dict, until the next iteration
        self._last_indices = np.zeros(0, dtype=np.int64)
        self._last_epoch = -1
        self._generation = 0
        # (generation, epoch, batches taken) as the last iteration started: see _untouched().
        self._started: tuple[int, int, int] | None = None

    def _create(self, make: Any, source: Any, options: Any) -> Any:
        """The C++ loader. Video clips whose transforms the GPU's clip path lacks (or without
        NVDEC) are decoded on the CPU, and their batches copied over."""
        try:
            return make()
        except NotImplementedError:
            if self._upload or not (self._cuda and isinstance(source, Videos)):
                raise
        self._upload, options.device = True, "cpu"
        return make()

    def _check_dtype(self, dtype: str) -> None:
        self._batch.check_dtype(dtype)
        if dtype == "uint8" and any(type(t).__name__ == "ToTensor" for t in self._transforms):
            raise ValueError("dtype='uint8' contradicts ToTensor in the transforms (it scales to float in "
                             "[0, 1]); use dtype='float32' or 'float16', or drop ToTensor")

    def __len__(self) -> int:
        """Batches per epoch (exact for the last_batch policy)."""
        return self._core.num_batches

    @property
    def last_indices(self) -> np.ndarray:
        """Dataset indices (positions in :attr:`samples`) of the batch last yielded, in its order:
        which files a batch holds, e.g. to check what each rank saw or to log per-sample losses."""
        return self._last_indices

    @property
    def dataset(self) -> Any:
        """The source as given (a folder, a pair list, a :class:`~sluice.WebDataset`), as
        DataLoader's ``dataset``."""
        return self._dataset

    @property
    def batch_size(self) -> int:
        return self._core.options.batch_size

    @property
    def drop_last(self) -> bool:
        """``last_batch == "drop"``, as DataLoader's ``drop_last``."""
        return self._core.options.last_batch == "drop"

    @property
    def rank(self) -> int:
        return self._core.options.rank

    @property
    def world_size(self) -> int:
        return self._core.options.world_size

    @property
    def options(self) -> Any:
        """The ``LoaderOptions`` this loader runs with, the automatic values (threads, prefetch)
        resolved."""
        return self._core.options

    @property
    def num_samples(self) -> int:
        return self._core.num_samples

    @property
    def output_size(self) -> tuple[int, int] | None:
        """(height, width) of every image (FiveCrop's crop), or None when it varies (lists)."""
        return self._batch.output_size(self._core.output_size)

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
        """Use ``epoch`` for the next iteration (reshuffles and redraws augmentations). After
        :meth:`load_state_dict`, only the epoch it resumes is accepted (another would drop the
        resume)."""
        epoch = epoch_arg("epoch", epoch)
        pending = self._pending_state
        if pending is not None and epoch != pending["next_epoch"]:
            raise ValueError(f"set_epoch({epoch}) after load_state_dict(), which resumes epoch "
                             f"{pending['next_epoch']}: the resume would be dropped. Call "
                             f"set_epoch({pending['next_epoch']}), or make a new loader to start afresh")
        self._next_epoch = epoch

    def _driving(self) -> threading.Lock:
        """The lock that serializes iterating and resuming; refused to this loader's own user
        functions (which would wait for themselves)."""
        if running_for(self._functions):
            raise RuntimeError("a Lambda of this loader cannot iterate or resume it (it runs inside one of its "
                               "batches)")
        return self._lock

    def _untouched(self) -> dict | None:
        """The core state of the iteration last started when none of its batches has been taken
        (and some remain), else None: a new iteration starts that one again, not the next epoch."""
        if self._started is None or self._started[0] != self._generation:
            return None
        core = self._core.state()
        if (core["epoch"], core["batches"]) != self._started[1:] or core["batches"] >= core["epoch_batches"]:
            return None
        return core

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        with self._driving():
            epoch = self._next_epoch
            if epoch is None:
                untouched = self._untouched()
                epoch = self._last_epoch + 1 if untouched is None else untouched["epoch"]
                if untouched is not None and (untouched["batches"] or untouched["resumed_from"]):
                    self._core.load_state(untouched)  # an untouched resumed epoch: resume it again
            self._core.start_epoch(epoch)  # when it fails, nothing has changed that iterating sees
            self._next_epoch = None
            self._pending_state = None
            self._last_epoch = epoch
            self._generation += 1
            core = self._core.state()
            generation = self._generation
            self._started = (generation, core["epoch"], core["batches"])
        # Part of the key of the batch transforms' draws: 0 for an epoch as scheduled (or resumed
        # with the same settings, whose batches keep their numbers), else a digest of what the
        # epoch's resumed schedule excludes, so that its batch numbers, which start at 0 again,
        # get draws of their own.
        flags = core["resumed_from"]
        schedule = int.from_bytes(hashlib.blake2b(flags, digest_size=8).digest(), "little") if flags else 0
        return EpochIterator(self, generation, core["epoch_batches"] - core["batches"], schedule)

    def state_dict(self) -> dict:
        """Where this loader stands, for a checkpoint: the epoch, the batches of it this rank has
        taken, and what that depends on (the dataset's digest, seed, shuffle, batch size, world
        size, last_batch). A plain dict of ints, strings and bools (a few bytes, plus one bit per
        sample, base64, when the epoch was itself resumed): ``torch.save`` it with the model;
        ``torch.load(path, weights_only=True)`` reads it back.

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
            return _state.to_dict(core, self._next_epoch)
        done = self._last_epoch >= 0 and core["batches"] >= core["epoch_batches"]
        return _state.to_dict(core, core["epoch"] + 1 if done else core["epoch"])

    def load_state_dict(self, state: dict) -> None:
        """Continue where ``state`` (from :meth:`state_dict`) left off: the next iteration (the
        epoch it was in, or the one after when that epoch was finished) yields the rest of it.

        With the same batch size, world size and last_batch, the batches are exactly those the
        interrupted run had still to yield, pixels included. With another world size or batch
        size (an elastic resume), every sample the interrupted run had not delivered comes
        exactly once, spread over the new ranks. Raises ValueError for a state from another
        dataset (other files, labels or size), seed or shuffle setting, or a malformed one.
        """
        core = _state.from_dict(state)
        next_epoch = epoch_arg("next_epoch", core.pop("next_epoch"))
        with self._driving():
            self._core.load_state(core)
            self._next_epoch = next_epoch
            self._pending_state = {k: state[k] for k in ("format",) + _state.KEYS}
            self._generation += 1  # an iteration in progress ends here

    def stats(self) -> dict:
        """Counters since creation or :meth:`reset_stats`: samples, batches, seconds per stage
        (summed over threads), time the consumer waited, skipped files with reasons."""
        return self._core.stats()

    def reset_stats(self) -> None:
        self._core.reset_stats()

    def close(self) -> None:
        """Stops the loader's threads and cancels the work in flight (also at exit and when the
        loader is garbage-collected). Safe from any thread at any time: a ``next()`` waiting in
        another thread raises RuntimeError. Iterating a closed loader raises RuntimeError."""
        core = getattr(self, "_core", None)
        if core is not None:
            core.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"sluice.Loader({self.num_samples} samples, batch_size={self._core.options.batch_size}, "
                f"{len(self)} batches, transforms={self._transforms!r})")
