"""RandomApply on real JPEGs: applied, each sample gives exactly the pixels of the same list with
the transforms written out (at the same list positions, so from the same random streams); not
applied, exactly the pixels without them; the share applied follows p per sample and the seed;
nesting, a Compose, and the errors for what it cannot hold."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes

core = sluice._core
JITTER = T.ColorJitter(brightness=0.6, contrast=0.5, saturation=0.5, hue=0.2)


def jpeg(seed=0):
    return pil_bytes(Image.fromarray(photo(80, 60, seed)), "JPEG", quality=90)


def run(data, transforms, index=0, seed=0):
    specs = T.compile_specs(T.flatten(transforms), False, [])
    return np.from_dlpack(core.process_sample(data, specs, seed, 0, index, "uint8", "NHWC", False))


# A transform that draws and changes nothing, to hold a list position in the written-out lists.
HOLD = T.RandomGrayscale(p=0.0)


@pytest.mark.parametrize("index", range(6))
def test_applied_and_not_applied_are_the_lists_with_and_without(index):
    data = jpeg(index)
    size = [T.Resize((40, 48))]
    gated = [T.RandomApply([JITTER, T.GaussianBlur(5, (0.5, 1.5))], p=1.0)]
    # The marker takes position 1, so the jitter draws from stream 2 and the blur from 3.
    np.testing.assert_array_equal(run(data, size + gated, index), run(data, size + [HOLD, JITTER, T.GaussianBlur(5, (0.5, 1.5))], index))
    never = [T.RandomApply([JITTER, T.GaussianBlur(5, (0.5, 1.5))], p=0.0)]
    np.testing.assert_array_equal(run(data, size + never, index), run(data, size, index))
    # Transforms after the range draw from their own positions either way.
    after = [T.RandomHorizontalFlip(), T.RandomSolarize(100, p=0.5)]
    np.testing.assert_array_equal(run(data, size + never + after, index),
                                  run(data, size + [HOLD, HOLD, HOLD] + after, index))


def test_applied_per_sample_with_probability_p_and_the_seed():
    data = jpeg(1)
    size = [T.Resize((24, 24))]
    plain = run(data, size)
    tf = size + [T.RandomApply([T.RandomInvert(p=1.0)], p=0.3)]
    applied = [not np.array_equal(run(data, tf, i), plain) for i in range(300)]
    assert 0.22 < np.mean(applied) < 0.38  # binomial(300, 0.3): 3 sigma
    assert applied == [not np.array_equal(run(data, tf, i), plain) for i in range(300)]
    assert applied != [not np.array_equal(run(data, tf, i, seed=1), plain) for i in range(300)]


def test_nested_and_compose():
    data = jpeg(2)
    size = [T.Resize((32, 32))]
    inner = T.RandomApply(T.Compose([T.RandomInvert(p=1.0)]), p=1.0)
    outer = T.RandomApply([T.RandomGrayscale(p=1.0), inner], p=1.0)
    want = 255 - run(data, size + [T.RandomGrayscale(p=1.0)])
    np.testing.assert_array_equal(run(data, size + [outer]), want)
    off = T.RandomApply([T.RandomGrayscale(p=1.0), inner], p=0.0)
    np.testing.assert_array_equal(run(data, size + [off]), run(data, size))
    # A RandomApply of markers alone gates nothing.
    np.testing.assert_array_equal(run(data, size + [T.RandomApply([T.Identity()], p=1.0)]), run(data, size))


def test_a_loader_with_the_simclr_list(small_folder):
    # SimCLR's augmentation, as torchvision users write it.
    tf = T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.RandomApply([JITTER], p=0.8),
                    T.RandomGrayscale(p=0.2), T.RandomApply([T.GaussianBlur(3)], p=0.5), T.ToTensor()])
    kw = dict(batch_size=5, seed=3, shuffle=True)
    first = [x for x, _ in sluice.Loader(small_folder, tf, **kw)]
    again = [x for x, _ in sluice.Loader(small_folder, tf, num_threads=3, **kw)]
    assert all(a.shape == (5, 3, 32, 32) and (a == b).all() for a, b in zip(first, again, strict=True))


@pytest.mark.parametrize("make, exc, words", [
    (lambda: T.RandomApply([T.Normalize([0.5] * 3, [0.5] * 3)]), ValueError,
     r"RandomApply: item 0 \(Normalize\) is not supported inside RandomApply"),
    (lambda: T.RandomApply([T.RandomInvert(), T.Lambda(lambda x: x)]), ValueError,
     r"item 1 \(Lambda\(<lambda>\)\) is not supported inside RandomApply"),
    (lambda: T.RandomApply([T.ToTensor()]), ValueError, r"item 0 \(ToTensor\)"),
    (lambda: T.RandomApply([T.MixUp(num_classes=3)]), ValueError, r"item 0 \(MixUp\)"),
    (lambda: T.RandomApply([T.RandomInvert()], p=1.5), ValueError, r"RandomApply: p must be in \[0, 1\]"),
    (lambda: T.RandomApply(T.RandomInvert()), TypeError, "RandomApply: transforms must be a sequence"),
])
def test_what_it_cannot_hold_is_named(make, exc, words):
    with pytest.raises(exc, match=words):
        make()


def test_a_size_change_inside_is_refused(small_folder):
    with pytest.raises(NotImplementedError, match="RandomApply of transforms that change the output size"):
        sluice.Loader(small_folder, [T.Resize((64, 64)), T.RandomApply([T.CenterCrop(32)])])
    # A rotation keeps a fixed size: allowed.
    sluice.Loader(small_folder, [T.Resize((64, 64)), T.RandomApply([T.RandomRotation(10)])]).close()
