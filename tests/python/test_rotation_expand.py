"""RandomRotation(expand=True): the output is the rotated image's bounding box, sized as
torchvision's _compute_affine_output_size says (a NumPy float32 transcription of it, and Pillow's
rotate(expand=True) within a pixel), with pixels against test_warp's oracle on the larger centred
grid (the same bounds as there), and against torchvision's rotate(expand=True) where installed."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_decode import run_sample
from test_warp import assert_close, drawn, oracle_affine, tv_functional

F32 = np.float32


def expanded_size(angle: float, w: int, h: int) -> tuple[int, int]:
    """torchvision's _compute_affine_output_size for rotate's inverse matrix, in float32."""
    a = np.radians(-angle)  # the inverse rotation's matrix (its bounding box is the same)
    theta = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0]], F32)
    pts = np.array([[-w / 2, -h / 2, 1], [-w / 2, h / 2, 1], [w / 2, h / 2, 1], [w / 2, -h / 2, 1]], F32)
    new = pts @ theta.T
    halfs = np.array([w / 2, h / 2], F32)
    lo, hi = new.min(axis=0) + halfs, new.max(axis=0) + halfs
    cmax = np.ceil(np.trunc(hi * F32(1e4)) * F32(1e-4))
    cmin = np.floor(np.trunc(lo * F32(1e4)) * F32(1e-4))
    return int(cmax[0] - cmin[0]), int(cmax[1] - cmin[1])


def jpeg(w, h, seed):
    return pil_bytes(Image.fromarray(photo(w, h, seed)), "JPEG", quality=90)


CASES = [(T.RandomRotation(40, expand=True), False, (0, 0, 0)),
         (T.RandomRotation((-180, 180), expand=True, fill=(10, 200, 30)), False, (10, 200, 30)),
         (T.RandomRotation(90, expand=True, interpolation="bilinear", fill=99), True, (99,) * 3)]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("index", range(4))
def test_size_and_pixels_match_the_oracle(case, index):
    t, bilinear, fill = CASES[case]
    w, h = 97, 61
    data = jpeg(w, h, seed=index)
    raw = run_sample(data, [])
    (d,), _ = drawn([t], w, h, seed=4, index=index)
    ours = run_sample(data, [t], seed=4, index=index)
    angle = d["angle"]
    size = expanded_size(angle, w, h)
    assert ours.shape[1::-1] == size, (angle, ours.shape)
    pil = Image.fromarray(raw).rotate(angle, expand=True).size
    assert abs(pil[0] - size[0]) <= 1 and abs(pil[1] - size[1]) <= 1, (pil, size)
    want = oracle_affine(raw, -angle, center=None, bilinear=bilinear, fill=fill, out_size=size)
    if bilinear:
        assert_close(ours, want, 1, 0.99, f"{angle}")
    else:
        assert_close(ours, want, None, 0.999, f"{angle}")


def test_right_angles_turn_the_image_exactly():
    data = pil_bytes(Image.fromarray(photo(40, 24, 3)), "PNG")
    raw = run_sample(data, [])
    got = run_sample(data, [T.RandomRotation((90, 90), expand=True)])
    np.testing.assert_array_equal(got, np.rot90(raw))  # counter-clockwise, 24 x 40


def test_batches_are_lists_unless_a_fixed_size_follows(small_folder):
    loose = sluice.Loader(small_folder, [T.Resize((40, 40)), T.RandomRotation(30, expand=True)], batch_size=4,
                          dtype="uint8", output="numpy")
    x, _ = next(iter(loose))
    assert loose.output_size is None and isinstance(x, list) and all(min(i.shape[1:]) >= 40 for i in x)
    fixed = sluice.Loader(small_folder, [T.RandomRotation(30, expand=True), T.Resize((32, 32))], batch_size=4,
                          output="numpy")
    assert fixed.output_size == (32, 32) and next(iter(fixed))[0].shape == (4, 3, 32, 32)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torchvision(case):
    F = tv_functional()
    import torch
    from torchvision.transforms.v2 import InterpolationMode as TvMode

    t, bilinear, fill = CASES[case]
    data = jpeg(113, 70, seed=case)
    raw = run_sample(data, [])
    for index in range(3):
        (d,), _ = drawn([t], 113, 70, seed=8, index=index)
        ours = run_sample(data, [t], seed=8, index=index)
        x = torch.from_numpy(np.array(raw)).permute(2, 0, 1)
        mode = TvMode.BILINEAR if bilinear else TvMode.NEAREST
        theirs = F.rotate(x, d["angle"], interpolation=mode, expand=True, fill=list(fill)).permute(1, 2, 0).numpy()
        if bilinear:
            assert_close(ours, theirs, 1, 0.99, f"{d}")
        else:
            assert_close(ours, theirs, None, 0.995, f"{d}")
