"""Video clips benchmark (issue 20, the seed users' experiment): seconds per epoch and clips/s.

Every row loads the clips of sluice.Videos(DATA, sequence_length=L, stride=S, step=P), each once
per epoch, shuffled (P = --step, default L * S; DALI gets it too), resizes each frame to --out-size
(HxW, bilinear, antialiased), normalizes it (ImageNet) to float16: batches (N, F, C, H, W). Rows:
  sluice       sluice.Loader(videos, [Resize, Normalize], num_threads=--threads, device="cpu")
  sluice-cuda  the same with device="cuda": clips decoded on NVDEC, transformed on the GPU
  pyav         torch DataLoader, num_workers=--threads, item i = clip i: PyAV (one thread) seeks to
               the key frame before the clip, decodes forward (frame index = presentation order,
               from sluice's index), rgb24; torch interpolate (bilinear, antialias), normalize
  dali         fn.readers.video(device="gpu") -> fn.resize -> fn.crop_mirror_normalize (FCHW)
Each row runs in its own process (skipped, with the reason, without CUDA or DALI), takes 1 warm-up
batch, then times the rest of --epochs epochs or until --max-clips clips. s/epoch = clips per
epoch / clips/s ("extrapolated" where --max-clips cut the epoch). Peak RSS: the row process's VmHWM;
the note adds the summed PSS of it and its workers and, on CUDA, torch's max_memory_allocated.

    python bench/video_bench.py DATA [--make N] [--frames 300] [--size 1920x1080]
        [--sequence-length 16] [--stride 2] [--step P] [--batch-size 8] [--out-size 360x640]
        [--threads 16] [--epochs 1] [--max-clips M] [--systems sluice,sluice-cuda,pyav,dali]
        [--timeout 1800] [--check] [--json out.json]
DATA: class folders of videos. --make N first writes N synthetic H.264 videos there (30 fps, key
frame every 30, 2 B-frames) unless it holds N. --check first reads the frame numbers stamped in
every clip of the first two videos from sluice and the pyav decoder, and compares the outputs.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # = sluice.IMAGENET_MEAN / _STD
SYSTEMS = ("sluice", "sluice-cuda", "pyav", "dali")


class RowSkipped(Exception):
    """The row cannot run here: the reason."""


def size_arg(text: str) -> tuple[int, int]:
    a, _, b = text.lower().partition("x")
    if not (a.isdigit() and b.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a size such as 1920x1080, got {text!r}")
    return int(a), int(b)


def open_videos(args, videos=None):
    import sluice
    return sluice.Videos(videos if videos is not None else args.data, sequence_length=args.sequence_length,
                         stride=args.stride, step=args.step)


def make_data(args) -> None:
    from sluice._videos import VIDEO_EXTENSIONS
    from sluice.video_data import make_videos
    held = sum(f.lower().endswith(VIDEO_EXTENSIONS) for _, _, fs in os.walk(args.data) for f in fs)
    if held >= args.make:
        return print(f"{args.data} holds {held} videos: none written", flush=True)
    make_videos(args.data, count=args.make, frames=args.frames, width=args.size[0], height=args.size[1],
                codec="h264", fps=30, gop=30, bframes=2, progress=True)


def data_info(videos) -> dict:
    import sluice
    first, frames = sluice._core.video_index(videos.videos[0][0]), videos.num_frames
    return {"videos": len(frames), "frames_min": min(frames), "frames_max": max(frames), "codec": first["codec"],
            "size": f"{first['width']}x{first['height']}", "clips_per_epoch": len(videos),
            "bytes": sum(os.path.getsize(p) for p, _ in videos.videos)}


def sample_pss(peak: list, done: threading.Event) -> None:
    """peak = [bytes, processes]: the largest PSS of this process and its children (workers)."""
    me = os.getpid()
    while not done.wait(0.25):
        with open(f"/proc/{me}/task/{me}/children") as f:
            pids, total = [me, *map(int, f.read().split())], 0
        for pid in pids:
            with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as f:
                total += next((int(ln.split()[1]) * 1024 for ln in f if ln.startswith("Pss:")), 0)
        peak[:] = max(peak[0], total), max(peak[1], len(pids))


def epochs(args, loader, start=None):
    """The clips of each batch of --epochs epochs; start(e) begins epoch e."""
    for e in range(args.epochs):
        if start:
            start(e)
        for batch in loader:  # (clips, labels), or DALI's [{"clips": ..., "labels": ...}]
            yield batch[0]["clips"] if isinstance(batch[0], dict) else batch[0]


def sluice_row(args, videos, device: str):
    import sluice
    import sluice.transforms as T
    try:
        import torch
    except ImportError:
        torch = None
    if device == "cuda" and not (torch and torch.cuda.is_available()):
        raise RowSkipped(f"torch.cuda is not available ({f'torch {torch.__version__}' if torch else 'no torch'})")
    loader = sluice.Loader(videos, [T.Resize(tuple(args.out_size)), T.Normalize(MEAN, STD)],
                           batch_size=args.batch_size, shuffle=True, dtype="float16", num_threads=args.threads,
                           device=device, output="torch" if torch else "numpy")
    peak = lambda: {"sluice_gpu_memory_peak": loader.stats().get("gpu_memory_peak")}  # noqa: E731
    return epochs(args, loader, loader.set_epoch), loader.num_samples, peak


def pyav_items(videos) -> list:
    """Clip i as (path, frames, label, pts of every frame, key frame indices)."""
    import sluice
    index, labels = {p: sluice._core.video_index(p) for p, _ in videos.videos}, dict(videos.videos)
    return [(p, list(f), labels[p], index[p]["pts"], index[p]["keyframes"])
            for p, f in (videos.clip(i) for i in range(len(videos)))]


def decode_clip(path: str, frames: list, pts: list, keyframes: list):
    """(F, H, W, 3) uint8 RGB with PyAV: from the key frame at or before the first frame, forward."""
    import av
    import numpy as np
    where, wanted, got = {p: i for i, p in enumerate(pts)}, set(frames), {}
    key = max((k for k in keyframes if k <= frames[0]), default=0)
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_count = 1  # one thread per clip, as sluice; the workers decode in parallel
        container.seek(pts[key], backward=True, any_frame=False, stream=stream)
        for frame in container.decode(stream):
            i = where.get(frame.pts)
            if i in wanted:
                got[i] = frame.to_ndarray(format="rgb24")
            if i is not None and i >= frames[-1]:
                break
    if len(got) < len(wanted):
        raise RuntimeError(f"{path}: frames {sorted(wanted - set(got))} not decoded")
    return np.stack([got[f] for f in frames])


class PyAVClips:
    """For torch's DataLoader: item i = (clip i, float16 (F, C, h, w), label)."""

    def __init__(self, items: list, out_size: tuple[int, int]):
        self.items, self.out_size = items, out_size

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int):
        import torch
        import torch.nn.functional as F
        path, frames, label, pts, keyframes = self.items[i]
        x = torch.from_numpy(decode_clip(path, frames, pts, keyframes)).permute(0, 3, 1, 2).float().div_(255)
        x = F.interpolate(x, size=self.out_size, mode="bilinear", antialias=True, align_corners=False)
        mean, std = torch.tensor(MEAN).view(1, 3, 1, 1), torch.tensor(STD).view(1, 3, 1, 1)
        return x.sub_(mean).div_(std).half(), label


