"""RandomChannelPermutation and RandomPhotometricDistort on real JPEGs decoded by sluice: the
steps sluice draws follow torchvision's structure and odds, and the pixels match the NumPy oracle
of torchvision's uint8 kernels (test_color's) exactly, and torchvision's own functions (where
installed) within test_color's bounds for a drawn chain (4 levels, 95% identical).
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from test_color import ORACLE, apply_steps, assert_close, drawn_steps, jpeg, torchvision_steps
from test_decode import run_sample

GEOMETRY = [T.Resize((40, 52))]
ORDERS = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]  # permute's k


def with_permute(oracle):
    return dict(oracle, permute=lambda img, k: np.ascontiguousarray(img[..., list(ORDERS[int(k)])]))


def test_channel_permutation_is_uniform_over_the_six_orders():
    draws = [drawn_steps(GEOMETRY + [T.RandomChannelPermutation()], 60, 45, seed=5, index=i) for i in range(600)]
    assert all(len(d) == 1 and d[0][0] == "permute" for d in draws)
    counts = collections.Counter(int(d[0][1]) for d in draws)
    assert sorted(counts) == list(range(6)) and min(counts.values()) >= 70, counts  # 100 each expected


@pytest.mark.parametrize("index", range(6))
def test_channel_permutation_pixels(index):
    data = jpeg(61, 47, seed=index)
    tf = GEOMETRY + [T.RandomChannelPermutation()]
    plain, got = run_sample(data, GEOMETRY, index=index), run_sample(data, tf, index=index)
    (name, k), = drawn_steps(tf, 61, 47, seed=0, index=index)
    np.testing.assert_array_equal(got, plain[..., list(ORDERS[int(k)])])


def test_photometric_distort_draws_as_torchvision():
    """Each adjustment with probability p, the contrast before the saturation or after the hue,
    the channel order last with probability p; factors within their ranges."""
    t = T.RandomPhotometricDistort(brightness=(0.8, 1.2), contrast=(0.3, 0.6), saturation=(1.2, 1.9),
                                   hue=(-0.1, 0.2), p=0.6)
    ranges = dict(brightness=(0.8, 1.2), contrast=(0.3, 0.6), saturation=(1.2, 1.9), hue=(-0.1, 0.2), permute=(0, 5))
    seen, contrast_first = collections.Counter(), 0
    for i in range(500):
        steps = drawn_steps(GEOMETRY + [t], 60, 45, seed=2, index=i)
        names = [n for n, _ in steps]
        seen.update(names)
        assert len(set(names)) == len(names)
        for n, f in steps:
            assert ranges[n][0] <= f <= ranges[n][1], (n, f)
        rest = [n for n in names if n != "contrast"]
        assert rest == [n for n in ("brightness", "saturation", "hue", "permute") if n in names]
        if "contrast" in names:
            at = names.index("contrast")
            assert "brightness" not in names[at:] and "permute" not in names[:at], names
            before = [n for n in names[:at] if n in ("saturation", "hue")]
            after = [n for n in names[at + 1:] if n in ("saturation", "hue")]
            assert not before or not after, names  # before both or after both
            contrast_first += not before and bool(after)
    for n in ranges:
        assert 0.53 * 500 <= seen[n] <= 0.67 * 500, seen  # p = 0.6 each
    assert 40 <= contrast_first <= 150, contrast_first  # half of those with saturation or hue


@pytest.mark.parametrize("index", range(8))
def test_photometric_distort_pixels_match_the_oracle(index):
    data = jpeg(70, 50, seed=10 + index)
    tf = GEOMETRY + [T.RandomPhotometricDistort(p=0.8)]
    steps = drawn_steps(tf, 70, 50, seed=7, index=index)
    plain, got = run_sample(data, GEOMETRY, seed=7, index=index), run_sample(data, tf, seed=7, index=index)
    np.testing.assert_array_equal(got, apply_steps(plain, steps, with_permute(ORACLE)), err_msg=str(steps))


@pytest.mark.parametrize("index", range(4))
def test_photometric_distort_matches_torchvision(index):
    tv = torchvision_steps()
    data = jpeg(90, 70, seed=30 + index)
    tf = GEOMETRY + [T.RandomPhotometricDistort(p=0.9)]
    steps = drawn_steps(tf, 90, 70, seed=3, index=index)
    plain, got = run_sample(data, GEOMETRY, seed=3, index=index), run_sample(data, tf, seed=3, index=index)
    assert_close(got, apply_steps(plain, steps, with_permute(tv)), 4, 0.95, f"sample {index}: {steps}")


def test_loader_batches_and_from_torchvision(small_folder):
    tf = [T.RandomResizedCrop(32), T.RandomPhotometricDistort(), T.RandomChannelPermutation(), T.ToTensor()]
    loader = sluice.Loader(small_folder, tf, batch_size=4, seed=1, output="numpy")
    a = [x for x, _ in loader]
    loader.set_epoch(0)
    assert all(np.array_equal(x, y) for x, y in zip(a, [x for x, _ in loader]))
    v2 = pytest.importorskip("torchvision.transforms.v2")
    got = T.from_torchvision(v2.Compose([v2.RandomPhotometricDistort(contrast=(0.2, 0.4), p=0.3),
                                         v2.RandomChannelPermutation()]))
    assert [type(t).__name__ for t in got] == ["RandomPhotometricDistort", "RandomChannelPermutation"]
    assert tuple(got[0].contrast) == (0.2, 0.4) and got[0].p == 0.3


@pytest.mark.parametrize("kwargs,words", [(dict(hue=(-0.6, 0.0)), "hue must be a range"),
                                          (dict(contrast=(1.5, 0.5)), "contrast must be a range"),
                                          (dict(p=1.5), "p must be in")])
def test_bad_photometric_arguments(kwargs, words):
    with pytest.raises(ValueError, match=f"RandomPhotometricDistort: {words}"):
        T.RandomPhotometricDistort(**kwargs)
