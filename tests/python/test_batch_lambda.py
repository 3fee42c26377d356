"""Batch functions (T.BatchLambda) on real files, on the CPU: a batched torch Cutout against the
same holes cut by hand with NumPy into the batches of the same loader without it, what the
function receives (layout, dtype, NumPy output), in-place changes, order, errors that name the
function. The GPU test (the loader's stream) is in test_gpu.py."""
from __future__ import annotations

import numpy as np
import pytest

import sluice
import sluice.transforms as T

torch = pytest.importorskip("torch")

SEED = [T.Resize(int(64 * 1.2)), T.RandomCrop(64), T.RandomHorizontalFlip(),
        T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(),
        T.Normalize([0.5] * 3, [0.5] * 3)]


class BatchCutout:
    """The seed's CUTOUT for a whole N x C x H x W batch, with torch ops only: per image
    `n_holes` centres drawn from a torch.Generator seeded per batch (seed + call number), the
    squares' mask built by broadcasting, one multiplication. Records the centres it drew."""

    def __init__(self, n_holes: int, length: int, seed: int = 0):
        self.n_holes, self.length, self.seed = n_holes, length, seed
        self.centres: list[tuple[np.ndarray, np.ndarray]] = []
        self.seen: list[tuple] = []

    def __call__(self, x):
        self.seen.append((type(x), tuple(x.shape), x.dtype, x.device))
        g = torch.Generator().manual_seed(self.seed + len(self.centres))
        n, _, h, w = x.shape
        ys = torch.randint(h, (n, self.n_holes), generator=g)
        xs = torch.randint(w, (n, self.n_holes), generator=g)
        self.centres.append((ys.numpy().copy(), xs.numpy().copy()))
        half = self.length // 2
        y1, y2 = (ys - half).clamp(0, h), (ys + half).clamp(0, h)
        x1, x2 = (xs - half).clamp(0, w), (xs + half).clamp(0, w)
        rows, cols = torch.arange(h), torch.arange(w)
        in_rows = (rows >= y1[..., None]) & (rows < y2[..., None])  # n x holes x h
        in_cols = (cols >= x1[..., None]) & (cols < x2[..., None])  # n x holes x w
        hole = (in_rows[..., :, None] & in_cols[..., None, :]).any(dim=1)  # n x h x w
        mask = (~hole).to(x.dtype).to(x.device)
        return x * mask[:, None]


