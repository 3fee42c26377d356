"""Sharding, shuffling and the last-batch policies (issue 4), on the CPU path with real files.

Each sample gets its own label (its position in the source list), so the labels of a batch say
exactly which samples it holds. The checks are the guarantees the loader makes:
  * every epoch, the non-padding samples of all ranks together are the dataset exactly once
    ("drop" leaves out fewer than world_size * batch_size);
  * every rank yields len(loader) batches, the same number on every rank;
  * the order changes every epoch and is the same on every rank without communication;
  * a sample's pixels depend only on (seed, epoch, sample index), not on the rank split.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

import sluice
import sluice.transforms as T

PIPE = [T.RandomResizedCrop(24), T.RandomHorizontalFlip()]


@pytest.fixture(scope="module")
def numbered(small_folder) -> list[tuple[str, int]]:
    """The 15 files of small_folder, each labelled with its own index."""
    files = [p for p, _ in sluice.Loader(small_folder, [T.CenterCrop(8)]).samples]
    return [(p, i) for i, p in enumerate(files)]


def epoch_of(loader, epoch: int) -> list[tuple]:
    """One epoch as (labels, valid or None, images) per batch, NumPy."""
    loader.set_epoch(epoch)
    out = []
    for item in loader:
        images, labels = np.asarray(item[0]), np.asarray(item[1])
        valid = np.asarray(item[2]) if len(item) == 3 else None
        out.append((labels, valid, images))
    return out


def make(source, **kw):
    return sluice.Loader(source, PIPE, output="numpy", num_threads=2, **kw)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("last_batch", ["partial", "pad", "drop"])
@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_every_sample_exactly_once_per_epoch(numbered, shuffle, last_batch, world_size):
    n, bs = len(numbered), 2
    for epoch in (0, 1):
        seen = collections.Counter()
        lengths = set()
        for rank in range(world_size):
            loader = make(numbered, batch_size=bs, shuffle=shuffle, seed=5, last_batch=last_batch,
                          rank=rank, world_size=world_size)
            batches = epoch_of(loader, epoch)
            assert len(batches) == len(loader), f"rank {rank}: len() is not the batches yielded"
            lengths.add(len(loader))
            for labels, valid, _ in batches:
                if last_batch == "pad":
                    assert len(labels) == bs and valid is not None
                    seen.update(labels[valid].tolist())
                else:
                    assert valid is None
                    seen.update(labels.tolist())
        assert len(lengths) == 1, f"ranks yield different batch counts: {lengths}"
        assert all(c == 1 for c in seen.values()), f"repeated: {[k for k, c in seen.items() if c > 1]}"
        if last_batch == "drop":
            assert n - world_size * bs < len(seen) <= n
            assert len(seen) % (world_size * bs) == 0
        else:
            assert sorted(seen) == list(range(n)), f"missing: {sorted(set(range(n)) - set(seen))}"


def test_pad_marks_exactly_the_repeats(numbered):
    # 15 samples over 4 ranks, batch 3: parts of 4, 4, 4, 3 -> 2 batches of 3 each; 24 slots,
    # 15 real samples, 9 repeats.
    real = repeats = 0
    for rank in range(4):
        loader = make(numbered, batch_size=3, shuffle=True, seed=1, last_batch="pad", rank=rank, world_size=4)
        assert len(loader) == 2
        for labels, valid, _ in epoch_of(loader, 0):
            assert valid.dtype == bool and valid.shape == labels.shape == (3,)
            real += int(valid.sum())
            repeats += int((~valid).sum())
    assert (real, repeats) == (15, 9)


def test_order_changes_every_epoch_and_agrees_across_ranks(numbered):
    def order(rank, epoch):
        loader = make(numbered, batch_size=4, shuffle=True, seed=9, rank=rank, world_size=2)
        return [lab for labels, _, _ in epoch_of(loader, epoch) for lab in labels.tolist()]

    # Rank r holds global positions r, r + 2, ...: interleaving the two ranks' orders gives the
    # epoch's global permutation, which must be a permutation and differ between epochs.
    perms = []
    for epoch in range(3):
        a, b = order(0, epoch), order(1, epoch)
        assert order(0, epoch) == a  # the same again: no hidden state
        glob = [x for pair in zip(a, b) for x in pair] + a[len(b):]
        assert sorted(glob) == list(range(len(numbered)))
        perms.append(glob)
    assert perms[0] != perms[1] and perms[1] != perms[2]
    # The global permutation does not depend on the world size.
    one = make(numbered, batch_size=4, shuffle=True, seed=9, rank=0, world_size=1)
    assert [lab for labels, _, _ in epoch_of(one, 1) for lab in labels.tolist()] == perms[1]


def test_pixels_depend_on_the_sample_not_the_rank_split(numbered):
    # The same sample, the same epoch and seed: the same augmented pixels with 1 rank or 3.
    def pixels(world_size):
        out = {}
        for rank in range(world_size):
            loader = make(numbered, batch_size=2, shuffle=True, seed=3, rank=rank, world_size=world_size)
            for labels, _, images in epoch_of(loader, 2):
                for k, lab in enumerate(labels.tolist()):
                    out[lab] = images[k]
        return out

    one, three = pixels(1), pixels(3)
    assert sorted(one) == sorted(three) == list(range(len(numbered)))
    for lab in one:
        np.testing.assert_array_equal(one[lab], three[lab], err_msg=f"sample {lab}")


def test_rank_from_environment(numbered, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    loader = make(numbered, batch_size=2)
    assert (loader.rank, loader.world_size) == (1, 3)
    assert sorted(lab for labels, _, _ in epoch_of(loader, 0) for lab in labels.tolist()) == [1, 4, 7, 10, 13]
    explicit = make(numbered, batch_size=2, rank=0, world_size=1)  # arguments win
    assert (explicit.rank, explicit.world_size) == (0, 1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(rank=2, world_size=2), r"rank must be in \[0, world_size\) = \[0, 2\), got 2"),
    (dict(rank=0, world_size=0), "world_size must be >= 1, got 0"),
    (dict(rank=-1, world_size=2), "rank must be >= 0, got -1"),
    (dict(rank=1), "pass both rank and world_size, or neither"),
    (dict(rank=0, world_size=16, batch_size=1, last_batch="drop"),
     r"last_batch='drop': 15 samples over 16 rank\(s\) with batch_size 1 leaves no full batch"),
])
def test_shard_errors(numbered, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(numbered, **kwargs)


def test_bad_rank_environment(numbered, monkeypatch):
    monkeypatch.setenv("RANK", "zero")
    with pytest.raises(ValueError, match="RANK='zero' and WORLD_SIZE=None must be integers"):
        make(numbered)


def test_pad_valid_is_a_torch_bool_tensor_with_torch_output(numbered):
    torch = pytest.importorskip("torch")
    loader = sluice.Loader(numbered, PIPE, batch_size=4, last_batch="pad", rank=1, world_size=2,
                           output="torch", num_threads=2)
    batches = list(loader)
    assert len(batches) == len(loader) == 2  # part of 7 samples, padded to 2 batches of 4
    for images, labels, valid in batches:
        assert isinstance(valid, torch.Tensor) and valid.dtype == torch.bool
        assert valid.shape == labels.shape == (4,) and valid.device == images.device
    assert [v.tolist() for _, _, v in batches] == [[True] * 4, [True, True, True, False]]
