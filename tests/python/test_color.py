"""Colour transforms (ColorJitter, RandomGrayscale) against an independent NumPy oracle of
torchvision.transforms.v2.functional's uint8 formulas (always), and against torchvision itself
(where installed), on real JPEGs decoded by sluice, with the factors sluice drew.

Bounds: against the NumPy oracle, exact (both compute in float32, one rounding per operation).
Against torchvision, one adjustment: every value within 1 level, at least 97% identical; a
drawn chain of four or five: within 4 levels, at least 95% identical. Measured on the H200
machine (torch 2.11): saturation 1.6 gave 98.7% identical, and one chain a difference of 2.
torchvision's CPU kernels fuse the blend's multiply-add (``add_(other, alpha=...)``) and average
the luma in float32; sluice does not fuse, so that its CPU and GPU give the same bytes. Blends
such as 1.6 v - 0.6 g land on exact integers a fifth of the time, so the two roundings truncate
to neighbouring levels there. A later step then scales such a difference by its factor.
"""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample

core = sluice._core
F32 = np.float32


def jpeg(width, height, seed=0):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=90)


# --- the oracle: torchvision v2's uint8 kernels, in NumPy float32 -------------------------------

def _luma(img):  # img: H x W x 3 uint8 -> float32, r * 0.2989 + g * 0.587 + b * 0.114 in order
    r, g, b = (img[..., c].astype(F32) for c in range(3))
    return (r * F32(0.2989) + g * F32(0.587)) + b * F32(0.114)


def _to_u8(x):
    return np.clip(x, 0, 255).astype(np.uint8)  # clamp, then truncate as .to(torch.uint8)


def _blend(img, other, ratio):
    return _to_u8(img.astype(F32) * F32(ratio) + np.asarray(other, F32) * F32(1.0 - float(ratio)))


def oracle_brightness(img, f):
    return _to_u8(img.astype(F32) * F32(f))


def oracle_saturation(img, f):
    return _blend(img, np.floor(_luma(img))[..., None], f)


def oracle_contrast(img, f):
    return _blend(img, F32(np.floor(_luma(img)).astype(np.float64).mean()), f)


def oracle_grayscale(img):
    return np.repeat(_to_u8(_luma(img))[..., None], 3, axis=2)


def oracle_hue(img, shift):
    x = img.astype(F32) * F32(1.0 / 255.0)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    maxc, minc = x.max(axis=2), x.min(axis=2)
    eqc = maxc == minc
    cr = maxc - minc
    s = cr / np.where(eqc, F32(1), maxc)
    d = np.where(eqc, F32(1), cr)
    rc, gc, bc = (maxc - r) / d, (maxc - g) / d, (maxc - b) / d
    hr = np.where(maxc == r, bc - gc, F32(0))
    hg = np.where((maxc == g) & (maxc != r), (rc + F32(2)) - bc, F32(0))
    hb = np.where((maxc != g) & (maxc != r), (gc + F32(4)) - rc, F32(0))
    h = np.fmod((hr + hg + hb) * F32(1.0 / 6.0) + F32(1), F32(1))
    h = h + F32(shift)
    h = h - np.floor(h)
    h6 = h * F32(6)
    i = np.floor(h6)
    f = h6 - i
    i = i.astype(np.int64) % 6
    sxf = s * f
    q = np.clip((F32(1) - sxf) * maxc, 0, 1)
    t = np.clip((sxf + (F32(1) - s)) * maxc, 0, 1)
    p = np.clip((F32(1) - s) * maxc, 0, 1)
    vpqt = np.stack([maxc, p, q, t], axis=-1)
    select = np.array([[0, 2, 1, 1, 3, 0], [3, 0, 0, 2, 1, 1], [1, 1, 3, 0, 0, 2]])
    out = np.stack([np.take_along_axis(vpqt, select[c][i][..., None], axis=-1)[..., 0] for c in range(3)], -1)
    return (out * F32(255.999)).astype(np.uint8)


