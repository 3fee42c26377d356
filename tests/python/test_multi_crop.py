"""FiveCrop and TenCrop (batch transforms) on real JPEG folders, on the CPU.

Every cropped batch is checked against an independent NumPy reference: the same loader without
the FiveCrop/TenCrop gives the uncropped images (per-sample work does not depend on what follows),
which are cropped by hand with torchvision's formulas (corners by slicing, the center at
``int(round((H - h) / 2.0))``; TenCrop's second five from the flipped image). Also: tensor and list
(variable-size) batches, NCHW and NHWC, torch and NumPy, uint8 and float32 with Normalize after
the crop, the errors (crop too large, misplaced transforms), empty batches, from_torchvision, and
(with torchvision) equality with v2.functional.five_crop/ten_crop.
"""
from __future__ import annotations

import numpy as np
import pytest

import sluice
import sluice.transforms as T

NORM = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


def arr(x) -> np.ndarray:
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def load(folder, tf, **kw):
    """Every batch of the folder, in order: ([images], [labels])."""
    loader = sluice.Loader(folder, tf, batch_size=4, shuffle=False, num_threads=2, **kw)
    xs, ys = zip(*[(x, y) for x, y in loader])
    loader.close()
    return list(xs), list(ys)


def ref_five(img: np.ndarray, h: int, w: int, nhwc: bool) -> list[np.ndarray]:
    """torchvision's five_crop of one image (CHW, or HWC when nhwc), by hand."""
    x = np.moveaxis(img, -1, 0) if nhwc else img  # CHW
    height, width = x.shape[1:]
    top, left = int(round((height - h) / 2.0)), int(round((width - w) / 2.0))
    crops = [x[:, :h, :w], x[:, :h, width - w:], x[:, height - h:, :w], x[:, height - h:, width - w:],
             x[:, top:top + h, left:left + w]]
    return [np.moveaxis(c, 0, -1) if nhwc else c for c in crops]


def ref_ten(img: np.ndarray, h: int, w: int, nhwc: bool, vertical: bool) -> list[np.ndarray]:
    axis = (0 if vertical else 1) if nhwc else (1 if vertical else 2)
    return ref_five(img, h, w, nhwc) + ref_five(np.flip(img, axis), h, w, nhwc)


def reference(batches, crop, nhwc: bool) -> list[np.ndarray]:
    """Each batch (a tensor/array or a list of images) cropped by hand, stacked N x k x ..."""
    h, w = crop.size
    out = []
    for b in batches:
        images = [arr(x) for x in b]
        if isinstance(crop, T.TenCrop):
            per = [ref_ten(x, h, w, nhwc, crop.vertical_flip) for x in images]
        else:
            per = [ref_five(x, h, w, nhwc) for x in images]
        out.append(np.stack([np.stack(p) for p in per]))
    return out


def check(folder, before, crop, after=(), **kw):
    """The loader with `crop` gives the hand-cropped batches of the loader without it."""
    plain, plain_labels = load(folder, list(before) + list(after), **kw)
    got, labels = load(folder, list(before) + [crop] + list(after), **kw)
    nhwc = kw.get("layout") == "NHWC"
    want = reference(plain, crop, nhwc)
    assert len(got) == len(want)
    k = 10 if isinstance(crop, T.TenCrop) else 5
    for g, wnt, y, y0 in zip(got, want, labels, plain_labels):
        h, w = crop.size
        assert tuple(g.shape) == (len(y0), k) + ((h, w, 3) if nhwc else (3, h, w))
        assert str(g.dtype).replace("torch.", "") == str(wnt.dtype)
        np.testing.assert_array_equal(arr(g), wnt)
        np.testing.assert_array_equal(arr(y), arr(y0))  # labels unchanged
    return got


