"""sluice.WebDataset: WebDataset tar shards as a Loader source, indexed or streamed."""
from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any

from . import _core
from ._options import index_cache_arg
from ._shard_manifest import shard_counts

__all__ = ["WebDataset"]

_STREAM_PREFIXES = ("http://", "https://", "pipe:")


def _positive(name: str, value: Any, kind: type = int) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int) or value <= 0:
        raise ValueError(f"{name} must be {'a number' if kind is float else 'an int'} > 0, got {value!r}")
    return kind(value)


class WebDataset:
    """Samples of WebDataset tar shards (``{key}.jpg`` + ``{key}.cls`` ...), as written by the
    ``webdataset`` library's ``ShardWriter``, ``tar`` or ``sluice pack``: pass it to
    :class:`~sluice.Loader` as the source. Shuffling, sharding over ranks, ``last_batch``,
    ``on_error`` and ``state_dict`` work as with an image folder.

        ds = sluice.WebDataset("shards/train-{0000..0127}.tar")                  # indexed
        ds = sluice.WebDataset("http://host/train-{0000..0127}.tar", cache_dir="/scratch/c")  # streamed
        loader = sluice.Loader(ds, [T.RandomResizedCrop(224), T.ToTensor()], batch_size=256, shuffle=True)

    Two ways of reading (``mode``):

    - **indexed** (local shards, the default for them): each shard is walked once when this is
      made (or its index is taken from ``index_cache``), then each image is read by offset from a
      few open shards: the same global shuffle as an image folder.
    - **streamed** (``http://``, ``https://`` and ``pipe:COMMAND`` urls, the default for them, or
      ``mode="stream"``): each shard is read start to end, never seeked. What must be known
      beforehand is each shard's sample count: from ``manifest`` (``sluice pack`` writes one
      beside the shards), else from one walk over every shard when this is made (kept in
      ``index_cache``). An epoch takes the shards in an order drawn for it; each rank reads a run
      of them, ``lanes`` at a time, their samples interleaved and permuted within blocks of
      ``shuffle_buffer`` samples (a rank holds about that many encoded samples in memory).
      Every sample is still read exactly once per epoch over all ranks, and ``state_dict``
      resumes exactly (a resumed rank reads its current shards again from their start).

    Args:
        urls: a shard path or url, a brace pattern (``train-{0000..0127}.tar``, ``{a,b}.tar``),
            a glob of local paths (``shards/*.tar``, sorted), or a sequence of those.
        image_key: extensions that hold the image, in order of preference (``"jpg;png"``).
        label_key: extensions that hold the label, in order of preference: a decimal integer
            (``.cls``, ``.txt``), or a JSON object (an extension ending in ``json``) whose field
            ``label_field`` is an integer. ``None``: no labels (every label is -1).
        label_field: the JSON field that holds the label.
        index_cache: a folder where each shard's index is kept between runs, so that a shard is
            walked once, not at every start (keyed by a local shard's path, size and modification
            time, a url as written, and the keys asked for). ``"default"``:
            ``$SLUICE_CACHE/index`` (``~/.cache/sluice/index``); ``None``: none.
        mode: ``"auto"``, ``"indexed"`` or ``"stream"``.
        manifest: streamed mode: a ``manifest.json`` (path or url) giving each shard's sample
            count; ``"auto"`` looks beside the first shard and walks the shards when there is
            none; ``None`` always walks them.
        shuffle_buffer: streamed mode: samples permuted together (>= 1).
        lanes: streamed mode: shards each rank reads at once (>= 1).
        cache_dir: streamed mode: a folder that keeps whole copies of remote shards, so later
            epochs read the local disk; a copy is published only once its stream ended cleanly.
        cache_size: its budget in bytes; the least recently used copies are removed beyond it
            (default: half the free space of the folder's disk when this is made).
        retries: streamed mode: a failed or stalled transfer is retried this often in a row
            (resuming at the byte reached) before its samples fail, the error naming the url and
            the byte.
        timeout: seconds to connect, and the longest wait for the next byte.

    A sample without its image or label, with a label that is not an integer, a member twice,
    or a key that an earlier sample of the shard had, the damaged tail of a truncated or corrupt
    shard, and the samples of a shard that cannot be fetched fail when read, named
    ``"shard.tar:key.jpg"`` (or the url): ``on_error`` decides whether that raises or is skipped
    and reported in ``loader.stats()["skipped"]``.

    Raises:
        FileNotFoundError: a local shard that does not exist, or a glob that matches nothing; a
            remote shard that answers 404 while its samples are counted.
        ValueError: an empty list, a bad brace pattern, an empty extension, a JSON label without
            ``label_field``, shards that hold no sample, a remote url with ``mode="indexed"``,
            a manifest that is not one or lacks a shard.
        OSError: a remote shard that cannot be fetched while its samples are counted, a cache
            folder that cannot be written.
    """

    def __init__(self, urls: Any, image_key: str = "jpg;jpeg;png;webp", label_key: str | None = "cls",
                 label_field: str | None = None, index_cache: Any = "default", *, mode: str = "auto",
                 manifest: Any = "auto", shuffle_buffer: int = 1000, lanes: int = 4, cache_dir: Any = None,
                 cache_size: int | None = None, retries: int = 3, timeout: float = 30.0):
        if isinstance(urls, (str, bytes, os.PathLike)):
            urls = [urls]
        elif not isinstance(urls, Sequence):
            raise TypeError(f"urls must be a path, a pattern or a sequence of them, got {type(urls).__name__}")
        for name, value in (("image_key", image_key), ("label_key", label_key), ("label_field", label_field)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        if mode not in ("auto", "indexed", "stream"):
            raise ValueError(f"mode must be 'auto', 'indexed' or 'stream', got {mode!r}")
        index_cache = index_cache_arg(index_cache)
        expanded = list(_core._expand_shard_urls(list(urls)))
        remote = [u for u in expanded if u.startswith(_STREAM_PREFIXES)]
        if mode == "indexed" and remote:
            raise ValueError(f"{remote[0]}: http(s) and pipe: shards are read as streams: use mode='stream' (or 'auto')")
        self._streamed = mode == "stream" or bool(remote)
        self._bad = self._cached = self._walked = 0
        if not self._streamed:
            if cache_dir is not None:
                raise ValueError("cache_dir keeps copies of streamed shards; local shards are read in place "
                                 "(cache='memory' on the Loader keeps their bytes in memory)")
            self._source, shards, self._bad, self._cached = _core._webdataset(
                list(urls), image_key, label_key or "", label_field or "", index_cache)
        else:
            shards = self._stream(expanded, image_key, label_key, label_field, index_cache, manifest,
                                  _positive("shuffle_buffer", shuffle_buffer), _positive("lanes", lanes), cache_dir,
                                  cache_size, retries, _positive("timeout", timeout, float))
        self._shards = list(shards)

    def _stream(self, urls, image_key, label_key, label_field, index_cache, manifest, window, lanes, cache_dir,
                cache_size, retries, timeout):
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        if cache_dir is None and cache_size is not None:
            raise ValueError("cache_size is given but cache_dir is None")
        if cache_dir is not None:
            cache_dir = os.fspath(cache_dir)
            os.makedirs(cache_dir, exist_ok=True)
            cache_size = shutil.disk_usage(cache_dir).free // 2 if cache_size is None else _positive("cache_size", cache_size)
        counts = shard_counts(urls, manifest, timeout)
        self._source, shards, self._walked, self._cached = _core._webdataset_stream(
            urls, counts, image_key=image_key, label_key=label_key or "", label_field=label_field or "",
            index_cache=index_cache, cache_dir=cache_dir, cache_bytes=cache_size or 0, lanes=lanes, window=window,
            retries=retries, timeout=timeout)
        return shards

    def __len__(self) -> int:
        """Samples in all shards (the failing entries included)."""
        return len(self._source)

    def __repr__(self) -> str:
        return f"sluice.WebDataset({len(self._shards)} shards, {len(self)} samples, {self.mode})"

    @property
    def mode(self) -> str:
        """``"indexed"`` or ``"stream"``: how the shards are read."""
        return "stream" if self._streamed else "indexed"

    @property
    def shards(self) -> list[str]:
        """The shard paths or urls, patterns expanded, in order."""
        return list(self._shards)

    @property
    def bad_count(self) -> int:
        """Indexed mode: entries that will fail when read (unusable samples, damaged shard tails)."""
        return self._bad

    @property
    def cached_shards(self) -> int:
        """Shards whose index came from ``index_cache`` rather than a walk."""
        return self._cached

    @property
    def walked_shards(self) -> int:
        """Streamed mode: shards walked (or indexed from the cache) to count their samples; 0 when
        the counts came from a manifest."""
        return self._walked

    @property
    def samples(self) -> list[tuple[str, int]]:
        """(name, label) of every sample, in order: ``("train-0.tar:n0001.jpg", 3)``. Streamed
        with counts from a manifest, names are ``"url#k"`` and labels -1 (not read yet)."""
        return [(self._source.name(i), self._source.label(i)) for i in range(len(self._source))]
