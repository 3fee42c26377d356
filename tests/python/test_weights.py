"""Loader(weights=...): each epoch's positions drawn with the weights' odds, as PyTorch's
WeightedRandomSampler (with and without replacement), on real JPEG files labelled with their own
index: frequencies against weights / sum(weights), sharding over ranks that together deliver the
single-rank epoch's positions exactly once, exact resume, and the errors."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import sluice
import sluice.transforms as T

TF = [T.CenterCrop(8)]


@pytest.fixture(scope="module")
def numbered(small_folder) -> list[tuple[str, int]]:
    """40 samples over small_folder's files, each labelled with its own index."""
    files = [p for p, _ in sluice.Loader(small_folder, TF).samples]
    return [(files[i % len(files)], i) for i in range(40)]


def labels(loader, epoch):
    loader.set_epoch(epoch)
    return [int(v) for batch in loader for v in np.asarray(batch[1])]  # (images, labels[, valid])


def make(source, **kw):
    return sluice.Loader(source, TF, batch_size=kw.pop("batch_size", 8), seed=kw.pop("seed", 3), output="numpy", **kw)


def test_with_replacement_draws_with_the_weights_odds(numbered):
    weights = np.array([3.0] * 10 + [1.0] * 25 + [0.0] * 5)
    loader = make(numbered, weights=weights)
    counts = collections.Counter(v for e in range(60) for v in labels(loader, e))
    total = sum(counts.values())
    assert total == 60 * 40
    assert not any(counts[i] for i in range(35, 40))  # weight 0: never
    heavy = sum(counts[i] for i in range(10)) / total
    assert abs(heavy - 30 / 55) < 0.03, heavy  # p = 30 / 55 = 0.545; sd of the share ~0.01
    per_heavy = [counts[i] / total for i in range(10)]
    assert max(abs(p - 3 / 55) for p in per_heavy) < 0.02, per_heavy
    assert len(set(labels(loader, 0))) < 40  # repeats


def test_without_replacement_every_sample_once_heavier_earlier(numbered):
    weights = [20.0] * 10 + [1.0] * 30
    loader = make(numbered, weights=weights, replacement=False)
    first_half = 0
    for e in range(20):
        order = labels(loader, e)
        assert sorted(order) == list(range(40))
        first_half += sum(v < 10 for v in order[:20])
    assert first_half > 0.85 * 200, first_half  # the 10 heavy ones nearly always in the first half


def test_epochs_follow_the_seed(numbered):
    a, b = make(numbered, weights=range(1, 41)), make(numbered, weights=range(1, 41))
    assert labels(a, 2) == labels(b, 2) and labels(a, 2) != labels(a, 3)
    assert labels(a, 2) != labels(make(numbered, weights=range(1, 41), seed=4), 2)


@pytest.mark.parametrize("last_batch", ["partial", "drop", "pad"])
def test_ranks_deliver_the_epochs_positions_once(numbered, last_batch):
    weights = np.linspace(0.5, 2.0, 40)
    whole = labels(make(numbered, weights=weights, batch_size=4), 1)
    parts = [labels(make(numbered, weights=weights, batch_size=4, rank=r, world_size=3, last_batch=last_batch), 1)
             for r in range(3)]
    if last_batch == "partial":
        assert sorted(sum(parts, [])) == sorted(whole)
    # rank r takes global positions r, r + 3, ... of the same drawn sequence
    for r, part in enumerate(parts):
        mine = whole[r::3]
        n = min(len(part), len(mine))
        assert part[:n] == mine[:n], (r, part, mine)


def test_resume_gives_the_rest_of_the_epoch(numbered):
    weights = np.linspace(0.5, 2.0, 40)
    want = labels(make(numbered, weights=weights), 2)
    first = make(numbered, weights=weights)
    first.set_epoch(2)
    it = iter(first)
    taken = [int(v) for _ in range(2) for v in np.asarray(next(it)[1])]
    state = first.state_dict()
    second = make(numbered, weights=weights)
    second.load_state_dict(state)
    rest = [int(v) for _, y in second for v in np.asarray(y)]
    assert taken + rest == want
    with pytest.raises(ValueError):
        make(numbered, weights=np.linspace(0.5, 3.0, 40)).load_state_dict(state)  # other weights


def test_torch_weights_and_errors(numbered):
    torch = pytest.importorskip("torch")
    assert len(labels(make(numbered, weights=torch.ones(40)), 0)) == 40
    with pytest.raises(ValueError, match=r"weights must hold one weight per sample \(40\), got 39"):
        make(numbered, weights=[1.0] * 39)
    with pytest.raises(ValueError, match="weights must be finite numbers >= 0, got -1"):
        make(numbered, weights=[1.0] * 39 + [-1.0])
    with pytest.raises(ValueError, match="weights must have a positive sum"):
        make(numbered, weights=[0.0] * 40)
    with pytest.raises(ValueError, match=r"weights without replacement must all be > 0 .* sample 39 \(.*\.jpg\) has 0"):
        make(numbered, weights=[1.0] * 39 + [0.0], replacement=False)
    with pytest.raises(ValueError, match="weights= draws each epoch's samples itself"):
        make(numbered, weights=[1.0] * 40, shuffle=True)