ORACLE = {"brightness": oracle_brightness, "contrast": oracle_contrast, "saturation": oracle_saturation,
          "hue": oracle_hue, "grayscale": lambda img, _f: oracle_grayscale(img)}


def apply_steps(img, steps, oracle=ORACLE):
    for name, factor in steps:
        img = oracle[name](img, factor)
    return img


def torchvision_steps():
    tvf = pytest.importorskip("torchvision.transforms.v2.functional",
                              reason="torchvision not installed: the torchvision half is skipped "
                                     "(the GPU machine's script runs it)")
    import torch

    def wrap(fn):
        def run(img, f):
            t = torch.from_numpy(np.array(img)).permute(2, 0, 1)  # a writable copy
            return fn(t, f).permute(1, 2, 0).numpy()
        return run

    return {"brightness": wrap(tvf.adjust_brightness), "contrast": wrap(tvf.adjust_contrast),
            "saturation": wrap(tvf.adjust_saturation), "hue": wrap(tvf.adjust_hue),
            "grayscale": wrap(lambda t, _f: tvf.rgb_to_grayscale(t, num_output_channels=3))}


def assert_close(got, want, max_diff, identical, what):
    diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
    assert diff.max() <= max_diff, f"{what}: max difference {diff.max()}"
    assert (diff == 0).mean() >= identical, f"{what}: only {(diff == 0).mean():.4f} identical"


# --- each adjustment alone, with a fixed factor -------------------------------------------------

FIXED = [("brightness", 0.3), ("brightness", 1.7), ("contrast", 0.2), ("contrast", 1.8),
         ("saturation", 0.0), ("saturation", 1.6), ("hue", -0.4), ("hue", 0.25), ("hue", 0.5)]


def jitter_fixed(name, f):
    return T.ColorJitter(**{name: (f, f)})


@pytest.mark.parametrize("name,factor", FIXED)
def test_each_adjustment_matches_the_oracle_exactly(name, factor):
    data = jpeg(173, 129, seed=3)
    raw = run_sample(data, [])
    ours = run_sample(data, [jitter_fixed(name, factor)])
    np.testing.assert_array_equal(ours, ORACLE[name](raw, factor), err_msg=f"{name} {factor}")
    assert not np.array_equal(ours, raw)  # the adjustment did something


def test_grayscale_matches_the_oracle_exactly():
    data = jpeg(150, 101, seed=4)
    raw = run_sample(data, [])
    ours = run_sample(data, [T.RandomGrayscale(p=1.0)])
    np.testing.assert_array_equal(ours, oracle_grayscale(raw))
    np.testing.assert_array_equal(run_sample(data, [T.RandomGrayscale(p=0.0)]), raw)


@pytest.mark.parametrize("name,factor", FIXED + [("grayscale", 0.0)])
def test_each_adjustment_matches_torchvision(name, factor):
    tv = torchvision_steps()
    data = jpeg(173, 129, seed=5)
    raw = run_sample(data, [])
    ours = run_sample(data, [T.RandomGrayscale(1.0) if name == "grayscale" else jitter_fixed(name, factor)])
    assert_close(ours, tv[name](raw, factor), 1, 0.97, f"{name} {factor}")


# --- the random order and factors, on the image the geometry leaves --------------------------------

SEED_LIKE = [T.Resize(72), T.RandomCrop(64), T.RandomHorizontalFlip(),
             T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.RandomGrayscale(0.2)]


def drawn_steps(transforms, width, height, seed, index):
    specs = [s for t in transforms if (s := t._spec()) is not None]
    return core.draw_color(specs, width, height, seed, 0, index)


