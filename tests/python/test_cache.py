"""cache="memory" (issue 17): encoded bytes kept in host memory after their first read, within a
byte budget, reported in stats(). The files are deleted after the first epoch: what the later
epochs still deliver came from memory."""
from __future__ import annotations

import os
import shutil
import time

import numpy as np
import pytest

import sluice
import sluice.transforms as T

PIPE = [T.RandomResizedCrop(24), T.RandomHorizontalFlip()]


@pytest.fixture
def copy(small_folder, tmp_path):
    root = str(tmp_path / "data")
    shutil.copytree(small_folder, root)
    return root


def run(loader, epoch):
    loader.set_epoch(epoch)
    return [(np.asarray(x), np.asarray(y)) for x, y in loader]


def settled(loader):
    """The cache's counters once the loader's reads stopped: as an epoch ends, the next epoch's
    first batches (prefetch of them) are read ahead, and counted when read."""
    last, same = None, 0
    while same < 4:
        time.sleep(0.05)
        c = loader.stats()["cache"]
        now = (c["hits"], c["misses"])
        same, last = (same + 1 if now == last else 0), now
    return loader.stats()["cache"]


def test_later_epochs_come_from_memory_with_the_same_output(copy):
    kw = dict(batch_size=4, shuffle=True, seed=3, output="numpy", num_threads=2)
    cached = sluice.Loader(copy, PIPE, cache="memory", **kw)
    plain = sluice.Loader(copy, PIPE, **kw)
    first = run(cached, 0)
    c = settled(cached)
    total = sum(os.path.getsize(p) for p, _ in cached.samples)
    # Every file missed once; the next epoch's first 2 batches (prefetch) were read ahead: hits.
    assert (c["hits"], c["misses"], c["bytes"]) == (8, 15, total)
    expected = [run(plain, e) for e in (0, 1, 2)]
    for p, _ in cached.samples:
        os.unlink(p)  # from here on, only the cache has them
    cached.reset_stats()
    for e, want in zip((1, 2), expected[1:]):
        got = run(cached, e)
        for (x, y), (wx, wy) in zip(got, want, strict=True):
            assert y.tolist() == wy.tolist()
            np.testing.assert_array_equal(x, wx)
    c = settled(cached)
    assert (c["hits"], c["misses"]) == (30, 0)  # 7 + 15 of epochs 1 and 2, and 8 read ahead of 3
    for (x, _), (wx, _) in zip(first, expected[0], strict=True):
        np.testing.assert_array_equal(x, wx)
    assert "cache" not in plain.stats()


def test_the_budget_bounds_what_is_kept(copy):
    loader = sluice.Loader(copy, PIPE, batch_size=5, cache="memory", cache_budget=1, output="numpy")
    sizes = [os.path.getsize(p) for p, _ in loader.samples]
    budget = sum(sorted(sizes)[:7])
    # One reading thread, no shuffle: files are read in order, and kept while they fit.
    kept_bytes, kept = 0, set()
    for i, n in enumerate(sizes):
        if kept_bytes + n <= budget:
            kept_bytes = kept_bytes + n
            kept.add(i)
    assert 0 < len(kept) < 15
    loader = sluice.Loader(copy, PIPE, batch_size=5, cache="memory", cache_budget=budget, output="numpy",
                           num_threads=1, io_threads=1)
    run(loader, 0)
    # Each file missed once, then epoch 1's first 2 batches (samples 0-9) were read ahead.
    ahead = set(range(10))
    c = settled(loader)
    assert (c["bytes"], c["budget"]) == (kept_bytes, budget)
    assert (c["hits"], c["misses"]) == (len(ahead & kept), 15 + len(ahead - kept))
    loader.reset_stats()
    run(loader, 1)
    # Samples 10-14 of epoch 1, and 0-9 of epoch 2 read ahead: every sample once.
    c = settled(loader)
    assert (c["hits"], c["misses"]) == (len(kept), 15 - len(kept))
    for p, _ in loader.samples:
        os.unlink(p)
    with pytest.raises(FileNotFoundError):  # the samples not kept are read again, and are gone
        run(loader, 2)


def test_shards_are_cached_too(small_folder, tmp_path):
    from sluice import pack

    pack.pack(small_folder, str(tmp_path / "s"), progress=False)
    ds = sluice.WebDataset(str(tmp_path / "s" / "shard-*.tar"), index_cache=None)
    loader = sluice.Loader(ds, PIPE, batch_size=8, cache="memory", output="numpy")
    run(loader, 0)
    run(loader, 1)
    # Read once (15 misses); epoch 1 (read ahead as epoch 0 ended) and epoch 2's first two
    # batches (the whole epoch, read ahead as epoch 1 ended) came from memory.
    c = settled(loader)
    assert (c["hits"], c["misses"]) == (30, 15)


@pytest.mark.parametrize("kwargs,match", [
    (dict(cache="disk"), 'cache must be "memory" or None'),
    (dict(cache_budget=10), "cache_budget is given but cache is None"),
    (dict(cache="memory", cache_budget=0), "cache_budget must be an int >= 1"),
    (dict(cache="memory", cache_budget=1.5), "cache_budget must be an int >= 1"),
])
def test_cache_argument_errors(small_folder, kwargs, match):
    with pytest.raises(ValueError, match=match):
        sluice.Loader(small_folder, PIPE, **kwargs)