@pytest.mark.parametrize("output", ["torch", "numpy"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("fixed", [True, False], ids=["tensor", "list"])
def test_five_crop_uint8(small_folder, output, layout, fixed):
    if output == "torch":
        pytest.importorskip("torch")
    before = [T.Resize((45, 61))] if fixed else [T.Resize(45)]  # Resize(45) alone: sizes vary
    plain, _ = load(small_folder, before, output=output, layout=layout, dtype="uint8")
    assert isinstance(plain[0], list) != fixed  # the batches are what the test means
    got = check(small_folder, before, T.FiveCrop((24, 31)), output=output, layout=layout, dtype="uint8")
    assert type(got[0]).__name__ == ("Tensor" if output == "torch" else "ndarray")


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("fixed", [True, False], ids=["tensor", "list"])
def test_five_crop_float32_then_normalize(small_folder, layout, fixed):
    # ToTensor and Normalize after FiveCrop: applied to each sample before it (they are per pixel).
    before = [T.Resize((47, 50))] if fixed else [T.Resize(47)]
    check(small_folder, before, T.FiveCrop(23), [T.ToTensor(), NORM], output="numpy", layout=layout)
    pytest.importorskip("torch")
    check(small_folder, before, T.FiveCrop([25]), [NORM], output="torch", layout=layout, dtype="float32")


@pytest.mark.parametrize("vertical", [False, True])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("output", ["torch", "numpy"])
def test_ten_crop(small_folder, vertical, layout, output):
    if output == "torch":
        pytest.importorskip("torch")
    kw = dict(output=output, layout=layout)
    check(small_folder, [T.Resize((40, 57))], T.TenCrop((21, 30), vertical_flip=vertical), **kw, dtype="uint8")
    check(small_folder, [T.Resize(41)], T.TenCrop(32, vertical), [T.ToTensor(), NORM], **kw)


def test_crop_as_large_as_the_image_and_output_size(small_folder):
    got = check(small_folder, [T.Resize((30, 40))], T.FiveCrop((30, 40)), output="numpy", dtype="uint8")
    assert (got[0][:, 0] == got[0][:, 4]).all()  # every crop is the whole image
    loader = sluice.Loader(small_folder, [T.Resize(33), T.TenCrop((20, 28))], output="numpy")
    assert loader.output_size == (20, 28)  # the crops' size, whatever the images' sizes
    assert sluice.Loader(small_folder, [T.Resize(33)], output="numpy").output_size is None


def test_sizes_and_repr():
    assert T.FiveCrop(7).size == (7, 7) and T.FiveCrop([7]).size == (7, 7) and T.FiveCrop((7, 9)).size == (7, 9)
    assert repr(T.TenCrop(4, vertical_flip=True)) == "TenCrop(size=(4, 4), vertical_flip=True)"
    assert T.TenCrop(4).vertical_flip is False
    with pytest.raises(ValueError, match="FiveCrop: size must be an int or a sequence"):
        T.FiveCrop((1, 2, 3))
    with pytest.raises(ValueError, match="TenCrop: size must be positive"):
        T.TenCrop(0)
    with pytest.raises(TypeError, match="FiveCrop: size must hold ints"):
        T.FiveCrop((2.5, 3))
    assert {"FiveCrop", "TenCrop"} <= set(T.__all__)


def test_too_large_crop(small_folder):
    # Fixed size: refused when the loader is made, naming both sizes.
    with pytest.raises(ValueError, match=r"FiveCrop: requested crop size \(40, 40\) is bigger than input size "
                                         r"\(32, 48\) of the images"):
        sluice.Loader(small_folder, [T.Resize((32, 48)), T.FiveCrop(40)])
    # Varying sizes: at the batch, naming the file.
    loader = sluice.Loader(small_folder, [T.Resize(32), T.TenCrop((33, 20))], batch_size=4, output="numpy")
    with pytest.raises(ValueError, match=r"TenCrop: requested crop size \(33, 20\) is bigger than input size "
                                         r"\(32, \d+\) of '.*class_000.*\.jpg'"):
        next(iter(loader))


def test_where_it_may_stand(small_folder):
    def f(x):
        return x

    def bad(x):
        return x

    base = [T.Resize((32, 32))]
    cases = [
        ([T.FiveCrop(16), T.Lambda(bad)], r"Lambda\(bad\) after FiveCrop is not supported.*only ToTensor and "
                                          r"Normalize may follow it"),
        ([T.FiveCrop(16), T.CenterCrop(8)], "CenterCrop after FiveCrop is not supported"),
        ([T.TenCrop(16), T.ToTensor(), T.RandomErasing()], "RandomErasing after TenCrop is not supported"),
        ([T.FiveCrop(16), T.BatchLambda(f), T.Normalize(0.5, 0.5)], r"Normalize after BatchLambda\(f\)"),
        ([T.BatchLambda(f), T.FiveCrop(16)], r"FiveCrop after BatchLambda\(f\) is not supported: FiveCrop must "
                                             "be the first batch transform"),
        ([T.FiveCrop(16), T.TenCrop(8)], "TenCrop after FiveCrop is not supported"),
        ([T.FiveCrop(16), T.MixUp(num_classes=3)], "MixUp after FiveCrop is not supported: only BatchLambda"),
        ([T.TenCrop(16), T.CutMix(num_classes=3)], "CutMix after TenCrop is not supported"),
        ([T.CutMix(num_classes=3), T.FiveCrop(16)], "FiveCrop after CutMix is not supported"),
    ]
    for tail, message in cases:
        with pytest.raises(ValueError, match=message):
            sluice.Loader(small_folder, base + tail)
    with pytest.raises(ValueError, match="RandomChoice: item 1 is TenCrop, which gives every batch a crop axis"):
        T.RandomChoice([T.BatchLambda(f), T.TenCrop(8)])


def test_finishing_after_the_crop_moves_before_it():
    tf = [T.Resize(40), T.FiveCrop(16), T.ToTensor(), T.Identity(), NORM]
    per_sample, batch = T.split_batch_functions(tf)
    assert per_sample == [tf[0], tf[2], tf[3], tf[4]] and batch == [tf[1]]
    lam = T.BatchLambda(lambda x: x)
    assert T.split_batch_functions(tf + [lam]) == (per_sample, [tf[1], lam])


def test_batch_lambda_after_the_crop_gets_the_stacked_crops(small_folder):
    shapes = []

    def negate(x):
        shapes.append(tuple(x.shape))
        return 255 - x

    tf = [T.Resize(36), T.TenCrop(20)]  # a list batch before the crop: the BatchLambda needs none
    want, _ = load(small_folder, tf, output="numpy", dtype="uint8")
    got, _ = load(small_folder, tf + [T.BatchLambda(negate)], output="numpy", dtype="uint8")
    assert shapes[0] == (4, 10, 3, 20, 20)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, 255 - w)


@pytest.mark.parametrize("fixed", [True, False], ids=["tensor", "list"])
@pytest.mark.parametrize("output", ["torch", "numpy"])
def test_empty_batch(tmp_path, fixed, output):
    if output == "torch":
        pytest.importorskip("torch")
    from conftest import photo  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "0.jpg").write_bytes(b"not an image")
    Image.fromarray(photo(64, 48)).save(tmp_path / "a" / "1.jpg", quality=90)
    resize = T.Resize((30, 30)) if fixed else T.Resize(30)
    for layout, shape in (("NCHW", (5, 3, 12, 14)), ("NHWC", (5, 12, 14, 3))):
        loader = sluice.Loader(str(tmp_path), [resize, T.FiveCrop((12, 14))], batch_size=1, on_error="skip",
                               output=output, layout=layout, dtype="float16")
        got = [(tuple(x.shape), str(x.dtype).replace("torch.", ""), len(y)) for x, y in loader]
        assert got == [((0,) + shape, "float16", 0), ((1,) + shape, "float16", 1)]


