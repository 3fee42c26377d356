"""RandomInvert, RandomPosterize, RandomAutocontrast, RandomEqualize, RandomAdjustSharpness,
Grayscale, and the markers Identity, RGB and ToImage, on real JPEGs decoded by sluice: against
the independent NumPy oracle of torchvision.transforms.v2's uint8 kernels (test_autoaugment's,
which RandAugment's ops are held to) and against PIL's ImageOps (always), and against
torchvision's own functions (where installed).

Bounds: exact everywhere. The oracle and PIL compute these ops in integers or in torchvision's
float32 steps, as sluice does (invert and posterize are bit operations; autocontrast is
torchvision's float32 division, which PIL's integer table matches on these images only within a
level, so PIL is not the reference there; equalize is PIL's table; sharpness is torchvision's
3 x 3 kernel with its fused multiply-add).
"""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageOps

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_autoaugment import dull_image, oracle_autocontrast, oracle_equalize, oracle_posterize, oracle_sharpness
from test_decode import run_sample

SIZE = [T.Resize((40, 30))]


def jpeg(width, height, seed=0):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=90)


def pair(op, seed=3, size=SIZE):
    """(the image the transforms before `op` give, the image with `op` at p=1 after them)."""
    data = jpeg(61, 47, seed=seed)
    return run_sample(data, size), run_sample(data, size + [op])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_invert_is_255_minus_every_value(seed):
    plain, got = pair(T.RandomInvert(p=1.0), seed)
    np.testing.assert_array_equal(got, 255 - plain)
    np.testing.assert_array_equal(got, np.asarray(ImageOps.invert(Image.fromarray(plain))))