def pyav_row(args, videos):
    try:
        import av  # noqa: F401
        import torch
    except ImportError as e:
        raise RowSkipped(f"needs PyAV and torch ({e})") from None
    loader = torch.utils.data.DataLoader(PyAVClips(pyav_items(videos), args.out_size), batch_size=args.batch_size,
                                         shuffle=True, num_workers=args.threads, persistent_workers=args.epochs > 1)
    return epochs(args, loader), len(videos), lambda: {}


def dali_row(args, videos):
    try:
        import nvidia.dali as dali
        from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    except ImportError as e:
        raise RowSkipped(f"DALI is not installed ({e}); pip install nvidia-dali-cuda130") from None
    fn, types = dali.fn, dali.types
    paths, labels = [p for p, _ in videos.videos], [max(0, y) for _, y in videos.videos]
    h, w = args.out_size

    @dali.pipeline_def(batch_size=args.batch_size, num_threads=args.threads, device_id=0, seed=0)
    def pipeline():
        clips, label = fn.readers.video(device="gpu", filenames=paths, labels=labels,
                                        sequence_length=args.sequence_length, stride=args.stride, step=args.step,
                                        random_shuffle=True, initial_fill=min(1024, len(videos)), name="Reader")
        clips = fn.resize(clips, resize_x=w, resize_y=h)
        clips = fn.crop_mirror_normalize(clips, dtype=types.FLOAT16, output_layout="FCHW",
                                         mean=[255 * m for m in MEAN], std=[255 * s for s in STD])
        return clips, label

    pipe = pipeline()
    pipe.build()
    epoch = pipe.epoch_size("Reader")
    it = DALIGenericIterator([pipe], ["clips", "labels"], reader_name="Reader", auto_reset=False,
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    extra = {"dali": dali.__version__, "dali_clips_per_epoch": epoch}
    return epochs(args, it, lambda e: e and it.reset()), epoch, lambda: extra


def measure(batches, per_epoch: int, args, cuda: bool) -> dict:
    """Times the batches after the first; stops at --max-clips clips taken (warm-up included)."""
    sync = (lambda: __import__("torch").cuda.synchronize()) if cuda else (lambda: None)
    it, sink, t0 = iter(batches), [], time.perf_counter()
    first = next(it)
    sync()
    first_s, total = time.perf_counter() - t0, per_epoch * args.epochs
    limit, taken, timed = min(total, args.max_clips or total), len(first), 0
    t1 = time.perf_counter()
    while taken < limit and (clips := next(it, None)) is not None:
        sink.append(clips[:, 0, 0, 0, 0].sum())  # the batch is there: a reduction on its device
        taken, timed = taken + len(clips), timed + len(clips)
    sync()
    seconds = time.perf_counter() - t1
    if not timed:
        raise RuntimeError(f"nothing timed after the warm-up batch: {taken} clips")
    rate = timed / seconds
    return {"clips_per_s": rate, "frames_per_s": rate * args.sequence_length, "s_per_epoch": per_epoch / rate,
            "epoch_time": "measured" if taken >= total else "extrapolated", "clips_per_epoch": per_epoch,
            "clips_timed": timed, "seconds_timed": seconds, "first_batch_s": first_s,
            "shape": list(first.shape), "dtype": str(first.dtype)}


def child(args, system: str) -> dict:
    cuda, peak, done = system in ("sluice-cuda", "dali"), [0, 1], threading.Event()
    sampler = threading.Thread(target=sample_pss, args=(peak, done), daemon=True)
    sampler.start()
    try:
        videos = open_videos(args)
        batches, per_epoch, extra = (pyav_row(args, videos) if system == "pyav" else dali_row(args, videos)
                                     if system == "dali" else sluice_row(args, videos, "cuda" if cuda else "cpu"))
        result = {**measure(batches, per_epoch, args, cuda), **extra()}
        if cuda:
            import torch
            result["torch_cuda_max_allocated"] = torch.cuda.max_memory_allocated()
    except RowSkipped as e:
        result = {"skipped": str(e)}
    except Exception as e:  # noqa: BLE001 - reported as the row's result
        first = (str(e).strip().splitlines() or [""])[0]
        result = {"error": f"{type(e).__name__}: {first}", "traceback": traceback.format_exc()}
    done.set()
    sampler.join(2)
    with open("/proc/self/status") as f:  # VmHWM: getrusage's ru_maxrss keeps the parent's from before exec
        rss = next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmHWM:"))
    return {**result, "peak_rss": rss, "peak_pss_tree": peak[0], "processes": peak[1]}


def run_row(system: str, args, tmp: str) -> dict:
    """One row in its own process group (a timeout kills its workers too): its last JSON line."""
    cmd, t0 = [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--_child", system], time.perf_counter()
    with open(f"{tmp}/out", "w") as out, open(f"{tmp}/err", "w") as err:  # files, not pipes: workers may linger
        p = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=args.timeout)
        timed_out = p.poll() is None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    with open(f"{tmp}/out") as out, open(f"{tmp}/err", errors="replace") as err:
        lines, tail = [ln for ln in out if ln.startswith("{")], err.read()[-2000:]
    result = json.loads(lines[-1]) if lines else {"stderr_tail": tail, "error": f"timed out after {args.timeout:g} s"
                                                  if timed_out else f"exit {p.returncode}: " + tail[-200:].strip()}
    return {"system": system, "wall_seconds": time.perf_counter() - t0, **result}


def machine_info() -> dict:
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.get_device_name(0) "
                            "if torch.cuda.is_available() else 'none')"], capture_output=True, text=True)
    with open("/proc/cpuinfo") as f:  # this process stays CUDA-free
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    return {"cpus": len(os.sched_getaffinity(0)), "cpu": cpu, "gpu": probe.stdout.strip() or "none"}


