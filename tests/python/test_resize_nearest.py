"""Resize with InterpolationMode.NEAREST against torch.nn.functional.interpolate(mode="nearest"),
which torchvision's v2 Resize calls for it: exact, alone and inside a crop/flip chain, on
lossless files and on a large JPEG (a scaled DCT decode is not used for it)."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample

torch = pytest.importorskip("torch")
NEAREST = T.InterpolationMode.NEAREST


def torch_nearest(img: np.ndarray, height: int, width: int) -> np.ndarray:
    t = torch.from_numpy(np.ascontiguousarray(img)).permute(2, 0, 1)[None]
    return torch.nn.functional.interpolate(t, size=(height, width), mode="nearest")[0].permute(1, 2, 0).numpy()


@pytest.mark.parametrize("w,h,size", [(61, 47, (20, 33)), (50, 40, (100, 80)), (97, 61, (61, 97)),
                                      (33, 20, (23, 17)), (173, 129, 224), (300, 200, (100, 150)),
                                      (64, 64, (64, 64)), (40, 30, (60, 80))])
def test_matches_torch_interpolate(w, h, size):
    data = pil_bytes(Image.fromarray(photo(w, h, seed=w)), "PNG")
    raw = run_sample(data, [])
    got = run_sample(data, [T.Resize(size, interpolation=NEAREST)])
    want_shape = run_sample(data, [T.Resize(size)]).shape  # the same output size as bilinear's
    assert got.shape == want_shape
    np.testing.assert_array_equal(got, torch_nearest(raw, *got.shape[:2]))


def test_inside_a_crop_and_flip_chain():
    data = pil_bytes(Image.fromarray(photo(90, 70, seed=3)), "PNG")
    raw = run_sample(data, [])
    got = run_sample(data, [T.CenterCrop((50, 44)), T.Resize((71, 29), interpolation=NEAREST),
                            T.RandomHorizontalFlip(p=1.0), T.CenterCrop((60, 29))])
    top, left = round((70 - 50) / 2), round((90 - 44) / 2)
    want = torch_nearest(raw[top:top + 50, left:left + 44], 71, 29)[:, ::-1]
    top = round((71 - 60) / 2)
    np.testing.assert_array_equal(got, want[top:top + 60])


def test_a_large_jpeg_is_decoded_whole_for_it():
    data = pil_bytes(Image.fromarray(photo(480, 360, seed=5)), "JPEG", quality=90)
    raw = run_sample(data, [])
    got = run_sample(data, [T.Resize((45, 60), interpolation=NEAREST)], dct_scaling=True)
    np.testing.assert_array_equal(got, torch_nearest(raw, 45, 60))


def test_random_resized_crop_still_refuses_nearest():
    with pytest.raises(ValueError, match="RandomResizedCrop: interpolation must be BILINEAR or BICUBIC"):
        T.RandomResizedCrop(32, interpolation=NEAREST)


def test_read_by_a_rotation_as_the_resized_image_would_be():
    """The warp after it reads the nearest-resized pixels (one pass): the same as rotating the
    resized image itself."""
    data = pil_bytes(Image.fromarray(photo(120, 90, seed=8)), "PNG")
    resized = torch_nearest(run_sample(data, []), 60, 80)
    rotate = T.RandomRotation((17, 17), interpolation=T.InterpolationMode.BILINEAR)
    got = run_sample(data, [T.Resize((60, 80), interpolation=NEAREST), rotate])
    np.testing.assert_array_equal(got, run_sample(pil_bytes(Image.fromarray(resized), "PNG"), [rotate]))
