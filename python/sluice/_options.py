"""The Loader's arguments as the C++ ``LoaderOptions``: Python converts only what Python alone
knows (torch dtypes, torch.distributed's rank, a source given as Python objects); C++ checks every
value and resolves the automatic ones when the loader is made."""
from __future__ import annotations

import operator
import os
import sys
from typing import Any, Sequence

import numpy as np

from . import _core

# The C++ defaults, which the Loader's signature shows.
DEFAULTS = _core.LoaderOptions()


def dtype_name(dtype: Any) -> str:
    """A dtype given as a torch or NumPy dtype, or a name, as a name (``torch.float16`` ->
    ``"float16"``); C++ parses it."""
    return str(dtype).replace("torch.", "")


def shard(rank: Any, world_size: Any) -> tuple[Any, Any]:
    """(rank, world_size): the arguments, else torch.distributed's, else RANK/WORLD_SIZE, else
    (0, 1). C++ checks them (a rank outside [0, world_size) is an error naming both)."""
    if (rank is None) != (world_size is None):
        raise ValueError("pass both rank and world_size, or neither (then they come from "
                         "torch.distributed or the RANK and WORLD_SIZE environment variables)")
    if rank is not None:
        return rank, world_size
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    if "RANK" in os.environ or "WORLD_SIZE" in os.environ:
        try:
            return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
        except ValueError:
            raise ValueError(f"RANK={os.environ.get('RANK')!r} and WORLD_SIZE="
                             f"{os.environ.get('WORLD_SIZE')!r} must be integers") from None
    return 0, 1


def _int_label(label: Any, i: int) -> int:
    """An integer-like label (int, NumPy or torch integer, anything with __index__) as an int;
    TypeError for a bool, a float or anything else."""
    if isinstance(label, (bool, np.bool_)):
        raise TypeError(f"source[{i}]: label must be an integer, got the bool {label!r}")
    try:
        return operator.index(label)
    except TypeError:
        raise TypeError(f"source[{i}]: label must be an integer, got {type(label).__name__} {label!r}") from None


def source_arg(source: Any) -> Any:
    """An ImageFolder root (str, bytes or path) as a str, a sequence of (path, label) pairs as a list
    of (str, int), or a source made in C++ (sluice.WebDataset) as that."""
    if isinstance(getattr(source, "_source", None), _core.Source):
        return source._source
    if isinstance(source, (str, bytes, os.PathLike)):
        return os.fsdecode(source)
    if not isinstance(source, Sequence) or isinstance(source, bytearray):
        raise TypeError("source must be a directory path, a sequence of (path, label) pairs or a "
                        "sluice.WebDataset, "
                        f"got {type(source).__name__}")
    pairs = []
    for i, item in enumerate(source):
        if not (isinstance(item, Sequence) and len(item) == 2):
            raise TypeError(f"source[{i}] must be a (path, label) pair, got {item!r}")
        path, label = item
        pairs.append((os.fsdecode(path), _int_label(label, i)))
    return pairs


def make_options(**values: Any) -> Any:
    """A ``_core.LoaderOptions`` with the given values (None: the C++ default, automatic for the
    thread counts, prefetch and the GPU memory budget). Raises TypeError or ValueError naming the
    option for a value of the wrong type or an unknown name."""
    options = _core.LoaderOptions()
    for name, value in values.items():
        if value is not None:
            setattr(options, name, value)
    return options


def cache_bytes(cache: Any, budget: Any) -> int:
    """The memory cache's budget in bytes (0: no cache) from the cache and cache_budget arguments."""
    if cache is None:
        if budget is not None:
            raise ValueError("cache_budget is given but cache is None: pass cache=\"memory\"")
        return 0
    if cache != "memory":
        raise ValueError(f"cache must be \"memory\" or None, got {cache!r}")
    if budget is None:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"cache_budget must be an int >= 1 (bytes), got {budget!r}")
    return budget


def epoch_arg(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def weighted(dataset: Any, source: Any, weights: Any, replacement: bool, shuffle: bool) -> Any:
    """`source` (source_arg's of `dataset`) with its epochs drawn by `weights` (None: as it is)."""
    if weights is None:
        return source
    if shuffle:
        raise ValueError("weights= draws each epoch's samples itself (as WeightedRandomSampler): leave shuffle=False")
    if getattr(dataset, "mode", None) == "stream":
        raise ValueError("weights= needs samples read by index: a streamed WebDataset reads its shards in order")
    values = np.asarray(weights.cpu() if hasattr(weights, "cpu") else weights, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"weights must be one number per sample, got an array of shape {values.shape}")
    return _core.weighted_source(source, values.tolist(), bool(replacement))


def index_cache_arg(value: Any) -> Any:
    """An index_cache argument as the folder it names: "default" is $SLUICE_CACHE/index
    (~/.cache/sluice/index), None none; TypeError for anything but a path, "default" or None."""
    if isinstance(value, str) and value == "default":
        from .datasets import cache_dir  # noqa: PLC0415

        return os.path.join(cache_dir(), "index")
    if value is not None and not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"index_cache must be a folder, \"default\" or None, got {type(value).__name__}")
    return value
