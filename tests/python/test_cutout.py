"""The built-in Cutout and RandomErasing. Cutout: its rectangles follow the reference code's rule (centre uniform over the
image, square [c - length // 2, c + length // 2) clipped), they are zeroed in the output after
Normalize and in the pixels before it, and the seed pipeline with T.Cutout in place of the
user's CUTOUT class runs on the CPU loader. (The C++ test checks the drawn centres against the
reference mask; the GPU tests check the GPU kernels against the CPU loader.)"""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes

core = sluice._core

SEED = [T.Resize(int(64 * 1.2)), T.RandomRotation(20), T.RandomCrop(64), T.RandomHorizontalFlip(),
        T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(),
        T.Normalize([0.5] * 3, [0.5] * 3)]


def jpeg(width, height, seed=0):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=90)


def compiled(transforms):  # as the loader compiles them (RandomErasing's scale depends on its place)
    return T.compile_specs(transforms, False, [])


def run_sample(data, transforms, dtype="uint8", layout="NHWC", **key):
    t = core.process_sample(data, compiled(transforms), key.get("seed", 0), key.get("epoch", 0),
                            key.get("index", 0), dtype, layout, False)
    return np.from_dlpack(t)


def rects_of(transforms, w, h, **key):
    return core.draw_erase(compiled(transforms), w, h, key.get("seed", 0), key.get("epoch", 0), key.get("index", 0))


@pytest.mark.parametrize("index", range(8))
def test_cutout_after_normalize_zeroes_its_squares(index):
    data = jpeg(120, 90, seed=index)
    cut = SEED + [T.Cutout(3, 20)]
    rects = rects_of(cut, 120, 90, seed=1, index=index)
    assert len(rects) == 3
    plain = run_sample(data, SEED, "float32", "NCHW", seed=1, index=index)
    ours = run_sample(data, cut, "float32", "NCHW", seed=1, index=index)
    want = plain.copy()
    for x0, y0, x1, y1, after, _ in rects:
        assert after
        # The reference rule: a centre in the 64 x 64 image, +-10, clipped.
        assert 0 <= x0 <= x1 <= 64 and 0 <= y0 <= y1 <= 64 and x1 - x0 <= 20 and y1 - y0 <= 20
        assert (x1 - x0 == 20 or x0 == 0 or x1 == 64) and (y1 - y0 == 20 or y0 == 0 or y1 == 64)
        want[:, y0:y1, x0:x1] = 0.0
    np.testing.assert_array_equal(ours, want)


def test_cutout_before_normalize_zeroes_pixels():
    data = jpeg(100, 80)
    tf = [T.Resize((40, 50)), T.Cutout(2, 12)]
    rects = rects_of(tf + [T.Normalize([0.5] * 3, [0.25] * 3)], 100, 80, index=3)
    assert all(not r[4] for r in rects)
    pixels = run_sample(data, tf, index=3)
    plain = run_sample(data, tf[:1], index=3)
    want = plain.copy()
    for x0, y0, x1, y1, *_ in rects:
        want[y0:y1, x0:x1] = 0
    np.testing.assert_array_equal(pixels, want)
    normalized = run_sample(data, tf + [T.Normalize([0.5] * 3, [0.25] * 3)], "float32", "NHWC", index=3)
    x0, y0, x1, y1, *_ = rects[0]
    if x1 > x0 and y1 > y0:
        assert (normalized[y0:y1, x0:x1] == np.float32(-2.0)).all()  # (0 - 0.5) / 0.25


def test_holes_are_drawn_per_sample_and_cover_the_image():
    centres = []
    for i in range(400):
        (x0, y0, x1, y1, *_), = rects_of([T.CenterCrop(50), T.Cutout(1, 10)], 80, 60, index=i)
        centres.append(((x0 + x1) / 2, (y0 + y1) / 2))
    c = np.array(centres)
    assert len({tuple(v) for v in c}) > 300
    assert 20 < c[:, 0].mean() < 30 and 20 < c[:, 1].mean() < 30  # uniform over 50 x 50


def test_seed_pipeline_with_builtin_cutout_runs_on_the_cpu_loader(small_folder):
    kw = dict(batch_size=5, shuffle=True, seed=2)
    plain = sluice.Loader(small_folder, SEED, **kw)
    cut = sluice.Loader(small_folder, SEED + [T.Cutout(1, 16)], **kw)
    holes = 0
    for (x, y), (px, py) in zip(cut, plain, strict=True):
        assert (y == py).all() and x.shape == px.shape == (x.shape[0], 3, 64, 64)
        for k in range(x.shape[0]):
            changed = (x[k] != px[k]).any(axis=0)
            assert (x[k][:, changed] == 0).all()
            holes += bool(changed.any())
    assert holes >= 10


