"""Batch-level MixUp and CutMix (torchvision.transforms.v2's semantics) and RandomChoice of batch
transforms, on the CPU with real files.

Each mixed batch is checked against a NumPy oracle: the same loader without the batch
transforms gives the unmixed batch (per-sample draws do not depend on what follows them), the
transform's draw(seed, epoch, batch index, position, H, W) gives the parameters, and the oracle
mixes images and one-hot labels with them. Also: the CutMix box on hand-computed values,
reproducibility (and independence from the global RNGs), RandomChoice's weights, short, padded,
single and empty batches, errors that name the transform and argument, resume. The GPU test
(the loader's CUDA stream, parity with the CPU) is in test_gpu.py.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

import sluice
import sluice.transforms as T

torch = pytest.importorskip("torch")

SEED = 5
SIZE = 32
TF = [T.Resize((SIZE, SIZE)), T.RandomHorizontalFlip(), T.ColorJitter(brightness=0.4), T.ToTensor(),
      T.Normalize([0.5] * 3, [0.5] * 3)]
POS = len(TF)  # position of the first batch transform in the list
C = 3  # small_folder's classes


def arr(t) -> np.ndarray:
    return t.numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def one_hot(labels, num_classes: int = C) -> np.ndarray:
    return np.eye(num_classes, dtype=np.float32)[arr(labels)]


def mixup_oracle(x: np.ndarray, lam: float) -> np.ndarray:
    """The documented arithmetic: x.roll(1, 0) * (1 - lam) + x * lam in float32, factors rounded
    to float32, the result in x's dtype."""
    w = x.astype(np.float32)
    return (np.roll(w, 1, axis=0) * np.float32(1 - lam) + w * np.float32(lam)).astype(x.dtype)


def mixup_reference(x: np.ndarray, lam: float) -> np.ndarray:
    """torchvision's formula in float64."""
    w = x.astype(np.float64)
    return lam * w + (1 - lam) * np.roll(w, 1, axis=0)


def cutmix_oracle(x: np.ndarray, box, layout: str = "NCHW") -> np.ndarray:
    x1, y1, x2, y2 = box
    out, rolled = x.copy(), np.roll(x, 1, axis=0)
    if layout == "NCHW":
        out[..., y1:y2, x1:x2] = rolled[..., y1:y2, x1:x2]
    else:
        out[:, y1:y2, x1:x2, :] = rolled[:, y1:y2, x1:x2, :]
    return out


