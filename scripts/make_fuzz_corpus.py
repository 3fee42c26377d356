"""Writes the seed corpus of the fuzz targets (cmake/fuzz.cmake): small valid files of every
kind each parser reads, made with Pillow and tarfile, one folder per target.

    python scripts/make_fuzz_corpus.py OUT     # OUT/jpeg_cpu, OUT/png, ..., OUT/webdataset, OUT/json_field

The JPEG target reads the region and scale from an input's last 9 bytes, so its seeds carry a
9-byte trailer. Seeds are deterministic (a fixed random seed).
"""
from __future__ import annotations

import io
import random
import struct
import sys
import tarfile
import zlib
from pathlib import Path

from PIL import Image

SIZES = [(1, 1), (8, 8), (17, 9), (33, 47), (64, 48)]


def picture(size: tuple[int, int], mode: str, rng: random.Random) -> Image.Image:
    """A gradient with noise, so that every codec has real entropy to code."""
    w, h = size
    img = Image.new("RGB", size)
    img.putdata([((x * 255) // max(w - 1, 1), (y * 255) // max(h - 1, 1), rng.randrange(256))
                 for y in range(h) for x in range(w)])
    return img.convert(mode)


def encode(img: Image.Image, fmt: str, **kw) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def tiff_exif(orientation: int, big_endian: bool) -> bytes:
    """A TIFF-structured EXIF block whose IFD0 holds Orientation (0x0112) and one other tag."""
    e = ">" if big_endian else "<"
    head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", 8)
    entries = [(0x010F, 2, 4, b"cam\0"), (0x0112, 3, 1, struct.pack(e + "H", orientation) + b"\0\0")]
    ifd = struct.pack(e + "H", len(entries)) + b"".join(
        struct.pack(e + "HHI", tag, typ, n) + val for tag, typ, n, val in entries) + struct.pack(e + "I", 0)
    return head + ifd


def jpeg_seeds(rng: random.Random) -> list[bytes]:
    seeds = []
    for size in SIZES:
        img = picture(size, "RGB", rng)
        for sub in (0, 1, 2):  # 4:4:4, 4:2:2, 4:2:0
            seeds.append(encode(img, "JPEG", quality=90, subsampling=sub))
        seeds.append(encode(img, "JPEG", quality=75, progressive=True))
        seeds.append(encode(picture(size, "L", rng), "JPEG", quality=85))
    img = picture((64, 48), "RGB", rng)
    seeds.append(encode(img.convert("CMYK"), "JPEG", quality=85))
    seeds.append(encode(img, "JPEG", quality=85, restart_marker_blocks=2))
    seeds.append(encode(img, "JPEG", quality=85, optimize=True))
    for o in range(1, 9):
        exif = b"Exif\0\0" + tiff_exif(o, big_endian=o % 2 == 0)
        seeds.append(encode(img, "JPEG", quality=80, exif=exif))
    return seeds


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def raw_png(w: int, h: int, color_type: int, depth: int, interlaced: bool, rng: random.Random) -> bytes:
    """A PNG written by hand (Pillow writes neither Adam7 nor 16-bit color): random samples,
    filter 0, one IDAT."""
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color_type]
    sample = depth // 8

    def rows(pw: int, ph: int) -> bytes:
        return b"".join(b"\0" + bytes(rng.randrange(256) for _ in range(pw * channels * sample)) for _ in range(ph))

    if interlaced:
        raw = b""
        for x0, y0, dx, dy in ADAM7:
            pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
            if pw > 0 and ph > 0:
                raw += rows(pw, ph)
    else:
        raw = rows(w, h)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, int(interlaced))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def png_seeds(rng: random.Random) -> list[bytes]:
    seeds = []
    for size in SIZES:
        for mode in ("RGB", "RGBA", "L", "LA", "P", "1"):
            seeds.append(encode(picture(size, mode, rng), "PNG"))
        w, h = size
        for color_type in (0, 2, 4, 6):
            for depth in (8, 16):
                seeds.append(raw_png(w, h, color_type, depth, interlaced=w > 8, rng=rng))
    return seeds


def webp_seeds(rng: random.Random) -> list[bytes]:
    seeds = []
    for size in SIZES:
        seeds.append(encode(picture(size, "RGB", rng), "WEBP", quality=80))
        seeds.append(encode(picture(size, "RGBA", rng), "WEBP", quality=80))
        seeds.append(encode(picture(size, "RGB", rng), "WEBP", lossless=True))
    return seeds


def tar_seeds(jpegs: list[bytes]) -> list[bytes]:
    """WebDataset shards in each tar format Python writes: images with .cls and .json labels, a
    long name (GNU 'L' / pax path), a sample without a label."""
    seeds = []
    for fmt in (tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
            members = [("a/0.jpg", jpegs[0]), ("a/0.cls", b"3"), ("a/1.jpg", jpegs[1]),
                       ("a/1.json", b'{"label": 7, "x": [1, {"y": "z"}]}'), ("a/2.png", b"not a png"),
                       ("d" * 120 + "/k.jpg", jpegs[0][:64]), ("d" * 120 + "/k.cls", b"1")]
            if fmt == tarfile.USTAR_FORMAT:
                members = members[:5]
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        seeds.append(buf.getvalue())
    return seeds


JSON_SEEDS = [b'{"label": 3}', b'{"a": "\\u00e9\\"", "label": -12, "b": [1.5e3, true, null]}',
              b'{"label": 1.5}', b'[1, 2]', b'{"x": {"label": 1}, "label": 9223372036854775807}']


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    rng = random.Random(15)
    jpegs, pngs, webps = jpeg_seeds(rng), png_seeds(rng), webp_seeds(rng)
    exifs = [tiff_exif(o, be) for o in range(1, 9) for be in (False, True)]
    exifs += [b"Exif\0\0" + e for e in exifs]
    others = [encode(picture((8, 8), "RGB", rng), fmt) for fmt in ("GIF", "BMP", "TIFF", "PPM")]
    corpus = {
        "jpeg_cpu": [j + bytes(rng.randrange(256) for _ in range(9)) for j in jpegs],
        "png": pngs,
        "webp": webps,
        "exif": exifs,
        "decoder": jpegs + pngs + webps + others,
        "webdataset": tar_seeds(jpegs),
        "json_field": JSON_SEEDS,
    }
    for target, seeds in corpus.items():
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        for i, s in enumerate(seeds):
            (d / f"seed_{i:03d}").write_bytes(s)
        print(f"{target}: {len(seeds)} seeds in {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
