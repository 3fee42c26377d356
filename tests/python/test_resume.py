"""Checkpoint and resume (issue 4): Loader.state_dict() / load_state_dict(), on the CPU path with
real files.

Each sample is labelled with its own index, so a batch's labels say which samples it holds. The
guarantees checked:
  * same settings: the resumed run yields exactly the batches (samples and pixels) the
    uninterrupted run had still to yield, then carries on with the next epoch;
  * other world size or batch size (elastic): the samples taken before the checkpoint plus those
    after it are every sample exactly once, each with the pixels the uninterrupted run gives it;
  * a state from another dataset, seed or shuffle setting is refused with a clear error.
"""
from __future__ import annotations

import base64
import collections
import io
import pickle

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


def make(source, **kw):
    kw.setdefault("shuffle", True)
    kw.setdefault("seed", 7)
    return sluice.Loader(source, PIPE, output="numpy", num_threads=2, **kw)


def batches(iterator, take: int | None = None) -> list[tuple]:
    """(labels, images, valid or None) per batch, NumPy; at most `take` batches."""
    out = []
    for item in iterator:
        valid = np.asarray(item[2]) if len(item) == 3 else None
        out.append((np.asarray(item[1]), np.asarray(item[0]), valid))
        if take is not None and len(out) == take:
            break
    return out


def epoch(loader, e: int, take: int | None = None) -> list[tuple]:
    loader.set_epoch(e)
    return batches(loader, take)


def roundtrip(state: dict) -> dict:
    """What a checkpoint file gives back: torch.save, then torch.load with weights_only=True (its
    default from torch 2.6, which refuses anything but tensors, numbers, strings and containers),
    or pickle where torch is missing."""
    try:
        import torch
    except ImportError:
        return pickle.loads(pickle.dumps(state))
    buf = io.BytesIO()
    torch.save({"loader": state}, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)["loader"]


def assert_same(got: list[tuple], want: list[tuple]):
    assert [b[0].tolist() for b in got] == [b[0].tolist() for b in want]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g[1], w[1], err_msg=f"pixels of batch {k}")
        if w[2] is not None:
            np.testing.assert_array_equal(g[2], w[2], err_msg=f"valid mask of batch {k}")


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("last_batch", ["partial", "pad", "drop"])
@pytest.mark.parametrize("world_size", [1, 2])
def test_resume_yields_exactly_the_batches_left(numbered, shuffle, last_batch, world_size):
    for rank in range(world_size):
        kw = dict(batch_size=2, shuffle=shuffle, last_batch=last_batch, rank=rank, world_size=world_size)
        want = epoch(make(numbered, **kw), 1)
        following = epoch(make(numbered, **kw), 2)
        for k in range(len(want) + 1):
            first = make(numbered, **kw)
            taken = epoch(first, 1, take=k) if k else first.set_epoch(1) or []
            assert_same(taken, want[:k])
            state = roundtrip(first.state_dict())
            assert (state["epoch"], state["batches"]) == (1, k)

            resumed = make(numbered, **kw)
            resumed.load_state_dict(state)
            it = iter(resumed)
            if k < len(want):
                assert len(it) == len(want) - k
                assert_same(batches(it), want[k:])
            else:  # the epoch was finished: the next iteration is the next epoch, whole
                assert_same(batches(it), following)
                continue
            # After the resumed epoch, the next one is whole and as in the uninterrupted run.
            assert_same(batches(resumed), following)


def test_resume_of_a_resumed_epoch(numbered):
    kw = dict(batch_size=2, last_batch="partial")
    want = epoch(make(numbered, **kw), 3)  # 8 batches
    a = make(numbered, **kw)
    epoch(a, 3, take=2)
    b = make(numbered, **kw)
    b.load_state_dict(roundtrip(a.state_dict()))
    assert_same(batches(b, take=3), want[2:5])
    c = make(numbered, **kw)
    c.load_state_dict(roundtrip(b.state_dict()))
    assert_same(batches(c), want[5:])


@pytest.mark.parametrize("last_batch", ["partial", "pad", "drop"])
@pytest.mark.parametrize("before,after", [((2, 2, 2), (3, 2)), ((2, 2, 2), (1, 4)),
                                          ((1, 2, 3), (4, 2)), ((3, 2, 1), (2, 3))])
