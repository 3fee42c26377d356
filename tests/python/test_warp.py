"""RandomRotation and RandomAffine against an independent NumPy oracle (always) and against
torchvision.transforms.v2.functional.rotate / affine (where installed), on real JPEGs decoded by
sluice, with the parameters sluice drew.

The oracle builds torchvision's forward matrix T * C * R * S * SHy * SHx * C^-1 (from its
docstring), inverts it with NumPy, and samples on the centred grid as grid_sample does
(align_corners=False, zero padding, fill through the mask, round half to even), in float64.

Bounds. Against the oracle: nearest at least 99.9% of values identical, bilinear within 1 level
(sluice and the oracle compute the same points in float64 by different routes, so a point within
~1e-12 of a rounding boundary may go either way). Against torchvision: nearest at least 99.5%
identical, bilinear within 1 level and at least 99% identical: torchvision computes the grid in
float32 (points off by up to ~3e-5 pixel), which moves a nearest pick to the neighbouring pixel
when the point lies that close to a half, and a bilinear value across a rounding boundary.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample

core = sluice._core


def jpeg(width, height, seed=0):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=90)


# --- the oracle ------------------------------------------------------------------------------

def oracle_affine(img, angle, translate=(0, 0), scale=1.0, shear=(0.0, 0.0), center=None,
                  bilinear=False, fill=(0, 0, 0), out_size=None):
    """`out_size` (width, height): the warped image's, centred on the source's (expand=True)."""
    h, w = img.shape[:2]
    ow, oh = out_size or (w, h)
    rot, sx, sy = (math.radians(v) for v in (angle, shear[0], shear[1]))
    # Forward map, in coordinates centred on the image (or on `center`).
    cx, cy = (0.0, 0.0) if center is None else (center[0] - w * 0.5, center[1] - h * 0.5)
    R = np.array([[math.cos(rot), -math.sin(rot), 0], [math.sin(rot), math.cos(rot), 0], [0, 0, 1]])
    S = np.diag([scale, scale, 1.0])
    SHx = np.array([[1, -math.tan(sx), 0], [0, 1, 0], [0, 0, 1]])
    SHy = np.array([[1, 0, 0], [-math.tan(sy), 1, 0], [0, 0, 1]])
    C = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]])
    Tr = np.array([[1, 0, translate[0]], [0, 1, translate[1]], [0, 0, 1]])
    inv = np.linalg.inv(Tr @ C @ R @ S @ SHy @ SHx @ np.linalg.inv(C))
    jj, ii = np.meshgrid(np.arange(ow) - (ow - 1) / 2, np.arange(oh) - (oh - 1) / 2)
    px = inv[0, 0] * jj + inv[0, 1] * ii + inv[0, 2] + (w - 1) / 2
    py = inv[1, 0] * jj + inv[1, 1] * ii + inv[1, 2] + (h - 1) / 2
    return sample_grid(img, px, py, bilinear, fill)


def sample_grid(img, px, py, bilinear=False, fill=(0, 0, 0)):
    """grid_sample(align_corners=False) at source points (px, py) of the uint8 image: nearest
    (round half to even) or bilinear, points outside the image weighted by torchvision's fill
    mask, rounded half to even."""
    h, w = img.shape[:2]
    src = img.astype(np.float64)
    fill = np.asarray(fill, np.float64)

    def sample(x, y):
        ok = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        v = src[np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)]
        return np.where(ok[..., None], v, 0.0), ok.astype(np.float64)

    if not bilinear:
        v, ok = sample(np.rint(px).astype(int), np.rint(py).astype(int))
        out = np.where(ok[..., None] < 0.5, fill, v)
    else:
        x0, y0 = np.floor(px).astype(int), np.floor(py).astype(int)
        fx, fy = px - x0, py - y0
        v = np.zeros(px.shape + (3,))
        mask = np.zeros(px.shape)
        for dx, dy, wt in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
            s, ok = sample(x0 + dx, y0 + dy)
            v += s * wt[..., None]
            mask += ok * wt
        out = (v - fill) * mask[..., None] + fill
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def window(img, axis_x, axis_y, pad_fill=(0, 0, 0)):
    """The warp's window (off, len, flip) per axis; outside the image is pad_fill."""
    h, w = img.shape[:2]
    (ox, lx, fx), (oy, ly, fy) = axis_x, axis_y
    xs = ox + (np.arange(lx)[::-1] if fx else np.arange(lx))
    ys = oy + (np.arange(ly)[::-1] if fy else np.arange(ly))
    out = np.empty((ly, lx, 3), np.uint8)
    out[:] = pad_fill
    okx, oky = (xs >= 0) & (xs < w), (ys >= 0) & (ys < h)
    out[np.ix_(oky, okx)] = img[np.ix_(ys[oky], xs[okx])]
    return out


def identical(a, b):
    return float(np.mean(a == b))


