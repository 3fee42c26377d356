"""User functions (T.Lambda) on real files: what they receive, what they may return, errors that
name the function and the file, parallel calls on the loader's threads, and the seed
pipeline's CUTOUT class (it uses torch) unchanged."""
from __future__ import annotations

import random
import threading

import numpy as np
import pytest

import sluice
import sluice.transforms as T

torch = pytest.importorskip("torch")


class CUTOUT:
    """The seed pipeline's Cutout, verbatim in behaviour: n_holes squares of side `length` set to
    zero on the CHW tensor, via img.size(), torch.from_numpy and mask.expand_as."""

    def __init__(self, n_holes, length):
        self.n_holes = n_holes
        self.length = length

    def __call__(self, img):
        h = img.size(1)
        w = img.size(2)
        mask = np.ones((h, w), np.float32)
        for n in range(self.n_holes):
            y = np.random.randint(h)
            x = np.random.randint(w)
            y1 = np.clip(y - self.length // 2, 0, h)
            y2 = np.clip(y + self.length // 2, 0, h)
            x1 = np.clip(x - self.length // 2, 0, w)
            x2 = np.clip(x + self.length // 2, 0, w)
            mask[y1: y2, x1: x2] = 0.
        mask = torch.from_numpy(mask)
        mask = mask.expand_as(img)
        img = img * mask
        return img


SEED = [T.Resize(int(64 * 1.2)), T.RandomRotation(20), T.RandomCrop(64), T.RandomHorizontalFlip(),
        T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(),
        T.Normalize([0.5] * 3, [0.5] * 3)]


def test_seed_cutout_runs_unchanged_after_normalize(small_folder):
    kw = dict(batch_size=5, shuffle=True, seed=2)
    plain = sluice.Loader(small_folder, SEED, **kw)
    cut = sluice.Loader(small_folder, SEED + [T.Lambda(CUTOUT(1, 16))], **kw)
    holes = 0
    for (x, y), (px, py) in zip(cut, plain, strict=True):
        assert torch.equal(y, py) and x.shape == px.shape and x.dtype == torch.float32
        for k in range(x.shape[0]):
            changed = (x[k] != px[k]).any(dim=0)  # H x W
            assert (x[k][:, changed] == 0).all()  # the hole is zero in every channel
            if changed.any():
                ys, xs = changed.nonzero(as_tuple=True)
                assert ys.max() - ys.min() < 16 and xs.max() - xs.min() < 16  # one square, at most 16
                holes += 1
    assert holes >= 10  # 15 images, holes near the border may be clipped but exist


def test_pixels_before_to_tensor_are_hwc_uint8_numpy(small_folder):
    seen = []

    def mirror(img):
        seen.append((type(img), img.shape, img.dtype))
        return img[:, ::-1].copy()

    kw = dict(batch_size=4, shuffle=False, output="numpy", dtype="uint8", layout="NHWC", dct_scaling=False)
    ours = sluice.Loader(small_folder, [T.Resize((40, 48)), T.Lambda(mirror)], **kw)
    ref = sluice.Loader(small_folder, [T.Resize((40, 48)), T.RandomHorizontalFlip(p=1.0)], **kw)
    for (x, _), (r, _) in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(x, r)
    assert set(seen) == {(np.ndarray, (40, 48, 3), np.dtype(np.uint8))}


def test_finished_sample_is_chw_float_torch_or_numpy(small_folder):
    for output, kind in (("torch", torch.Tensor), ("numpy", np.ndarray)):
        seen = []

        def double(img, seen=seen):
            seen.append((type(img), tuple(img.shape), str(img.dtype)))
            img *= 2  # in place, returning the same object
            return img

        tf = [T.Resize((32, 32)), T.ToTensor()]
        x, _ = next(iter(sluice.Loader(small_folder, tf + [T.Lambda(double)], batch_size=3, output=output)))
        r, _ = next(iter(sluice.Loader(small_folder, tf, batch_size=3, output=output)))
        np.testing.assert_array_equal(np.asarray(x), 2 * np.asarray(r))
        assert {s[:2] for s in seen} == {(kind, (3, 32, 32))}
        assert {s[2].replace("torch.", "") for s in seen} == {"float32"}


@pytest.mark.parametrize("fn,words", [
    (lambda img: img[:, :10], r"Lambda\(<lambda>\): returned shape \(3, 10, 32\) and dtype float32, expected shape \(3, 32, 32\)"),
    (lambda img: img.double(), r"returned shape \(3, 32, 32\) and dtype float64, expected .* dtype float32"),
    (lambda img: img.numpy(), r"returned ndarray, expected torch.Tensor"),
    (lambda img: 1 / 0, r"Lambda\(<lambda>\) raised ZeroDivisionError"),
])
def test_bad_returns_and_exceptions_name_the_function_and_the_file(small_folder, fn, words):
    loader = sluice.Loader(small_folder, [T.Resize((32, 32)), T.ToTensor(), T.Lambda(fn)], batch_size=3)
    with pytest.raises(ValueError, match=r"class_\d+/img_\d+\.jpg.*" + words):
        next(iter(loader))


def test_skip_goes_on_and_reports_the_function(small_folder):
    def fail_odd(img):
        if int(img.sum()) % 2:
            raise RuntimeError("odd sum")
        return img

    loader = sluice.Loader(small_folder, [T.Resize((24, 24)), T.Lambda(fail_odd)], batch_size=5,
                           on_error="skip", dtype="uint8")
    n = sum(x.shape[0] for x, _ in loader)
    skipped = loader.stats()["skipped"]
    assert 0 < len(skipped) < 15 and n + len(skipped) == 15
    assert all("Lambda(fail_odd) raised RuntimeError: odd sum" in s["reason"] for s in skipped)


def test_calls_run_in_parallel_on_the_loader_threads(small_folder):
    # Two calls must be inside the function at once for the barrier to open: they run on two
    # loader threads, not the caller's, with the GIL released between calls (seed_globals=False:
    # functions that get seeded global generators take turns).
    barrier = threading.Barrier(2, timeout=20)
    threads = set()

    def meet(img):
        threads.add(threading.get_ident())
        barrier.wait()
        return img

    pairs = sluice.Loader(small_folder, [T.Resize((24, 24))]).samples[:14]  # an even number of calls
    loader = sluice.Loader(pairs, [T.Resize((24, 24)), T.Lambda(meet, seed_globals=False)], batch_size=4,
                           num_threads=2, shuffle=False)
    assert sum(x.shape[0] for x, _ in loader) == 14
    assert len(threads) == 2 and threading.get_ident() not in threads


def test_user_functions_come_after_the_geometry(small_folder):
    with pytest.raises(Exception, match=r"RandomCrop after Lambda\(<lambda>\) is not supported"):
        sluice.Loader(small_folder, [T.Resize(40), T.Lambda(lambda x: x), T.RandomCrop(32)])
    with pytest.raises(TypeError, match="Lambda: argument should be callable"):
        T.Lambda(3)


def test_closed_loader_raises(small_folder):
    loader = sluice.Loader(small_folder, [T.Resize((24, 24)), T.Lambda(lambda x: x)], batch_size=4)
    next(iter(loader))
    loader.close()
    with pytest.raises(Exception, match="closed"):
        next(iter(loader))


def _holes(loader):
    """Each sample's erased (zero) pixels, as a boolean H x W mask per sample, in order."""
    return [(x[k] == 0).all(dim=0) for x, _ in loader for k in range(x.shape[0])]


def test_np_random_in_a_lambda_is_reproducible_whatever_the_threads(small_folder):
    # The seed's CUTOUT draws its hole with np.random: the same seed gives the same holes on 1 and
    # 4 threads, with any batch size, run after run; another seed or the next epoch other ones.
    tf = [T.Resize((48, 48)), T.ToTensor(), T.Lambda(CUTOUT(1, 16))]

    def holes(seed, threads, batch, epoch=0):
        loader = sluice.Loader(small_folder, tf, batch_size=batch, shuffle=True, seed=seed, num_threads=threads)
        if epoch:
            loader.set_epoch(epoch)
        out = _holes(loader)
        loader.close()
        return out

    first = holes(3, 1, 5)
    assert all(h.any() for h in first)
    assert len({tuple(h.nonzero()[0].tolist()) for h in first}) > 5  # not one position for all
    for threads, batch in ((4, 5), (4, 3), (2, 15)):
        assert all(torch.equal(a, b) for a, b in zip(holes(3, threads, batch), first, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(holes(4, 4, 5), first, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(holes(3, 4, 5, epoch=1), first, strict=True))


def test_python_random_is_seeded_too_and_the_callers_state_is_put_back(small_folder):
    def mark(img):  # HWC uint8: one pixel from Python's generator, one from NumPy's
        img[0, 0, 0] = random.randrange(256)
        img[0, 0, 1] = np.random.randint(256)
        return img

    def marks(threads):
        loader = sluice.Loader(small_folder, [T.Resize((8, 8)), T.Lambda(mark)], batch_size=4, shuffle=False,
                               seed=11, num_threads=threads, output="numpy")
        out = [tuple(x[k, 0, 0, :2]) for x, _ in loader for k in range(x.shape[0])]
        loader.close()  # no call runs now (the loader reads the next epoch ahead)
        return out

    np.random.seed(123)
    random.seed(123)
    got = marks(3)
    # The caller's generators continue as if no function had drawn from them.
    assert np.random.rand() == np.random.RandomState(123).rand()
    assert random.random() == random.Random(123).random()
    assert got == marks(1) and len(set(got)) > 10


def test_seed_globals_false_leaves_the_generators_alone(small_folder):
    seen = []

    def draw(img):
        seen.append(np.random.randint(1 << 30))
        return img

    tf = [T.Resize((8, 8)), T.Lambda(draw, seed_globals=False)]
    np.random.seed(5)
    loader = sluice.Loader(small_folder, tf, batch_size=5, shuffle=False, num_threads=1)
    for _ in loader:
        pass
    loader.close()
    # The first call drew the caller's generator's first number, and the calls went on from there.
    assert seen[0] == np.random.RandomState(5).randint(1 << 30)
    assert len(seen) >= 15 and len(set(seen)) == len(seen)
    with pytest.raises(TypeError, match="seed_globals must be a bool"):
        T.Lambda(draw, seed_globals=1)