class _FakeTorchvision:
    """Stand-ins for torchvision objects (their module is what from_torchvision looks at)."""

    @staticmethod
    def make(name: str, **attrs):
        cls = type(name, (), {"__module__": "torchvision.transforms.transforms"})
        obj = cls()
        obj.__dict__.update(attrs)
        return obj


def test_from_torchvision_stand_ins():
    fake = _FakeTorchvision.make
    five, ten = T.from_torchvision([fake("FiveCrop", size=(7, 7)), fake("TenCrop", size=(6, 8), vertical_flip=True)])
    assert isinstance(five, T.FiveCrop) and five.size == (7, 7)
    assert isinstance(ten, T.TenCrop) and ten.size == (6, 8) and ten.vertical_flip is True
    stack = fake("Lambda", lambd=lambda crops: crops)
    with pytest.raises(ValueError, match=r"item 2 \(Lambda\): a Lambda after FiveCrop cannot be converted: "
                                         r"sluice's FiveCrop stacks the crops itself.*drop that Lambda"):
        T.from_torchvision([fake("Resize", size=[8]), fake("FiveCrop", size=(7, 7)), stack])
    with pytest.raises(ValueError, match=r"item 1 \(function\): a Lambda after TenCrop"):
        T.from_torchvision([T.TenCrop(4), lambda crops: crops])


