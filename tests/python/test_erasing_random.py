"""RandomErasing(value="random"): the rectangle is the one a fixed value gets with the same seed,
everything outside it is untouched, and inside it are independent standard normals per pixel and
channel (normalized with the Normalize that follows), the same run after run and with any number
of threads, other with another seed. Checked on real JPEGs through the Loader."""
from __future__ import annotations

import numpy as np
import pytest

import sluice
import sluice.transforms as T

BASE = [T.Resize((48, 48)), T.ToTensor()]


def batches(folder, tf, **kw):
    kw = {"batch_size": 8, "seed": 5, "dtype": "float32", "output": "numpy", "dct_scaling": False, **kw}
    return np.concatenate([x for x, _ in sluice.Loader(folder, tf, **kw)])


def erased_values(folder, after=(), **kw):
    """The erased values of every sample (pooled), and whether the rectangles are where a fixed
    value's are, with nothing else changed."""
    plain = batches(folder, BASE + list(after), **kw)
    fixed = batches(folder, BASE + [T.RandomErasing(p=1.0, value=7.0)] + list(after), **kw)
    rand = batches(folder, BASE + [T.RandomErasing(p=1.0, value="random")] + list(after), **kw)
    where = fixed != plain
    assert where.any()
    np.testing.assert_array_equal(rand[~where], plain[~where])
    return rand[where], rand


def test_values_are_standard_normals(small_folder):
    values, _ = erased_values(small_folder)
    assert values.size > 3000
    assert abs(values.mean()) < 0.05 and abs(values.std() - 1.0) < 0.05, (values.mean(), values.std())
    assert (np.abs(values) > 3).mean() < 0.01 and values.min() < -2.5 and values.max() > 2.5


def test_normalized_when_a_normalize_follows(small_folder):
    values, _ = erased_values(small_folder, after=[T.Normalize([0.5] * 3, [0.25] * 3)])
    assert abs(values.mean() + 2.0) < 0.2 and abs(values.std() - 4.0) < 0.2, (values.mean(), values.std())


def test_neighbours_and_channels_are_independent(small_folder):
    _, rand = erased_values(small_folder)
    fixed = batches(small_folder, BASE + [T.RandomErasing(p=1.0, value=7.0)])
    inside = (fixed == 7.0).all(axis=1)  # N x H x W, erased pixels
    pairs = inside[:, :, 1:] & inside[:, :, :-1]
    a, b = rand[:, 0, :, 1:][pairs], rand[:, 0, :, :-1][pairs]
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.1
    r, g = rand[:, 0][inside], rand[:, 1][inside]
    assert abs(np.corrcoef(r, g)[0, 1]) < 0.1


def test_reproducible_and_seeded(small_folder):
    tf = BASE + [T.RandomErasing(p=1.0, value="random")]
    a = batches(small_folder, tf, num_threads=1)
    np.testing.assert_array_equal(a, batches(small_folder, tf, num_threads=2))
    assert not np.array_equal(a, batches(small_folder, tf, seed=6))


def test_before_to_tensor_is_refused(small_folder):
    with pytest.raises(ValueError, match="value='random' draws float values: put it after ToTensor"):
        sluice.Loader(small_folder, [T.Resize((48, 48)), T.RandomErasing(value="random"), T.ToTensor()])
    with pytest.raises(ValueError, match="RandomErasing: value must be a number, one per channel, or 'random'"):
        T.RandomErasing(value="noise")


def test_from_torchvision():
    v2 = pytest.importorskip("torchvision.transforms.v2")
    (got,) = T.from_torchvision(v2.Compose([v2.RandomErasing(value="random")]))
    assert got.value == "random" and got._spec().random_value