def assert_close(ours, theirs, max_diff, min_identical, what):
    assert ours.shape == theirs.shape, what
    diff = np.abs(ours.astype(int) - theirs.astype(int))
    same = identical(ours, theirs)
    if max_diff is not None:
        assert diff.max() <= max_diff, f"{what}: max difference {diff.max()}, {same:.5f} identical"
    assert same >= min_identical, f"{what}: {same:.5f} identical, max difference {diff.max()}"


def drawn(transforms, width, height, **key):
    specs = [t._spec() for t in transforms]
    return (core.draw_affine(specs, width, height, key.get("seed", 0), key.get("epoch", 0), key.get("index", 0)),
            core.draw_geometry(specs, width, height, key.get("seed", 0), key.get("epoch", 0), key.get("index", 0)))


def oracle_of(draw, img, interp_bilinear, fill, center=None):
    angle = draw["angle"] if draw["transform"] == "RandomAffine" else -draw["angle"]
    return oracle_affine(img, angle, draw["translate"], draw["scale"], draw["shear"], center, interp_bilinear, fill)


# --- against the oracle ----------------------------------------------------------------------

ROTATIONS = [
    (T.RandomRotation(30), False, (0, 0, 0)),
    (T.RandomRotation((-180, 180), fill=(10, 200, 30)), False, (10, 200, 30)),
    (T.RandomRotation(45, interpolation=T.InterpolationMode.BILINEAR, fill=128), True, (128,) * 3),
    (T.RandomRotation(25, center=(20, 90), interpolation="bilinear"), True, (0, 0, 0)),
    (T.RandomAffine(20, translate=(0.2, 0.1), scale=(0.8, 1.2), shear=(-10, 10, -5, 5), fill=(5, 6, 7)), False, (5, 6, 7)),
    (T.RandomAffine((-60, 10), scale=(0.5, 1.5), shear=15, interpolation="bilinear", fill=255), True, (255,) * 3),
]


@pytest.mark.parametrize("case", range(len(ROTATIONS)))
@pytest.mark.parametrize("index", [0, 1, 2])
def test_warp_matches_the_oracle(case, index):
    t, bilinear, fill = ROTATIONS[case]
    data = jpeg(173, 129, seed=case)
    raw = run_sample(data, [])
    draws, geo = drawn([t], 173, 129, seed=9, index=index)
    assert len(draws) == 1 and geo[0]["warp"]["source"] == (173, 129)
    ours = run_sample(data, [t], seed=9, index=index)
    want = oracle_of(draws[0], raw, bilinear, fill, getattr(t, "center", None))
    if bilinear:
        assert_close(ours, want, 1, 0.99, f"{t!r} {draws[0]}")
    else:
        assert_close(ours, want, None, 0.999, f"{t!r} {draws[0]}")


SEED_GEOMETRY = [T.Resize(int(64 * 1.2)), T.RandomRotation(20), T.RandomCrop(64), T.RandomHorizontalFlip()]


@pytest.mark.parametrize("index", range(6))
def test_seed_geometry_is_resize_then_warp_then_window(index):
    # One pass in sluice; in the oracle: the resized image (sluice's resize is PIL-exact, tested
    # elsewhere), rotated, then RandomCrop's window, flipped when the flip was drawn.
    data = jpeg(160, 120, seed=index)
    resized = run_sample(data, SEED_GEOMETRY[:1])
    draws, geo = drawn(SEED_GEOMETRY, 160, 120, seed=4, index=index)
    warp = geo[0]["warp"]
    assert len(geo) == 1 and warp["source"] == (resized.shape[1], resized.shape[0])
    ours = run_sample(data, SEED_GEOMETRY, seed=4, index=index)
    want = window(oracle_of(draws[0], resized, False, (0, 0, 0)), warp["x"], warp["y"])
    assert ours.shape == (64, 64, 3)
    assert_close(ours, want, None, 0.999, f"sample {index}: {draws[0]}, window {warp['x']} {warp['y']}")


def test_warp_windows_pad_with_their_own_fill():
    # A rotation's fill for points outside the image, a later Pad's fill around the window.
    t = [T.RandomRotation((30, 30), fill=(9, 9, 9)), T.Pad(3, fill=(250, 1, 2))]
    data = jpeg(40, 30)
    out = run_sample(data, t)
    raw = run_sample(data, [])
    want = np.empty((36, 46, 3), np.uint8)
    want[:] = (250, 1, 2)
    want[3:33, 3:43] = oracle_affine(raw, -30.0, fill=(9, 9, 9))
    assert_close(out, want, None, 0.999, "pad after rotation")
    assert (out[0, 0] == (250, 1, 2)).all() and (out[4, 4] == (9, 9, 9)).all()


# --- against torchvision ---------------------------------------------------------------------

def tv_functional():
    return pytest.importorskip("torchvision.transforms.v2.functional",
                               reason="torchvision not installed: the torchvision half is skipped "
                                      "(the GPU machine's script runs it)")


