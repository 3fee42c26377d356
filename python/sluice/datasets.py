"""Synthetic photo-like JPEG datasets for benchmarks and tests (``sluice make-dataset``).

Images have the statistics that make JPEG decoding cost what it costs on photos: smooth
illumination gradients, 1/f ("pink") textures, objects with hard edges, stripes, and sensor
noise. Sizes, quality and chroma subsampling are knobs. Only NumPy and sluice's own libjpeg-turbo
encoder are used.

Presets follow the two datasets of the GPU and CPU benchmarks (docs/benchmarks.md), plus a Pascal
VOC-like one:
    imagenet: 400-600 px wide, ~0.2 MP, 4:4:4, quality 90-96, noisy (~145 KiB, like ImageNet's
              4:4:4 q96 files but heavier)
    small:    ~0.156 MP, 4:2:0, quality 85-95, smoother (~32 KiB)
    voc:      landscape, 470-500 px wide at 4:3 or 3:2 (about 500x375, ~0.17 MP), 4:2:0,
              quality 75-95, grainy (~60 KiB); the multi-GPU scaling benchmark's data
"""
from __future__ import annotations

import os
import shutil
import tempfile
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from . import _core
from ._canvas_images import cut_image, make_canvases
from ._progress import Progress

__all__ = ["DatasetSpec", "PRESETS", "make_dataset", "synthesize", "sample_dataset"]


@dataclass(frozen=True)
class DatasetSpec:
    num_images: int = 1024
    num_classes: int = 8
    width: tuple[int, int] = (400, 600)      # inclusive range of widths
    quality: tuple[int, int] = (90, 96)      # inclusive range of JPEG qualities
    subsampling: str = "444"                 # "444", "422" or "420"
    noise: float = 5.5                       # sensor noise sigma, in 8-bit levels
    detail: float = 1.2                      # texture amplitude multiplier
    progressive: float = 0.0                 # fraction of progressive JPEGs
    # Aspect ratios to draw from, as (width / height, weight) pairs; None: the ImageNet-like mix.
    aspects: tuple[tuple[float, float], ...] | None = None
    seed: int = 0
    # 0: every image synthesized; N: images cut from N synthesized canvases, each with its own
    # tint and noise (~30x faster, for sample data; sluice._canvas_images).
    canvases: int = 0


PRESETS = {
    "imagenet": DatasetSpec(),
    "small": DatasetSpec(width=(370, 500), quality=(85, 95), subsampling="420", noise=0.5,
                         detail=0.35),
    "voc": DatasetSpec(width=(470, 500), quality=(75, 95), subsampling="420", noise=8.0,
                       detail=1.6, aspects=((4 / 3, 0.75), (3 / 2, 0.25))),
}

# Aspect ratios (width / height) and their weights: mostly landscape, as in ImageNet.
_ASPECTS = np.array([4 / 3, 3 / 2, 1.0, 3 / 4, 16 / 9])
_ASPECT_P = np.array([0.5, 0.25, 0.1, 0.1, 0.05])


def _pink_noise(rng: np.random.Generator, h: int, w: int, beta: float) -> np.ndarray:
    """Zero-mean, unit-std noise with a 1/f^beta amplitude spectrum."""
    spec = np.fft.rfft2(rng.standard_normal((h, w), dtype=np.float32))
    fy = np.fft.fftfreq(h).astype(np.float32)[:, None]
    fx = np.fft.rfftfreq(w).astype(np.float32)[None, :]
    f = np.sqrt(fx * fx + fy * fy)
    f[0, 0] = 1.0
    spec *= f ** (-beta)
    spec[0, 0] = 0
    out = np.fft.irfft2(spec, s=(h, w)).astype(np.float32)
    return out / (out.std() + 1e-6)


