"""Synthetic videos for tests and benchmarks (``sluice make-videos``), written with PyAV.

Each video is a camera panning and zooming over a large photo-like scene (datasets.synthesize:
1/f textures, objects with hard edges, grain) with a few textured shapes moving across it, so
every frame differs from the last and motion estimation has real work to do. The frame number
is stamped top-left, as a row of white (1) and black (0) blocks, most significant bit first,
that read_frame_number() reads back, and as digits for people. Everything follows from the seed.

Codecs and what the encoders accept (PyAV 18, FFmpeg 8):
    h264  (libx264) and hevc (libx265): even width and height with yuv420p, even width with
          yuv422p, any size with yuv444p; key frames exactly every `gop` frames (scenecut off,
          closed GOP), `bframes` B-frames, quality from `crf`, encoder speed from `speed` (the
          encoders' presets, ultrafast to veryslow: faster ones write larger files).
    mpeg4 (FFmpeg's MPEG-4 Part 2): any size, yuv420p only; key frames forced every `gop`
          frames; no CRF: `crf` becomes the fixed quantizer round(crf / 5), clipped to 2-31.
    vp9   (libvpx) and av1 (SVT-AV1): even sizes, yuv420p (av1) or any of the three (vp9); key
          frames every `gop` frames; `bframes` does not apply (their packets come in
          presentation order); quality from `crf`, at a fast speed.
Containers by extension: .mp4 (time base 1/90000; 1/30000 for mpeg4, whose encoder allows at
most 65535) and .mkv (Matroska's fixed 1/1000). Timestamps are exact in that time base:
frame i of a constant-rate video is at start_pts + round(i * den / fps); a variable-rate one
(vfr=True) has durations drawn log-uniformly between 0.5 and 2 frame periods.
"""
from __future__ import annotations

import argparse
import os
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from fractions import Fraction

import numpy as np

from ._video_frames import make_scene as _scene, read_frame_number, render_frame as _frame  # noqa: F401
from ._progress import Progress

__all__ = ["make_video", "make_videos", "read_frame_number", "SEED_PRESET", "CODECS"]

CODECS = {"h264": "libx264", "hevc": "libx265", "mpeg4": "mpeg4", "vp9": "libvpx-vp9", "av1": "libsvtav1"}
CONTAINERS = (".mp4", ".mkv")
SPEEDS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow")
DEFAULTS = dict(count=8, classes=2, width=320, height=240, frames=48, fps=24, codec="h264", gop=12,
                bframes=2)
# The seed experiment's data: 173 ten-second 1080p clips, a key frame every second.
SEED_PRESET = dict(count=173, frames=300, width=1920, height=1080, codec="h264", fps=30, gop=30,
                   bframes=2)
PRESETS = {"seed": SEED_PRESET}

def _av():
    """The PyAV module, or a clear error where it is not installed."""
    try:
        import av  # noqa: PLC0415
    except ImportError as e:
        raise RuntimeError(f"writing videos needs PyAV (pip install av): {e}") from None
    return av


def _check(path: str, width: int, height: int, frames: int, fps, codec: str, gop: int,
           bframes: int, pix_fmt: str, start_pts: int) -> None:
    """ValueError naming the bad argument, before an encoder fails with an opaque one."""
    if codec not in CODECS:
        raise ValueError(f"codec must be one of {sorted(CODECS)}, got {codec!r}")
    if os.path.splitext(path)[1].lower() not in CONTAINERS:
        raise ValueError(f"the file must end in {' or '.join(CONTAINERS)}, got {path!r}")
    if width < 2 or height < 2 or frames < 1:
        raise ValueError(f"need width and height >= 2 and frames >= 1, got {width}x{height}, {frames}")
    if fps <= 0 or gop < 1 or not 0 <= bframes <= 16 or start_pts < 0:
        raise ValueError(f"need fps > 0, gop >= 1, 0 <= bframes <= 16 and start_pts >= 0, got "
                         f"fps={fps}, gop={gop}, bframes={bframes}, start_pts={start_pts}")
    if codec in ("mpeg4", "av1") and pix_fmt != "yuv420p":
        raise ValueError(f"{codec} encodes yuv420p only, got pix_fmt={pix_fmt!r}")
    odd_w, odd_h = width % 2, height % 2
    if codec != "mpeg4" and ((pix_fmt == "yuv420p" and (odd_w or odd_h)) or (pix_fmt == "yuv422p" and odd_w)):
        raise ValueError(f"{CODECS[codec]} with {pix_fmt} needs an even "
                         f"{'width and height' if pix_fmt == 'yuv420p' else 'width'}, got {width}x{height}; "
                         f"use pix_fmt='yuv444p' or codec='mpeg4' for odd sizes")