@pytest.mark.parametrize("case", range(len(ROTATIONS)))
def test_warp_matches_torchvision(case):
    F = tv_functional()
    import torch
    from torchvision.transforms.v2 import InterpolationMode as TvMode

    t, bilinear, fill = ROTATIONS[case]
    data = jpeg(173, 129, seed=case)
    raw = run_sample(data, [])
    for index in range(3):
        draws, _ = drawn([t], 173, 129, seed=9, index=index)
        d = draws[0]
        ours = run_sample(data, [t], seed=9, index=index)
        x = torch.from_numpy(np.array(raw)).permute(2, 0, 1)
        mode = TvMode.BILINEAR if bilinear else TvMode.NEAREST
        center = list(t.center) if t.center is not None else None
        if d["transform"] == "RandomRotation":
            y = F.rotate(x, d["angle"], interpolation=mode, fill=list(fill), center=center)
        else:
            y = F.affine(x, angle=d["angle"], translate=list(d["translate"]), scale=d["scale"],
                         shear=list(d["shear"]), interpolation=mode, fill=list(fill), center=center)
        theirs = y.permute(1, 2, 0).numpy()
        if bilinear:
            assert_close(ours, theirs, 1, 0.99, f"{t!r} {d}")
        else:
            assert_close(ours, theirs, None, 0.995, f"{t!r} {d}")


def test_seed_geometry_matches_torchvision():
    F = tv_functional()
    import torch

    for index in range(4):
        data = jpeg(160, 120, seed=index)
        resized = run_sample(data, SEED_GEOMETRY[:1])
        draws, geo = drawn(SEED_GEOMETRY, 160, 120, seed=4, index=index)
        (ox, lx, fx), (oy, ly, _fy) = geo[0]["warp"]["x"], geo[0]["warp"]["y"]
        y = F.rotate(torch.from_numpy(np.array(resized)).permute(2, 0, 1), draws[0]["angle"], fill=[0, 0, 0])
        y = F.crop(y, oy, ox, ly, lx)
        if fx:
            y = F.horizontal_flip(y)
        ours = run_sample(data, SEED_GEOMETRY, seed=4, index=index)
        assert_close(ours, y.permute(1, 2, 0).numpy(), None, 0.995, f"sample {index}")


# --- draws and arguments ---------------------------------------------------------------------

def test_angles_are_drawn_per_sample_within_the_range():
    t = T.RandomRotation((-20, 20))
    angles = [drawn([t], 64, 48, seed=1, index=i)[0][0]["angle"] for i in range(400)]
    assert all(-20 <= a <= 20 for a in angles)
    assert len(set(angles)) == 400
    assert abs(np.mean(angles)) < 2.5 and np.std(angles) == pytest.approx(40 / math.sqrt(12), rel=0.15)
    assert angles == [drawn([t], 64, 48, seed=1, index=i)[0][0]["angle"] for i in range(400)]
    a = T.RandomAffine(0, translate=(0.25, 0.5))
    for i in range(50):
        d = drawn([a], 40, 20, index=i)[0][0]
        assert all(isinstance(v, int) for v in d["translate"])
        assert abs(d["translate"][0]) <= 10 and abs(d["translate"][1]) <= 10


@pytest.mark.parametrize("make, words", [
    (lambda: T.RandomRotation(-5), "RandomRotation: if degrees is a single number, it must be non-negative"),
    (lambda: T.RandomRotation((10, 5)), "RandomRotation: degrees must be (min, max)"),
    (lambda: T.RandomRotation("x"), "RandomRotation: degrees must be a number"),
    (lambda: T.RandomRotation(10, interpolation="bicubic"), "RandomRotation: interpolation must be NEAREST or BILINEAR"),
    (lambda: T.RandomRotation(10, fill=300), "RandomRotation: fill values must be in [0, 255]"),
    (lambda: T.RandomAffine(10, translate=(1.5, 0)), "RandomAffine: translate values should be between 0 and 1"),
    (lambda: T.RandomAffine(10, scale=(0, 1)), "RandomAffine: scale values should be positive"),
    (lambda: T.RandomAffine(10, shear=(1, 2, 3)), "RandomAffine: shear must be a number or a sequence of 2 or 4"),
    (lambda: T.RandomAffine(10, shear=95), "RandomAffine: shear angles must lie in (-90, 90)"),
    (lambda: T.RandomAffine(10, center=(1,)), "RandomAffine: center must be a sequence of two numbers"),
])
def test_bad_arguments_name_the_transform_and_the_argument(make, words):
    with pytest.raises((ValueError, TypeError)) as e:
        make()
    assert words in str(e.value)


def test_warp_after_normalize_is_refused(small_folder):
    with pytest.raises(NotImplementedError, match="RandomRotation after Normalize is not supported"):
        sluice.Loader(small_folder, [T.Resize((32, 32)), T.Normalize([0.5] * 3, [0.5] * 3), T.RandomRotation(5)])