def check_frames(args, count: int = 2) -> dict:
    """Frame numbers stamped in each clip of `count` videos, from sluice and the pyav decoder."""
    import numpy as np
    import sluice
    import sluice.transforms as T
    from sluice.video_data import read_frame_number

    videos = open_videos(args, open_videos(args).videos[:count])
    frames_of = dict(zip((p for p, _ in videos.videos), videos.num_frames))
    first = sluice._core.video_index(videos.videos[0][0])
    native = sluice.Loader(videos, [T.Resize((first["height"], first["width"]))], batch_size=1, dtype="uint8",
                           layout="NHWC", output="numpy", num_threads=args.threads)  # in clip order
    items, bad, diff = pyav_items(videos), [], 0
    for i, (clip, _) in enumerate(native):
        path, frames = items[i][:2]
        theirs = decode_clip(path, frames, *items[i][3:])
        for name, x in (("sluice", clip[0]), ("pyav", theirs)):
            got = [read_frame_number(f, frames_of[path]) for f in x]
            bad += [f"clip {i} {name}: {got} != {frames}"] if got != frames else []
        diff = max(diff, int(np.abs(clip[0].astype(np.int16) - theirs).max()))
    pipe = sluice.Loader(videos, [T.Resize(tuple(args.out_size)), T.Normalize(MEAN, STD)], batch_size=1,
                         dtype="float16", output="numpy", num_threads=args.threads)
    a = next(iter(pipe))[0][0].astype(np.float32)
    b = PyAVClips(items, args.out_size)[0][0].numpy().astype(np.float32)
    return {"clips": len(items), "mismatches": bad, "max_pixel_diff": diff,
            "output_mean_abs_diff": float(np.abs(a - b).mean()), "output_max_abs_diff": float(np.abs(a - b).max())}