@pytest.mark.parametrize("index", range(10))
def test_drawn_order_and_factors_match_the_oracle(index):
    data = jpeg(120, 90, seed=index)
    steps = drawn_steps(SEED_LIKE, 120, 90, seed=11, index=index)
    jitter = [n for n, _ in steps if n != "grayscale"]
    assert sorted(jitter) == ["brightness", "contrast", "hue", "saturation"]  # each once
    for name, f in steps:
        lo, hi = {"hue": (-0.3, 0.3), "grayscale": (0, 0)}.get(name, (0.5, 1.5))
        assert lo <= f <= hi, (name, f)
    geometry_only = run_sample(data, SEED_LIKE[:3], seed=11, index=index)
    ours = run_sample(data, SEED_LIKE, seed=11, index=index)
    np.testing.assert_array_equal(ours, apply_steps(geometry_only, steps))


def test_order_and_factors_vary_per_sample_and_follow_the_seed():
    draws = [tuple(drawn_steps(SEED_LIKE, 100, 100, seed=1, index=i)) for i in range(40)]
    orders = {tuple(n for n, _ in d if n != "grayscale") for d in draws}
    assert len(orders) >= 12  # 24 orders exist; 40 draws see many of them
    gray = sum(any(n == "grayscale" for n, _ in d) for d in draws)
    assert 2 <= gray <= 16  # p = 0.2 of 40
    assert draws == [tuple(drawn_steps(SEED_LIKE, 100, 100, seed=1, index=i)) for i in range(40)]
    assert draws != [tuple(drawn_steps(SEED_LIKE, 100, 100, seed=2, index=i)) for i in range(40)]


@pytest.mark.parametrize("index", range(4))
def test_drawn_steps_match_torchvision(index):
    tv = torchvision_steps()
    data = jpeg(140, 110, seed=20 + index)
    steps = drawn_steps(SEED_LIKE, 140, 110, seed=3, index=index)
    geometry_only = run_sample(data, SEED_LIKE[:3], seed=3, index=index)
    ours = run_sample(data, SEED_LIKE, seed=3, index=index)
    assert_close(ours, apply_steps(geometry_only, steps, tv), 4, 0.95, f"sample {index}: {steps}")


def test_loader_batches_carry_the_colour_steps_and_normalize(small_folder):
    tf = SEED_LIKE + [T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)]
    loader = sluice.Loader(small_folder, tf, batch_size=4, shuffle=True, seed=9, output="numpy",
                           dct_scaling=False)
    x, _ = next(iter(loader))
    assert x.shape == (4, 3, 64, 64) and x.dtype == np.float32
    for k, i in enumerate(loader.last_indices):
        with open(loader.samples[i][0], "rb") as f:
            data = f.read()
        w, h = Image.open(io.BytesIO(data)).size
        steps = drawn_steps(tf, w, h, seed=9, index=int(i))
        want = apply_steps(run_sample(data, SEED_LIKE[:3], seed=9, index=int(i)), steps)
        want = (want.astype(F32) / F32(255) - F32(0.5)) / F32(0.5)
        np.testing.assert_array_equal(x[k], want.transpose(2, 0, 1), err_msg=f"sample {i}")


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,exc,words", [
    (dict(hue=0.6), ValueError, "hue"),
    (dict(hue=(-0.6, 0.1)), ValueError, "hue"),
    (dict(brightness=-0.1), ValueError, "brightness"),
    (dict(contrast=(1.5, 0.5)), ValueError, "contrast"),
    (dict(saturation=(-1, 2)), ValueError, "saturation"),
    (dict(brightness="a lot"), TypeError, "brightness"),
    (dict(saturation=(1, 2, 3)), TypeError, "saturation"),
])
def test_bad_jitter_arguments_name_the_transform_and_argument(kwargs, exc, words):
    with pytest.raises(exc, match=f"ColorJitter.*{words}"):
        T.ColorJitter(**kwargs)


def test_bad_grayscale_probability():
    with pytest.raises(ValueError, match="RandomGrayscale.*p must be in"):
        T.RandomGrayscale(1.5)