def test_elastic_resume_every_sample_exactly_once(numbered, last_batch, before, after):
    """before = (world size, batch size, batches taken per rank), after = (world size, batch size)."""
    w1, b1, k = before
    w2, b2 = after
    # The pixels every sample gets in this epoch (they depend on seed, epoch and index only).
    reference = {}
    for labels, images, _ in epoch(make(numbered, batch_size=4), 2):
        reference.update(zip(labels.tolist(), images))

    seen = collections.Counter()
    states = []
    for rank in range(w1):
        loader = make(numbered, batch_size=b1, last_batch=last_batch, rank=rank, world_size=w1)
        for labels, _, valid in epoch(loader, 2, take=k):
            seen.update(labels[valid].tolist() if valid is not None else labels.tolist())
        states.append(roundtrip(loader.state_dict()))
    # Ranks that step together have the same state: any one of them resumes the job.
    assert all(s == states[0] for s in states)
    consumed = sum(seen.values())

    lengths = set()
    for rank in range(w2):
        loader = make(numbered, batch_size=b2, last_batch=last_batch, rank=rank, world_size=w2)
        loader.load_state_dict(states[0])
        rest = batches(iter(loader))
        lengths.add(len(rest))
        for labels, images, valid in rest:
            keep = valid if valid is not None else np.ones(len(labels), bool)
            seen.update(labels[keep].tolist())
            for label, image in zip(labels[keep].tolist(), images[keep]):
                np.testing.assert_array_equal(image, reference[label], err_msg=f"sample {label}")
    assert len(lengths) == 1, f"ranks yield different batch counts after the resume: {lengths}"
    repeated = [s for s, c in seen.items() if c > 1]
    assert not repeated, f"delivered twice: {repeated}"
    n = len(numbered)
    if last_batch == "drop":  # the resumed part drops fewer than w2 * b2 samples
        assert n - w2 * b2 < len(seen) <= n
    else:
        assert sorted(seen) == list(range(n)), f"missing: {sorted(set(range(n)) - set(seen))}"
    assert consumed == w1 * b1 * k  # the interrupted run had taken full batches only


def test_state_dict_is_small_plain_and_says_what_comes_next(numbered):
    loader = make(numbered, batch_size=4)
    state = loader.state_dict()
    assert state["format"] == "sluice.Loader/2"
    assert (state["epoch"], state["batches"], state["next_epoch"]) == (0, 0, 0)
    assert state["epoch_batches"] == len(loader) == 4
    assert state["num_samples"] == 15 and state["resumed_from"] == ""
    assert all(isinstance(v, (int, str, bool)) for v in state.values())
    epoch(loader, 0)
    state = loader.state_dict()
    assert (state["epoch"], state["batches"], state["next_epoch"]) == (0, 4, 1)
    loader.set_epoch(6)
    assert loader.state_dict()["next_epoch"] == 6
    # A resumed epoch carries which positions were consumed before it: one bit per sample.
    a = make(numbered, batch_size=4, rank=0, world_size=2)
    epoch(a, 0, take=1)
    b = make(numbered, batch_size=3)  # elastic: another batch size and world size
    b.load_state_dict(a.state_dict())
    next(iter(b))
    state = b.state_dict()
    packed = base64.b64decode(state["resumed_from"])
    assert len(packed) == 2  # ceil(15 / 8)
    assert sum(bin(x).count("1") for x in packed) == 8  # 2 ranks x 4 samples


def test_a_state_of_the_first_format_still_loads(numbered):
    """States saved before resumed_from became base64 text (format 1 held bytes) resume alike."""
    a = make(numbered, batch_size=4, rank=0, world_size=2)
    epoch(a, 0, take=1)
    b = make(numbered, batch_size=3)  # elastic: the state gets resumed_from flags
    b.load_state_dict(a.state_dict())
    next(iter(b))
    state = b.state_dict()
    old = {**state, "format": "sluice.Loader/1", "resumed_from": base64.b64decode(state["resumed_from"])}
    c, d = make(numbered, batch_size=3), make(numbered, batch_size=3)
    c.load_state_dict(roundtrip(state))
    d.load_state_dict(old)
    assert_same(batches(d), batches(c))


@pytest.mark.parametrize("resume_batch_size", [4, 3])
def test_an_iteration_nothing_was_taken_from_uses_up_no_epoch(numbered, resume_batch_size):
    """A dropped iter() (Lightning makes one before training) leaves its epoch, or the rest of a
    resumed one, to the next iteration, as state_dict() says; one that yielded a batch does not."""
    want = [epoch(make(numbered, batch_size=4), e) for e in (0, 1)]
    loader = make(numbered, batch_size=4)
    iter(loader)
    iter(loader)
    assert loader.state_dict()["next_epoch"] == 0
    assert_same(batches(loader), want[0])
    next(iter(loader))
    assert_same(batches(loader), epoch(make(numbered, batch_size=4), 2))

    first = make(numbered, batch_size=4)
    epoch(first, 0, take=1)
    state = first.state_dict()
    plain, probed = make(numbered, batch_size=resume_batch_size), make(numbered, batch_size=resume_batch_size)
    plain.load_state_dict(state)
    probed.load_state_dict(state)
    iter(probed)
    assert probed.state_dict()["next_epoch"] == 0
    assert_same(batches(probed), batches(plain))
    assert_same(batches(probed), want[1] if resume_batch_size == 4 else batches(plain))