def _time_base(path: str, codec: str) -> Fraction:
    if path.lower().endswith(".mkv"):
        return Fraction(1, 1000)  # Matroska stores milliseconds, whatever one asks for
    return Fraction(1, 30000 if codec == "mpeg4" else 90000)


def _timestamps(frames: int, fps: Fraction, tb: Fraction, vfr: bool, start_pts: int,
                rng: np.random.Generator) -> list[int]:
    """Each frame's pts in time base `tb`: constant rate, or irregular durations (vfr)."""
    period = 1 / (fps * tb)  # ticks per frame
    if not vfr:
        return [start_pts + round(i * period) for i in range(frames)]
    scale = np.exp(rng.uniform(np.log(0.5), np.log(2.0), frames - 1))
    durations = np.maximum(1, np.rint(float(period) * scale)).astype(np.int64)
    return [start_pts] + (start_pts + np.cumsum(durations)).tolist()


def _encoder_setup(stream, codec: str, gop: int, bframes: int, crf: float, threads: int, speed: str) -> None:
    """Key frames every `gop` frames (closed GOPs, no scene-cut key frames), `bframes` B-frames."""
    cc = stream.codec_context
    cc.thread_count = threads
    common = f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes={bframes}"
    if codec == "h264":  # x264 clamps min-keyint to keyint/2+1; scenecut=0 keeps the cadence
        cc.options = {"crf": str(crf), "preset": speed, "x264-params": common}
    elif codec == "hevc":  # x265 opens its GOPs by default
        cc.options = {"crf": str(crf), "preset": speed, "x265-params": f"{common}:open-gop=0:log-level=error"}
        cc.codec_tag = "hvc1"  # the tag Apple's players want in MP4
    elif codec == "vp9":  # libvpx's "good" quality at a fast speed
        cc.gop_size = gop
        cc.options = {"crf": str(crf), "b": "0", "deadline": "good", "cpu-used": "5", "keyint_min": str(gop)}
    elif codec == "av1":
        cc.gop_size = gop
        cc.options = {"crf": str(crf), "preset": "10", "svtav1-params": f"keyint={gop}"}
    else:
        # Its own GOP counter runs in coded order and, with B-frames, puts I-frames early (gop 6,
        # 2 B-frames: every 4th frame): key frames come only where make_video forces them.
        cc.gop_size, cc.max_b_frames = 1 << 20, bframes
        cc.qmin = cc.qmax = int(np.clip(round(crf / 5), 2, 31))  # setting qscale alone does nothing
        cc.options = {"sc_threshold": "1000000000", "flags": "+cgop"}


