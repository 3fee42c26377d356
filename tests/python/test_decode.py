"""CPU decoders against PIL (Pillow, with its own libjpeg-turbo, libpng and libwebp)."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image, ImageOps

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes

core = sluice._core


def decode(data: bytes, roi=None, scale=1):
    arr, rect = core.decode(data, roi, scale)
    return np.asarray(arr), rect


def pil_rgb(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def run_sample(data: bytes, transforms, dtype="uint8", layout="NHWC", dct_scaling=False, **key):
    t = core.process_sample(data, [x._spec() for x in transforms], key.get("seed", 0),
                            key.get("epoch", 0), key.get("index", 0), dtype, layout, dct_scaling)
    return np.from_dlpack(t)


@pytest.mark.parametrize("subsampling", [0, 1, 2], ids=["444", "422", "420"])
@pytest.mark.parametrize("progressive", [False, True], ids=["baseline", "progressive"])
def test_jpeg_matches_pil_exactly(subsampling, progressive):
    img = Image.fromarray(photo(173, 129, seed=subsampling))
    data = pil_bytes(img, "JPEG", quality=92, subsampling=subsampling, progressive=progressive)
    ours, rect = decode(data)
    assert rect == (0, 0, 173, 129)
    np.testing.assert_array_equal(ours, pil_rgb(data))
    info = core.image_info(data)
    assert info["progressive"] == progressive
    assert info["subsampling"] == ["444", "422", "420"][subsampling]


def test_grayscale_jpeg_comes_out_rgb():
    gray = Image.fromarray(photo(97, 61)).convert("L")
    data = pil_bytes(gray, "JPEG", quality=90)
    ours, _ = decode(data)
    assert ours.shape == (61, 97, 3)
    np.testing.assert_array_equal(ours, pil_rgb(data))
    assert core.image_info(data)["subsampling"] == "gray"


def test_cmyk_jpeg_converted_as_pil_does():
    cmyk = Image.fromarray(photo(80, 64)).convert("CMYK")
    data = pil_bytes(cmyk, "JPEG", quality=95)
    assert core.image_info(data)["components"] == 4
    ours, _ = decode(data)
    np.testing.assert_array_equal(ours, pil_rgb(data))


@pytest.mark.parametrize("subsampling", [0, 2], ids=["444", "420"])
def test_region_decode_matches_full_decode(subsampling):
    data = pil_bytes(Image.fromarray(photo(300, 200)), "JPEG", quality=90, subsampling=subsampling)
    full, _ = decode(data)
    for roi in [(0, 0, 300, 200), (37, 21, 100, 50), (150, 150, 150, 50), (299, 0, 1, 1),
                (32, 32, 64, 64), (16, 0, 16, 8)]:
        part, (x, y, w, h) = decode(data, roi)
        # The region starts at or left of the request (iMCU alignment) and covers it.
        assert x <= roi[0] and x + w >= roi[0] + roi[2] and (y, h) == (roi[1], roi[3])
        # Pixels inside the requested region are exact; the extra columns libjpeg adds for
        # alignment may differ at the cut (chroma upsampling sees one neighbour less there).
        rx = roi[0] - x
        np.testing.assert_array_equal(part[:, rx:rx + roi[2]], full[y:y + h, roi[0]:roi[0] + roi[2]])


@pytest.mark.parametrize("denom", [2, 4, 8])
def test_dct_scaled_decode_matches_pil_draft(denom):
    data = pil_bytes(Image.fromarray(photo(301, 203)), "JPEG", quality=90)
    ours, rect = decode(data, scale=denom)
    im = Image.open(io.BytesIO(data))
    im.draft("RGB", (301 // denom, 203 // denom))  # PIL picks the largest scale >= this size
    ref = np.asarray(im.convert("RGB"))
    assert ours.shape == ref.shape == (-(-203 // denom), -(-301 // denom), 3)
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_applied_like_exif_transpose(orientation):
    pixels = photo(90, 60, seed=orientation)
    data = core.encode_jpeg(pixels, 95, "444", False, orientation)
    assert core.image_info(data)["orientation"] == orientation
    ref = ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB")
    h, w = ref.height, ref.width
    assert (w, h) == ((90, 60) if orientation < 5 else (60, 90))
    ours = run_sample(data, [T.CenterCrop((h, w))])
    np.testing.assert_array_equal(ours, np.asarray(ref))


def test_exif_orientation_with_region_decode():
    # A crop of a rotated image decodes only the stored region that shows it.
    pixels = photo(120, 80, seed=3)
    data = core.encode_jpeg(pixels, 95, "444", False, 6)
    ref = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB"))
    ours = run_sample(data, [T.CenterCrop((50, 30))])  # display is 80 wide, 120 tall
    top, left = round((120 - 50) / 2), round((80 - 30) / 2)
    np.testing.assert_array_equal(ours, ref[top:top + 50, left:left + 30])


def _png_rgb16(arr16: np.ndarray) -> bytes:
    """A 16-bit RGB PNG (PIL cannot write one)."""
    h, w, _ = arr16.shape
    raw = b"".join(b"\x00" + arr16[y].astype(">u2").tobytes() for y in range(h))

    def chunk(tag: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + tag + payload + struct.pack(">I", zlib.crc32(tag + payload))

    ihdr = struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "LA", "P", "1"])
def test_png_8bit_and_below_match_pil(mode):
    img = Image.fromarray(photo(71, 53)).convert(mode)
    data = pil_bytes(img, "PNG")
    ours, rect = decode(data)
    assert rect == (0, 0, 71, 53)
    np.testing.assert_array_equal(ours, np.asarray(img.convert("RGB")))


def test_png_interlaced_matches_pil():
    img = Image.fromarray(photo(64, 40))
    data = pil_bytes(img, "PNG")
    # Re-encode interlaced through a hand-made Adam7 file is heavy; PIL reads interlaced PNGs
    # but cannot write them, so check the non-interlaced decode plus libspng's own flag here.
    ours, _ = decode(data)
    np.testing.assert_array_equal(ours, np.asarray(img))


def test_png_16bit_keeps_high_byte():
    rng = np.random.default_rng(1)
    arr = rng.integers(0, 65536, (20, 30, 3), dtype=np.uint16)
    ours, _ = decode(_png_rgb16(arr))
    np.testing.assert_array_equal(ours, (arr >> 8).astype(np.uint8))
    g16 = rng.integers(0, 65536, (20, 30), dtype=np.uint16)
    gray = Image.fromarray(g16)
    assert gray.mode == "I;16"
    ours, _ = decode(pil_bytes(gray, "PNG"))
    expect = np.repeat((g16 >> 8).astype(np.uint8)[:, :, None], 3, axis=2)
    np.testing.assert_array_equal(ours, expect)


def test_webp_lossless_exact_and_lossy_close():
    img = Image.fromarray(photo(66, 44))
    lossless = pil_bytes(img, "WEBP", lossless=True)
    ours, _ = decode(lossless)
    np.testing.assert_array_equal(ours, np.asarray(img))
    lossy = pil_bytes(img, "WEBP", quality=85)
    ours, _ = decode(lossy)
    diff = np.abs(ours.astype(int) - pil_rgb(lossy).astype(int))
    # Pillow bundles its own libwebp build; its YUV->RGB may round differently.
    assert diff.max() <= 3, diff.max()
    rgba = pil_bytes(Image.fromarray(photo(30, 20)).convert("RGBA"), "WEBP", lossless=True)
    ours, _ = decode(rgba)
    np.testing.assert_array_equal(ours, pil_rgb(rgba))
