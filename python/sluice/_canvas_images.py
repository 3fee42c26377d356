"""Fast photo-like images: windows cut from a few synthesized canvases, each window mirrored or
not, tinted, and given its own sensor noise. Synthesizing an image costs ~0.3 s of NumPy; cutting
one ~10 ms, so `make run`'s 1,024 sample images take seconds instead of a minute and a half. The
images share scene content between them, which a loader does not see: its work follows the sizes,
the JPEG quality and the texture, which match fully synthesized images.

    canvases = make_canvases(spec, count=8, workers=2)
    data = cut_image(spec, canvases, index)     # encoded JPEG bytes, deterministic per index
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from . import _core


def canvas_shape(spec) -> tuple[int, int]:
    """(height, width) that holds every image of `spec` (the widest, and the tallest aspect)."""
    from .datasets import _ASPECTS  # the default aspect mix
    ratios = [r for r, _ in spec.aspects] if spec.aspects is not None else list(_ASPECTS)
    width = spec.width[1]
    return max(16, int(round(width / min(ratios)))), width


def _canvas(job) -> np.ndarray:
    from .datasets import synthesize
    spec, k, (h, w) = job
    rng = np.random.default_rng([spec.seed, 1 << 30, k])  # apart from the per-image streams
    return synthesize(rng, w, h, noise=0.0, detail=spec.detail)


def make_canvases(spec, count: int, workers: int) -> list[np.ndarray]:
    """`count` noise-free canvases of :func:`canvas_shape`, synthesized in `workers` processes."""
    jobs = [(spec, k, canvas_shape(spec)) for k in range(count)]
    if workers <= 1:
        return [_canvas(j) for j in jobs]
    ctx = multiprocessing.get_context("spawn")  # the caller may run threads
    with ProcessPoolExecutor(max_workers=min(workers, count), mp_context=ctx) as pool:
        return list(pool.map(_canvas, jobs))


def cut_image(spec, canvases: list[np.ndarray], index: int) -> bytes:
    """Image `index` (its size and quality as a synthesized one's) cut from one of `canvases`."""
    from .datasets import _image_params
    rng, width, height, quality, progressive = _image_params(spec, index)
    canvas = canvases[int(rng.integers(len(canvases)))]
    top = int(rng.integers(canvas.shape[0] - height + 1))
    left = int(rng.integers(canvas.shape[1] - width + 1))
    img = canvas[top:top + height, left:left + width].astype(np.float32)
    if rng.random() < 0.5:
        img = img[:, ::-1]
    img *= rng.uniform(0.85, 1.15, 3).astype(np.float32)
    img += rng.uniform(-12, 12, 3).astype(np.float32)
    if spec.noise > 0:  # as synthesize's: a little stronger in the dark
        sigma = spec.noise * (1.4 - 0.8 / 255 * np.clip(img.mean(axis=2, keepdims=True), 0, 255))
        img += rng.standard_normal(img.shape, dtype=np.float32) * sigma
    pixels = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    return _core.encode_jpeg(pixels, quality, spec.subsampling, progressive, 1)
