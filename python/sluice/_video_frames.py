"""The pictures of sluice.video_data's synthetic videos: a camera panning and zooming over a large
photo-like scene (datasets.synthesize) with a few textured shapes moving across it, and the
frame number stamped top-left as a row of white (1) and black (0) blocks, most significant bit
first (read_frame_number reads it back), and as digits. Pure numpy; everything follows from the
random generator given to make_scene.
"""
from __future__ import annotations

import numpy as np

from .datasets import synthesize

# A 3x5 pixel font for the frame number's digits.
_DIGITS = ["111101101101111", "010110010010111", "111001111100111", "111001111001111",
           "101101111001001", "111100111001111", "111100111101111", "111001010010010",
           "111101111101111", "111101111001111"]
_BLACK, _WHITE = 16, 235


def make_scene(rng: np.random.Generator, width: int, height: int) -> dict:
    """The canvas the camera moves over, the camera's path and the moving shapes."""
    cw, ch = int(np.ceil(width * 1.6)), int(np.ceil(height * 1.6))
    canvas = synthesize(rng, cw, ch, noise=2.0, detail=1.0)
    camera = {"periods": rng.uniform([7, 6, 9], [11, 10, 14]), "phases": rng.uniform(0, 2 * np.pi, 3)}
    shapes = []
    for _ in range(int(rng.integers(3, 6))):
        shapes.append({"r": float(rng.uniform(0.05, 0.12) * min(width, height)) + 1,
                       "disc": bool(rng.random() < 0.5), "color": rng.uniform(20, 235, 3),
                       "start": rng.uniform(0, 2, 2), "speed": rng.uniform(-0.4, 0.4, 2),
                       "freq": float(rng.uniform(0.1, 0.6)), "spin": float(rng.uniform(-3, 3))})
    return {"canvas": canvas, "camera": camera, "shapes": shapes}


def _view(scene: dict, t: float, width: int, height: int) -> np.ndarray:
    """The camera's view at time t (seconds): a pan and a zoom, nearest-neighbour sampled."""
    canvas, cam = scene["canvas"], scene["camera"]
    ch, cw = canvas.shape[:2]
    wave = 0.5 + 0.5 * np.sin(2 * np.pi * t / cam["periods"] + cam["phases"])
    zoom = 1.0 + 0.45 * wave[2]  # the view spans 1-1.45 frames of the canvas
    x0, y0 = wave[0] * (cw - width * zoom), wave[1] * (ch - height * zoom)
    xs = np.minimum((x0 + np.arange(width) * zoom).astype(np.intp), cw - 1)
    ys = np.minimum((y0 + np.arange(height) * zoom).astype(np.intp), ch - 1)
    return canvas.take(ys, axis=0).take(xs, axis=1)


def _draw_shapes(img: np.ndarray, shapes: list, t: float) -> None:
    """Textured discs and squares, bouncing off the frame's edges."""
    h, w = img.shape[:2]
    for s in shapes:
        r = s["r"]
        u, v = 1 - np.abs((s["start"] + s["speed"] * t) % 2 - 1)  # a triangle wave in [0, 1]
        cx, cy = r + u * max(w - 2 * r, 0), r + v * max(h - 2 * r, 0)
        x0, x1 = max(0, int(cx - r)), min(w, int(cx + r) + 1)
        y0, y1 = max(0, int(cy - r)), min(h, int(cy + r) + 1)
        yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        dx, dy = xx - cx, yy - cy
        mask = (dx * dx + dy * dy <= r * r) if s["disc"] else (np.maximum(abs(dx), abs(dy)) <= r * 0.8)
        angle = s["spin"] * t
        stripes = np.sin((dx * np.cos(angle) + dy * np.sin(angle)) * s["freq"] * 6 / max(r / 8, 1))
        obj = np.clip(s["color"] + (stripes * 40)[:, :, None], 0, 255)
        img[y0:y1, x0:x1][mask] = obj[mask].astype(np.uint8)


def _stamp_geometry(width: int, height: int, frames: int) -> tuple[int, int]:
    """(block side in pixels, number of bits) of the frame-number stamp."""
    return max(4, min(width, height) // 40), max(8, (frames - 1).bit_length())


def _draw_frame_number(img: np.ndarray, index: int, frames: int) -> None:
    """The stamp: a dark panel, a row of bit blocks and the number in digits under it."""
    h, w = img.shape[:2]
    b, bits = _stamp_geometry(w, h, frames)
    c = max(1, b // 2)  # the digits' pixel size
    text = str(index)
    glyphs = np.zeros((5, 4 * len(text) - 1), bool)
    for k, ch in enumerate(text):
        glyphs[:, 4 * k:4 * k + 3] = np.array(list(_DIGITS[int(ch)]), dtype=int).reshape(5, 3) == 1
    digits = np.kron(glyphs, np.ones((c, c), bool))
    pw = min(w, max(b * (bits + 2), digits.shape[1] + 2 * b))
    ph = min(h, 3 * b + digits.shape[0] + b // 2)
    img[:ph, :pw] = _BLACK
    for k in range(bits):
        if index >> (bits - 1 - k) & 1:
            img[b:2 * b, b * (k + 1):b * (k + 2)] = _WHITE
    dh, dw = min(digits.shape[0], h - 3 * b), min(digits.shape[1], w - b)
    if dh > 0 and dw > 0:
        img[3 * b:3 * b + dh, b:b + dw][digits[:dh, :dw]] = _WHITE


def read_frame_number(pixels: np.ndarray, frames: int) -> int:
    """The frame number stamped on a decoded frame (RGB HxWx3 or grey HxW uint8) of a video
    with `frames` frames: for checking that a loader returns the frames it says it does."""
    grey = pixels.mean(axis=2) if pixels.ndim == 3 else pixels
    h, w = grey.shape[:2]
    b, bits = _stamp_geometry(w, h, frames)
    value = 0
    for k in range(bits):
        block = grey[b + b // 4:2 * b - b // 4, b * (k + 1) + b // 4:b * (k + 2) - b // 4]
        value = value << 1 | int(block.mean() > (_BLACK + _WHITE) / 2)
    return value


def render_frame(scene: dict, t: float, index: int, width: int, height: int, frames: int) -> np.ndarray:
    img = _view(scene, t, width, height)
    _draw_shapes(img, scene["shapes"], t)
    _draw_frame_number(img, index, frames)
    return img
