"""Hostile input: files that are not files, too large to read, images too large to decode, names
that are not UTF-8, folders that loop, values out of range. Each is a clear error naming the
file or argument (or, with on_error="skip", a skipped sample), in bounded time and memory."""
from __future__ import annotations

import os
import struct
import zlib

import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes, run_child

PIPE = [T.Resize((16, 16))]


def jpeg(seed: int = 0) -> bytes:
    return pil_bytes(Image.fromarray(photo(40, 30, seed)), "JPEG", quality=90)


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "data"
    (root / "a").mkdir(parents=True)
    for i in range(3):
        (root / "a" / f"{i}.jpg").write_bytes(jpeg(i))
    return root


def load_all(root, **kw):
    loader = sluice.Loader(str(root), PIPE, batch_size=1, output="numpy", **kw)
    good, errors = 0, []
    it = iter(loader)
    for _ in range(len(loader)):
        try:
            next(it)
            good += 1
        except sluice.DecodeError as e:
            errors.append(str(e))
    return good, errors, loader


def test_a_fifo_is_refused_at_once(folder):
    os.mkfifo(folder / "a" / "pipe.jpg")
    r = run_child(f"""
        import sluice, sluice.transforms as T
        for on_error in ("raise", "skip"):
            loader = sluice.Loader({str(folder)!r}, [T.Resize((16, 16))], batch_size=4, on_error=on_error,
                                   output="numpy")
            try:
                for _ in loader:
                    pass
            except sluice.DecodeError as e:
                print(on_error, e)
            print(on_error, [s["reason"] for s in loader.stats()["skipped"]])
    """, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"raise {folder}/a/pipe.jpg: a FIFO, not a regular file" in r.stdout
    assert "skip ['a FIFO, not a regular file']" in r.stdout


def test_preview_with_a_fifo_finishes(folder, tmp_path):
    os.mkfifo(folder / "a" / "pipe.jpg")
    r = run_child(f"""
        import sys
        from sluice import cli
        sys.exit(cli.main(["preview", {str(folder)!r}, "-o", {str(tmp_path / 'grid.png')!r}, "--images", "4",
                           "--draws", "1"]))
    """, timeout=60)
    assert "pipe.jpg: a FIFO, not a regular file" in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_directory_in_a_list_is_a_decode_error(folder):
    (folder / "a" / "dir.jpg").mkdir()  # an ImageFolder walks into it; a list names it as a sample
    pairs = [(str(folder / "a" / "0.jpg"), 0), (str(folder / "a" / "dir.jpg"), 0)]
    loader = sluice.Loader(pairs, PIPE, batch_size=2, output="numpy")
    with pytest.raises(sluice.DecodeError, match=f"^{folder}/a/dir.jpg: a directory, not a regular file$"):
        list(loader)


def test_a_huge_sparse_file_is_refused_before_reading(folder):
    with open(folder / "a" / "sparse.jpg", "wb") as f:
        f.truncate(4 << 30)  # 4 GiB of holes: nothing on disk
    # Peak RSS growth while loading (the interpreter and what it imports, torch on the GPU
    # machine, are not the loader's): reading the file would add 4 GiB.
    r = run_child(f"""
        import sluice, sluice.transforms as T
        def status_kb(key):
            return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])
        loader = sluice.Loader({str(folder)!r}, [T.Resize((16, 16))], batch_size=1, on_error="skip", output="numpy")
        open("/proc/self/clear_refs", "w").write("5")
        before = status_kb("VmRSS")
        n = sum(1 for _ in loader)
        print(n, loader.stats()["skipped"][0]["reason"])
        print("maxrss_growth_mb", (status_kb("VmHWM") - before) >> 10)
    """, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 4294967296 bytes, over the file size limit of 1073741824 bytes (max_file_bytes)" in r.stdout
    assert int(r.stdout.split("maxrss_growth_mb")[1]) < 1024, r.stdout
    # The limit is an option.
    good, errors, _ = load_all(folder, max_file_bytes=100)
    assert good == 0 and len(errors) == 4 and "over the file size limit of 100 bytes" in errors[0]


def test_a_16_bit_gigapixel_png_costs_one_rgb8_image(tmp_path):
    # A small file (constant 16-bit gray) that decodes to 10000 x 10000: its RGB8 image is 300 MB;
    # through a full RGBA16 copy it used to cost 800 MB more.
    root = tmp_path / "big"
    (root / "a").mkdir(parents=True)
    img = Image.new("I;16", (10000, 10000), 40000)
    img.save(root / "a" / "gray16.png")
    assert os.path.getsize(root / "a" / "gray16.png") < 2_000_000
    r = run_child(f"""
        import sluice, sluice.transforms as T
        def status_kb(key):  # VmRSS: now; VmHWM: the peak so far (reset by writing 5 to clear_refs)
            return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])
        loader = sluice.Loader({str(root)!r}, [T.Resize((16, 16))], batch_size=1, num_threads=1, dtype="uint8",
                               output="numpy")
        open("/proc/self/clear_refs", "w").write("5")
        before = status_kb("VmRSS")
        (x, _), = list(loader)
        print("value", int(x.min()), int(x.max()))
        print("peak_mb", loader.stats()["host_memory_peak"] >> 20)
        print("maxrss_growth_mb", (status_kb("VmHWM") - before) >> 10)
    """, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert out["value"] == f"{40000 >> 8} {40000 >> 8}"
    assert 286 <= int(out["peak_mb"]) < 400, r.stdout  # the scratch counts: 10000 * 10000 * 3 bytes
    assert int(out["maxrss_growth_mb"]) < 450, r.stdout  # was 1,049 (an RGBA16 copy besides the RGB8 one)


def webp_claiming(width: int, height: int) -> bytes:
    """A lossless WebP whose header is rewritten to claim width x height."""
    data = bytearray(pil_bytes(Image.fromarray(photo(8, 8)), "WEBP", lossless=True))
    assert data[12:16] == b"VP8L" and data[20] == 0x2F
    bits = struct.unpack_from("<I", data, 21)[0]
    bits = (bits & 0xF0000000) | (width - 1) | (height - 1) << 14
    struct.pack_into("<I", data, 21, bits)
    return bytes(data)


def png_claiming(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))


def test_the_pixel_limit_holds_for_every_format(folder):
    (folder / "a" / "huge.webp").write_bytes(webp_claiming(16383, 16383))
    (folder / "a" / "huge.png").write_bytes(png_claiming(20000, 20000))
    good, errors, _ = load_all(folder)
    assert good == 3
    assert sorted(errors) == [
        f"{folder}/a/huge.png: image too large: 20000x20000 pixels exceeds the limit of 178956970",
        f"{folder}/a/huge.webp: image too large: 16383x16383 pixels exceeds the limit of 178956970"]


def test_other_formats_are_decode_errors(folder):
    img = Image.fromarray(photo(20, 20))
    for fmt, ext in (("BMP", "bmp"), ("GIF", "gif.jpg"), ("TIFF", "tif")):
        (folder / "a" / f"x.{ext}").write_bytes(pil_bytes(img, fmt))
    good, errors, _ = load_all(folder)
    assert good == 3
    assert sorted(e.split(": ", 1)[1] for e in errors) == [
        f"{f} images are not supported (JPEG, PNG and WebP are)" for f in ("BMP", "GIF", "TIFF")]


def test_names_that_are_not_utf8(tmp_path):
    root = tmp_path / "data"
    (root / "a").mkdir(parents=True)
    good_name = os.fsdecode(b"ok-\xff.jpg")   # as os.listdir gives it: a surrogate escape
    bad_name = os.fsdecode(b"bad-\xfe.jpg")
    (root / "a" / good_name).write_bytes(jpeg(1))
    (root / "a" / bad_name).write_bytes(b"not an image")
    loader = sluice.Loader(str(root), PIPE, batch_size=1, output="numpy", on_error="skip")
    assert sorted(p for p, _ in loader.samples) == sorted(str(root / "a" / n) for n in (good_name, bad_name))
    assert sum(1 for _ in loader) == 2
    (skipped,) = loader.stats()["skipped"]
    assert skipped["path"] == str(root / "a" / bad_name)  # the same file: open() takes it back
    assert skipped["reason"].startswith("not a recognized image format")
    with pytest.raises(sluice.DecodeError, match=r"bad-\\xfe.jpg: not a recognized image format"):
        list(sluice.Loader(str(root), PIPE, batch_size=2, output="numpy"))
    # A list source: str with surrogate escapes, bytes, and path-like objects all name the file.
    pairs = [(str(root / "a" / good_name), 0), (os.fsencode(root / "a" / good_name), 1), (root / "a" / good_name, 2)]
    (x, labels), = list(sluice.Loader(pairs, PIPE, batch_size=3, output="numpy"))
    assert labels.tolist() == [0, 1, 2] and (x[0] == x[1]).all() and (x[0] == x[2]).all()


def test_symlink_loops_are_listed_once_and_fast(tmp_path):
    root = tmp_path / "loops"
    (root / "c0").mkdir(parents=True)
    (root / "c0" / "a.jpg").write_bytes(jpeg())
    os.symlink(".", root / "c0" / "l1")
    os.symlink(".", root / "c0" / "l2")
    r = run_child(f"""
        import sluice
        print(len(sluice.Loader({str(root)!r}, output="numpy").samples))
    """, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "1"


def test_values_out_of_range_are_clear_errors(folder):
    with pytest.raises(ValueError, match=r"seed must be an int in \[0, 2\*\*64\), got 18446744073709551616"):
        sluice.Loader(str(folder), PIPE, seed=2 ** 64)
    with pytest.raises(ValueError, match="batch_size is out of range, got 2147483648"):
        sluice.Loader(str(folder), PIPE, batch_size=2 ** 31)
    with pytest.raises(ValueError, match="RandomCrop: height is out of range, got 9223372036854775808"):
        sluice.Loader(str(folder), [T.RandomCrop(2 ** 63)])
    with pytest.raises(ValueError, match=r"source\[0\] label is out of range, got 9223372036854775808"):
        sluice.Loader([(str(folder / "a" / "0.jpg"), 2 ** 63)], PIPE)
    with pytest.raises(TypeError, match="dct_scaling must be a bool, got str: 'no'"):
        sluice.Loader(str(folder), PIPE, dct_scaling="no")
    with pytest.raises(ValueError, match=r"sample path '.*/a\\0b.jpg' contains a NUL byte"):
        sluice.Loader([(str(folder / "a\0b.jpg"), 0)], PIPE)
    loader = sluice.Loader(str(folder), PIPE, output="numpy")
    loader.set_epoch(2 ** 63)
    with pytest.raises(ValueError, match="epoch is out of range, got 9223372036854775808"):
        iter(loader)


def test_a_failed_iteration_changes_nothing(folder):
    loader = sluice.Loader(str(folder), PIPE, output="numpy")
    list(loader)
    before = loader.state_dict()
    loader.set_epoch(2 ** 63)
    with pytest.raises(ValueError):
        iter(loader)
    loader._next_epoch = None  # as if set_epoch had not been called: the next epoch is still 1
    assert loader.state_dict() == before and before["next_epoch"] == 1
    list(loader)
    assert loader.state_dict()["next_epoch"] == 2


def test_set_epoch_after_a_resume_of_another_epoch_is_refused(folder):
    loader = sluice.Loader(str(folder), PIPE, batch_size=1, output="numpy")
    loader.set_epoch(3)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    fresh = sluice.Loader(str(folder), PIPE, batch_size=1, output="numpy")
    fresh.load_state_dict(state)
    with pytest.raises(ValueError, match=r"set_epoch\(0\) after load_state_dict\(\), which resumes epoch 3"):
        fresh.set_epoch(0)
    fresh.set_epoch(3)
    assert len(list(fresh)) == 2
