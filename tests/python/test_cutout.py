"""The built-in Cutout: its rectangles follow the reference code's rule (centre uniform over the
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
import test_decode

core = sluice._core

SEED = [T.Resize(int(64 * 1.2)), T.RandomRotation(20), T.RandomCrop(64), T.RandomHorizontalFlip(),
        T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(),
        T.Normalize([0.5] * 3, [0.5] * 3)]


def jpeg(width, height, seed=0):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=90)


def specs(transforms):
    return [t for t in transforms if not isinstance(t, T.ToTensor)]


def run_sample(data, transforms, *args, **key):
    return test_decode.run_sample(data, specs(transforms), *args, **key)


def rects_of(transforms, w, h, **key):
    return core.draw_erase([t._spec() for t in specs(transforms)], w, h, key.get("seed", 0), key.get("epoch", 0),
                           key.get("index", 0))


@pytest.mark.parametrize("index", range(8))
def test_cutout_after_normalize_zeroes_its_squares(index):
    data = jpeg(120, 90, seed=index)
    cut = SEED + [T.Cutout(3, 20)]
    rects = rects_of(cut, 120, 90, seed=1, index=index)
    assert len(rects) == 3
    plain = run_sample(data, SEED, "float32", "NCHW", seed=1, index=index)
    ours = run_sample(data, cut, "float32", "NCHW", seed=1, index=index)
    want = plain.copy()
    for x0, y0, x1, y1, after in rects:
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
    assert all(not after for *_, after in rects)
    pixels = run_sample(data, tf, index=3)
    plain = run_sample(data, tf[:1], index=3)
    want = plain.copy()
    for x0, y0, x1, y1, _ in rects:
        want[y0:y1, x0:x1] = 0
    np.testing.assert_array_equal(pixels, want)
    normalized = run_sample(data, tf + [T.Normalize([0.5] * 3, [0.25] * 3)], "float32", "NHWC", index=3)
    x0, y0, x1, y1, _ = rects[0]
    if x1 > x0 and y1 > y0:
        assert (normalized[y0:y1, x0:x1] == np.float32(-2.0)).all()  # (0 - 0.5) / 0.25


def test_holes_are_drawn_per_sample_and_cover_the_image():
    centres = []
    for i in range(400):
        (x0, y0, x1, y1, _), = rects_of([T.CenterCrop(50), T.Cutout(1, 10)], 80, 60, index=i)
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
