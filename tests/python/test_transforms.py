"""Transforms against PIL (always) and torchvision.transforms.v2.functional (where installed),
fed the same image and the same drawn parameters.

Bounds: geometry through PIL is exact (sluice implements PIL's fixed-point resampling); with DCT
scaling on, the region is decoded at 1/2..1/8 first, so only a mean-error bound applies;
Normalize is exact in float32 and float16 (same IEEE operations in the same order).
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
PIL_FILTER = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}


def jpeg(width, height, seed=0, quality=92):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=quality)


def geometry(transforms, width, height, **key):
    return core.draw_geometry([t._spec() for t in transforms], width, height,
                              key.get("seed", 0), key.get("epoch", 0), key.get("index", 0))


def pil_image(data):
    return Image.open(io.BytesIO(data)).convert("RGB")


@pytest.mark.parametrize("size", [(100, 150), (37, 29), (300, 410), (129, 175)])
@pytest.mark.parametrize("interp", ["bilinear", "bicubic"])
def test_resize_matches_pil_exactly(size, interp):
    data = jpeg(175, 129)
    mode = T.InterpolationMode(interp)
    ours = run_sample(data, [T.Resize(size, interpolation=mode)])
    ref = pil_image(data).resize((size[1], size[0]), PIL_FILTER[interp])
    np.testing.assert_array_equal(ours, np.asarray(ref))


@pytest.mark.parametrize("index", range(12))
def test_random_resized_crop_matches_pil_on_drawn_window(index):
    data = jpeg(211, 157, seed=index)
    tf = [T.RandomResizedCrop(64), T.RandomHorizontalFlip()]
    (seg,) = geometry(tf, 211, 157, seed=5, index=index)
    x, y = seg["x"], seg["y"]
    box = (x["in_lo"], y["in_lo"], x["in_hi"], y["in_hi"])
    ref = pil_image(data).crop(box).resize((64, 64), Image.Resampling.BILINEAR)
    if x["flip"]:
        ref = ref.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    ours = run_sample(data, tf, seed=5, index=index)
    np.testing.assert_array_equal(ours, np.asarray(ref))


def test_random_resized_crop_draws_are_torchvision_shaped():
    # Over many samples: areas within scale, aspect ratios within ratio (log-uniform, so
    # symmetric around 1 on a square image), windows inside the image, both flip outcomes.
    tf = [T.RandomResizedCrop(32, scale=(0.2, 0.9), ratio=(0.5, 2.0)), T.RandomHorizontalFlip()]
    areas, ratios, flips = [], [], []
    for i in range(400):
        (seg,) = geometry(tf, 400, 400, seed=1, index=i)
        w = seg["x"]["in_hi"] - seg["x"]["in_lo"]
        h = seg["y"]["in_hi"] - seg["y"]["in_lo"]
        assert 0 <= seg["x"]["in_lo"] and seg["x"]["in_hi"] <= 400
        assert 0 <= seg["y"]["in_lo"] and seg["y"]["in_hi"] <= 400
        areas.append(w * h / (400 * 400))
        ratios.append(w / h)
        flips.append(seg["x"]["flip"])
    areas, ratios = np.array(areas), np.array(ratios)
    assert areas.min() > 0.19 and areas.max() < 0.91
    assert ratios.min() > 0.49 and ratios.max() < 2.05
    assert abs(np.mean(np.log(ratios))) < 0.1  # log-uniform around 1
    assert 0.4 < np.mean(flips) < 0.6


def test_random_resized_crop_with_dct_scaling_is_close_to_pil():
    data = jpeg(600, 450, seed=3)
    tf = [T.RandomResizedCrop(96, scale=(0.5, 1.0))]
    errors = []
    for i in range(8):
        (seg,) = geometry(tf, 600, 450, index=i)
        x, y = seg["x"], seg["y"]
        ref = pil_image(data).crop((x["in_lo"], y["in_lo"], x["in_hi"], y["in_hi"]))
        ref = np.asarray(ref.resize((96, 96), Image.Resampling.BILINEAR)).astype(float)
        ours = run_sample(data, tf, index=i, dct_scaling=True).astype(float)
        errors.append(np.abs(ours - ref).mean())
    # Decoding at 1/2-1/4 then resizing blurs slightly differently from one big resize.
    assert max(errors) < 3.0, errors


def torchvision_center_crop_box(w, h, cw, ch):
    return round((w - cw) / 2.0), round((h - ch) / 2.0)


@pytest.mark.parametrize("wh", [(500, 375), (375, 500), (301, 299)])
def test_resize_shorter_edge_then_center_crop_matches_pil(wh):
    w, h = wh
    data = jpeg(w, h)
    ours = run_sample(data, [T.Resize(256), T.CenterCrop(224)])
    # torchvision: the shorter edge becomes 256, the longer int(256 * long / short).
    nw, nh = (256, int(256 * h / w)) if w <= h else (int(256 * w / h), 256)
    resized = pil_image(data).resize((nw, nh), Image.Resampling.BILINEAR)
    left, top = torchvision_center_crop_box(nw, nh, 224, 224)
    ref = resized.crop((left, top, left + 224, top + 224))
    np.testing.assert_array_equal(ours, np.asarray(ref))


def test_center_crop_pads_small_images_with_zeros():
    data = jpeg(40, 30)
    ours = run_sample(data, [T.CenterCrop((50, 45))])
    ref = np.zeros((50, 45, 3), np.uint8)
    # torchvision pads (45-40)//2 = 2 left, (50-30)//2 = 10 top.
    ref[10:40, 2:42] = np.asarray(pil_image(data))
    np.testing.assert_array_equal(ours, ref)


def source_index(m, n):
    """For an unscaled axis map: the input pixel each output pixel shows, and which are image
    (the rest is padding). Resized index r = out_off + k; input = origin + r if 0 <= r < len."""
    r = m["out_off"] + np.arange(n)
    return int(m["origin"]) + r, (r >= 0) & (r < m["resized_len"])


@pytest.mark.parametrize("index", range(6))
def test_random_crop_with_padding_and_fill(index):
    data = jpeg(60, 40, seed=index)
    tf = [T.RandomCrop((44, 70), padding=(3, 2), pad_if_needed=True, fill=(10, 20, 30))]
    (seg,) = geometry(tf, 60, 40, index=index)
    src = np.asarray(pil_image(data))
    ref = np.empty((44, 70, 3), np.uint8)
    ref[:] = (10, 20, 30)
    xs, vx = source_index(seg["x"], 70)
    ys, vy = source_index(seg["y"], 44)
    ref[np.ix_(vy, vx)] = src[np.ix_(ys[vy], xs[vx])]
    ours = run_sample(data, tf, index=index)
    np.testing.assert_array_equal(ours, ref)
    # torchvision's pad_if_needed: the padded width is 60 + 2*3 + 2*(70 - 66) = 74.
    assert -11 <= seg["x"]["out_off"] <= 74 - 70 - 7


def test_flip_probability_extremes():
    data = jpeg(50, 40)
    base = run_sample(data, [T.CenterCrop(32)])
    flipped = run_sample(data, [T.CenterCrop(32), T.RandomHorizontalFlip(1.0)])
    never = run_sample(data, [T.CenterCrop(32), T.RandomHorizontalFlip(0.0)])
    np.testing.assert_array_equal(flipped, base[:, ::-1])
    np.testing.assert_array_equal(never, base)


def test_flip_before_crop_mirrors_the_window():
    data = jpeg(80, 60)
    ours = run_sample(data, [T.RandomHorizontalFlip(1.0), T.CenterCrop((60, 50))])
    ref = np.asarray(pil_image(data))[:, ::-1][:, 15:65]
    np.testing.assert_array_equal(ours, ref)


def test_two_resizes_make_two_passes_like_torchvision():
    data = jpeg(200, 160)
    tf = [T.Resize((120, 150)), T.RandomResizedCrop(48, scale=(0.3, 0.6))]
    segs = geometry(tf, 200, 160, index=2)
    assert len(segs) == 2
    x, y = segs[1]["x"], segs[1]["y"]
    first = pil_image(data).resize((150, 120), Image.Resampling.BILINEAR)
    ref = first.crop((x["in_lo"], y["in_lo"], x["in_hi"], y["in_hi"])).resize((48, 48), Image.Resampling.BILINEAR)
    np.testing.assert_array_equal(run_sample(data, tf, index=2), np.asarray(ref))


@pytest.mark.parametrize("dtype,npdtype", [("float32", np.float32), ("float16", np.float16)])
def test_normalize_exact_in_float(dtype, npdtype):
    data = jpeg(64, 48)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    u8 = run_sample(data, [T.CenterCrop(32)])
    ours = run_sample(data, [T.CenterCrop(32), T.Normalize(mean, std)], dtype=dtype, layout="NCHW")
    x = u8.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    ref = (x - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
    assert ours.dtype == npdtype
    np.testing.assert_array_equal(ours, ref.astype(npdtype))


def test_normalize_takes_arrays_and_tensors_as_torchvision_does():
    torch = pytest.importorskip("torch")
    data = jpeg(64, 48)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    want = run_sample(data, [T.CenterCrop(32), T.Normalize(mean, std)], dtype="float32")
    for m, s in ((np.array(mean), np.array(std)), (torch.tensor(mean, dtype=torch.float64), torch.tensor(std))):
        np.testing.assert_allclose(run_sample(data, [T.CenterCrop(32), T.Normalize(m, s)], dtype="float32"), want,
                                   rtol=1e-6)
    assert T.Normalize(np.float32(0.5), torch.tensor(0.25)).mean == (0.5, 0.5, 0.5)
    with pytest.raises(TypeError, match="Normalize: mean must be a number or a sequence of 1 or 3"):
        T.Normalize(np.zeros((3, 1)), std)


def test_float_without_normalize_is_to_tensor_scaling():
    data = jpeg(64, 48)
    u8 = run_sample(data, [T.CenterCrop(32)])
    ours = run_sample(data, [T.CenterCrop(32)], dtype="float32", layout="NHWC")
    np.testing.assert_array_equal(ours, u8.astype(np.float32) / np.float32(255))


def test_layouts_agree():
    data = jpeg(64, 48)
    nhwc = run_sample(data, [T.RandomResizedCrop(24)], layout="NHWC", index=3)
    nchw = run_sample(data, [T.RandomResizedCrop(24)], layout="NCHW", index=3)
    np.testing.assert_array_equal(nchw, nhwc.transpose(2, 0, 1))


# torchvision half: runs where torchvision is installed (the GPU machine's script runs it).
def _tv():
    return pytest.importorskip("torchvision.transforms.v2.functional",
                               reason="torchvision not installed here; the _ref/PIL half ran")


@pytest.mark.parametrize("index", range(6))
def test_random_resized_crop_matches_torchvision(index):
    F = _tv()
    import torch

    data = jpeg(223, 171, seed=index)
    tf = [T.RandomResizedCrop(80), T.RandomHorizontalFlip()]
    (seg,) = geometry(tf, 223, 171, index=index)
    x, y = seg["x"], seg["y"]
    img = torch.from_numpy(np.asarray(pil_image(data)).copy()).permute(2, 0, 1)
    ref = F.resized_crop(img, y["in_lo"], x["in_lo"], y["in_hi"] - y["in_lo"], x["in_hi"] - x["in_lo"],
                         [80, 80], antialias=True)
    if x["flip"]:
        ref = F.horizontal_flip(ref)
    ours = run_sample(data, tf, index=index, layout="NCHW")
    diff = np.abs(ours.astype(int) - ref.numpy().astype(int))
    assert diff.max() <= 1, diff.max()  # torch's uint8 AA kernel follows PIL; rounding may differ by 1


def test_resize_center_crop_normalize_matches_torchvision():
    F = _tv()
    import torch

    data = jpeg(500, 375)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    img = torch.from_numpy(np.asarray(pil_image(data)).copy()).permute(2, 0, 1)
    ref = F.center_crop(F.resize(img, [256], antialias=True), [224])
    ref = F.normalize(F.to_dtype(ref, torch.float32, scale=True), mean, std)
    ours = run_sample(data, [T.Resize(256), T.CenterCrop(224), T.Normalize(mean, std)],
                      dtype="float32", layout="NCHW")
    assert np.abs(ours - ref.numpy()).max() <= 1.0 / 255 / 0.224 + 1e-5


def test_crop_window_entirely_in_padding():
    # 300 px of padding around a 40 x 30 image: some windows miss the image on one axis or both.
    data = jpeg(40, 30)
    tf = [T.RandomCrop((20, 20), padding=300, fill=(7, 8, 9))]
    src = np.asarray(pil_image(data))
    missed = overlapped = 0
    for index in range(40):
        (seg,) = geometry(tf, 40, 30, index=index)
        xs, vx = source_index(seg["x"], 20)
        ys, vy = source_index(seg["y"], 20)
        ref = np.empty((20, 20, 3), np.uint8)
        ref[:] = (7, 8, 9)
        ref[np.ix_(vy, vx)] = src[np.ix_(ys[vy], xs[vx])]
        np.testing.assert_array_equal(run_sample(data, tf, index=index), ref)
        missed += not vx.any() or not vy.any()
        overlapped += vx.any() and vy.any()
    assert missed > 0 and overlapped > 0  # both cases were exercised


# --- RandomVerticalFlip and Pad (issue 5): geometry that rides in the same resampling pass ---

def test_vertical_flip_probability_extremes_and_order():
    data = jpeg(50, 40)
    base = run_sample(data, [T.CenterCrop(32)])
    np.testing.assert_array_equal(run_sample(data, [T.CenterCrop(32), T.RandomVerticalFlip(1.0)]), base[::-1])
    np.testing.assert_array_equal(run_sample(data, [T.CenterCrop(32), T.RandomVerticalFlip(0.0)]), base)
    # Before a crop, the flip mirrors which rows the window takes (as torchvision, op by op).
    ours = run_sample(data, [T.RandomVerticalFlip(1.0), T.CenterCrop((30, 50))])
    np.testing.assert_array_equal(ours, np.asarray(pil_image(data))[::-1][5:35])
    # Both flips: a half turn.
    both = run_sample(data, [T.CenterCrop(32), T.RandomHorizontalFlip(1.0), T.RandomVerticalFlip(1.0)])
    np.testing.assert_array_equal(both, base[::-1, ::-1])


def test_vertical_flip_after_resize_matches_pil():
    data = jpeg(175, 129)
    ours = run_sample(data, [T.Resize((61, 83)), T.RandomVerticalFlip(1.0)])
    ref = pil_image(data).resize((83, 61), Image.Resampling.BILINEAR).transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    np.testing.assert_array_equal(ours, np.asarray(ref))


def test_vertical_flip_draws_are_per_sample_and_near_p():
    tf = [T.CenterCrop(8), T.RandomVerticalFlip(0.3)]
    flips = [geometry(tf, 20, 20, seed=1, index=i)[0]["y"]["flip"] for i in range(2000)]
    assert 0.26 < sum(flips) / len(flips) < 0.34
    # The horizontal flip draws from its own stream: the two are independent.
    both = [T.CenterCrop(8), T.RandomHorizontalFlip(0.5), T.RandomVerticalFlip(0.5)]
    pairs = [(g["x"]["flip"], g["y"]["flip"]) for g in (geometry(both, 20, 20, index=i)[0] for i in range(800))]
    assert all(160 < sum(1 for p in pairs if p == c) < 240 for c in [(0, 0), (0, 1), (1, 0), (1, 1)])


@pytest.mark.parametrize("padding,fill", [(3, 0), ((2, 5), 9), ((1, 2, 3, 4), (10, 20, 30))])
def test_pad_matches_numpy(padding, fill):
    data = jpeg(37, 23)
    src = np.asarray(pil_image(data))
    left, top, right, bottom = ((padding,) * 4 if isinstance(padding, int) else
                                (padding * 2 if len(padding) == 2 else padding))
    ref = np.empty((23 + top + bottom, 37 + left + right, 3), np.uint8)
    ref[:] = fill
    ref[top:top + 23, left:left + 37] = src
    np.testing.assert_array_equal(run_sample(data, [T.Pad(padding, fill=fill)]), ref)


def test_pad_then_resize_and_crop_compose_like_torchvision():
    # Pad, then Resize: torchvision resizes the padded image, so padding is materialized first.
    data = jpeg(40, 30)
    padded = np.zeros((36, 48, 3), np.uint8)
    padded[:] = (50, 60, 70)
    padded[3:33, 4:44] = np.asarray(pil_image(data))
    ref = Image.fromarray(padded).resize((24, 18), Image.Resampling.BILINEAR)
    ours = run_sample(data, [T.Pad((4, 3), fill=(50, 60, 70)), T.Resize((18, 24))])
    np.testing.assert_array_equal(ours, np.asarray(ref))
    # Pad then CenterCrop is one window: a crop of the padded image.
    ours = run_sample(data, [T.Pad(5, fill=7), T.CenterCrop((20, 44))])
    big = np.full((40, 50, 3), 7, np.uint8)
    big[5:35, 5:45] = np.asarray(pil_image(data))
    np.testing.assert_array_equal(ours, big[10:30, 3:47])


def test_pad_and_vertical_flip_in_a_loader_batch(small_folder):
    loader = sluice.Loader(small_folder, [T.Resize((20, 30)), T.Pad((1, 2, 3, 4), fill=255),
                                          T.RandomVerticalFlip(1.0)], batch_size=4, dtype="uint8",
                           layout="NHWC", output="numpy", num_threads=2)
    assert loader.output_size == (26, 34)
    images, _ = next(iter(loader))
    assert images.shape == (4, 26, 34, 3)
    # Flipped: the 4-row bottom padding is on top, the 2-row top padding at the bottom.
    assert (images[:, :4] == 255).all() and (images[:, -2:] == 255).all()
    assert (images[:, :, :1] == 255).all() and (images[:, :, -3:] == 255).all()
    assert (images[:, 4:-2, 1:-3] != 255).any()


def test_pad_and_vertical_flip_errors():
    with pytest.raises(ValueError, match="Pad: padding must be non-negative"):
        T.Pad(-1)
    with pytest.raises(TypeError, match="Pad: padding must be an int or a sequence of 1, 2 or 4 ints"):
        T.Pad((1, 2, 3))
    with pytest.raises(ValueError, match="Pad: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric'"):
        T.Pad(2, padding_mode="wrap")
    with pytest.raises(ValueError, match="Pad: fill values must be in"):
        T.Pad(2, fill=300)
    with pytest.raises(ValueError, match=r"RandomVerticalFlip: p must be in \[0, 1\]"):
        T.RandomVerticalFlip(1.5)
    with pytest.raises(TypeError, match="RandomVerticalFlip: p must be a number"):
        T.RandomVerticalFlip("0.5")
    with pytest.raises(NotImplementedError, match="Pad after Normalize is not supported"):
        sluice.Loader([("x.jpg", 0)], [T.Normalize([0.5] * 3, [0.5] * 3), T.Pad(2)])


def test_pad_and_vertical_flip_match_torchvision():
    F = _tv()
    import torch

    data = jpeg(61, 47)
    img = torch.from_numpy(np.asarray(pil_image(data)).copy()).permute(2, 0, 1)
    ref = F.vertical_flip(F.pad(img, [2, 3, 4, 5], fill=[9, 8, 7]))
    ours = run_sample(data, [T.Pad((2, 3, 4, 5), fill=(9, 8, 7)), T.RandomVerticalFlip(1.0)], layout="NCHW")
    np.testing.assert_array_equal(ours, ref.numpy())  # geometry on the integer grid: exact


def test_descriptions_come_from_the_op_table():
    # Every transform's description is made, and checked, by the C++ op table; its fields read
    # back as the transform gave them.
    make = sluice._core.transforms.make
    spec = make("RandomResizedCrop", {"height": 10, "width": 20, "interpolation": "bicubic"})
    assert (spec.name, spec.height, spec.width, spec.interpolation) == ("RandomResizedCrop", 10, 20, "bicubic")
    assert spec.scale == (0.08, 1.0)  # the C++ default
    with pytest.raises(ValueError, match="no transform named 'Blur'"):
        make("Blur", {})
    with pytest.raises(TypeError, match="RandomResizedCrop: no argument 'size'"):
        make("RandomResizedCrop", {"size": 10})
    with pytest.raises(TypeError, match="Pad: padding must be a sequence of 4 values"):
        make("Pad", {"padding": (1, 2)})
    with pytest.raises(ValueError, match="RandomResizedCrop: size must be positive, got \\(0, 20\\)"):
        make("RandomResizedCrop", {"height": 0, "width": 20})
    with pytest.raises(AttributeError, match="Pad has no field 'p'"):
        T.Pad(1)._spec().p