def test_colour_before_a_crop_or_after_normalize_is_refused(small_folder):
    with pytest.raises(Exception, match="RandomCrop after ColorJitter is not supported"):
        sluice.Loader(small_folder, [T.ColorJitter(0.5), T.RandomCrop(32)])
    with pytest.raises(Exception, match="ColorJitter after Normalize"):
        sluice.Loader(small_folder, [T.Resize(40), T.Normalize([0.5] * 3, [0.5] * 3), T.ColorJitter(0.5)])
    # Flips may follow: they commute with every colour step.
    sluice.Loader(small_folder, [T.Resize((40, 40)), T.ColorJitter(0.5), T.RandomHorizontalFlip()])


def test_to_tensor_contradicts_uint8(small_folder):
    with pytest.raises(ValueError, match="ToTensor"):
        sluice.Loader(small_folder, [T.Resize((40, 40)), T.ToTensor()], dtype="uint8")
    loader = sluice.Loader(small_folder, [T.Resize((40, 40)), T.ToTensor()], batch_size=2, output="numpy")
    x, _ = next(iter(loader))
    assert x.dtype == np.float32 and 0.0 <= x.min() and x.max() <= 1.0


# --- RandomSolarize ----------------------------------------------------------------------------

def oracle_solarize(img, threshold):
    return np.where(img.astype(F32) >= F32(threshold), 255 - img, img).astype(np.uint8)


@pytest.mark.parametrize("threshold", [0, 1, 100.5, 128, 255])
def test_solarize_matches_the_oracle_exactly(threshold):
    data = jpeg(61, 47, seed=3)
    plain = run_sample(data, [T.Resize((40, 30))])
    got = run_sample(data, [T.Resize((40, 30)), T.RandomSolarize(threshold, p=1.0)])
    np.testing.assert_array_equal(got, oracle_solarize(plain, threshold))
    # p = 0 leaves the image alone; threshold 0 inverts every value
    np.testing.assert_array_equal(run_sample(data, [T.Resize((40, 30)), T.RandomSolarize(threshold, p=0.0)]), plain)
    if threshold == 0:
        np.testing.assert_array_equal(got, 255 - plain)


def test_solarize_is_drawn_per_sample_with_probability_p():
    data = jpeg(32, 32, seed=4)
    plain = run_sample(data, [T.Resize((16, 16))])
    tf = [T.Resize((16, 16)), T.RandomSolarize(64, p=0.3)]
    applied = [not np.array_equal(run_sample(data, tf, index=i), plain) for i in range(400)]
    assert 0.24 < np.mean(applied) < 0.36  # binomial(400, 0.3): 4.7 sigma
    assert applied == [not np.array_equal(run_sample(data, tf, index=i), plain) for i in range(400)]
    assert [s[0] for s in drawn_steps([T.RandomSolarize(64, p=1.0)], 32, 32, 0, 0)] == ["solarize"]


def test_solarize_matches_torchvision():
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    torch = pytest.importorskip("torch")
    data = jpeg(61, 47, seed=5)
    plain = run_sample(data, [T.Resize((40, 30))])
    got = run_sample(data, [T.Resize((40, 30)), T.RandomSolarize(100.5, p=1.0)])
    theirs = F.solarize(torch.from_numpy(plain).permute(2, 0, 1).contiguous(), 100.5).permute(1, 2, 0).numpy()
    np.testing.assert_array_equal(got, theirs)


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(threshold=256), ValueError, "RandomSolarize: threshold should be less or equal the maximum value"),
    (dict(threshold=float("nan")), ValueError, "RandomSolarize: threshold"),
    (dict(threshold="a"), TypeError, "RandomSolarize: threshold must be a number"),
    (dict(threshold=10, p=1.5), ValueError, r"RandomSolarize: p must be in \[0, 1\]"),
])
def test_bad_solarize_arguments(kwargs, exc, words):
    with pytest.raises(exc, match=words):
        T.RandomSolarize(**kwargs)


def test_solarize_after_normalize_is_refused(small_folder):
    with pytest.raises(NotImplementedError, match="RandomSolarize after Normalize is not supported"):
        sluice.Loader(small_folder, [T.Resize((8, 8)), T.Normalize([0.5] * 3, [0.5] * 3), T.RandomSolarize(10)])