def note(r: dict) -> str:
    if "clips_per_s" not in r:
        return "skipped: " + r["skipped"][:120] if "skipped" in r else "error: " + r["error"][:120].replace("|", "/")
    parts = [f"s/epoch {r['epoch_time']}: {r['clips_timed']} clips in {r['seconds_timed']:.1f} s after a "
             f"{r['first_batch_s']:.1f}-s first batch"]
    parts += [f"PSS of {r['processes']} processes {r['peak_pss_tree'] / 2**20:,.0f} MiB"] if r["processes"] > 1 else []
    for key, what in (("torch_cuda_max_allocated", "torch CUDA alloc"), ("sluice_gpu_memory_peak", "sluice GPU pool")):
        parts += [f"{what} {r[key] / 2**20:,.0f} MiB"] if r.get(key) is not None else []
    if r.get("dali_clips_per_epoch") not in (None, r["clips_per_epoch"]):
        parts.append(f"DALI counts {r['dali_clips_per_epoch']} clips")
    return "; ".join(parts)


def table(rows: list) -> list:
    out = ["| system | clips/s | frames/s | s/epoch | peak RSS MiB | note |", "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        cells = ["-"] * 4 if "clips_per_s" not in r else [
            f"{r['clips_per_s']:,.1f}", f"{r['frames_per_s']:,.0f}",
            f"{r['s_per_epoch']:,.2f}" + "*" * (r["epoch_time"] == "extrapolated"), f"{r['peak_rss'] / 2**20:,.0f}"]
        out.append(f"| {r['system']} | {' | '.join(cells)} | {note(r)} |")
    return out


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="a folder of class folders of videos")
    for name, kind, default, what in (
            ("make", int, None, "first write N videos there"), ("frames", int, 300, "--make's frames per video"),
            ("size", size_arg, (1920, 1080), "--make's WxH"), ("sequence-length", int, 16, None),
            ("stride", int, 2, None), ("step", int, None, "default: sequence length * stride"),
            ("batch-size", int, 8, None), ("out-size", size_arg, (360, 640), "HxW"),
            ("threads", int, 16, "loader threads, DataLoader workers"), ("epochs", int, 1, None),
            ("max-clips", int, None, None), ("systems", str, ",".join(SYSTEMS), None),
            ("timeout", float, 1800, "seconds per row"), ("json", str, None, None)):
        ap.add_argument(f"--{name}", type=kind, default=default, help=what)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--_child", choices=SYSTEMS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.step = args.step or args.sequence_length * args.stride
    if set(args.systems.split(",")) - set(SYSTEMS):
        ap.error(f"--systems: choose among {', '.join(SYSTEMS)}")
    return args


