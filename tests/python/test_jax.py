"""output="jax": batches as jax.Array through DLPack, zero-copy on the CPU, equal to output="numpy"
(the missing-JAX error runs without JAX too)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from conftest import PYTHON_DIR
from sluice import _epoch


@pytest.fixture
def jax():
    return pytest.importorskip("jax")


def _fixed():
    return [T.RandomResizedCrop(24), T.RandomHorizontalFlip()]


def _varying():
    return [T.Resize(20)]  # keeps the aspect ratio: a list batch of differing shapes


def _pair(folder, transform, **kw):
    """(NumPy batches, JAX batches) of two loaders that differ only in output."""
    kw = dict(batch_size=4, shuffle=True, seed=7, num_threads=2, **kw)
    ref = list(sluice.Loader(folder, transform(), output="numpy", **kw))
    got = list(sluice.Loader(folder, transform(), output="jax", **kw))
    return ref, got


def _assert_same(ref, got, jax):
    """A batch part as NumPy (array or list) equals its JAX counterpart, value for value."""
    if isinstance(ref, list):
        assert isinstance(got, list) and len(got) == len(ref)
        for r, g in zip(ref, got):
            _assert_same(r, g, jax)
        return
    assert isinstance(got, jax.Array), type(got)
    assert got.shape == ref.shape
    if ref.dtype == np.int64 and not jax.config.jax_enable_x64:
        assert got.dtype == np.int32  # JAX's default integer type
    else:
        assert got.dtype == ref.dtype
    np.testing.assert_array_equal(np.asarray(got), ref)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("transform", [_fixed, _varying], ids=["fixed", "list"])
def test_values_equal_numpy(jax, small_folder, dtype, layout, transform):
    ref, got = _pair(small_folder, transform, dtype=dtype, layout=layout)
    assert len(ref) == len(got) == 4
    assert any(isinstance(x, list) for x, _ in got) == (transform is _varying)
    for (x_ref, y_ref), (x, y) in zip(ref, got):
        _assert_same(x_ref, x, jax)
        _assert_same(y_ref, y, jax)
        assert y.dtype == np.int32


def test_pad_mask_and_labels_x64(jax, small_folder):
    ref, got = _pair(small_folder, _fixed, last_batch="pad")
    for r, g in zip(ref, got):
        for a, b in zip(r, g):
            _assert_same(a, b, jax)
    assert got[-1][2].dtype == np.bool_ and not bool(got[-1][2].all())
    with jax.enable_x64(True):
        _, y = next(iter(sluice.Loader(small_folder, _fixed(), batch_size=4, output="jax")))
        assert y.dtype == np.int64  # with jax_enable_x64, labels keep the loader's int64


def _record_pointers(monkeypatch):
    """Patches the epoch's conversion to note, for each sluice DLPackTensor it converts, the data
    pointer NumPy sees and the one of the JAX array made from it."""
    seen = []
    convert = _epoch.to_array

    def spy(t, output):
        out = convert(t, output)
        if output == "jax" and type(t).__name__ == "DLPackTensor":
            seen.append((np.from_dlpack(t).ctypes.data, out.unsafe_buffer_pointer(), str(out.dtype)))
        return out
    monkeypatch.setattr(_epoch, "to_array", spy)
    return seen


@pytest.mark.parametrize("transform", [_fixed, _varying], ids=["fixed", "list"])
def test_zero_copy_on_cpu(jax, small_folder, monkeypatch, transform):
    seen = _record_pointers(monkeypatch)
    loader = sluice.Loader(small_folder, transform(), batch_size=4, dtype="float32", output="jax")
    for _ in loader:
        pass
    images = [s for s in seen if s[2] == "float32"]
    labels = [s for s in seen if s[2] != "float32"]
    assert images and labels
    for numpy_ptr, jax_ptr, _ in images:
        assert numpy_ptr % 64 == 0  # the loader's buffers meet JAX's CPU alignment
        assert jax_ptr == numpy_ptr  # the jax.Array is the loader's buffer
    for numpy_ptr, jax_ptr, dtype in labels:
        assert dtype == "int32" and jax_ptr != numpy_ptr  # int64 -> int32 is a (small) copy
    seen.clear()
    with jax.enable_x64(True):
        next(iter(loader))
    assert [s[2] for s in seen][-1] == "int64" and all(s[0] == s[1] for s in seen)  # labels too


@pytest.mark.parametrize("transform", [_fixed, _varying], ids=["fixed", "list"])
def test_held_batches_survive_later_ones(jax, small_folder, transform):
    """The jax arrays keep their buffers (the DLPack deleter returns them to the loader's pool
    only when JAX frees them): batches held across more epochs keep their values. The batches are
    small, so that their buffers come from the pool's reused ones."""
    kw = dict(batch_size=2, shuffle=True, seed=3, dtype="uint8", num_threads=2)
    ref = sluice.Loader(small_folder, transform(), output="numpy", **kw)
    loader = sluice.Loader(small_folder, transform(), output="jax", **kw)
    expected = [[(np.copy(x) if not isinstance(x, list) else [np.copy(i) for i in x]), np.copy(y)]
                for _ in range(3) for x, y in ref]
    held = []
    for epoch in range(3):
        for i, batch in enumerate(loader):
            if i % 2 == 0:
                held.append((len(held), batch))  # every other batch: the rest go back to the pool
            else:
                held.append((len(held), None))
    kept = [(i, b) for i, b in held if b is not None]
    assert len(kept) >= 10
    for i, (x, y) in kept:
        _assert_same(expected[i][0], x, jax)
        _assert_same(expected[i][1], y, jax)