def test_load_state_dict_ends_the_iteration_in_progress(numbered):
    loader = make(numbered, batch_size=4)
    it = iter(loader)
    next(it)
    loader.load_state_dict(loader.state_dict())
    with pytest.raises(RuntimeError, match="invalidated"):
        next(it)
    assert len(batches(loader)) == 3  # the rest of epoch 0


def test_load_state_dict_errors(numbered, small_folder):
    loader = make(numbered, batch_size=4)
    epoch(loader, 0, take=1)
    good = loader.state_dict()

    def fails(target, state, match, exc=ValueError):
        with pytest.raises(exc, match=match):
            target.load_state_dict(state)

    fails(make(numbered[:-1], batch_size=4), good, "a dataset of 15 samples; this loader's has 14")
    renamed = list(numbered)
    renamed[3] = (numbered[4][0], 3)  # same size, one file twice instead of another
    fails(make(renamed, batch_size=4), good, "another dataset: the same number of samples")
    relabelled = [(p, i + 1) for p, i in numbered]
    fails(make(relabelled, batch_size=4), good, "another dataset")
    fails(make(numbered, batch_size=4, seed=8), good, "seed 7; this loader has seed 8")
    fails(make(numbered, batch_size=4, shuffle=False), good, "shuffle=true; this loader has shuffle=false")
    fails(loader, {**good, "format": "x"}, "not a sluice.Loader state")
    fails(loader, {k: v for k, v in good.items() if k != "seed"}, "missing 'seed'")
    fails(loader, {**good, "batches": 9}, "malformed state: epoch 0, 9 of 4 batches")
    fails(loader, {**good, "epoch_batches": 5}, "malformed state: its settings give 4 batches")
    fails(loader, {**good, "resumed_from": "/w=="}, "resumed_from does not hold 15 flags")
    fails(loader, {**good, "resumed_from": "not base64!"}, "resumed_from is not base64")
    fails(loader, {**good, "batch_size": "x"}, "malformed state")
    fails(loader, {**good, "last_batch": "most"}, "last_batch must be")
    fails(loader, [1, 2], "must be a dict", TypeError)
    # An elastic resume the new settings cannot shard says so.
    one_left = make(numbered, batch_size=2)
    epoch(one_left, 0, take=7)  # 14 of 15 taken: one sample cannot be split over two ranks
    fails(make(numbered, batch_size=2, rank=0, world_size=2, last_batch="partial"), one_left.state_dict(),
          "cannot resume under these settings: last_batch='partial': 1 samples")
    # The loader that refused a state is unchanged: a whole epoch 0.
    fresh = make(numbered, batch_size=4)
    with pytest.raises(ValueError):
        fresh.load_state_dict({**good, "seed": 1})
    assert sum(len(b[0]) for b in batches(fresh)) == 15


@pytest.mark.parametrize("resume_world", [2, 1, 3])
def test_partial_with_uneven_batches_resumes_exactly(numbered, resume_world):
    # 9 samples over 2 ranks at batch 4, "partial": rank 0's part (5) gives batches of 4 and 1,
    # rank 1's part (4) gives 3 and 1, so that both yield two. After one batch each, 7 samples
    # are taken and the ranks' next positions are not in step: the resume must still give each
    # rank exactly its own remaining batch (same world), or the 2 left exactly once (elastic).
    nine = numbered[:9]
    want, taken, states = {}, collections.Counter(), []
    for rank in range(2):
        kw = dict(batch_size=4, last_batch="partial", rank=rank, world_size=2)
        whole = epoch(make(nine, **kw), 0)
        assert [len(b[0]) for b in whole] == ([4, 1] if rank == 0 else [3, 1])
        want[rank] = whole
        first = make(nine, **kw)
        taken.update(epoch(first, 0, take=1)[0][0].tolist())
        states.append(first.state_dict())
    assert states[0] == states[1] and sum(taken.values()) == 7
    seen = collections.Counter(taken)
    for rank in range(resume_world):
        loader = make(nine, batch_size=4, last_batch="partial", rank=rank, world_size=resume_world) \
            if resume_world < 3 else make(nine, batch_size=1, last_batch="pad", rank=rank, world_size=3)
        loader.load_state_dict(states[0])
        rest = batches(iter(loader))
        if resume_world == 2:
            assert_same(rest, want[rank][1:])
        for labels, _, valid in rest:
            seen.update(labels[valid].tolist() if valid is not None else labels.tolist())
    assert sorted(seen) == list(range(9)) and all(c == 1 for c in seen.values()), seen