def main() -> None:
    args = parse_args()
    if args._child:
        return print(json.dumps(child(args, args._child)), flush=True)
    if args.make:
        make_data(args)
    m, d = machine_info(), data_info(open_videos(args))
    info = {"machine": m, "data": d, "settings": {k: v for k, v in vars(args).items() if k not in ("json", "_child")}}
    (h, w), most = args.out_size, f", at most {args.max_clips} clips a row" if args.max_clips else ""
    print(f"\n## Video clips: {m['cpus']} CPUs ({m['cpu']}), GPU {m['gpu']}\n\n{args.data}: {d['videos']} videos, "
          f"{d['frames_min']}-{d['frames_max']} frames of {d['size']} {d['codec']}, {d['bytes'] / 2**20:,.1f} MiB, "
          f"{d['clips_per_epoch']} clips an epoch of {args.sequence_length} frames, stride {args.stride}, step "
          f"{args.step}; to {h}x{w} (HxW) float16, batch {args.batch_size}, {args.threads} threads (workers), "
          f"{args.epochs} epoch(s){most}.\n", flush=True)
    if args.check:
        c = info["check"] = check_frames(args)
        print(f"check, {c['clips']} clips: frame numbers {c['mismatches'] or 'right'}; sluice against pyav: pixels "
              f"within {c['max_pixel_diff']}, clip 0's outputs |diff| mean {c['output_mean_abs_diff']:.4f}, max "
              f"{c['output_max_abs_diff']:.3f}\n", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for system in args.systems.split(","):
            rows.append(run_row(system, args, tmp))
            print(f"{system}: {note(rows[-1])}", file=sys.stderr, flush=True)
    print("\n".join(table(rows)))
    if any(r.get("epoch_time") == "extrapolated" for r in rows):
        print("\n* extrapolated from the clips timed (--max-clips)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**info, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
