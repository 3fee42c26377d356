"""``sluice preview``: the grid's size, its original column, its random draws (one epoch each,
reproducible), Normalize undone, --transform errors and @FILE.py:NAME, and the PNG writer."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from sluice import preview

from conftest import PYTHON_DIR, Image

ENV = dict(os.environ, PYTHONPATH=PYTHON_DIR)


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "sluice", "preview", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=300)


def cells(grid: np.ndarray, rows: int, cols: int, h: int, w: int, pad: int) -> list[list[np.ndarray]]:
    return [[grid[r * (h + pad):r * (h + pad) + h, c * (w + pad):c * (w + pad) + w] for c in range(cols)]
            for r in range(rows)]


def as_uint8_hwc(batch) -> np.ndarray:
    return np.rint(np.clip(np.asarray(batch), 0, 1) * 255).astype(np.uint8).transpose(0, 2, 3, 1)


def test_cli_writes_a_png_of_the_exact_size(small_folder, tmp_path):
    out = tmp_path / "grid.png"
    r = run(small_folder, "-o", str(out), "--images", "3", "--draws", "4", "--size", "40", "--cell-pad", "3",
            "--no-captions")
    assert r.returncode == 0, r.stderr
    w, h = 5 * 40 + 4 * 3, 3 * 40 + 2 * 3  # 3 rows; original + 4 draws; 3 px between cells
    with Image.open(out) as im:
        assert im.format == "PNG" and im.mode == "RGB" and im.size == (w, h)
        grid = np.asarray(im)
    assert (grid[40:43, :] == preview.PAD_COLOR).all() and (grid[:, 40:43] == preview.PAD_COLOR).all()
    line = r.stdout.strip()
    assert "\n" not in line and line.startswith(f"wrote {out}: 3 x 5 grid")
    assert f"{w}x{h} px" in line and "RandomResizedCrop(size=(40, 40)" in line and "ColorJitter" in line
    assert "preview [" in r.stderr  # the progress bar; --quiet drops it
    r = run(small_folder, "-o", str(out), "--images", "1", "--draws", "1", "--size", "16", "--quiet", "--no-captions")
    assert r.returncode == 0 and r.stderr == ""
    with Image.open(out) as im:
        assert im.size == (2 * 16 + 2, 16)


def test_cli_without_data_uses_the_sample_dataset(tmp_path):
    env = dict(ENV, SLUICE_CACHE=str(tmp_path / "cache"))
    out = tmp_path / "g.png"
    r = run("-o", str(out), "--sample-images", "8", "--sample-preset", "small", "--images", "2",
            "--draws", "2", "--size", "24", "--quiet", "--no-captions", env=env)
    assert r.returncode == 0, r.stderr
    assert "built-in sample dataset" in r.stderr and "2 x 3 grid" in r.stdout
    with Image.open(out) as im:
        assert im.size == (3 * 24 + 2 * 2, 2 * 24 + 2)


def test_original_column_is_a_plain_resize(small_folder):
    grid = preview.make_grid(small_folder, images=4, draws=2, size=32, pad=2, num_threads=2)
    assert grid.shape == (4 * 32 + 3 * 2, 3 * 32 + 2 * 2, 3) and grid.dtype == np.uint8
    samples = sluice.Loader(small_folder, [], output="numpy").samples[:4]
    ref, _ = next(iter(sluice.Loader(samples, [T.Resize((32, 32))], batch_size=4, dtype="uint8",
                                     output="numpy")))
    for r, row in enumerate(cells(grid, 4, 3, 32, 32, 2)):
        np.testing.assert_array_equal(row[0], ref[r].transpose(1, 2, 0))


def test_columns_are_epochs_reproducible_from_the_seed(small_folder):
    kw = dict(images=3, draws=3, size=32, pad=2, num_threads=2)
    a = preview.make_grid(small_folder, seed=5, **kw)
    np.testing.assert_array_equal(a, preview.make_grid(small_folder, seed=5, **kw))
    assert not np.array_equal(a, preview.make_grid(small_folder, seed=6, **kw))
    grid = cells(a, 3, 4, 32, 32, 2)
    for row in grid:
        for i in range(1, 4):
            for j in range(i + 1, 4):
                assert not np.array_equal(row[i], row[j])  # each column another draw
    # Column 1 + j is what a training loader with this seed gives these samples in epoch j.
    full = sluice.Loader(small_folder, preview.default_transform(32), batch_size=15, seed=5, output="numpy")
    full.set_epoch(2)
    x, _ = next(iter(full))
    for r in range(3):
        np.testing.assert_array_equal(grid[r][3], as_uint8_hwc(x)[r])


def test_normalize_is_undone(small_folder):
    base = [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4)]
    kw = dict(images=3, draws=2, seed=1, num_threads=2)
    plain = preview.make_grid(small_folder, base, **kw).astype(int)
    normed = preview.make_grid(small_folder, base + [T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                               **kw).astype(int)
    assert plain.shape == normed.shape and np.abs(plain - normed).max() <= 1


def test_pipeline_without_a_fixed_size(small_folder):
    grid = preview.make_grid(small_folder, [T.Resize(30)], images=3, draws=1, pad=2, num_threads=2)
    samples = sluice.Loader(small_folder, [], output="numpy").samples[:3]
    sizes = [x.shape[1:] for x in next(iter(sluice.Loader(samples, [T.Resize(30)], batch_size=3,
                                                           output="numpy")))[0]]
    h, w = max(s[0] for s in sizes), max(s[1] for s in sizes)
    assert grid.shape == (3 * h + 4, 2 * w + 2, 3)
    for r, row in enumerate(cells(grid, 3, 2, h, w, 2)):
        sh, sw = sizes[r]
        assert (row[1][sh:, :] == preview.EMPTY_COLOR).all() and (row[1][:, sw:] == preview.EMPTY_COLOR).all()


@pytest.mark.parametrize("expr, problem", [
    ("T.RandomResizedCrop(", "not a Python expression"),
    ("T.NoSuchThing(3)", "has no attribute 'NoSuchThing'"),
    ("undefined_name", "NameError: name 'undefined_name' is not defined"),
    ("T.RandomResizedCrop(-1)", "size must be positive"),
    ("[T.Resize(30), 3]", "must be a sluice or torchvision transform, a function, a list of them or a Compose, got int: 3"),
    ("@missing.py:aug", "missing.py: no such file"),
    ("@aug.py", "expected @FILE.py:NAME"),
])
def test_bad_transform_is_one_line(small_folder, tmp_path, expr, problem):
    r = run(small_folder, "-o", str(tmp_path / "g.png"), "--transform", expr, "--quiet")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("sluice preview: error: --transform ")
    assert problem in r.stderr and not (tmp_path / "g.png").exists()


def test_transform_from_a_file_with_a_user_lambda_class(small_folder, tmp_path):
    aug = tmp_path / "aug.py"
    aug.write_text(
        "import sluice.transforms as T\n\n"
        "class Invert(T.Lambda):\n"
        "    def __init__(self):\n"
        "        super().__init__(self.invert)\n\n"
        "    @staticmethod\n"
        "    def invert(img):  # H x W x 3 uint8, before ToTensor\n"
        "        return 255 - img\n\n"
        "pipeline = T.Compose([T.Resize((24, 24)), Invert()])\n"
        "broken = 3\n")
    out = tmp_path / "g.png"
    r = run(small_folder, "-o", str(out), "--transform", f"@{aug}:pipeline", "--images", "2", "--draws", "2",
            "--quiet", "--no-captions")
    assert r.returncode == 0, r.stderr
    assert "2 x 3 grid" in r.stdout and "Lambda(invert)" in r.stdout
    with Image.open(out) as im:
        grid = np.asarray(im.convert("RGB"))
    assert grid.shape == (2 * 24 + 2, 3 * 24 + 4, 3)
    for row in cells(grid, 2, 3, 24, 24, 2):
        np.testing.assert_array_equal(row[1], 255 - row[0])
        np.testing.assert_array_equal(row[2], 255 - row[0])
    for name, problem in (("nothing", "defines no 'nothing'"), ("broken", "got int: 3")):
        r = run(small_folder, "-o", str(out), "--transform", f"@{aug}:{name}", "--quiet")
        assert r.returncode == 2 and problem in r.stderr and r.stderr.count("\n") == 1


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Parse a PNG by hand: signature, then (type, payload) per chunk, every CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = [], 8
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        out.append((kind, payload))
        pos += 12 + n
    return out


@pytest.mark.parametrize("shape", [(1, 1, 3), (7, 13, 3), (64, 33, 3), (5, 9), (6, 4, 4)])
def test_png_writer_round_trips(tmp_path, shape):
    a = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    path = tmp_path / "a.png"
    preview.write_png(path, a)
    data = path.read_bytes()
    chunks = _chunks(data)
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    w, h, depth, color, *_ = struct.unpack(">IIBBBBB", chunks[0][1])
    c = 1 if a.ndim == 2 else a.shape[2]
    assert (h, w, depth, color) == (shape[0], shape[1], 8, {1: 0, 3: 2, 4: 6}[c])
    raw = np.frombuffer(zlib.decompress(chunks[1][1]), np.uint8).reshape(h, 1 + w * c)
    assert (raw[:, 0] == 0).all()
    np.testing.assert_array_equal(raw[:, 1:].reshape(a.shape), a)
    with Image.open(path) as im:  # an independent decoder
        np.testing.assert_array_equal(np.asarray(im), a)
    with pytest.raises(TypeError, match="uint8"):
        preview.encode_png(a.astype(np.float32))


def test_captions_name_the_columns_and_the_files(small_folder, tmp_path):
    plain, captioned = tmp_path / "plain.png", tmp_path / "captioned.png"
    args = ("--images", "3", "--draws", "2", "--size", "32", "--quiet")
    assert run(small_folder, "-o", str(plain), "--no-captions", *args).returncode == 0
    r = run(small_folder, "-o", str(captioned), *args)
    assert r.returncode == 0, r.stderr
    with Image.open(plain) as a, Image.open(captioned) as b:
        grid, full = np.asarray(a), np.asarray(b)
    top, left = full.shape[0] - grid.shape[0], full.shape[1] - grid.shape[1]
    assert 8 <= top <= 40 and 20 <= left <= 200
    np.testing.assert_array_equal(full[top:, left:], grid)  # the grid itself, unchanged
    text = np.any(full != preview.PAD_COLOR, axis=2)
    # Text in the header over each of the 3 columns, and beside each of the 3 rows.
    assert all(text[:top, left + c * 34:left + c * 34 + 32].any() for c in range(3))
    assert all(text[top + r * 34:top + r * 34 + 32, :left].any() for r in range(3))
    names = [band for band in (text[top + r * 34:top + r * 34 + 32, :left] for r in range(3))]
    assert not np.array_equal(names[0], names[1])  # different files, different captions
    assert f"{full.shape[1]}x{full.shape[0]} px" in r.stdout