def test_batch_transforms_run_in_numpy(jax, small_folder):
    tf = lambda: [T.RandomResizedCrop(24), T.ToTensor(), T.RandomChoice([T.MixUp(num_classes=3),  # noqa: E731
                                                                         T.CutMix(num_classes=3)])]
    ref, got = _pair(small_folder, tf)
    for (x_ref, y_ref), (x, y) in zip(ref, got):
        _assert_same(x_ref, x, jax)
        _assert_same(y_ref, y, jax)
        assert y.dtype == np.float32 and y.shape == (x.shape[0], 3)
    seen = []
    flip = T.BatchLambda(lambda b: seen.append(type(b)) or b[..., ::-1].copy())
    x, _ = next(iter(sluice.Loader(small_folder, [T.CenterCrop(16), flip], batch_size=4, output="jax")))
    assert seen == [np.ndarray] and isinstance(x, jax.Array)
    bad = T.BatchLambda(lambda b: jax.numpy.asarray(b))
    with pytest.raises(TypeError, match="expected a numpy.ndarray"):
        next(iter(sluice.Loader(small_folder, [T.CenterCrop(16), bad], batch_size=4, output="jax")))


def test_cuda_refuses_batch_transforms(jax, small_folder):
    with pytest.raises(ValueError, match="batch transforms .* in NumPy on the CPU"):
        sluice.Loader(small_folder, [T.CenterCrop(16), T.ToTensor(), T.MixUp(num_classes=3)],
                      device="cuda", output="jax")


SCRIPT = r"""
import sys
sys.modules["jax"] = None  # import jax now raises ImportError
import numpy as np, sluice, sluice.transforms as T
x, y = next(iter(sluice.Loader(sys.argv[1], [T.CenterCrop(8)], batch_size=2, output="numpy")))
assert isinstance(x, np.ndarray)
try:
    sluice.Loader(sys.argv[1], [T.CenterCrop(8)], output="jax")
except ImportError as e:
    assert "needs JAX" in str(e) and "jax[cpu]" in str(e), e
else:
    raise AssertionError("output='jax' without jax must fail")
print("ok")
"""


def test_jax_missing_is_an_import_error(small_folder):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    r = subprocess.run([sys.executable, "-c", SCRIPT, small_folder], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_unknown_output_names_jax(small_folder):
    with pytest.raises(ValueError, match="'jax'"):
        sluice.Loader(small_folder, [T.CenterCrop(8)], output="tensorflow")
