"""Video clips benchmark (issue 20, the seed users' experiment): seconds per epoch and clips/s.

Every row loads the clips of sluice.Videos(DATA, sequence_length=L, stride=S, step=P), each once
per epoch, shuffled (P = --step, default L * S; DALI gets it too), resizes each frame to --out-size
(HxW, bilinear, antialiased), normalizes it (ImageNet) to float16: batches (N, F, C, H, W). Rows
(--systems, each NAME or NAME:THREADS, THREADS defaulting to --threads):
  sluice           sluice.Loader(videos, [Resize, Normalize], num_threads=THREADS, device="cpu")
  sluice-cuda      the same with device="cuda": clips decoded on NVDEC, transformed on the GPU
  pyav             torch DataLoader, THREADS workers, PyAV (bench/video_peers.py)
  torchcodec       the same with torchcodec on the CPU; torchcodec-cuda: on the GPU, no workers
  dali             fn.readers.video(device="gpu") -> fn.resize -> fn.crop_mirror_normalize, THREADS
Each row runs in its own process (skipped, with the reason, where its library or CUDA is missing),
takes 1 warm-up batch, then times the rest of --epochs epochs or until --max-clips clips. s/epoch
= clips per epoch / clips/s ("extrapolated" where --max-clips cut the epoch). Peak RSS: the row
process's VmHWM; the note adds the summed PSS of it and its workers, on CUDA torch's
max_memory_allocated, and the GPU's decoder (NVDEC) and SM utilisation from nvidia-smi over the
timed part (the whole GPU's: other processes count too).

    python bench/video_bench.py DATA [--make N [--distinct K] [--speed veryfast]] [--frames 300]
        [--size 1920x1080] [--sequence-length 16] [--stride 2] [--step P] [--batch-size 8]
        [--out-size 360x640] [--threads 16] [--epochs 1] [--max-clips M] [--timeout 1800] [--check]
        [--systems sluice,sluice-cuda,pyav:8,pyav:16,torchcodec,dali] [--json out.json]
DATA: class folders of videos. --make N first writes N synthetic H.264 videos there (30 fps, key
frame every 30, 2 B-frames, x264 preset --speed) unless it holds N; with --distinct K, K of them
are encoded and the rest are copies (decoders do the same work on a copy; it saves encoding
time); --make-only stops there. --check first reads the frame numbers stamped in every clip of
the first two videos from sluice and the pyav decoder, and compares the outputs.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from video_peers import (MEAN, STD, GpuLoad, PyAVClips, RowSkipped, decode_clip, dali_row,  # noqa: E402
                         pyav_items, pyav_row, torchcodec_row)

SYSTEMS = ("sluice", "sluice-cuda", "pyav", "torchcodec", "torchcodec-cuda", "dali")
CUDA_SYSTEMS = ("sluice-cuda", "torchcodec-cuda", "dali")


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
    distinct = min(args.distinct or args.make, args.make)
    paths = make_videos(args.data, count=distinct, classes=2, frames=args.frames, width=args.size[0],
                        height=args.size[1], codec="h264", fps=30, gop=30, bframes=2, speed=args.speed, progress=True)
    for i in range(distinct, args.make):  # copies, into the class folders make_videos uses
        target = os.path.join(args.data, f"class_{i % 2:03d}", f"video_{i:05d}.mp4")
        shutil.copyfile(paths[i % distinct], target)
    print(f"{args.data}: {distinct} videos encoded, {args.make - distinct} copies", flush=True)


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


def sluice_row(args, videos, device: str, threads: int):
    import sluice
    import sluice.transforms as T
    try:
        import torch
    except ImportError:
        torch = None
    loader = sluice.Loader(videos, [T.Resize(tuple(args.out_size)), T.Normalize(MEAN, STD)],
                           batch_size=args.batch_size, shuffle=True, dtype="float16", num_threads=threads,
                           device=device, output="torch" if torch else "numpy")
    def extra():
        st = loader.stats()
        return {"sluice_gpu_memory_peak": st.get("gpu_memory_peak"), "threads": threads,
                "frames_decoded_per_clip": st.get("video_frames_decoded", 0) / max(1, st["samples"])}
    return loader, loader.set_epoch, loader.num_samples, extra


def measure(batches, per_epoch: int, args, cuda: bool) -> dict:
    """Times the batches after the first; stops at --max-clips clips taken (warm-up included)."""
    sync = (lambda: __import__("torch").cuda.synchronize()) if cuda else (lambda: None)
    it, sink, t0 = iter(batches), [], time.perf_counter()
    first = next(it)
    sync()
    first_s, total = time.perf_counter() - t0, per_epoch * args.epochs
    limit, taken, timed = min(total, args.max_clips or total), len(first), 0
    load = GpuLoad() if cuda else None
    if load:
        load.start()
    t1 = time.perf_counter()
    while taken < limit and (clips := next(it, None)) is not None:
        sink.append(clips[:, 0, 0, 0, 0].sum())  # the batch is there: a reduction on its device
        taken, timed = taken + len(clips), timed + len(clips)
    sync()
    seconds = time.perf_counter() - t1
    gpu_load = load.stop() if load else {}
    if not timed:
        raise RuntimeError(f"nothing timed after the warm-up batch: {taken} clips")
    rate = timed / seconds
    return {"clips_per_s": rate, "frames_per_s": rate * args.sequence_length, "s_per_epoch": per_epoch / rate,
            "epoch_time": "measured" if taken >= total else "extrapolated", "clips_per_epoch": per_epoch,
            "clips_timed": timed, "seconds_timed": seconds, "first_batch_s": first_s,
            "shape": list(first.shape), "dtype": str(first.dtype), **gpu_load}


def system_spec(spec: str, args) -> tuple[str, int]:
    """"pyav:8" -> ("pyav", 8); "sluice" -> ("sluice", --threads)."""
    name, _, threads = spec.partition(":")
    return name, int(threads) if threads else args.threads


def make_row(args, videos, spec: str):
    name, threads = system_spec(spec, args)
    if name in ("sluice", "sluice-cuda"):
        return sluice_row(args, videos, "cuda" if name == "sluice-cuda" else "cpu", threads)
    if name == "pyav":
        return pyav_row(args, videos, threads)
    if name in ("torchcodec", "torchcodec-cuda"):
        return torchcodec_row(args, videos, threads, "cuda" if name == "torchcodec-cuda" else "cpu")
    return dali_row(args, videos, threads)


def child(args, system: str) -> dict:
    cuda, peak, done = system_spec(system, args)[0] in CUDA_SYSTEMS, [0, 1], threading.Event()
    sampler = threading.Thread(target=sample_pss, args=(peak, done), daemon=True)
    sampler.start()
    try:
        if cuda:
            try:
                import torch
            except ImportError:
                torch = None
            if not (torch and torch.cuda.is_available()):
                raise RowSkipped(f"torch.cuda is not available ({f'torch {torch.__version__}' if torch else 'no torch'})")
        loader, start, per_epoch, extra = make_row(args, open_videos(args), system)
        result = {**measure(epochs(args, loader, start), per_epoch, args, cuda), **extra()}
        if cuda:
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
    if r.get("frames_decoded_per_clip"):
        parts.append(f"{r['frames_decoded_per_clip']:.1f} pictures decoded a clip")
    if r.get("sm_util_mean") is not None:
        parts.append(f"SMs busy {r['sm_util_mean']:.0f}%")
    if r.get("dali_clips_per_epoch") not in (None, r["clips_per_epoch"]):
        parts.append(f"DALI counts {r['dali_clips_per_epoch']} clips")
    return "; ".join(parts)


def table(rows: list) -> list:
    out = ["| system | clips/s | frames/s | s/epoch | NVDEC busy % | peak RSS MiB | note |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        nvdec = f"{r['nvdec_util_mean']:.0f} (max {r['nvdec_util_max']})" if "nvdec_util_mean" in r else "-"
        cells = ["-"] * 5 if "clips_per_s" not in r else [
            f"{r['clips_per_s']:,.1f}", f"{r['frames_per_s']:,.0f}",
            f"{r['s_per_epoch']:,.2f}" + "*" * (r["epoch_time"] == "extrapolated"), nvdec,
            f"{r['peak_rss'] / 2**20:,.0f}"]
        out.append(f"| {r['system']} | {' | '.join(cells)} | {note(r)} |")
    return out


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="a folder of class folders of videos")
    for name, kind, default, what in (
            ("make", int, None, "first write N videos there"), ("frames", int, 300, "--make's frames per video"),
            ("distinct", int, None, "--make: encode K, copy the rest"), ("speed", str, "medium", "--make's x264 preset"),
            ("size", size_arg, (1920, 1080), "--make's WxH"), ("sequence-length", int, 16, None),
            ("stride", int, 2, None), ("step", int, None, "default: sequence length * stride"),
            ("batch-size", int, 8, None), ("out-size", size_arg, (360, 640), "HxW"),
            ("threads", int, 16, "loader threads, DataLoader workers"), ("epochs", int, 1, None),
            ("max-clips", int, None, None), ("systems", str, ",".join(SYSTEMS), None),
            ("timeout", float, 1800, "seconds per row"), ("json", str, None, None)):
        ap.add_argument(f"--{name}", type=kind, default=default, help=what)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--make-only", action="store_true", help="write the videos (--make) and stop")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.step = args.step or args.sequence_length * args.stride
    for spec in args.systems.split(","):
        name, _, threads = spec.partition(":")
        if name not in SYSTEMS or (threads and not threads.isdigit()):
            ap.error(f"--systems: {spec!r}: choose among {', '.join(SYSTEMS)}, each maybe with :THREADS")
    return args


def main() -> None:
    args = parse_args()
    if args._child:
        return print(json.dumps(child(args, args._child)), flush=True)
    if args.make:
        make_data(args)
    if args.make_only:
        return
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