def assert_mixup(x, y, px, py, lam, dtype="float32"):
    """x, y: the loader's mixed batch; px, py: the plain batch."""
    x, y, px = arr(x), arr(y), arr(px)
    assert y.dtype == np.float32 and y.shape == (len(px), C)
    np.testing.assert_array_equal(y, mixup_oracle(one_hot(py), lam))
    np.testing.assert_allclose(y, mixup_reference(one_hot(py), lam), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(x, mixup_oracle(px, lam))
    if dtype == "float32":
        np.testing.assert_allclose(x, mixup_reference(px, lam), rtol=0, atol=1e-6)
    else:  # rounded once to half precision (2**-11 relative), after float32 arithmetic
        np.testing.assert_allclose(x.astype(np.float64), mixup_reference(px, lam), rtol=2**-10, atol=2**-24)


def assert_cutmix(x, y, px, py, params, layout="NCHW"):
    x, y, px = arr(x), arr(y), arr(px)
    lam = params["lam_adjusted"]
    np.testing.assert_array_equal(x, cutmix_oracle(px, params["box"], layout))
    np.testing.assert_array_equal(y, mixup_oracle(one_hot(py), lam))
    np.testing.assert_allclose(y, mixup_reference(one_hot(py), lam), rtol=0, atol=1e-6)


def pairs(mixed, plain, epoch: int = 0):
    mixed.set_epoch(epoch)
    plain.set_epoch(epoch)
    return list(zip(mixed, plain, strict=True))


# --- Against the NumPy oracle -----------------------------------------------------------------

@pytest.mark.parametrize("output,dtype,layout", [
    ("torch", "float32", "NCHW"), ("numpy", "float32", "NCHW"), ("torch", "float16", "NCHW"),
    ("numpy", "float16", "NHWC"), ("torch", "float32", "NHWC"),
])
def test_mixup_matches_the_numpy_oracle(small_folder, output, dtype, layout):
    mixup = T.MixUp(alpha=0.4, num_classes=C)
    kw = dict(batch_size=4, shuffle=True, seed=SEED, output=output, dtype=dtype, layout=layout)
    mixed, plain = sluice.Loader(small_folder, TF + [mixup], **kw), sluice.Loader(small_folder, TF, **kw)
    for epoch in (0, 2):
        batches = pairs(mixed, plain, epoch)
        assert [len(arr(b[1][1])) for b in batches] == [4, 4, 4, 3]
        for k, ((x, y), (px, py)) in enumerate(batches):
            kind = torch.Tensor if output == "torch" else np.ndarray
            assert isinstance(x, kind) and isinstance(y, kind)
            assert str(x.dtype).replace("torch.", "") == dtype and x.shape == px.shape
            lam = mixup.draw(SEED, epoch, k, POS, SIZE, SIZE)["lam"]
            assert 0 < lam < 1
            assert_mixup(x, y, px, py, lam, dtype)


@pytest.mark.parametrize("output,dtype,layout", [
    ("torch", "float32", "NCHW"), ("numpy", "float16", "NCHW"), ("torch", "float16", "NHWC"),
    ("numpy", "float32", "NHWC"),
])
def test_cutmix_matches_the_numpy_oracle(small_folder, output, dtype, layout):
    cutmix = T.CutMix(num_classes=C)
    kw = dict(batch_size=4, shuffle=True, seed=SEED, output=output, dtype=dtype, layout=layout)
    mixed, plain = sluice.Loader(small_folder, TF + [cutmix], **kw), sluice.Loader(small_folder, TF, **kw)
    cut = 0
    for epoch in (0, 1, 2):
        for k, ((x, y), (px, py)) in enumerate(pairs(mixed, plain, epoch)):
            params = cutmix.draw(SEED, epoch, k, POS, SIZE, SIZE)
            assert (params["box"], params["lam_adjusted"]) == T.CutMix.cut_box(
                params["lam"], *params["center"], SIZE, SIZE)
            assert_cutmix(x, y, px, py, params, layout)
            x1, y1, x2, y2 = params["box"]
            cut += max(x2 - x1, 0) * max(y2 - y1, 0)
    assert cut > 0  # boxes were pasted


def test_cutmix_box_on_hand_computed_values():
    # lam = 0.75: r = 0.5 * sqrt(0.25) = 0.25, half-sides int(0.25 * 64) = 16; centre (10, 60):
    # x from max(10 - 16, 0) = 0 to min(10 + 16, 64) = 26, y from 44 to min(76, 64) = 64.
    assert T.CutMix.cut_box(0.75, 10, 60, 64, 64) == ((0, 44, 26, 64), 1 - 26 * 20 / 4096)
    assert 1 - 26 * 20 / 4096 == 0.873046875
    # lam = 0.5 on 32 x 48 (H x W): r = 0.3536, half-sides int(16.97) = 16 and int(11.31) = 11.
    assert T.CutMix.cut_box(0.5, 24, 16, 32, 48) == ((8, 5, 40, 27), 1 - 32 * 22 / (32 * 48))
    assert T.CutMix.cut_box(1.0, 5, 5, 64, 64) == ((5, 5, 5, 5), 1.0)  # nothing cut
    assert T.CutMix.cut_box(0.0, 32, 32, 64, 64) == ((0, 0, 64, 64), 0.0)  # everything cut


def test_batch_transforms_mix_with_batch_lambdas_in_list_order(small_folder):
    def double(x):
        return x * 2

    def plus_one(x):
        return x + 1

    mixup, cutmix = T.MixUp(alpha=2.0, num_classes=C), T.CutMix(alpha=0.5, num_classes=C)
    tf = TF + [T.BatchLambda(double), mixup, T.BatchLambda(plus_one), cutmix]
    kw = dict(batch_size=5, shuffle=True, seed=SEED)
    mixed, plain = sluice.Loader(small_folder, tf, **kw), sluice.Loader(small_folder, TF, **kw)
    assert mixed.transforms == tf
    for k, ((x, y), (px, py)) in enumerate(pairs(mixed, plain, 1)):
        lam = mixup.draw(SEED, 1, k, POS + 1, SIZE, SIZE)["lam"]
        params = cutmix.draw(SEED, 1, k, POS + 3, SIZE, SIZE)
        want = cutmix_oracle(mixup_oracle(px.numpy() * 2, lam) + 1, params["box"])
        np.testing.assert_array_equal(x.numpy(), want)
        labels = mixup_oracle(mixup_oracle(one_hot(py), lam), params["lam_adjusted"])
        np.testing.assert_array_equal(y.numpy(), labels)
        np.testing.assert_allclose(y.numpy().sum(1), 1, atol=1e-6)


def test_cutmix_does_not_change_a_tensor_a_batch_lambda_keeps(small_folder):
    kept = []

    def keep(x):
        kept.append(x.clone())
        return kept[-1]

    cutmix = T.CutMix(num_classes=C)
    kw = dict(batch_size=4, seed=SEED)
    mixed = sluice.Loader(small_folder, TF + [T.BatchLambda(keep), cutmix], **kw)
    plain = sluice.Loader(small_folder, TF, **kw)
    for k, ((x, y), (px, py)) in enumerate(pairs(mixed, plain)):
        assert torch.equal(kept[k], px)  # the function's tensor is as it returned it
        assert_cutmix(x, y, px, py, cutmix.draw(SEED, 0, k, POS + 1, SIZE, SIZE))


# --- Reproducibility ----------------------------------------------------------------------------

def test_draws_are_reproducible_and_keyed_by_seed_epoch_batch_and_position():
    mixup, cutmix = T.MixUp(num_classes=10), T.CutMix(num_classes=10)
    for t in (mixup, cutmix):
        base = t.draw(1, 2, 3, 4, 64, 48)
        assert t.draw(1, 2, 3, 4, 64, 48) == base
        for other in [(0, 2, 3, 4), (1, 3, 3, 4), (1, 2, 4, 4), (1, 2, 3, 5)]:
            assert t.draw(*other, 64, 48)["lam"] != base["lam"], other
        assert t.draw(1, 2, 3, 4, 64, 48, rank=1)["lam"] != base["lam"]
        assert t.draw(1, 2, 3, 4, 64, 48, schedule=7)["lam"] != base["lam"]
    # Same key, same lam for MixUp and CutMix of the same alpha (the first number drawn).
    assert mixup.draw(1, 2, 3, 4, 8, 8)["lam"] == cutmix.draw(1, 2, 3, 4, 8, 8)["lam"]
    # Beta(alpha, alpha): mean 1/2; alpha = 0.2 puts most draws near 0 or 1.
    lams = [T.MixUp(alpha=0.2, num_classes=2).draw(0, 0, k, 0, 8, 8)["lam"] for k in range(2000)]
    assert abs(np.mean(lams) - 0.5) < 0.05
    assert np.mean([min(v, 1 - v) < 0.1 for v in lams]) > 0.5
    with pytest.raises(ValueError, match=r"MixUp.draw: epoch must be an int >= 0, got -1"):
        mixup.draw(0, -1, 0, 0, 8, 8)


def test_loaders_repeat_their_mixing_whatever_the_global_rngs(small_folder):
    choice = T.RandomChoice([T.CutMix(num_classes=C), T.MixUp(num_classes=C)])
    kw = dict(batch_size=4, shuffle=True, seed=SEED)

    def run(epoch, global_seed):
        random.seed(global_seed)
        np.random.seed(global_seed)
        torch.manual_seed(global_seed)
        loader = sluice.Loader(small_folder, TF + [choice], **kw)
        loader.set_epoch(epoch)
        return [(x.clone(), y.clone()) for x, y in loader]

    a, b, c = run(0, 1), run(0, 2), run(1, 1)
    for (x, y), (bx, by) in zip(a, b, strict=True):
        assert torch.equal(x, bx) and torch.equal(y, by)
    draws = [choice.draw(SEED, e, k, POS, SIZE, SIZE) for e in (0, 1) for k in range(4)]
    assert draws[:4] != draws[4:]  # another epoch, other draws
    assert any(not torch.equal(y, cy) for (_, y), (_, cy) in zip(a, c))


# --- RandomChoice -----------------------------------------------------------------------------

def test_random_choice_respects_p_and_matches_the_oracle(small_folder):
    cutmix, mixup = T.CutMix(num_classes=C), T.MixUp(alpha=0.3, num_classes=C)
    choice = T.RandomChoice([cutmix, mixup], p=[1, 3])
    assert choice.p == [0.25, 0.75]  # normalized, as torchvision
    picks = [choice.draw(0, 0, k, 0, 64, 64)["index"] for k in range(4000)]
    assert abs(np.mean(picks) - 0.75) < 0.03
    d = choice.draw(3, 1, 2, 5, 64, 64)
    assert d["transform"] is choice.transforms[d["index"]] and set(d) == {"index", "transform", "params"}

    kw = dict(batch_size=4, shuffle=True, seed=SEED)
    choice = T.RandomChoice([cutmix, mixup])
    mixed, plain = sluice.Loader(small_folder, TF + [choice], **kw), sluice.Loader(small_folder, TF, **kw)
    seen = set()
    for epoch in range(3):
        for k, ((x, y), (px, py)) in enumerate(pairs(mixed, plain, epoch)):
            d = choice.draw(SEED, epoch, k, POS, SIZE, SIZE)
            seen.add(type(d["transform"]).__name__)
            if d["transform"] is cutmix:
                assert_cutmix(x, y, px, py, d["params"])
            else:
                assert_mixup(x, y, px, py, d["params"]["lam"])
    assert seen == {"CutMix", "MixUp"}


def test_random_choice_of_a_batch_lambda_still_gives_one_hot_labels(small_folder):
    def negate(x):
        return -x

    choice = T.RandomChoice([T.BatchLambda(negate), T.MixUp(num_classes=C)], p=[1, 0])
    kw = dict(batch_size=4, seed=SEED)
    mixed, plain = sluice.Loader(small_folder, TF + [choice], **kw), sluice.Loader(small_folder, TF, **kw)
    for (x, y), (px, py) in pairs(mixed, plain):
        assert torch.equal(x, -px)
        np.testing.assert_array_equal(y.numpy(), one_hot(py))  # one-hot, unmixed


# --- Short, padded, single and empty batches -------------------------------------------------

@pytest.mark.parametrize("batch_size,last_batch", [(4, "pad"), (1, "partial"), (4, "drop")])
def test_padded_and_single_batches_mix_what_they_hold(small_folder, batch_size, last_batch):
    choice = T.RandomChoice([T.CutMix(num_classes=C), T.MixUp(num_classes=C)])
    kw = dict(batch_size=batch_size, shuffle=True, seed=SEED, last_batch=last_batch)
    mixed, plain = sluice.Loader(small_folder, TF + [choice], **kw), sluice.Loader(small_folder, TF, **kw)
    batches = pairs(mixed, plain)
    assert len(batches) == {"pad": 4, "partial": 15, "drop": 3}[last_batch]
    for k, (got, want) in enumerate(batches):
        x, y, px, py = got[0], got[1], want[0], want[1]
        if last_batch == "pad":
            assert torch.equal(got[2], want[2])  # the valid mask is unchanged
        d = choice.draw(SEED, 0, k, POS, SIZE, SIZE)
        if isinstance(d["transform"], T.CutMix):
            assert_cutmix(x, y, px, py, d["params"])
            if batch_size == 1:  # roll(1, 0) of one image is itself
                assert torch.equal(x, px)
        else:
            assert_mixup(x, y, px, py, d["params"]["lam"])
        if batch_size == 1:
            np.testing.assert_allclose(y.numpy(), one_hot(py), atol=1e-6)
    if last_batch == "pad":
        assert not batches[-1][1][2].all()  # the last batch had repeats, mixed like the rest


def test_an_empty_batch_gets_empty_one_hot_labels(tmp_path):
    from conftest import photo  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "0.jpg").write_bytes(b"not an image")
    Image.fromarray(photo(64, 48)).save(tmp_path / "a" / "1.jpg", quality=90)
    for output in ("torch", "numpy"):
        loader = sluice.Loader(str(tmp_path), [T.Resize((16, 16)), T.MixUp(num_classes=4)], batch_size=1,
                               on_error="skip", output=output)
        got = [(tuple(x.shape), tuple(y.shape), str(y.dtype).replace("torch.", "")) for x, y in loader]
        assert got == [((0, 3, 16, 16), (0, 4), "float32"), ((1, 3, 16, 16), (1, 4), "float32")]