def _smooth_field(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    """A smooth RGB field: a random coarse grid, bilinearly upsampled."""
    gh, gw = cells, cells + 1
    grid = rng.uniform(0, 1, (gh, gw, 3)).astype(np.float32)
    ys = np.linspace(0, gh - 1, h, dtype=np.float32)
    xs = np.linspace(0, gw - 1, w, dtype=np.float32)
    y0 = np.minimum(ys.astype(int), gh - 2)
    x0 = np.minimum(xs.astype(int), gw - 2)
    wy = (ys - y0)[:, None, None]
    wx = (xs - x0)[None, :, None]
    rows = grid[:, x0] * (1 - wx) + grid[:, x0 + 1] * wx  # (gh, w, 3): along x first
    return rows[y0] * (1 - wy) + rows[y0 + 1] * wy


def synthesize(rng: np.random.Generator, width: int, height: int, noise: float = 5.5,
               detail: float = 1.2) -> np.ndarray:
    """One photo-like RGB image, ``height x width x 3`` uint8."""
    h, w = height, width
    img = _smooth_field(rng, h, w, int(rng.integers(2, 5))) * 200 + 20
    # Scene texture: shared luminance and weaker chroma, 1/f spectrum.
    lum = _pink_noise(rng, h, w, beta=float(rng.uniform(0.9, 1.4)))
    img += (lum * (18 * detail))[:, :, None]
    img += _pink_noise(rng, h, w, 1.5)[:, :, None] * (rng.uniform(-6, 6, 3) * detail)
    # Objects: ellipses and rotated rectangles with their own color, shading and texture,
    # rendered inside their bounding boxes.
    for _ in range(int(rng.integers(4, 12))):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        a, b = rng.uniform(0.05, 0.35) * w, rng.uniform(0.05, 0.35) * h
        theta = rng.uniform(0, np.pi)
        c, s = np.cos(theta), np.sin(theta)
        r = np.hypot(a, b) * 1.05
        x0, x1 = max(0, int(cx - r)), min(w, int(cx + r) + 1)
        y0, y1 = max(0, int(cy - r)), min(h, int(cy + r) + 1)
        if x0 >= x1 or y0 >= y1:
            continue
        yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        u = ((xx - cx) * c + (yy - cy) * s) / a
        v = (-(xx - cx) * s + (yy - cy) * c) / b
        d = np.sqrt(u * u + v * v) if rng.random() < 0.5 else np.maximum(np.abs(u), np.abs(v))
        edge = float(rng.uniform(0.004, 0.03))  # edge softness (a pixel or two)
        mask = np.clip((1 - d) / edge, 0, 1)[:, :, None]
        color = rng.uniform(0, 255, 3).astype(np.float32)
        shade = 1 + 0.35 * (u * rng.uniform(-1, 1) + v * rng.uniform(-1, 1))[:, :, None]
        obj = color * np.clip(shade, 0.3, 1.6)
        if rng.random() < 0.3:  # stripes or a grating
            freq = rng.uniform(0.05, 0.45)
            phase = (xx * np.cos(theta * 2) + yy * np.sin(theta * 2)) * freq
            obj = obj + (np.sin(phase) * rng.uniform(10, 40) * detail)[:, :, None]
        elif rng.random() < 0.6:
            tex = _pink_noise(rng, y1 - y0, x1 - x0, 0.8)
            obj = obj + (tex * rng.uniform(5, 25) * detail)[:, :, None]
        region = img[y0:y1, x0:x1]
        img[y0:y1, x0:x1] = region * (1 - mask) + obj * mask
    # Sensor noise, slightly stronger in the dark (shot-noise-like), plus a little color noise.
    if noise > 0:
        sigma = noise * (0.6 + 0.8 * (1 - np.clip(img.mean(axis=2, keepdims=True) / 255, 0, 1)))
        img += rng.standard_normal((h, w, 3), dtype=np.float32) * sigma
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


def _image_params(spec: DatasetSpec, index: int):
    rng = np.random.default_rng([spec.seed, index])
    width = int(rng.integers(spec.width[0], spec.width[1] + 1))
    if spec.aspects is None:
        aspect = float(rng.choice(_ASPECTS, p=_ASPECT_P))
    else:  # the same single draw, so a preset without aspects keeps its images
        ratios, weights = zip(*spec.aspects)
        aspect = float(rng.choice(ratios, p=np.asarray(weights) / sum(weights)))
    height = max(16, int(round(width / aspect)))
    quality = int(rng.integers(spec.quality[0], spec.quality[1] + 1))
    progressive = bool(rng.random() < spec.progressive)
    return rng, width, height, quality, progressive


def make_image(spec: DatasetSpec, index: int) -> bytes:
    """The encoded JPEG of image ``index`` of a dataset (deterministic)."""
    rng, width, height, quality, progressive = _image_params(spec, index)
    pixels = synthesize(rng, width, height, spec.noise, spec.detail)
    return _core.encode_jpeg(pixels, quality, spec.subsampling, progressive, 1)


def _write_image(job: tuple[DatasetSpec, str, int], canvases: list | None = None) -> tuple[int, int]:
    """Writes image ``index`` into its class folder (cut from `canvases` where given); (bytes, pixels)."""
    spec, root, i = job
    data = make_image(spec, i) if canvases is None else cut_image(spec, canvases, i)
    path = os.path.join(root, f"class_{i % spec.num_classes:03d}", f"img_{i:06d}.jpg")
    with open(path, "wb") as f:
        f.write(data)
    _, w, h, _, _ = _image_params(spec, i)
    return len(data), w * h


def _write_images(spec: DatasetSpec, root: str, workers: int):
    """Writes every image of `spec`, yielding (bytes, pixels) of each as it is written."""
    jobs = [(spec, root, i) for i in range(spec.num_images)]
    if spec.canvases > 0:
        # Cutting is a few large NumPy operations and the encoder, which release the GIL: threads.
        canvases = make_canvases(spec, spec.canvases, workers)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            yield from pool.map(lambda job: _write_image(job, canvases), jobs)
        return
    # The synthesis is many small NumPy operations that hold the GIL: threads do not scale past
    # about two cores, so many images go to processes (spawned: the parent may run threads).
    if workers > 1 and spec.num_images >= 256:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        chunk = max(1, min(64, spec.num_images // (8 * workers)))
    else:
        pool, chunk = ThreadPoolExecutor(max_workers=workers), 1
    with pool:
        yield from pool.map(_write_image, jobs, chunksize=chunk)


def make_dataset(root: str, spec: DatasetSpec | None = None, *, workers: int | None = None,
                 progress: bool = True, **overrides) -> dict:
    """Writes ``spec.num_images`` JPEGs into ``root/class_XXX/img_XXXXXX.jpg`` (an ImageFolder).

    Returns a summary: number of files, total bytes, mean KiB and mean megapixels.
    """
    spec = replace(spec or DatasetSpec(), **overrides)
    if spec.num_images < 1 or spec.num_classes < 1:
        raise ValueError("num_images and num_classes must be at least 1")
    if spec.subsampling not in ("444", "422", "420"):
        raise ValueError(f"subsampling must be '444', '422' or '420', got {spec.subsampling!r}")
    lo, hi = spec.width
    if not 16 <= lo <= hi:
        raise ValueError(f"width must be a range (lo, hi) with 16 <= lo <= hi, got {spec.width!r}")
    if not 1 <= spec.quality[0] <= spec.quality[1] <= 100:
        raise ValueError(f"quality must be a range within [1, 100], got {spec.quality!r}")
    if spec.canvases < 0:
        raise ValueError(f"canvases must be 0 (every image synthesized) or more, got {spec.canvases}")
    if spec.aspects is not None and (not spec.aspects or any(r <= 0 or w <= 0 for r, w in spec.aspects)):
        raise ValueError(f"aspects must be (width / height, weight) pairs, both > 0, got {spec.aspects!r}")
    for c in range(spec.num_classes):
        os.makedirs(os.path.join(root, f"class_{c:03d}"), exist_ok=True)
    workers = workers or len(os.sched_getaffinity(0))
    total_bytes = 0
    total_pixels = 0
    with Progress(spec.num_images, "make-dataset", enabled=progress) as bar:
        for nbytes, npix in _write_images(spec, root, workers):
            total_bytes += nbytes
            total_pixels += npix
            bar.update()
    return {
        "root": root,
        "files": spec.num_images,
        "classes": spec.num_classes,
        "bytes": total_bytes,
        "mean_kib": total_bytes / spec.num_images / 1024,
        "mean_mpix": total_pixels / spec.num_images / 1e6,
        "subsampling": spec.subsampling,
        "quality": spec.quality,
    }


# The sample datasets are cut from this many canvases: ready in seconds (make run).
SAMPLE_CANVASES = 8


def cache_dir() -> str:
    base = os.environ.get("SLUICE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "sluice")
    return base


def sample_dataset(preset: str = "imagenet", num_images: int = 1024, progress: bool = True) -> str:
    """Path of a built-in sample dataset, generated once into the cache folder."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    root = os.path.join(cache_dir(), f"sample-{preset}-{num_images}-v2")
    if os.path.exists(os.path.join(root, ".complete")):
        return root
    os.makedirs(cache_dir(), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".sample-{preset}-", dir=cache_dir())
    try:
        make_dataset(tmp, PRESETS[preset], num_images=num_images, canvases=SAMPLE_CANVASES, progress=progress)
        open(os.path.join(tmp, ".complete"), "w").close()
        if os.path.exists(root):
            shutil.rmtree(root)
        os.rename(tmp, root)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return root