@pytest.mark.parametrize("bits", [0, 1, 3, 5, 7, 8])
def test_posterize_keeps_the_high_bits(bits):
    plain, got = pair(T.RandomPosterize(bits, p=1.0))
    np.testing.assert_array_equal(got, oracle_posterize(plain, bits))
    if bits > 0:  # PIL refuses 0 bits
        np.testing.assert_array_equal(got, np.asarray(ImageOps.posterize(Image.fromarray(plain), bits)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_autocontrast_and_equalize_match_the_oracle(seed):
    plain, got = pair(T.RandomAutocontrast(p=1.0), seed)
    np.testing.assert_array_equal(got, oracle_autocontrast(plain))
    # A low-contrast image (a lossless PNG, its blue channel flat): stretched, blue left alone.
    data = pil_bytes(Image.fromarray(dull_image(seed=seed)), "PNG")
    dull, stretched = run_sample(data, []), run_sample(data, [T.RandomAutocontrast(p=1.0)])
    np.testing.assert_array_equal(stretched, oracle_autocontrast(dull))
    assert np.ptp(stretched[..., :2]) > np.ptp(dull[..., :2]) and (stretched[..., 2] == 77).all()
    plain, got = pair(T.RandomEqualize(p=1.0), seed)
    np.testing.assert_array_equal(got, oracle_equalize(plain))
    np.testing.assert_array_equal(got, np.asarray(ImageOps.equalize(Image.fromarray(plain))))


@pytest.mark.parametrize("factor", [0.0, 0.5, 1.0, 2.0, 3.7])
def test_adjust_sharpness_matches_the_oracle(factor):
    plain, got = pair(T.RandomAdjustSharpness(factor, p=1.0))
    np.testing.assert_array_equal(got, oracle_sharpness(plain, factor))
    if factor == 1.0:
        np.testing.assert_array_equal(got, plain)


def test_grayscale_is_random_grayscale_always():
    plain, got = pair(T.Grayscale(num_output_channels=3))
    _, always = pair(T.RandomGrayscale(p=1.0))
    np.testing.assert_array_equal(got, always)
    assert (got[..., 0] == got[..., 1]).all() and (got[..., 1] == got[..., 2]).all()
    with pytest.raises(ValueError, match="Grayscale: num_output_channels=1 is not supported"):
        T.Grayscale()


def test_markers_leave_the_sample_alone(small_folder):
    kw = dict(batch_size=5, seed=2, dtype="uint8")
    plain = [x for x, _ in sluice.Loader(small_folder, [T.RandomResizedCrop(24)], **kw)]
    for marker in (T.Identity(), T.RGB(), T.ToImage()):
        marked = sluice.Loader(small_folder, [marker, T.RandomResizedCrop(24), marker], **kw)
        assert all(np.array_equal(np.asarray(x), np.asarray(p)) for (x, _), p in zip(marked, plain, strict=True))


@pytest.mark.parametrize("op", [T.RandomInvert(p=0.3), T.RandomPosterize(2, p=0.3), T.RandomAutocontrast(p=0.3),
                                T.RandomEqualize(p=0.3), T.RandomAdjustSharpness(0.0, p=0.3)])
def test_each_is_drawn_per_sample_with_probability_p(op):
    data = jpeg(32, 32, seed=4)
    tf = [T.Resize((16, 16))]
    plain = run_sample(data, tf)
    applied = [not np.array_equal(run_sample(data, tf + [op], index=i), plain) for i in range(300)]
    assert 0.22 < np.mean(applied) < 0.38  # binomial(300, 0.3): 3 sigma
    assert applied == [not np.array_equal(run_sample(data, tf + [op], index=i), plain) for i in range(300)]


@pytest.mark.parametrize("make, exc, words", [
    (lambda: T.RandomPosterize(9), ValueError, r"RandomPosterize: bits must be in \[0, 8\], got 9"),
    (lambda: T.RandomPosterize(-1), ValueError, r"RandomPosterize: bits must be in \[0, 8\]"),
    (lambda: T.RandomPosterize("4"), TypeError, "RandomPosterize: bits must be an int"),
    (lambda: T.RandomAdjustSharpness(-0.5), ValueError, "RandomAdjustSharpness: sharpness_factor must be a non-negative"),
    (lambda: T.RandomAdjustSharpness(float("nan")), ValueError, "RandomAdjustSharpness: sharpness_factor"),
    (lambda: T.RandomInvert(p=1.5), ValueError, r"RandomInvert: p must be in \[0, 1\]"),
    (lambda: T.RandomEqualize(p=-0.1), ValueError, r"RandomEqualize: p must be in \[0, 1\]"),
    (lambda: T.RandomAutocontrast(p="x"), TypeError, "RandomAutocontrast: p must be a number"),
])
def test_bad_arguments_name_the_transform_and_argument(make, exc, words):
    with pytest.raises(exc, match=words):
        make()


def test_placement_follows_the_colour_rules(small_folder):
    with pytest.raises(NotImplementedError, match="RandomEqualize after Normalize is not supported"):
        sluice.Loader(small_folder, [T.Resize((8, 8)), T.Normalize([0.5] * 3, [0.5] * 3), T.RandomEqualize()])
    with pytest.raises(NotImplementedError, match="RandomCrop after RandomInvert"):
        sluice.Loader(small_folder, [T.Resize(40), T.RandomInvert(), T.RandomCrop(32)])


def test_a_loader_runs_them_all(small_folder):
    tf = [T.RGB(), T.RandomResizedCrop(32), T.RandomInvert(), T.RandomPosterize(4), T.RandomAutocontrast(),
          T.RandomEqualize(), T.RandomAdjustSharpness(2.0), T.Grayscale(3), T.ToImage(), T.Identity(), T.ToTensor()]
    loader = sluice.Loader(small_folder, tf, batch_size=5, seed=1)
    x, y = next(iter(loader))
    assert tuple(x.shape) == (5, 3, 32, 32) and (x[:, 0] == x[:, 1]).all()
    loader.close()


def test_match_torchvision():
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    torch = pytest.importorskip("torch")

    def theirs(fn, img, *args):
        return fn(torch.from_numpy(img).permute(2, 0, 1).contiguous(), *args).permute(1, 2, 0).numpy()

    plain, got = pair(T.RandomInvert(p=1.0))
    np.testing.assert_array_equal(got, theirs(F.invert, plain))
    plain, got = pair(T.RandomPosterize(3, p=1.0))
    np.testing.assert_array_equal(got, theirs(F.posterize, plain, 3))
    plain, got = pair(T.RandomAutocontrast(p=1.0))
    np.testing.assert_array_equal(got, theirs(F.autocontrast, plain))
    plain, got = pair(T.RandomEqualize(p=1.0))
    np.testing.assert_array_equal(got, theirs(F.equalize, plain))
    for factor in (0.0, 2.0):
        plain, got = pair(T.RandomAdjustSharpness(factor, p=1.0))
        np.testing.assert_array_equal(got, theirs(F.adjust_sharpness, plain, factor))
