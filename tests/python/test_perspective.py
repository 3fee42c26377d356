"""RandomPerspective on real JPEGs: with the coefficients sluice drew, against an oracle of
torchvision's _perspective_grid in float64 (test_warp's grid sampler; the same bounds as its
warps: nearest 99.9% identical, bilinear within a level), against torchvision's perspective()
with those coefficients where installed (test_warp's torchvision bounds), and its odds."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample
from test_warp import assert_close, sample_grid, tv_functional

W, H = 81, 57


def jpeg(seed):
    return pil_bytes(Image.fromarray(photo(W, H, seed=seed)), "JPEG", quality=90)


def coefficients(t, index, seed=3):
    (g,) = sluice._core.draw_geometry([t._spec()], W, H, seed, 0, index)
    return None if "warp" not in g else g["warp"]["perspective"]


def oracle(img, c, bilinear, fill):
    """Output pixel (j, i) reads ((c0 x + c1 y + c2) / d - 1/2, (c3 x + c4 y + c5) / d - 1/2) at its
    centre (x, y) = (j + 1/2, i + 1/2), d = c6 x + c7 y + 1 (torchvision's grid, unnormalized)."""
    h, w = img.shape[:2]
    x, y = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    d = c[6] * x + c[7] * y + 1
    return sample_grid(img, (c[0] * x + c[1] * y + c[2]) / d - 0.5, (c[3] * x + c[4] * y + c[5]) / d - 0.5,
                       bilinear, fill)


CASES = [(T.RandomPerspective(0.5, p=1.0), True, (0, 0, 0)),
         (T.RandomPerspective(0.8, p=1.0, interpolation=T.InterpolationMode.NEAREST, fill=(30, 60, 90)), False,
          (30, 60, 90))]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("index", range(4))
def test_matches_the_oracle(case, index):
    t, bilinear, fill = CASES[case]
    data = jpeg(index)
    raw = run_sample(data, [])
    c = coefficients(t, index)
    got = run_sample(data, [t], seed=3, index=index)
    want = oracle(raw, np.asarray(c, np.float64), bilinear, fill)
    if bilinear:
        assert_close(got, want, 1, 0.99, str(c))
    else:
        assert_close(got, want, None, 0.999, str(c))
    assert not np.array_equal(got, raw)


def test_zero_distortion_keeps_the_image_and_p_is_the_odds():
    data = jpeg(9)
    raw = run_sample(data, [])
    still = T.RandomPerspective(0.0, p=1.0)  # corners move by randint(0, 1) = 0: the identity
    assert coefficients(still, 0) == pytest.approx((1, 0, 0, 0, 1, 0, 0, 0), abs=1e-6)
    np.testing.assert_array_equal(run_sample(data, [still]), raw)
    half = T.RandomPerspective(0.5, p=0.5)
    applied = sum(coefficients(half, i) is not None for i in range(300))
    assert 120 <= applied <= 180


def test_loader_batches(small_folder):
    tf = [T.Resize((48, 48)), T.RandomPerspective(0.6, p=0.8), T.ToTensor()]
    a = np.concatenate([x for x, _ in sluice.Loader(small_folder, tf, batch_size=4, seed=1, output="numpy")])
    b = np.concatenate([x for x, _ in sluice.Loader(small_folder, tf, batch_size=6, seed=1, output="numpy",
                                                     num_threads=1)])
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"RandomPerspective: distortion_scale must be in \[0, 1\], got 1.5"):
        T.RandomPerspective(1.5)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torchvision(case):
    F = tv_functional()
    import torch
    from torchvision.transforms.v2 import InterpolationMode as TvMode

    t, bilinear, fill = CASES[case]
    for index in range(3):
        data = jpeg(20 + index)
        raw = run_sample(data, [])
        c = coefficients(t, index)
        got = run_sample(data, [t], seed=3, index=index)
        x = torch.from_numpy(np.array(raw)).permute(2, 0, 1)
        mode = TvMode.BILINEAR if bilinear else TvMode.NEAREST
        theirs = F.perspective(x, None, None, interpolation=mode, fill=list(fill), coefficients=list(c))
        theirs = theirs.permute(1, 2, 0).numpy()
        if bilinear:
            assert_close(got, theirs, 1, 0.99, str(c))
        else:
            assert_close(got, theirs, None, 0.995, str(c))
