"""RandomResize, RandomShortestSize, ScaleJitter and RandomZoomOut on real JPEGs: each output is
the size torchvision's formula gives for a size (or canvas) within the drawn range, its pixels
are Resize's (or the padded image's) exactly, the draws cover their range and follow the seed."""
from __future__ import annotations

import collections

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample

W, H = 90, 60


def image(seed=0):
    return pil_bytes(Image.fromarray(photo(W, H, seed=seed)), "JPEG", quality=92)


def resized_like(data, got):
    return run_sample(data, [T.Resize(got.shape[:2])])


def test_random_resize_shorter_side_in_the_half_open_range():
    data, seen = image(1), collections.Counter()
    for i in range(60):
        got = run_sample(data, [T.RandomResize(30, 34)], index=i)
        short = min(got.shape[:2])
        seen[short] += 1
        assert got.shape[:2] == run_sample(data, [T.Resize(short)]).shape[:2]  # Resize(int)'s other side
        np.testing.assert_array_equal(got, resized_like(data, got))
    assert sorted(seen) == [30, 31, 32, 33], seen  # randint(30, 34): 34 never


def test_random_shortest_size_picks_a_size_and_caps_the_longer_side():
    data = image(2)
    sizes = collections.Counter()
    for i in range(40):
        got = run_sample(data, [T.RandomShortestSize([20, 40, 50], max_size=70)], index=i)
        h, w = got.shape[:2]
        # 20: 30 x 20; 40: 60 x 40; 50 would make 75 x 50, capped: r = 70 / 90 -> 70 x 46
        assert (w, h) in {(30, 20), (60, 40), (70, 46)}, (w, h)
        sizes[(w, h)] += 1
        np.testing.assert_array_equal(got, resized_like(data, got))
    assert len(sizes) == 3, sizes


def test_scale_jitter_fits_the_target_times_a_drawn_scale():
    data = image(3)
    widths = set()
    for i in range(40):
        got = run_sample(data, [T.ScaleJitter((40, 100), scale_range=(0.5, 1.5))], index=i)
        h, w = got.shape[:2]
        r = min(100 / W, 40 / H)  # 2/3: the height binds
        assert int(W * r * 0.5) - 1 <= w <= int(W * r * 1.5) + 1 and abs(h - H * w / W) <= 1.5, (w, h)
        widths.add(w)
        np.testing.assert_array_equal(got, resized_like(data, got))
    assert len(widths) > 15


def test_zoom_out_places_the_image_on_a_filled_canvas():
    data = image(4)
    raw = run_sample(data, [])
    t = T.RandomZoomOut(fill=(1, 2, 3), side_range=(1.0, 2.5), p=1.0)
    corners = set()
    for i in range(30):
        got = run_sample(data, [t], index=i)
        (g,) = sluice._core.draw_geometry([t._spec()], W, H, 0, 0, i)
        left, top = -g["x"]["out_off"], -g["y"]["out_off"]
        ch, cw = got.shape[:2]
        assert W <= cw <= int(W * 2.5) and H <= ch <= int(H * 2.5)
        assert 0 <= left <= cw - W and 0 <= top <= ch - H
        want = np.empty_like(got)
        want[:] = (1, 2, 3)
        want[top:top + H, left:left + W] = raw
        np.testing.assert_array_equal(got, want)
        corners.add((left, top))
    assert len(corners) > 20
    applied = sum(run_sample(data, [T.RandomZoomOut(p=0.5)], index=i).shape != raw.shape for i in range(200))
    assert 70 <= applied <= 130


def test_loader_batches_and_seeds(small_folder):
    loose = sluice.Loader(small_folder, [T.RandomResize(24, 40)], batch_size=4, seed=1, output="numpy")
    assert loose.output_size is None and isinstance(next(iter(loose))[0], list)
    fixed = sluice.Loader(small_folder, [T.ScaleJitter((48, 48)), T.RandomZoomOut(p=1.0), T.CenterCrop(32)],
                          batch_size=4, seed=1, output="numpy")
    a = np.concatenate([x for x, _ in fixed])
    assert a.shape[1:] == (3, 32, 32)
    again = sluice.Loader(small_folder, fixed.transforms, batch_size=4, seed=1, output="numpy")
    np.testing.assert_array_equal(a, np.concatenate([x for x, _ in again]))


@pytest.mark.parametrize("make, words", [
    (lambda: T.RandomResize(40, 40), "RandomResize: sizes must be 1 <= min_size < max_size"),
    (lambda: T.RandomShortestSize([]), "RandomShortestSize: min_size must be an int or a sequence of 1 to 16"),
    (lambda: T.ScaleJitter((64, 64), scale_range=(2.0, 1.0)), "ScaleJitter: scale_range"),
    (lambda: T.RandomZoomOut(side_range=(0.5, 2.0)), "RandomZoomOut: side_range must be (min, max) with 1 <= min"),
])
def test_bad_arguments(make, words):
    with pytest.raises((ValueError, TypeError)) as e:
        make()
    assert words in str(e.value)


def test_from_torchvision():
    v2 = pytest.importorskip("torchvision.transforms.v2")
    got = T.from_torchvision(v2.Compose([v2.RandomResize(32, 64), v2.RandomShortestSize([32, 48], max_size=80),
                                         v2.ScaleJitter((64, 64)), v2.RandomZoomOut(fill=5, side_range=(1.0, 2.0))]))
    assert [type(t).__name__ for t in got] == ["RandomResize", "RandomShortestSize", "ScaleJitter", "RandomZoomOut"]
    assert got[1].min_size == [32, 48] and got[1].max_size == 80 and got[3].side_range == (1.0, 2.0)
