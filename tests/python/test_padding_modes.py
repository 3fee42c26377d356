"""Pad and RandomCrop with padding_mode "edge", "reflect" and "symmetric" (torchvision's modes)
against NumPy's np.pad, whose modes of those names are the same: exact, alone, in chains where
the padding mirrors a resized, cropped, warped or already padded image, and in the CIFAR recipe
RandomCrop(32, padding=4, padding_mode="reflect")."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample

MODES = ["edge", "reflect", "symmetric"]


def png(w, h, seed=0) -> bytes:
    return pil_bytes(Image.fromarray(photo(w, h, seed=seed)), "PNG")


def np_pad(img, left, top, right, bottom, mode, fill=0):
    kw = {"constant_values": fill} if mode == "constant" else {}
    return np.pad(img, ((top, bottom), (left, right), (0, 0)), mode=mode, **kw)


@pytest.mark.parametrize("mode", MODES + ["constant"])
def test_pad_matches_numpy(mode):
    data = png(37, 23, seed=1)
    raw = run_sample(data, [])
    got = run_sample(data, [T.Pad((3, 2, 5, 1), fill=7, padding_mode=mode)])
    np.testing.assert_array_equal(got, np_pad(raw, 3, 2, 5, 1, mode, 7))


@pytest.mark.parametrize("mode", MODES)
def test_padding_mirrors_the_image_it_is_given(mode):
    data = png(90, 64, seed=2)
    resized = run_sample(data, [T.Resize((48, 60))])
    # after a resize and a crop of it: the crop is what is mirrored, then flipped and cropped
    got = run_sample(data, [T.Resize((48, 60)), T.CenterCrop((30, 40)), T.Pad(6, padding_mode=mode),
                            T.RandomHorizontalFlip(p=1.0), T.CenterCrop((38, 50))])
    want = np_pad(resized[9:39, 10:50], 6, 6, 6, 6, mode)[:, ::-1][2:40, 1:51]
    np.testing.assert_array_equal(got, want)
    # around constant padding, and constant padding around it
    got = run_sample(data, [T.Resize((20, 24)), T.Pad(2, fill=9), T.Pad(3, padding_mode=mode), T.Pad(1, fill=200)])
    small = run_sample(data, [T.Resize((20, 24))])
    want = np_pad(np_pad(np_pad(small, 2, 2, 2, 2, "constant", 9), 3, 3, 3, 3, mode), 1, 1, 1, 1, "constant", 200)
    np.testing.assert_array_equal(got, want)


def test_padding_after_a_rotation_mirrors_the_rotated_image():
    data = png(50, 40, seed=3)
    rotate = T.RandomRotation((20, 20))
    rotated = run_sample(data, [rotate])
    got = run_sample(data, [rotate, T.Pad((4, 0, 2, 3), padding_mode="reflect")])
    np.testing.assert_array_equal(got, np_pad(rotated, 4, 0, 2, 3, "reflect"))


@pytest.mark.parametrize("index", range(6))
def test_cifar_random_crop_is_a_window_of_the_reflected_image(index):
    data = png(32, 32, seed=10 + index)
    padded = np_pad(run_sample(data, []), 4, 4, 4, 4, "reflect")
    got = run_sample(data, [T.RandomCrop(32, padding=4, padding_mode="reflect")], index=index)
    offsets = [(y, x) for y in range(9) for x in range(9) if np.array_equal(padded[y:y + 32, x:x + 32], got)]
    assert offsets, "not a window of the reflect-padded image"


def test_pad_if_needed_reflects_a_small_image():
    data = png(20, 14, seed=4)
    raw = run_sample(data, [])
    got = run_sample(data, [T.RandomCrop((18, 26), pad_if_needed=True, padding_mode="symmetric")])
    # torchvision pads each short side by the shortfall on both sides, then crops a window
    padded = np_pad(raw, 6, 4, 6, 4, "symmetric")
    assert any(np.array_equal(padded[y:y + 18, x:x + 26], got) for y in range(5) for x in range(7))


def test_loader_epochs_are_reproducible_and_bad_modes_name_the_argument(small_folder):
    tf = [T.Resize((32, 32)), T.RandomCrop(32, padding=4, padding_mode="reflect"), T.RandomHorizontalFlip(), T.ToTensor()]
    a = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=4, seed=3, output="numpy")]
    b = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=4, seed=3, output="numpy")]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="Pad: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric'"):
        T.Pad(2, padding_mode="wrap")
    assert T.Pad(2, padding_mode="edge")._spec().padding_mode == "edge"


def test_from_torchvision_keeps_the_mode():
    v2 = pytest.importorskip("torchvision.transforms.v2")
    got = T.from_torchvision(v2.Compose([v2.RandomCrop(32, padding=4, padding_mode="reflect"),
                                         v2.Pad(2, padding_mode="symmetric")]))
    assert [(type(t).__name__, t.padding_mode) for t in got] == [("RandomCrop", "reflect"), ("Pad", "symmetric")]
