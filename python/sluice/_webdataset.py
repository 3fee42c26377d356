"""sluice.WebDataset: WebDataset tar shards as a Loader source."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from . import _core

__all__ = ["WebDataset"]


class WebDataset:
    """Samples of WebDataset tar shards (``{key}.jpg`` + ``{key}.cls`` ...), as written by the
    ``webdataset`` library's ``ShardWriter``, ``tar`` or ``sluice pack``: pass it to
    :class:`~sluice.Loader` as the source. Shuffling, sharding over ranks, ``last_batch``,
    ``on_error`` and ``state_dict`` work as with an image folder.

        ds = sluice.WebDataset("shards/train-{0000..0127}.tar")
        loader = sluice.Loader(ds, [T.RandomResizedCrop(224), T.ToTensor()], batch_size=256, shuffle=True)

    Each shard is walked once when this is made (its member headers, and its label members),
    several shards at once; then each image is read by offset from a few open shards.

    Args:
        urls: a shard path, a brace pattern (``train-{0000..0127}.tar``, ``{a,b}.tar``), a glob
            (``shards/*.tar``, sorted), or a sequence of those. Local files only for now.
        image_key: extensions that hold the image, in order of preference (``"jpg;png"``).
        label_key: extensions that hold the label, in order of preference: a decimal integer
            (``.cls``, ``.txt``), or a JSON object (an extension ending in ``json``) whose field
            ``label_field`` is an integer. ``None``: no labels (every label is -1).
        label_field: the JSON field that holds the label.
        index_cache: a folder where each shard's index is kept between runs, so that a shard is
            walked once, not at every start (an entry is keyed by the shard's path, size and
            modification time, and the keys asked for: a rewritten shard is walked again).
            ``"default"``: ``$SLUICE_CACHE/index`` (``~/.cache/sluice/index``); ``None``: none.

    A sample without its image or label, with a label that is not an integer, a member twice,
    or a key that an earlier sample of the shard had, and the damaged tail of a truncated or
    corrupt shard, fail when read, named ``"shard.tar:key.jpg"``: ``on_error`` decides whether
    that raises or is skipped and reported in ``loader.stats()["skipped"]``.

    Raises:
        FileNotFoundError: a shard that does not exist, or a glob that matches nothing.
        ValueError: an empty list, a bad brace pattern, an empty extension, a JSON label without
            ``label_field``, shards that hold no sample.
    """

    def __init__(self, urls: Any, image_key: str = "jpg;jpeg;png;webp", label_key: str | None = "cls",
                 label_field: str | None = None, index_cache: Any = "default"):
        if isinstance(urls, (str, bytes, os.PathLike)):
            urls = [urls]
        elif not isinstance(urls, Sequence):
            raise TypeError(f"urls must be a path, a pattern or a sequence of them, got {type(urls).__name__}")
        for name, value in (("image_key", image_key), ("label_key", label_key), ("label_field", label_field)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        if isinstance(index_cache, str) and index_cache == "default":
            from .datasets import cache_dir

            index_cache = os.path.join(cache_dir(), "index")
        elif index_cache is not None and not isinstance(index_cache, (str, bytes, os.PathLike)):
            raise TypeError(f"index_cache must be a folder, \"default\" or None, got {type(index_cache).__name__}")
        self._source, shards, self._bad, self._cached = _core._webdataset(
            list(urls), image_key, label_key or "", label_field or "", index_cache)
        self._shards = list(shards)

    def __len__(self) -> int:
        """Samples in all shards (the failing entries included)."""
        return len(self._source)

    def __repr__(self) -> str:
        return f"sluice.WebDataset({len(self._shards)} shards, {len(self)} samples)"

    @property
    def shards(self) -> list[str]:
        """The shard paths, patterns expanded, in order."""
        return list(self._shards)

    @property
    def bad_count(self) -> int:
        """Entries that will fail when read (unusable samples, damaged shard tails)."""
        return self._bad

    @property
    def cached_shards(self) -> int:
        """Shards whose index came from ``index_cache`` rather than a walk."""
        return self._cached

    @property
    def samples(self) -> list[tuple[str, int]]:
        """(name, label) of every sample, in order: ``("train-0.tar:n0001.jpg", 3)``."""
        return [(self._source.name(i), self._source.label(i)) for i in range(len(self._source))]
