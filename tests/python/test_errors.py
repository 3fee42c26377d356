"""Bad input: clear errors that name the file or the argument, before any work where possible;
bad files raise at their batch (on_error="raise") or are skipped and reported ("skip")."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes

PIPE = [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.Normalize([0.5] * 3, [0.5] * 3)]


def good_jpeg(seed=0, w=120, h=90):
    return pil_bytes(Image.fromarray(photo(w, h, seed)), "JPEG", quality=90)


def sos_end(data: bytes) -> int:
    i = data.index(b"\xff\xda")
    return i + 2 + int.from_bytes(data[i + 2:i + 4], "big")


def make_bad_files() -> dict[str, bytes]:
    base = good_jpeg(1)
    rng = np.random.default_rng(0)
    start = sos_end(base) + 50
    corrupt = bytearray(base)
    corrupt[start:start + 300] = rng.integers(0, 256, 300, dtype=np.uint8).tobytes()
    huge = bytearray(base)
    sof = huge.index(b"\xff\xc0")
    huge[sof + 5:sof + 9] = (60000).to_bytes(2, "big") * 2  # height, width
    tiff = pil_bytes(Image.fromarray(photo(20, 20)), "TIFF")
    return {
        "corrupt.jpg": bytes(corrupt),
        "truncated.jpg": base[: len(base) * 6 // 10],
        "empty.jpg": b"",
        "notimage.jpg": b"<html><body>404 not found</body></html>",
        "huge.jpg": bytes(huge),
        "scan.tif": tiff,
        "bad.webp": b"RIFF\x10\x00\x00\x00WEBPVP8 garbage-garbage",
        "bad.png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 40,
    }


REASONS = {
    "corrupt.jpg": "corrupt JPEG data",
    "truncated.jpg": "truncated",
    "empty.jpg": "empty file",
    "notimage.jpg": "not a recognized image format",
    "huge.jpg": "too large",
    "scan.tif": "TIFF images are not supported",
    "bad.webp": "WebP",
    "bad.png": "PNG",
}


@pytest.fixture()
def bad_folder(tmp_path):
    root = tmp_path / "bad"
    (root / "good").mkdir(parents=True)
    (root / "mixed").mkdir()
    for i in range(6):
        (root / "good" / f"g{i}.jpg").write_bytes(good_jpeg(i))
    for name, data in make_bad_files().items():
        (root / "mixed" / name).write_bytes(data)
    (root / "mixed" / "notes.txt").write_text("ignored: not an image extension")
    (root / "mixed" / "fine.jpeg").write_bytes(good_jpeg(9))
    return str(root)


def test_raise_names_each_bad_file_and_goes_on(bad_folder):
    loader = sluice.Loader(bad_folder, PIPE, batch_size=1, num_threads=2)
    good, errors = 0, {}
    it = iter(loader)
    for _ in range(len(loader)):
        try:
            x, _ = next(it)
            good += x.shape[0]
        except sluice.DecodeError as e:  # every bad file, unsupported formats included
            name = os.path.basename(str(e).split(":")[0])
            errors[name] = str(e)
    with pytest.raises(StopIteration):
        next(it)
    assert good == 7
    assert set(errors) == set(REASONS)
    for name, msg in errors.items():
        assert msg.startswith(os.path.join(bad_folder, "mixed", name) + ": "), msg
        assert REASONS[name] in msg, msg


def test_raise_is_a_value_error_subclass(bad_folder):
    loader = sluice.Loader(bad_folder, PIPE, batch_size=16)
    with pytest.raises(ValueError, match="bad.png: corrupt PNG"):  # first bad file in order
        for _ in loader:
            pass


def test_skip_reports_every_bad_file(bad_folder):
    loader = sluice.Loader(bad_folder, PIPE, batch_size=4, on_error="skip", shuffle=True)
    for epoch in range(2):
        n = sum(x.shape[0] for x, _ in loader)
        assert n == 7
    st = loader.stats()
    assert st["skipped_count"] == 16
    first = [s for s in st["skipped"] if s["epoch"] == 0]
    assert {os.path.basename(s["path"]) for s in first} == set(REASONS)
    for s in first:
        assert REASONS[os.path.basename(s["path"])] in s["reason"]
        assert not s["reason"].startswith("/")  # the path is not repeated in the reason


def test_skip_all_bad_batch_comes_out_empty(tmp_path):
    # A batch whose files are all bad still comes, with 0 samples: every rank of a DDP job
    # yields len(loader) batches, so none waits for another at the end of the epoch.
    root = tmp_path / "d"
    (root / "a").mkdir(parents=True)
    (root / "a" / "0.jpg").write_bytes(b"")
    (root / "a" / "1.jpg").write_bytes(b"")
    (root / "a" / "2.jpg").write_bytes(good_jpeg())
    (root / "a" / "3.jpg").write_bytes(good_jpeg(1))
    loader = sluice.Loader(str(root), PIPE, batch_size=2, on_error="skip", output="numpy")
    got = [(x.shape, y.shape, y.dtype) for x, y in loader]
    assert got == [((0, 3, 32, 32), (0,), np.int64), ((2, 3, 32, 32), (2,), np.int64)]
    # Two ranks, batch 1: rank 0 gets files 0 and 2, rank 1 files 1 and 3.
    for rank in range(2):
        shard = sluice.Loader(str(root), PIPE, batch_size=1, on_error="skip", output="numpy", rank=rank,
                              world_size=2)
        assert [x.shape[0] for x, _ in shard] == [0, 1] and len(shard) == 2
    # Outputs of varying size come as a list: an empty one.
    varying = sluice.Loader(str(root), [T.Resize(16)], batch_size=2, on_error="skip", output="numpy")
    assert [len(x) for x, _ in varying] == [0, 2]
    assert varying.stats()["skipped_count"] == 2


def test_image_smaller_than_random_crop_is_a_per_file_error(tmp_path):
    root = tmp_path / "d"
    (root / "a").mkdir(parents=True)
    (root / "a" / "small.jpg").write_bytes(good_jpeg(w=20, h=16))
    with pytest.raises(ValueError, match="small.jpg: RandomCrop: crop size 32x32"):
        next(iter(sluice.Loader(str(root), [T.RandomCrop(32)], batch_size=1)))
    padded = sluice.Loader(str(root), [T.RandomCrop(32, pad_if_needed=True)], batch_size=1)
    assert next(iter(padded))[0].shape == (1, 3, 32, 32)


def test_file_deleted_after_listing(tmp_path):
    root = tmp_path / "d"
    (root / "a").mkdir(parents=True)
    for i in range(3):
        (root / "a" / f"{i}.jpg").write_bytes(good_jpeg(i))
    loader = sluice.Loader(str(root), PIPE, batch_size=1)
    os.remove(root / "a" / "1.jpg")
    with pytest.raises(FileNotFoundError, match="1.jpg: no such file"):
        for _ in loader:
            pass


# Dataset-level errors, before any work starts.

def test_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}/nope: no such directory"):
        sluice.Loader(str(tmp_path / "nope"), PIPE)


def test_not_a_directory(tmp_path):
    f = tmp_path / "file.jpg"
    f.write_bytes(good_jpeg())
    with pytest.raises(ValueError, match="not a directory"):
        sluice.Loader(str(f), PIPE)


def test_no_class_folder(tmp_path):
    (tmp_path / "x.jpg").write_bytes(good_jpeg())
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        sluice.Loader(str(tmp_path), PIPE)


def test_class_without_images(tmp_path):
    (tmp_path / "cats").mkdir()
    (tmp_path / "dogs").mkdir()
    (tmp_path / "cats" / "a.jpg").write_bytes(good_jpeg())
    (tmp_path / "dogs" / "notes.txt").write_text("x")
    with pytest.raises(FileNotFoundError, match="no valid file for the classes dogs"):
        sluice.Loader(str(tmp_path), PIPE)


def test_empty_list():
    with pytest.raises(ValueError, match="sample list is empty"):
        sluice.Loader([], PIPE)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(batch_size=0), ValueError, "batch_size must be >= 1"),
    (dict(batch_size="8"), TypeError, "batch_size must be an int"),
    (dict(num_threads=0), ValueError, "num_threads must be >= 1"),
    (dict(prefetch=0), ValueError, "prefetch must be >= 1"),
    (dict(dtype="int7"), ValueError, "dtype must be one of"),
    (dict(layout="CHW"), ValueError, "layout must be one of"),
    (dict(on_error="ignore"), ValueError, "on_error must be one of"),
    (dict(last_batch="keep"), ValueError, "last_batch must be one of"),
    (dict(device="tpu"), ValueError, "device must be 'cpu', 'cuda' or 'cuda:N'"),
    (dict(device="cuda:99"), RuntimeError, "cuda:99"),  # no machine has GPU 99, or no GPU at all
    (dict(decode_route="engines"), ValueError, "decode_route must be one of"),
    (dict(decode_route="hardware"), ValueError, "decode_route='hardware' needs device='cuda'"),
    (dict(gpu_memory_budget=0), ValueError, "gpu_memory_budget must be >= 1"),
    (dict(seed=-1), ValueError, "seed must be an int"),
    (dict(output="tensorflow"), ValueError, "output must be"),
])
def test_bad_loader_arguments(small_folder, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sluice.Loader(small_folder, PIPE, **kwargs)


def test_drop_with_too_few_samples(small_folder):
    with pytest.raises(ValueError, match=r"last_batch='drop': \d+ samples over 1 rank\(s\) with batch_size 64 "
                                         r"leaves no full batch for every rank \(nothing to yield\)"):
        sluice.Loader(small_folder, PIPE, batch_size=64, last_batch="drop")


def test_normalize_needs_float(small_folder):
    with pytest.raises(ValueError, match="Normalize needs a float output"):
        sluice.Loader(small_folder, PIPE, dtype="uint8")


@pytest.mark.parametrize("make,exc,match", [
    (lambda: T.RandomResizedCrop(-1), ValueError, "RandomResizedCrop: size must be positive"),
    (lambda: T.RandomResizedCrop("224"), TypeError, "RandomResizedCrop: size must be an int"),
    (lambda: T.RandomResizedCrop(224, scale=(0.9, 0.1)), ValueError, "RandomResizedCrop: scale"),
    (lambda: T.RandomResizedCrop(224, ratio=(0, 1)), ValueError, "RandomResizedCrop: ratio"),
    (lambda: T.RandomResizedCrop(224, interpolation="lanczos"), ValueError, "interpolation"),
    (lambda: T.Resize(0), ValueError, "Resize: size must be positive"),
    (lambda: T.Resize(256, max_size=200), ValueError, "max_size = 200 must be strictly greater"),
    (lambda: T.Resize((10, 20), max_size=300), ValueError, "only allowed when size is a single int"),
    (lambda: T.CenterCrop((10, 20, 30)), TypeError, "CenterCrop: size"),
    (lambda: T.RandomCrop(10, padding=-1), ValueError, "RandomCrop: padding must be non-negative"),
    (lambda: T.RandomCrop(10, padding_mode="wrap"), ValueError, "RandomCrop: padding_mode must be"),
    (lambda: T.RandomCrop(10, fill=300), ValueError, "RandomCrop: fill"),
    (lambda: T.RandomHorizontalFlip(1.5), ValueError, r"RandomHorizontalFlip: p must be in \[0, 1\]"),
    (lambda: T.Normalize([0.5] * 3, [0.5, 0.0, 0.5]), ValueError, "Normalize: std evaluated to zero"),
    (lambda: T.Normalize([0.5] * 2, [0.5] * 3), TypeError, "Normalize: mean"),
])
def test_bad_transform_arguments(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_a_bare_function_is_a_lambda_and_other_objects_are_refused(small_folder):
    def invert(x):
        return 255 - x

    kw = dict(batch_size=15, output="numpy", num_threads=1, dtype="uint8")
    plain, _ = next(iter(sluice.Loader(small_folder, [T.CenterCrop(8)], **kw)))
    bare, _ = next(iter(sluice.Loader(small_folder, [T.CenterCrop(8), invert], **kw)))
    np.testing.assert_array_equal(bare, 255 - plain)
    assert isinstance(sluice.Loader(small_folder, [T.CenterCrop(8), invert]).transforms[1], T.Lambda)
    with pytest.raises(TypeError, match="transform must be a sluice or torchvision transform, a function"):
        sluice.Loader(small_folder, [T.CenterCrop(8), object()])


def test_core_validates_transforms_too(small_folder):
    # The C++ side checks again (C++ users have no Python layer); errors name the position.
    spec = T.RandomHorizontalFlip()._spec()
    spec.p = 3.0
    crop = T.CenterCrop(8)._spec()
    with pytest.raises(ValueError, match="transform 1: RandomHorizontalFlip: p must be in"):
        options = sluice._core.LoaderOptions()
        options.batch_size = 4
        sluice._core.Loader.create(small_folder, [crop, spec], options)


def test_decode_error_names_reason_for_direct_decode():
    with pytest.raises(sluice.DecodeError, match="empty file"):
        sluice._core.decode(b"")
    with pytest.raises(sluice.DecodeError, match="truncated"):
        base = good_jpeg()
        sluice._core.decode(base[: len(base) // 2])