def test_cutmix_accepts_uint8_images(small_folder):
    cutmix = T.CutMix(num_classes=C)
    kw = dict(batch_size=4, dtype="uint8", seed=SEED)
    tf = [T.Resize((SIZE, SIZE))]
    mixed, plain = sluice.Loader(small_folder, tf + [cutmix], **kw), sluice.Loader(small_folder, tf, **kw)
    for k, ((x, y), (px, py)) in enumerate(pairs(mixed, plain)):
        assert x.dtype == torch.uint8 and y.dtype == torch.float32
        assert_cutmix(x, y, px, py, cutmix.draw(SEED, 0, k, 1, SIZE, SIZE))


# --- Resume ------------------------------------------------------------------------------------

def collect(iterator, take=None):
    out = []
    for x, y in iterator:
        out.append((x.clone(), y.clone()))
        if take is not None and len(out) == take:
            break
    return out


def assert_same_batches(got, want):
    assert len(got) == len(want)
    for k, ((x, y), (wx, wy)) in enumerate(zip(got, want)):
        assert torch.equal(x, wx) and torch.equal(y, wy), f"batch {k}"


def test_resume_gives_the_same_mixed_batches(small_folder):
    choice = T.RandomChoice([T.CutMix(num_classes=C), T.MixUp(num_classes=C)])
    kw = dict(batch_size=2, shuffle=True, seed=SEED)

    def make(batch_size=2):
        return sluice.Loader(small_folder, TF + [choice], **{**kw, "batch_size": batch_size})

    whole = make()
    whole.set_epoch(1)
    want = collect(whole)  # 8 batches
    for k in (1, 3, 7):
        first = make()
        first.set_epoch(1)
        assert_same_batches(collect(first, take=k), want[:k])
        resumed = make()
        resumed.load_state_dict(first.state_dict())
        assert_same_batches(collect(resumed), want[k:])

    # An elastic resume (another batch size) numbers its batches from 0 again; resuming it
    # with its own settings continues it exactly.
    a = make(4)
    a.set_epoch(1)
    collect(a, take=1)
    b = make(3)
    b.load_state_dict(a.state_dict())
    rest = collect(b)
    b2 = make(3)
    b2.load_state_dict(a.state_dict())
    assert_same_batches(collect(b2, take=2), rest[:2])
    c = make(3)
    c.load_state_dict(b2.state_dict())
    assert_same_batches(collect(c), rest[2:])