def make_video(path: str, *, width: int = 320, height: int = 240, frames: int = 48, fps=24,
               codec: str = "h264", gop: int = 12, bframes: int = 2, vfr: bool = False,
               start_pts: int = 0, seed=0, crf: float = 23, pix_fmt: str = "yuv420p",
               threads: int = 0, faststart: bool = False, speed: str = "medium") -> dict:
    """Writes one synthetic video to `path` (.mp4 or .mkv); see the module docstring.

    `gop`: frames from one key frame to the next; `start_pts`: the first frame's pts, in the
    stream's time base; `seed`: an int or a sequence of ints; `threads`: encoder threads (0:
    FFmpeg's choice); `faststart`: an MP4's index (the moov atom) before the frames rather than
    after them; `speed`: the encoder's preset (h264, hevc). Returns path, frames, width, height, codec, fps, keyframes (the indices
    of the key frames), time_base, pts (each frame's, in presentation order) and bytes.
    """
    path = os.fspath(path)
    _check(path, width, height, frames, fps, codec, gop, bframes, pix_fmt, start_pts)
    if codec == "av1":
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1's banner and warnings off: errors only
    if speed not in SPEEDS:
        raise ValueError(f"speed must be one of {', '.join(SPEEDS)}, got {speed!r}")
    av = _av()
    rate = Fraction(fps).limit_denominator(1001)
    tb = _time_base(path, codec)
    scene_seq, time_seq = np.random.SeedSequence(seed).spawn(2)
    scene = _scene(np.random.default_rng(scene_seq), width, height)
    pts = _timestamps(frames, rate, tb, vfr, start_pts, np.random.default_rng(time_seq))
    # MP4's edit list is in the movie time scale (1/1000 by default): a start time would be
    # rounded to the millisecond unless the movie uses the stream's time scale.
    options = {"movie_timescale": str(tb.denominator)} if path.lower().endswith(".mp4") else {}
    if faststart and options:
        options["movflags"] = "faststart"
    with av.open(path, "w", options=options) as out:
        stream = out.add_stream(CODECS[codec], rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.time_base = stream.codec_context.time_base = tb
        _encoder_setup(stream, codec, gop, bframes, crf, threads, speed)
        for i, p in enumerate(pts):
            frame = av.VideoFrame.from_ndarray(_frame(scene, float((p - start_pts) * tb), i, width,
                                                      height, frames), format="rgb24")
            frame.pts, frame.time_base = p, tb
            if i % gop == 0:  # forced, so that mpeg4's B-frame grouping cannot move it
                frame.pict_type = av.video.frame.PictureType.I
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return {"path": path, "frames": frames, "width": width, "height": height, "codec": codec,
            "keyframes": list(range(0, frames, gop)), "fps": fps, "time_base": tb, "pts": pts,
            "bytes": os.path.getsize(path)}


def _video_job(job: tuple[str, dict]) -> tuple[str, int, int]:
    """Worker: writes one video; (path, frames, bytes)."""
    path, kw = job
    info = make_video(path, **kw)
    return path, info["frames"], info["bytes"]


def make_videos(root: str, *, count: int = 8, classes: int = 2, width: int = 320, height: int = 240,
                frames: int = 48, fps=24, codec: str = "h264", gop: int = 12, bframes: int = 2,
                seed: int = 0, workers: int | None = None, progress: bool = True, ext: str = ".mp4",
                **kw) -> list[str]:
    """Writes `count` videos into ``root/class_XXX/video_XXXXX.mp4`` (a labelled folder like an
    ImageFolder: video i in class i % classes), video i seeded from (seed, i), in `workers`
    processes (default: all CPUs). Other keywords go to make_video. Returns the paths, sorted."""
    root = os.fspath(root)
    if count < 1 or classes < 1:
        raise ValueError(f"count and classes must be at least 1, got {count} and {classes}")
    settings = dict(width=width, height=height, frames=frames, fps=fps, codec=codec, gop=gop,
                    bframes=bframes, **kw)
    jobs = [(os.path.join(root, f"class_{i % classes:03d}", f"video_{i:05d}{ext}"),
             dict(settings, seed=(seed, i))) for i in range(count)]
    _check(jobs[0][0], width, height, frames, fps, codec, gop, bframes, kw.get("pix_fmt", "yuv420p"),
           kw.get("start_pts", 0))
    _av()
    for c in range(min(classes, count)):
        os.makedirs(os.path.join(root, f"class_{c:03d}"), exist_ok=True)
    cpus = len(os.sched_getaffinity(0))
    workers = max(1, min(workers or cpus, count))
    with Progress(count, "make-videos", unit="video", enabled=progress) as bar:
        if workers == 1:
            for job in jobs:
                _video_job(job)
                bar.update()
        else:  # one encoder thread per core between them; spawned: the parent may run threads
            jobs = [(p, {"threads": max(1, cpus // workers), **j}) for p, j in jobs]
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                for done in as_completed([pool.submit(_video_job, job) for job in jobs]):
                    done.result()
                    bar.update()
    return sorted(path for path, _ in jobs)


def _size(text: str) -> tuple[int, int]:
    """"WxH" -> (width, height)."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"expected a size WIDTHxHEIGHT such as 320x240, got {text!r}")
    return int(parts[0]), int(parts[1])


def _fps(text: str) -> Fraction:
    """"30", "29.97" or "30000/1001" -> a frame rate."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        value = Fraction(0)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a frame rate such as 30 or 30000/1001, got {text!r}")
    return value


def add_parser(sub) -> None:
    v = sub.add_parser("make-videos", help="write synthetic videos (PyAV) into class folders",
                       description="Write COUNT synthetic videos (a camera panning over a textured "
                                   "scene, moving shapes, the frame number stamped top-left) into "
                                   "DIR/class_XXX/video_XXXXX.mp4. Needs PyAV (pip install av).")
    v.add_argument("dir")
    v.add_argument("--count", type=int, help=f"videos (default {DEFAULTS['count']})")
    v.add_argument("--classes", type=int, help=f"class folders (default {DEFAULTS['classes']})")
    v.add_argument("--size", type=_size, metavar="WxH", help="frame size (default 320x240)")
    v.add_argument("--frames", type=int, help=f"frames per video (default {DEFAULTS['frames']})")
    v.add_argument("--fps", type=_fps, help="frame rate, e.g. 30 or 30000/1001 (default 24)")
    v.add_argument("--codec", choices=sorted(CODECS), help="default h264; mpeg4 takes odd sizes")
    v.add_argument("--gop", type=int, help="frames between key frames (default 12)")
    v.add_argument("--bframes", type=int, help="B-frames (default 2)")
    v.add_argument("--crf", type=float, help="quality, lower is better (default 23)")
    v.add_argument("--speed", choices=SPEEDS, help="encoder preset, h264 and hevc (default medium)")
    v.add_argument("--pix-fmt", choices=["yuv420p", "yuv422p", "yuv444p"], help="default yuv420p")
    v.add_argument("--vfr", action="store_true", help="variable frame rate: irregular timestamps")
    v.add_argument("--start-pts", type=int, default=0, help="first timestamp, in the stream's time base")
    v.add_argument("--mkv", action="store_true", help="Matroska files instead of MP4")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--workers", type=int, default=None, help="processes (default: all CPUs)")
    v.add_argument("--preset", choices=sorted(PRESETS),
                   help="seed: 173 videos of 300 1080p frames, h264, 30 fps, gop 30, 2 B-frames")
    v.add_argument("--quiet", action="store_true", help="no progress bar")
    v.set_defaults(func=cmd)


def cmd(args: argparse.Namespace) -> int:
    _av()
    settings = dict(DEFAULTS, **PRESETS.get(args.preset, {}))
    if args.size is not None:
        settings["width"], settings["height"] = args.size
    for key in ("count", "classes", "frames", "fps", "codec", "gop", "bframes", "crf", "pix_fmt", "speed"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    start = time.perf_counter()
    paths = make_videos(args.dir, **settings, vfr=args.vfr, start_pts=args.start_pts, seed=args.seed,
                        workers=args.workers, progress=not args.quiet, ext=".mkv" if args.mkv else ".mp4")
    seconds = time.perf_counter() - start
    size = sum(os.path.getsize(p) for p in paths)
    s = settings
    print(f"wrote {len(paths):,} videos ({len(paths) * s['frames']:,} frames of {s['width']}x{s['height']} "
          f"{s['codec']}, {min(s['classes'], len(paths))} classes) to {args.dir}: "
          f"{size / 2**20:,.1f} MiB in {seconds:.2f} s")
    return 0