def test_from_torchvision_real(small_folder):
    tv = pytest.importorskip("torchvision.transforms")
    v2 = pytest.importorskip("torchvision.transforms.v2")
    torch = pytest.importorskip("torch")
    want, _ = load(small_folder, [T.Resize(40), T.TenCrop(24, vertical_flip=True), T.ToTensor(), NORM])
    for m in (tv, v2):
        theirs = m.Compose([m.Resize(40), m.TenCrop(24, vertical_flip=True), m.Normalize(NORM.mean, NORM.std)])
        got, _ = load(small_folder, theirs)
        assert all(torch.equal(g, w) for g, w in zip(got, want))
        usual = m.Compose([m.Resize(40), m.FiveCrop(24), m.Lambda(lambda crops: torch.stack(list(crops)))])
        with pytest.raises(ValueError, match="drop that Lambda"):
            sluice.Loader(small_folder, usual)


@pytest.mark.parametrize("fixed", [True, False], ids=["tensor", "list"])
def test_equals_torchvision_functional(small_folder, fixed):
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    torch = pytest.importorskip("torch")
    before = [T.Resize((43, 58))] if fixed else [T.Resize(43)]
    plain, _ = load(small_folder, before, dtype="uint8")
    for crop, fn in ((T.FiveCrop((20, 27)), lambda x: F.five_crop(x, [20, 27])),
                     (T.TenCrop(21), lambda x: F.ten_crop(x, [21, 21])),
                     (T.TenCrop(21, vertical_flip=True), lambda x: F.ten_crop(x, [21, 21], vertical_flip=True))):
        got, _ = load(small_folder, before + [crop], dtype="uint8")
        for g, b in zip(got, plain):
            want = torch.stack([torch.stack(fn(x)) for x in b])
            assert torch.equal(g, want)


def _gpu() -> bool:
    torch = pytest.importorskip("torch")
    return torch.cuda.is_available() and getattr(sluice._core, "cuda_device_count", lambda: 0)() > 0


@pytest.mark.parametrize("fixed", [True, False], ids=["tensor", "list"])
def test_cuda(small_folder, fixed):
    if not _gpu():
        pytest.skip("needs a CUDA device sluice sees")
    kw = dict(device="cuda", decode_route="cpu", output="torch")
    before = [T.Resize((42, 55))] if fixed else [T.Resize(42)]
    for crop, after, layout in ((T.FiveCrop((20, 26)), [], "NCHW"), (T.TenCrop(22, True), [T.ToTensor(), NORM], "NHWC")):
        got, _ = load(small_folder, before + [crop] + after, layout=layout, **kw)
        assert all(g.is_cuda for g in got)
        plain, _ = load(small_folder, before + after, layout=layout, **kw)
        plain = [[x.cpu() for x in b] for b in plain]
        for g, w in zip(got, reference(plain, crop, layout == "NHWC")):
            np.testing.assert_array_equal(g.cpu().numpy(), w)
