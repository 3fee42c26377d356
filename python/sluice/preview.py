"""``sluice preview``: a PNG grid of the same images under several augmentation draws.

Row ``i`` is the ``i``-th image of the dataset (its sorted order, no shuffle). Column 0 is that
image resized (squashed) to the cell size, so the source is visible; column ``j >= 1`` is the
pipeline's output for epoch ``j - 1``: every column is another random draw, reproducible from the
seed. The draws are exactly what a ``Loader`` with the same seed gives these samples in that epoch
(random parameters depend on seed, epoch and sample index, not on the shuffle or batch size).

Images come from the loader as float32 NCHW; ``Normalize`` steps in the pipeline are undone
(``x * std + mean``) before the values are clipped to [0, 1] and scaled to 8 bits. When the
pipeline has no fixed output size, every cell has the largest size drawn and each sample sits in
its top-left corner on dark grey. The PNG writer uses only the standard library.
"""
from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import transforms as T
from ._loader import Loader
from ._progress import Progress
from ._user_code import load_transform

__all__ = ["default_transform", "load_transform", "describe", "build_grid", "make_grid",
           "encode_png", "write_png", "PAD_COLOR", "EMPTY_COLOR"]

PAD_COLOR = (128, 128, 128)   # between cells
EMPTY_COLOR = (48, 48, 48)    # the part of a cell a smaller sample leaves uncovered


def default_transform(size: int = 224) -> list:
    """RandomResizedCrop(size) + RandomHorizontalFlip + ColorJitter(0.4, 0.4, 0.4)."""
    return [T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4)]


def describe(transform: Any) -> str:
    """A pipeline's repr for messages (a Lambda by its function's name, not its address)."""
    parts = []
    for t in T.flatten(transform):
        if isinstance(t, T.Lambda) and type(t).__repr__ is T.Transform.__repr__:
            parts.append(t._name())
        else:
            parts.append(repr(t))
    return "[" + ", ".join(parts) + "]"


def _to_uint8(x: Any, normalizes: list) -> np.ndarray:
    """A 3 x H x W float sample (NumPy or torch, any device) as H x W x 3 uint8 for display."""
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    x = np.asarray(x, dtype=np.float32)
    for n in reversed(normalizes):  # undo Normalize: x * std + mean, the last one first
        x = x * np.asarray(n.std, np.float32)[:, None, None] + np.asarray(n.mean, np.float32)[:, None, None]
    return np.rint(np.clip(x, 0.0, 1.0) * 255.0).astype(np.uint8).transpose(1, 2, 0)


def _run(loader: Loader, epoch: int, normalizes: list) -> list[np.ndarray]:
    loader.set_epoch(epoch)
    out: list[np.ndarray] = []
    for images, _labels in loader:
        out.extend(_to_uint8(x, normalizes) for x in images)
    return out


@dataclass
class Grid:
    array: np.ndarray           # H x W x 3 uint8
    rows: int                   # images
    cols: int                   # 1 (the originals) + draws
    cell: tuple[int, int]       # (height, width) of a cell
    transforms: list            # the pipeline, flat
    names: list                 # each row's file name