def numpy_cutout(batch: np.ndarray, ys: np.ndarray, xs: np.ndarray, length: int) -> np.ndarray:
    """The reference: the seed CUTOUT's loop (np.clip, slice assignment) per image."""
    out = batch.copy()
    n, _, h, w = batch.shape
    for k in range(n):
        mask = np.ones((h, w), np.float32)
        for y, x in zip(ys[k], xs[k]):
            mask[np.clip(y - length // 2, 0, h): np.clip(y + length // 2, 0, h),
                 np.clip(x - length // 2, 0, w): np.clip(x + length // 2, 0, w)] = 0.0
        out[k] = batch[k] * mask
    return out


def test_batch_cutout_matches_numpy_holes_on_the_plain_batches(small_folder):
    kw = dict(batch_size=4, shuffle=True, seed=3)
    cutout = BatchCutout(n_holes=2, length=16, seed=11)
    cut = sluice.Loader(small_folder, SEED + [T.BatchLambda(cutout)], **kw)
    plain = sluice.Loader(small_folder, SEED, **kw)
    batches = list(zip(cut, plain, strict=True))
    assert len(batches) == 4 and len(cutout.centres) == 4  # once per batch (4, 4, 4, 3 samples)
    assert cutout.seen == [(torch.Tensor, (n, 3, 64, 64), torch.float32, torch.device("cpu"))
                           for n in (4, 4, 4, 3)]
    zeroed = 0
    for ((x, y), (px, py)), (ys, xs) in zip(batches, cutout.centres, strict=True):
        assert torch.equal(y, py)  # labels untouched
        expected = numpy_cutout(px.numpy(), ys, xs, 16)
        np.testing.assert_array_equal(x.numpy(), expected)
        zeroed += int(((expected == 0) & (px.numpy() != 0)).sum())
    assert zeroed > 15 * 3 * 64  # the holes are there (2 of up to 16 x 16 per image)


def test_nhwc_uint8_batch_changed_in_place(small_folder):
    seen = []

    def black_left_half(x):
        seen.append((tuple(x.shape), x.dtype))
        x[:, :, :20] = 0  # N x H x W x C: columns
        return x

    kw = dict(batch_size=6, dtype="uint8", layout="NHWC")
    tf = [T.Resize((30, 40))]
    ours = sluice.Loader(small_folder, tf + [T.BatchLambda(black_left_half)], **kw)
    for (x, _), (r, _) in zip(ours, sluice.Loader(small_folder, tf, **kw), strict=True):
        assert (x[:, :, :20] == 0).all() and torch.equal(x[:, :, 20:], r[:, :, 20:])
        assert (r[:, :, :20] != 0).any()
    assert seen == [((6, 30, 40, 3), torch.uint8)] * 2 + [((3, 30, 40, 3), torch.uint8)]


def test_several_run_in_order_after_per_sample_lambdas(small_folder):
    calls = []

    def double(x):
        calls.append("double")
        return x * 2

    def plus_one(x):
        calls.append("plus_one")
        return x + 1

    tf = [T.Resize((24, 24)), T.ToTensor()]
    transforms = tf + [T.Lambda(lambda img: -img), T.BatchLambda(double), T.BatchLambda(plus_one)]
    loader = sluice.Loader(small_folder, T.Compose(transforms), batch_size=8)
    assert loader.transforms == transforms  # the whole list is reported
    for (x, _), (r, _) in zip(loader, sluice.Loader(small_folder, tf, batch_size=8), strict=True):
        assert torch.equal(x, -r * 2 + 1)  # per-sample first, then double, then plus_one
    assert calls == ["double", "plus_one"] * 2


def test_numpy_output_gets_and_returns_arrays(small_folder):
    seen = []

    def invert(x):
        seen.append((type(x), x.shape, x.dtype, x.flags.writeable))
        return 255 - x

    kw = dict(batch_size=8, dtype="uint8", output="numpy")
    tf = [T.CenterCrop(32)]
    loader = sluice.Loader(small_folder, tf + [T.BatchLambda(invert)], **kw)
    for (x, y), (r, ry) in zip(loader, sluice.Loader(small_folder, tf, **kw), strict=True):
        assert isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
        np.testing.assert_array_equal(x, 255 - r)
        np.testing.assert_array_equal(y, ry)
    assert seen == [(np.ndarray, (8, 3, 32, 32), np.dtype(np.uint8), True),
                    (np.ndarray, (7, 3, 32, 32), np.dtype(np.uint8), True)]


def shrink(x):
    return x[:, :, :10]


@pytest.mark.parametrize("fn,output,error,words", [
    (shrink, "torch", ValueError,
     r"BatchLambda\(shrink\): returned shape \(3, 3, 10, 32\), dtype float32 on cpu, expected the "
     r"batch's shape \(3, 3, 32, 32\), dtype float32 on cpu"),
    (lambda x: x.double(), "torch", ValueError,
     r"BatchLambda\(<lambda>\): returned shape \(3, 3, 32, 32\), dtype float64 on cpu, expected .* "
     r"dtype float32"),
    (lambda x: x.numpy(), "torch", TypeError,
     r"BatchLambda\(<lambda>\): returned ndarray, expected a torch.Tensor of shape \(3, 3, 32, 32\), "
     r"dtype float32 on cpu"),
    (lambda x: None, "torch", TypeError, r"BatchLambda\(<lambda>\): returned NoneType"),
    (lambda x: torch.zeros(x.shape), "numpy", TypeError,
     r"BatchLambda\(<lambda>\): returned Tensor, expected a numpy.ndarray of shape \(3, 3, 32, 32\)"),
    (lambda x: x.astype(np.float16), "numpy", ValueError,
     r"returned shape \(3, 3, 32, 32\), dtype float16 on cpu, expected .* dtype float32"),
])
def test_bad_returns_name_the_function_and_what_was_expected(small_folder, fn, output, error, words):
    loader = sluice.Loader(small_folder, [T.Resize((32, 32)), T.BatchLambda(fn)], batch_size=3,
                           output=output)
    with pytest.raises(error, match=words):
        next(iter(loader))


def test_exceptions_propagate_with_a_note_naming_the_function(small_folder):
    def fail_first(x, calls=[]):  # noqa: B006 - counts calls
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("boom")
        return x

    loader = sluice.Loader(small_folder, [T.Resize((32, 32)), T.BatchLambda(fail_first)], batch_size=5)
    it = iter(loader)
    with pytest.raises(KeyError, match="boom") as info:
        next(it)
    notes = getattr(info.value, "__notes__", [])
    assert notes == ["in BatchLambda(fail_first), called on a batch of shape (5, 3, 32, 32), dtype float32"]
    assert [x.shape[0] for x, _ in it] == [5, 5]  # the iteration goes on with the next batch

    # NumPy output: the array is writable (DLPack 1.0), so an in-place change is the batch.
    def zero(x):
        x[:] = 0
        return x

    loader = sluice.Loader(small_folder, [T.Resize((32, 32)), T.BatchLambda(zero)], batch_size=5,
                           output="numpy")
    x, _ = next(iter(loader))
    assert x.shape == (5, 3, 32, 32) and (x == 0).all()


def test_batch_lambdas_come_last_and_need_a_fixed_size(small_folder):
    def f(x):
        return x

    def g(x):
        return x

    with pytest.raises(ValueError, match=r"Normalize after BatchLambda\(f\) is not supported"):
        sluice.Loader(small_folder, [T.Resize((32, 32)), T.BatchLambda(f), T.Normalize(0.5, 0.5)])
    with pytest.raises(ValueError, match=r"Lambda\(g\) after BatchLambda\(f\) is not supported"):
        sluice.Loader(small_folder, [T.Resize((32, 32)), T.BatchLambda(f), T.BatchLambda(f), T.Lambda(g)])
    with pytest.raises(ValueError, match=r"BatchLambda\(f\) needs images of one size"):
        sluice.Loader(small_folder, [T.Resize(40), T.BatchLambda(f)])  # batches would be lists
    with pytest.raises(TypeError, match="BatchLambda: argument should be callable, got int"):
        T.BatchLambda(3)

    # The helper the loader uses, and the C++ specs, which leave the batch functions out.
    tf = [T.Resize((32, 32)), T.Lambda(g), T.BatchLambda(f), T.BatchLambda(g)]
    per_sample, fns = T.split_batch_functions(tf)
    assert per_sample == tf[:2] and fns == tf[2:]
    assert len(T.compile_specs(tf, True, [])) == len(T.compile_specs(per_sample, True, [])) == 2
    assert "BatchLambda" in T.__all__


def test_not_called_for_an_empty_batch(tmp_path):
    from conftest import photo  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "0.jpg").write_bytes(b"not an image")
    Image.fromarray(photo(64, 48)).save(tmp_path / "a" / "1.jpg", quality=90)
    calls = []

    def count(x):
        calls.append(tuple(x.shape))
        return x

    loader = sluice.Loader(str(tmp_path), [T.Resize((16, 16)), T.BatchLambda(count)], batch_size=1,
                           on_error="skip")
    assert [tuple(x.shape) for x, _ in loader] == [(0, 3, 16, 16), (1, 3, 16, 16)]
    assert calls == [(1, 3, 16, 16)]