@pytest.mark.parametrize("make, words", [
    (lambda: T.Cutout(0, 16), "Cutout: n_holes must be an int in [1, 16]"),
    (lambda: T.Cutout(17, 16), "Cutout: n_holes must be an int in [1, 16]"),
    (lambda: T.Cutout(1, -4), "Cutout: length must be a positive int"),
    (lambda: T.Cutout(1.5, 4), "Cutout: n_holes must be an int"),
])
def test_bad_arguments_name_cutout_and_the_argument(make, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        make()


def test_cutout_comes_after_the_geometry_and_colour(small_folder):
    with pytest.raises(NotImplementedError, match="RandomCrop after Cutout is not supported"):
        sluice.Loader(small_folder, [T.Resize(80), T.Cutout(1, 8), T.RandomCrop(64)])
    with pytest.raises(NotImplementedError, match="ColorJitter after Cutout is not supported"):
        sluice.Loader(small_folder, [T.Resize((64, 64)), T.Cutout(1, 8), T.ColorJitter(0.5)])
    with pytest.raises(NotImplementedError, match="more than 16 erased rectangles"):
        sluice.Loader(small_folder, [T.Resize((64, 64)), T.Cutout(9, 8), T.Cutout(8, 8)])


# --- RandomErasing ----------------------------------------------------------------------------

NORM = T.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.5])
GEOMETRY = [T.Resize((60, 80))]


@pytest.mark.parametrize("where", ["after Normalize", "after ToTensor", "before ToTensor"])
def test_random_erasing_sets_its_value_in_the_scale_of_its_place(where):
    value = (0.25, 0.5, 1.0) if where != "before ToTensor" else (10, 200, 255)
    er = T.RandomErasing(p=1.0, value=value)
    tf = {"after Normalize": GEOMETRY + [T.ToTensor(), NORM, er],
          "after ToTensor": GEOMETRY + [T.ToTensor(), er, NORM],
          "before ToTensor": GEOMETRY + [er, T.ToTensor(), NORM]}[where]
    data = jpeg(120, 90, seed=4)
    for index in range(4):
        (x0, y0, x1, y1, finished, v), = rects_of(tf, 120, 90, index=index)
        ours = run_sample(data, tf, "float32", "NCHW", index=index)
        plain = run_sample(data, GEOMETRY + [NORM], "float32", "NCHW", index=index)
        want = plain.copy()
        mean, std = np.float32([0.5, 0.4, 0.3]), np.float32([0.2, 0.25, 0.5])
        for c in range(3):
            if where == "after Normalize":
                fill = np.float32(value[c])
            elif where == "after ToTensor":
                fill = (np.float32(value[c]) - mean[c]) / std[c]
            else:
                fill = (np.float32(value[c]) / np.float32(255) - mean[c]) / std[c]
            want[c, y0:y1, x0:x1] = fill
        assert finished == (where != "before ToTensor")
        np.testing.assert_array_equal(ours, want)


def test_random_erasing_draws_follow_p_scale_and_ratio():
    er = T.RandomErasing(p=0.3, scale=(0.05, 0.2), ratio=(0.5, 2.0))
    n = 0
    for i in range(600):
        rects = rects_of(GEOMETRY + [er], 100, 100, index=i)
        if not rects:
            continue
        n += 1
        (x0, y0, x1, y1, *_), = rects
        w, h = x1 - x0, y1 - y0
        assert 0 <= x0 and x1 <= 80 and 0 <= y0 and y1 <= 60
        assert 0.05 * 4800 * 0.8 <= w * h <= 0.2 * 4800 * 1.2
        assert 0.5 * 0.7 <= h / w <= 2.0 * 1.4
    assert 140 <= n <= 220  # p = 0.3 of 600, sd 11


def test_random_erasing_matches_torchvision_erase():
    F = pytest.importorskip("torchvision.transforms.v2.functional",
                            reason="torchvision not installed: the torchvision half is skipped "
                                   "(the GPU machine's script runs it)")
    import torch
    er = T.RandomErasing(p=1.0, value=(0.1, -0.7, 2.0))
    tf = GEOMETRY + [T.ToTensor(), NORM, er]
    data = jpeg(120, 90, seed=6)
    for index in range(4):
        (x0, y0, x1, y1, _, v), = rects_of(tf, 120, 90, index=index)
        plain = torch.from_numpy(run_sample(data, GEOMETRY + [NORM], "float32", "NCHW", index=index))
        theirs = F.erase(plain, y0, x0, y1 - y0, x1 - x0, torch.tensor(v)[:, None, None])
        np.testing.assert_array_equal(run_sample(data, tf, "float32", "NCHW", index=index), theirs.numpy())


@pytest.mark.parametrize("make, words", [
    (lambda: T.RandomErasing(p=1.5), "RandomErasing: p must be in [0, 1]"),
    (lambda: T.RandomErasing(scale=(0.5, 0.1)), "RandomErasing: scale must be (min, max)"),
    (lambda: T.RandomErasing(ratio=(0, 1)), "RandomErasing: ratio must be (min, max)"),
    (lambda: T.RandomErasing(value="noise"), "RandomErasing: value must be a number, one per channel, or 'random'"),
    (lambda: T.RandomErasing(value=(1, 2)), "RandomErasing: value must be a number or a sequence of 1 or 3"),
])
def test_random_erasing_bad_arguments(make, words):
    with pytest.raises((ValueError, TypeError, NotImplementedError)) as e:
        make()
    assert words in str(e.value)


def test_random_erasing_pixel_values_must_be_pixels(small_folder):
    with pytest.raises(ValueError, match=r"RandomErasing: value must be in \[0, 255\]"):
        sluice.Loader(small_folder, GEOMETRY + [T.RandomErasing(value=-1)])