def build_grid(data: Any, transform: Any = None, images: int = 8, draws: int = 6, seed: int = 0,
               device: str = "cpu", pad: int = 2, size: int = 224, *, progress: bool = False,
               num_threads: int | None = None) -> Grid:
    """The grid and what it holds; see :func:`make_grid`."""
    for name, value, low in (("images", images, 1), ("draws", draws, 1), ("pad", pad, 0), ("size", size, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    tf = default_transform(size) if transform is None else T.flatten(transform)
    normalizes = [t for t in tf if isinstance(t, T.Normalize)]
    lister = Loader(data, [], batch_size=1, output="numpy", num_threads=1, io_threads=1)
    samples = lister.samples[:images]
    lister.close()
    if not samples:
        raise ValueError(f"{data}: no images")
    k = len(samples)
    kw: dict[str, Any] = dict(batch_size=k, device=device, shuffle=False, seed=seed, dtype="float32",
                              layout="NCHW", num_threads=num_threads)
    loader = Loader(samples, tf, **kw)
    columns = []
    with Progress(draws, "preview", unit="draw", enabled=progress) as bar:
        for j in range(draws):
            columns.append(_run(loader, j, normalizes))
            bar.update()
    loader.close()
    if loader.output_size is not None:
        ch, cw = loader.output_size
    else:
        ch = max(a.shape[0] for col in columns for a in col)
        cw = max(a.shape[1] for col in columns for a in col)
    original = Loader(samples, [T.Resize((ch, cw))], **kw)
    columns.insert(0, _run(original, 0, []))
    original.close()
    if any(len(col) != k for col in columns):
        raise ValueError(f"{data}: expected {k} images per draw, got {[len(c) for c in columns]}")
    cols = len(columns)
    grid = np.empty((k * ch + (k - 1) * pad, cols * cw + (cols - 1) * pad, 3), np.uint8)
    grid[:] = PAD_COLOR
    for c, col in enumerate(columns):
        x0 = c * (cw + pad)
        for r, img in enumerate(col):
            y0 = r * (ch + pad)
            grid[y0:y0 + ch, x0:x0 + cw] = EMPTY_COLOR
            h, w = min(img.shape[0], ch), min(img.shape[1], cw)
            grid[y0:y0 + h, x0:x0 + w] = img[:h, :w]
    return Grid(grid, k, cols, (ch, cw), tf, [os.path.basename(str(path)) for path, _ in samples])


CAPTION_COLOR = (230, 230, 230)  # text on PAD_COLOR


def captioned(grid: Grid, pad: int = 2, seed: int = 0) -> np.ndarray | None:
    """``grid.array`` with a header row naming each column ("source", "epoch 0 (seed S)", ...)
    and a left column naming each row's file, drawn with Pillow's default font; None when Pillow
    is not installed."""
    try:
        from PIL import Image, ImageDraw  # noqa: PLC0415
    except ImportError:
        return None
    ch, cw = grid.cell
    draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    heads = ["source"] + [f"epoch {j}" + (f" (seed {seed})" if j == 0 else "") for j in range(grid.cols - 1)]
    text_h = max(draw.textbbox((0, 0), t)[3] for t in heads + grid.names) + 4
    left = min(max(draw.textbbox((0, 0), n)[2] for n in grid.names) + 8, 200)
    h, w = grid.array.shape[:2]
    out = Image.new("RGB", (w + left, h + text_h), PAD_COLOR)
    out.paste(Image.fromarray(grid.array), (left, text_h))
    pen = ImageDraw.Draw(out)
    for c, head in enumerate(heads):
        pen.text((left + c * (cw + pad) + 2, 2), head, fill=CAPTION_COLOR)
    for r, name in enumerate(grid.names):
        pen.text((2, text_h + r * (ch + pad) + 2), name, fill=CAPTION_COLOR)
    return np.asarray(out)


def make_grid(data: Any, transform: Any = None, images: int = 8, draws: int = 6, seed: int = 0,
              device: str = "cpu", pad: int = 2, size: int = 224, **kw: Any) -> np.ndarray:
    """An ``H x W x 3`` uint8 grid: one row per image (the first ``images`` of ``data``, an
    ImageFolder root or a ``(path, label)`` list, in order), column 0 the image resized to the
    cell size, column ``j`` (1..draws) ``transform`` (default :func:`default_transform` of
    ``size``) drawn for epoch ``j - 1`` with ``seed``. Cells are separated by ``pad`` pixels of
    :data:`PAD_COLOR`. ``progress=True`` shows a progress bar; ``num_threads`` is the loader's."""
    return build_grid(data, transform, images, draws, seed, device, pad, size, **kw).array


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(array: Any, level: int = 6) -> bytes:
    """PNG bytes of an 8-bit ``H x W`` (grey), ``H x W x 3`` (RGB) or ``H x W x 4`` (RGBA) array."""
    a = np.asarray(array)
    if a.dtype != np.uint8:
        raise TypeError(f"encode_png: expected uint8 pixels, got {a.dtype}")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or a.shape[2] not in (1, 3, 4) or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"encode_png: expected H x W, H x W x 3 or H x W x 4 pixels, got shape {a.shape}")
    h, w, c = a.shape
    color_type = {1: 0, 3: 2, 4: 6}[c]
    raw = np.zeros((h, 1 + w * c), np.uint8)  # filter byte 0 (None) at the start of every row
    raw[:, 1:] = a.reshape(h, w * c)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)  # 8 bits, deflate, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), level))
            + _chunk(b"IEND", b""))


def write_png(path: Any, array: Any) -> None:
    """Write ``array`` (see :func:`encode_png`) to ``path`` as a PNG."""
    data = encode_png(array)
    with open(os.fspath(path), "wb") as f:
        f.write(data)
