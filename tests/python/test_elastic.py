"""ElasticTransform on real JPEGs: the displacement sluice draws has the spread a blurred uniform
noise field must have (computed from torchvision's Gaussian weights), varies per sample and
follows the seed; the pixels are grid_sample at the displaced points (test_warp's sampler, in
float64: bilinear within a level, nearest 99.9% identical), and torchvision's elastic() with the
same displacement where installed (test_warp's torchvision bounds)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample
from test_warp import assert_close, sample_grid, tv_functional

SIZE = [T.Resize((60, 84))]


def jpeg(seed):
    return pil_bytes(Image.fromarray(photo(120, 90, seed=seed)), "JPEG", quality=90)


def field(t, index, seed=5):
    return np.from_dlpack(sluice._core.elastic_displacement([s._spec() for s in SIZE + [t]], 120, 90, seed, 0, index))


def oracle(img, d, bilinear, fill):
    h, w = img.shape[:2]
    bx, by = np.meshgrid((2 * np.arange(w) + 1) / w - 1, (2 * np.arange(h) + 1) / h - 1)
    sx = ((bx + d[..., 0] + 1) * w - 1) / 2
    sy = ((by + d[..., 1] + 1) * h - 1) / 2
    return sample_grid(img, sx, sy, bilinear, fill)


def gaussian(side, sigma):  # torchvision's _get_gaussian_kernel1d
    x = np.linspace(-(side - 1) / 2, (side - 1) / 2, side)
    k = np.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def test_displacement_has_the_spread_of_blurred_noise():
    t = T.ElasticTransform(alpha=(40.0, 30.0), sigma=(3.0, 4.0))
    d = np.stack([field(t, i) for i in range(12)])
    for plane, (sigma, alpha, side) in enumerate([(3.0, 40.0, 60), (4.0, 30.0, 84)]):
        k = int(8 * sigma + 1) | 1
        std = math.sqrt(1 / 3 * (gaussian(k, 3.0) ** 2).sum() * (gaussian(k, 4.0) ** 2).sum()) * alpha / side
        got = d[..., plane].std()
        assert abs(got - std) < 0.25 * std, (plane, got, std)
    assert not np.array_equal(d[0], d[1])
    np.testing.assert_array_equal(field(t, 3), d[3])
    assert not np.array_equal(field(t, 3, seed=6), d[3])


CASES = [(T.ElasticTransform(), True, (0, 0, 0)),
         (T.ElasticTransform(alpha=120.0, sigma=3.0, interpolation=T.InterpolationMode.NEAREST, fill=(20, 40, 60)),
          False, (20, 40, 60))]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("index", range(3))
def test_pixels_are_the_displaced_samples(case, index):
    t, bilinear, fill = CASES[case]
    data = jpeg(index)
    plain = run_sample(data, SIZE)
    got = run_sample(data, SIZE + [t], seed=5, index=index)
    want = oracle(plain, field(t, index).astype(np.float64), bilinear, fill)
    if bilinear:
        assert_close(got, want, 1, 0.99, f"case {case}")
    else:
        assert_close(got, want, None, 0.999, f"case {case}")
    assert not np.array_equal(got, plain)


def test_zero_alpha_leaves_the_image():
    data = jpeg(7)
    plain = run_sample(data, SIZE)
    assert_close(run_sample(data, SIZE + [T.ElasticTransform(alpha=0.0)]), plain, 1, 0.999, "alpha 0")


def test_placement_and_errors(small_folder):
    with pytest.raises(NotImplementedError, match="RandomCrop after ElasticTransform is not supported"):
        sluice.Loader(small_folder, [T.ElasticTransform(), T.RandomCrop(8)])
    with pytest.raises(ValueError, match=r"ElasticTransform: sigma must be in \(0, 7.5\], got 0"):
        T.ElasticTransform(sigma=0.0)
    tf = [T.Resize((40, 40)), T.ElasticTransform(), T.ToTensor()]
    a = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=4, seed=2, output="numpy", num_threads=1)]
    b = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=3, seed=2, output="numpy", num_threads=2)]
    np.testing.assert_array_equal(np.concatenate(a), np.concatenate(b))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torchvision_with_the_same_displacement(case):
    F = tv_functional()
    import torch
    from torchvision.transforms.v2 import InterpolationMode as TvMode

    t, bilinear, fill = CASES[case]
    for index in range(2):
        data = jpeg(10 + index)
        plain = run_sample(data, SIZE)
        got = run_sample(data, SIZE + [t], seed=5, index=index)
        d = torch.from_numpy(field(t, index).copy())[None]
        x = torch.from_numpy(np.array(plain)).permute(2, 0, 1)
        mode = TvMode.BILINEAR if bilinear else TvMode.NEAREST
        theirs = F.elastic(x, d, interpolation=mode, fill=list(fill)).permute(1, 2, 0).numpy()
        if bilinear:
            assert_close(got, theirs, 1, 0.99, f"case {case}")
        else:
            assert_close(got, theirs, None, 0.995, f"case {case}")