# --- Errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make,error,words", [
    (lambda: T.MixUp(alpha=0, num_classes=3), ValueError, r"MixUp: alpha must be > 0, got 0"),
    (lambda: T.CutMix(alpha=-1.5, num_classes=3), ValueError, r"CutMix: alpha must be > 0, got -1.5"),
    (lambda: T.MixUp(alpha=math.nan, num_classes=3), ValueError, r"MixUp: alpha must be > 0, got nan"),
    (lambda: T.MixUp(alpha=math.inf, num_classes=3), ValueError, r"MixUp: alpha must be finite, got inf"),
    (lambda: T.MixUp(alpha="1", num_classes=3), TypeError, r"MixUp: alpha must be a number, got '1'"),
    (lambda: T.MixUp(), ValueError, r"MixUp: num_classes is required"),
    (lambda: T.CutMix(alpha=1.0), ValueError, r"CutMix: num_classes is required"),
    (lambda: T.MixUp(num_classes=0), ValueError, r"MixUp: num_classes must be a positive int, got 0"),
    (lambda: T.CutMix(num_classes=2.0), TypeError, r"CutMix: num_classes must be a positive int, got 2.0"),
    (lambda: T.MixUp(num_classes=3, labels_getter=lambda s: s), ValueError, r"MixUp: labels_getter must be"),
    (lambda: T.MixUp(1.0, 3), TypeError, r"positional"),  # keyword-only, as torchvision
    (lambda: T.RandomChoice([]), TypeError, r"RandomChoice: transforms must be a non-empty sequence"),
    (lambda: T.RandomChoice(T.MixUp(num_classes=3)), TypeError, r"RandomChoice: transforms must be a non-empty sequence"),
    (lambda: T.RandomChoice([T.MixUp(num_classes=3), T.RandomHorizontalFlip()]), TypeError,
     r"RandomChoice: item 0 is MixUp\(.*\), a batch transform, among per-sample transforms"),
    (lambda: T.RandomChoice([T.MixUp(num_classes=3)], p=[0.5, 0.5]), ValueError,
     r"RandomChoice: p must hold one weight per transform \(1\), got \[0.5, 0.5\]"),
    (lambda: T.RandomChoice([T.MixUp(num_classes=3), T.CutMix(num_classes=3)], p=[1, -1]), ValueError,
     r"RandomChoice: p must hold finite weights >= 0 with a positive sum"),
    (lambda: T.RandomChoice([T.MixUp(num_classes=3), T.CutMix(num_classes=3)], p=[0, 0]), ValueError,
     r"RandomChoice: p must hold finite weights >= 0 with a positive sum"),
    (lambda: T.RandomChoice([T.MixUp(num_classes=3), T.CutMix(num_classes=4)]), ValueError,
     r"CutMix: num_classes=4 differs from MixUp's num_classes=3"),
])
def test_bad_arguments_name_the_transform_and_argument(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_loader_errors_name_the_transform(small_folder):
    tf = [T.Resize((SIZE, SIZE))]
    with pytest.raises(ValueError, match=r"MixUp needs float images \(dtype float32 or float16\)"):
        sluice.Loader(small_folder, tf + [T.MixUp(num_classes=3)], dtype="uint8")
    with pytest.raises(ValueError, match=r"MixUp needs float images"):
        sluice.Loader(small_folder, tf + [T.RandomChoice([T.CutMix(num_classes=3), T.MixUp(num_classes=3)])],
                      dtype=torch.uint8)
    # small_folder's labels are 0, 1, 2: num_classes=2 leaves label 2 out, named with its file.
    with pytest.raises(ValueError, match=r"MixUp: label 2 of '.*\.jpg' is outside \[0, num_classes\) with "
                                         r"num_classes=2"):
        sluice.Loader(small_folder, tf + [T.MixUp(num_classes=2)])
    files = sluice.Loader(small_folder, [T.CenterCrop(8)]).samples
    with pytest.raises(ValueError, match=r"CutMix: label -1 of .* num_classes=3"):
        sluice.Loader([(files[0][0], 0), (files[1][0], -1)], tf + [T.CutMix(num_classes=3)])
    with pytest.raises(ValueError, match=r"CutMix: num_classes=5 differs from MixUp's num_classes=3"):
        sluice.Loader(small_folder, tf + [T.MixUp(num_classes=3), T.CutMix(num_classes=5)])
    with pytest.raises(ValueError, match=r"Normalize after MixUp is not supported: MixUp runs on whole "
                                         r"finished batches, so it must come after every other transform"):
        sluice.Loader(small_folder, tf + [T.MixUp(num_classes=3), T.Normalize(0.5, 0.5)])
    with pytest.raises(ValueError, match=r"RandomCrop after RandomChoice is not supported"):
        sluice.Loader(small_folder, tf + [T.RandomChoice([T.MixUp(num_classes=3)]), T.RandomCrop(8)])
    with pytest.raises(ValueError, match=r"CutMix needs images of one size"):
        sluice.Loader(small_folder, [T.Resize(40), T.CutMix(num_classes=3)])

    # The split the loader uses: batch transforms of every kind, in any order, come last.
    fns = [T.MixUp(num_classes=3), T.BatchLambda(abs), T.RandomChoice([T.CutMix(num_classes=3)])]
    assert T.split_batch_functions(tf + fns) == (tf, fns)
    assert len(T.compile_specs(tf + fns, True, [])) == 1
    assert {"BatchTransform", "MixUp", "CutMix", "RandomChoice"} <= set(T.__all__)
