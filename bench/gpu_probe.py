"""Tuning probe for sluice's GPU path: runs loader configurations one after another, each in its
own process with SLUICE_TRACE=1, and prints images/s, cores busy, the routes taken, the engines'
megapixels/s (whole files) and the batch trace (mean time between stages, engine busy share). Not
a benchmark against peers: that is bench/gpu_bench.py.

    python bench/gpu_probe.py DATA --seconds 5 \
        --config route=hardware --config route=auto,threads=10,prefetch=4 \
        --config route=hardware,pipeline=resize,env.CUDA_MODULE_LOADING=EAGER

Config keys: route (auto|hardware|hybrid|cpu), threads, io, prefetch, budget_mib, batch,
pipeline (rrc: RandomResizedCrop 224 + flip + normalize; resize: Resize 224 + CenterCrop 224,
a decode of the whole image; voc: bench/scaling_bench.py's Resize((640, 640)) + normalize;
seed: bench/augment_bench.py's seed list, float32),
source (files: DATA as an image folder, the default; shards: DATA packed once by `sluice pack`
into DATA.shards, read through sluice.WebDataset), env.NAME=VALUE (environment of that run),
beside=N (a CPU-only sluice loader of N threads runs in another process meanwhile, on the same
files: does CPU work that is not the GPU loader's own slow the engines?), load (what beside=N
runs: loader, the default; spin: N processes of a loop that touches no memory, busy cores alone;
stream: N processes copying 64 MiB arrays, memory bandwidth and caches as well), sched
(spin|yield|blocking: how the CUDA context's host threads wait, set before the context exists),
uploads=MB/s (a thread of the measured process copies 600-KiB chunks from page-locked memory to
the GPU at that rate meanwhile: do the CPU side's uploads slow the engines?), affinity=split (the
loader's threads that feed the engines, its I/O threads and the main thread on the first 3
physical cores, both hyperthreads; its decode threads on the others).

The experiment knobs of the library (core/env_knob.h) go through env.: SLUICE_ENGINE_IMAGES (images
per engine in one engine call; 32), SLUICE_ENGINE_STATES (call sizes to initialize nvJPEG states
for at the start, separated by colons: 128:224), SLUICE_ROUTE_SHARE (auto's CPU share, held),
SLUICE_ROUTE_START (the share auto starts from), SLUICE_ROUTE_WINDOW_MS (the shortest window auto
measures a share in; 250), SLUICE_CPU_SIDE (1: libjpeg-turbo, 2: hybrid), SLUICE_READ_AHEAD (0:
off), SLUICE_ENGINE_MAX_SIDE (the largest image side the engines take; 1024), SLUICE_READ_PINNED
(0: encoded files are read into pageable memory, in the bare loop too; 1, the default: page-locked),
SLUICE_ENGINE_WAIT (the host waits for the last engine call before the next: 2, the default, any
decoder's; 1, this decoder's; 0, none), SLUICE_ENGINE_GATHER
(engine calls may take the samples of several queued batches, up to this many; 0: off),
SLUICE_ENGINE_PAD (what fills an engine call up to its nvJPEG state's size: 0, a corner of the
call's smallest file, whose whole bitstream the engines decode; 1, a 16 x 16 JPEG; 2, the default,
a 16 x 16 JPEG, the states' image slots at most the call width + 32 in all), SLUICE_ENGINE_SPLIT
(1: a turn past the call width goes as full calls of the largest state first where balanced calls
would initialize a state again; 0, the default: balanced calls), SLUICE_ENGINE_PRIORITY (1: the
engine threads' streams at the device's greatest priority; 0, the default: CUDA's default),
SLUICE_PACK_EARLY (1: the I/O thread that plans a batch packs its engine samples' resampling
tables, not the engine threads after their calls; 0: the engine threads; unset, the default: the
planning thread for batches of up to 64, the engine threads above), SLUICE_CUDA_WAIT (0: CUDA's
waits as CUDA chose, spinning here; 1, the default: blocking where CUDA chose; a `sched` given is
kept either way), SLUICE_CPU_ZEROCOPY (1: the finishing kernel reads the CPU route's pinned
buffers across the bus, no CUDA call per CPU-side sample; 0, the default: a device copy of each),
SLUICE_ENGINE_SHARED_STATES (1, the default: the two engine threads draw their nvJPEG states
from one pool; 0: a pool each), SLUICE_POOL_CAP (the device pool's cap as a multiple of the budget; 0: uncapped), SLUICE_SWEEP_MS
(the pools' sweep as an epoch starts at most once per this many ms; 0: every epoch). auto's
windows (stats()["route_windows"]) are counted into a summary per row: share -> windows, mean
img/s (engines busy), and listed in order with their phases (hold, probe, check).
Each row also gives the CPU time of each group of threads (by name: sluice-nvjpeg, sluice-cpu,
sluice-io, the rest) in cores.

    python bench/gpu_probe.py DATA --engine-widths 16,32,37,64 [--config ...]

measures the engines' bare loop (whole images) at those images per engine, then runs the
configurations given, if any.

A configuration that does not finish within --timeout seconds is killed; with SLUICE_PROBE_GDB
set to a gdb command line (scripts/device_run.sh probe sets it), every thread's stack is
printed first.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from gpu_bench import core_reading, interval_cores, window_sequence, window_summary

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


def parse(config: str) -> dict:
    out = {}
    for item in filter(None, config.split(",")):
        key, _, value = item.partition("=")
        out[key.strip()] = value.strip()
    return out


def set_sched(mode: str) -> None:
    """How the primary context's host threads wait for the GPU, before anything creates it."""
    import ctypes
    flags = {"spin": 1, "yield": 2, "blocking": 4}[mode]
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0) != 0 or cuda.cuDevicePrimaryCtxSetFlags(0, flags) != 0:
        raise RuntimeError(f"cannot set the context's scheduling to {mode}")


def physical_cores() -> list:
    """The CPUs this process may use, grouped by physical core (hyperthread siblings together)."""
    groups, seen = [], set()
    for cpu in sorted(os.sched_getaffinity(0)):
        if cpu in seen:
            continue
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                text = f.read().strip()
        except OSError:
            text = str(cpu)
        sib = set()
        for part in text.split(","):
            a, _, b = part.partition("-")
            sib.update(range(int(a), int(b or a) + 1))
        sib &= os.sched_getaffinity(0)
        seen |= sib
        groups.append(sorted(sib))
    return groups


def split_affinity(feed_cores: int = 3) -> str:
    """Engine-feeding, I/O and main threads on the first physical cores; decode threads apart."""
    cores = physical_cores()
    feed = [c for g in cores[:feed_cores] for c in g]
    rest = [c for g in cores[feed_cores:] for c in g] or feed
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
            os.sched_setaffinity(int(tid), rest if name.startswith("sluice-cpu") else feed)
        except OSError:
            pass
    return f"feed {feed}, decode {rest}"


class Uploads(threading.Thread):
    """An `uploads=MB/s` configuration's load: a thread of the measured process copies chunks of
    600 KiB (a decoded 0.2-MP image) from page-locked host memory to the GPU at that rate, on a
    stream of its own, as the CPU side's uploads do beside the engines."""

    CHUNK = 600 << 10

    def __init__(self, mb_per_s: float):
        super().__init__(daemon=True)
        import torch
        self.torch, self.per_chunk, self.chunks = torch, self.CHUNK / (mb_per_s * 1e6), 0
        self.host = torch.empty(8 * self.CHUNK, dtype=torch.uint8).pin_memory()
        self.dev = torch.empty(8 * self.CHUNK, dtype=torch.uint8, device="cuda")
        self.stream, self.stop = torch.cuda.Stream(), threading.Event()
        self.t0 = time.perf_counter()
        self.start()

    def run(self) -> None:
        due = time.perf_counter()
        with self.torch.cuda.stream(self.stream):
            while not self.stop.is_set():
                k = self.chunks % 8 * self.CHUNK
                self.dev[k:k + self.CHUNK].copy_(self.host[k:k + self.CHUNK], non_blocking=True)
                self.chunks += 1
                if self.chunks % 8 == 0:
                    self.stream.synchronize()  # the buffers are reused
                due += self.per_chunk
                time.sleep(max(0.0, due - time.perf_counter()))

    def finish(self) -> float:
        """Stops; the rate reached, MB/s."""
        self.stop.set()
        self.join()
        return self.chunks * self.CHUNK / (time.perf_counter() - self.t0) / 1e6


def child(data: str, config: dict, seconds: float) -> None:
    if "sched" in config:
        set_sched(config["sched"])
    import torch
    import sluice
    import sluice.transforms as T

    pipeline, dtype = config.get("pipeline", "rrc"), "float16"
    if pipeline == "seed":  # bench/augment_bench.py's seed list, float32 as there
        sys.path.insert(0, HERE)
        from augment_bench import seed_list
        tf, dtype = seed_list(T, 224, T.Cutout(1, 16)), "float32"
    elif pipeline == "resize":
        tf = [T.Resize(224), T.CenterCrop(224), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    elif pipeline == "voc":  # the multi-GPU experiment's list (use with batch=32)
        tf = [T.Resize((640, 640)), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    else:
        tf = [T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
              T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    kw = {"decode_route": config.get("route", "auto")}
    for key, arg in (("threads", "num_threads"), ("io", "io_threads"), ("prefetch", "prefetch")):
        if key in config:
            kw[arg] = int(config[key])
    if "budget_mib" in config:
        kw["gpu_memory_budget"] = int(config["budget_mib"]) << 20
    sys.path.insert(0, HERE)
    from gpu_bench import GpuMemoryPoller
    poller = GpuMemoryPoller()  # the process's GPU memory as the driver reports it
    poller.start()
    source = sluice.WebDataset(os.path.join(shards_of(data), "shard-*.tar")) if config.get("source") == "shards" else data
    loader = sluice.Loader(source, tf, batch_size=int(config.get("batch", 256)), device="cuda",
                           dtype=dtype, shuffle=True, seed=0, **kw)
    sink = torch.zeros((), device="cuda")
    placed = None

    def batches(loader):
        epoch = 0
        while True:
            loader.set_epoch(epoch)
            for images, _ in loader:
                yield images
            epoch += 1

    it = batches(loader)
    for _ in range(3):
        sink += next(it)[:, 0, 0, 0].float().sum()
    if config.get("affinity") == "split":  # the loader's threads exist once a batch came
        placed = split_affinity()
    torch.cuda.synchronize()
    uploads = Uploads(float(config["uploads"])) if "uploads" in config else None
    loader.reset_stats()
    before, t0, n = core_reading(), time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        images = next(it)
        sink += images[:, 0, 0, 0].float().sum()
        n += images.shape[0]
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    cores = interval_cores(before)
    st = loader.stats()
    poller.stop()
    uploaded = uploads.finish() if uploads else None
    print(json.dumps({"images_per_s": n / dt, "uploads_mb_per_s": uploaded, "cores": cores["cores_busy"],
                      "cores_stolen": cores["cores_stolen"],
                      "routes": st.get("route_samples"), "windows": st.get("route_windows", []),
                      "engine_mpix_per_s": st.get("route_pixels", {}).get("hardware", 0) / 1e6 / dt,
                      "gpu_peak_mib": st.get("gpu_memory_peak", 0) / 2**20,
                      "process_mib": (poller.peak or 0) / 2**20,
                      "threads": st.get("num_threads"), "io": st.get("io_threads"), "groups": cores["thread_cores"],
                      "engine_busy": st.get("engine_busy_seconds", 0) / max(st.get("wall_seconds", 0), 1e-9),
                      "engine_threads": {k: v / max(st.get("wall_seconds", 0), 1e-9)
                                         for k, v in st.get("engine_thread_seconds", {}).items()},
                      "states": st.get("engine_state_inits", 0), "state_seconds": st.get("engine_state_seconds", 0),
                      "pads": st.get("engine_pads", 0), "calls": st.get("engine_calls", 0),
                      "placed": placed}), flush=True)
    del it
    del loader  # prints the trace to stderr


def shards_of(data: str) -> str:
    """DATA packed into WebDataset shards (DATA.shards), once."""
    out = data.rstrip("/") + ".shards"
    if not os.path.exists(os.path.join(out, "manifest.json")):
        from sluice.pack import pack

        s = pack(data, out, progress=False)
        print(f"packed {s['samples']:,} images into {s['shards']} shards in {out}: "
              f"{s['images_per_s']:,.0f} images/s", flush=True)
    return out


def engine_widths(data: str, widths: str, seconds: float) -> None:
    """The engines' bare loop over DATA's whole images at each images-per-engine in `widths`."""
    from sluice import _core
    files = []
    for root, _, names in os.walk(data):
        for n in sorted(names):
            with open(os.path.join(root, n), "rb") as f:
                files.append(f.read())
    print("\n| images per engine | images per call | img/s | MP/s (whole files) |\n|---:|---:|---:|---:|", flush=True)
    for w in (int(x) for x in widths.split(",")):
        r = _core._engine_rate(files, seconds, 0, w)
        print(f"| {w} | {r['call_width']} | {r['images'] / r['seconds']:,.0f} | {r['pixels'] / 1e6 / r['seconds']:,.0f} |",
              flush=True)


def neighbours(data: str, cfg: dict) -> list[subprocess.Popen]:
    """The processes a `beside=N` configuration runs beside the measured one (none without it):
    one CPU loader of N threads, or N processes of `load`."""
    if "beside" not in cfg:
        return []
    n, load = int(cfg["beside"]), cfg.get("load", "loader")
    if load not in ("loader", "spin", "stream"):
        raise ValueError(f"load={load!r}: one of loader, spin, stream")
    cmd = [sys.executable, os.path.abspath(__file__), data, "--_beside"]
    if load == "loader":
        return [subprocess.Popen(cmd + [str(n)], stdout=subprocess.DEVNULL)]
    return [subprocess.Popen(cmd + ["1", "--_load", load], stdout=subprocess.DEVNULL) for _ in range(n)]


def beside(data: str, threads: int, load: str) -> None:
    """A neighbour of a `beside=N` configuration, until it is killed: a CPU loader of `threads`
    threads, drained; or one busy loop (spin) or memory copy (stream)."""
    if load == "spin":
        while True:
            pass
    if load == "stream":
        import numpy as np
        src = np.ones(8 << 20)  # 64 MiB of float64, far past any cache
        dst = np.empty_like(src)
        while True:
            np.copyto(dst, src)
    import sluice
    import sluice.transforms as T

    loader = sluice.Loader(data, [T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                  T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                           batch_size=256, dtype="float16", shuffle=True, seed=1, num_threads=threads)
    for epoch in range(1 << 30):
        loader.set_epoch(epoch)
        for _ in loader:
            pass


def gdb_threads(pid: int) -> str:
    """gdb's `info threads` and every thread's backtrace (gdb from SLUICE_PROBE_GDB), as printed."""
    import shlex
    try:
        return subprocess.run(shlex.split(os.environ["SLUICE_PROBE_GDB"]) +
                              ["-p", str(pid), "-batch", "-ex", "info threads", "-ex", "thread apply all bt 40"],
                              capture_output=True, text=True, timeout=90).stdout
    except (KeyError, OSError, subprocess.SubprocessError) as e:
        return f"gdb failed: {e!r}"


def stacks(pid: int) -> str:
    """Every thread's native stack, identical stacks counted once; a frame without a symbol is
    named by its library (??@libcuda.so.1)."""
    import collections
    import re
    text = gdb_threads(pid)
    if text.startswith("gdb failed"):
        return text
    groups = collections.Counter()
    name, frames = None, []
    for line in text.splitlines() + ["Thread end"]:
        if line.startswith("Thread "):
            if name is not None:
                groups[(name, " < ".join(frames))] += 1
            m = re.search(r'"([^"]*)"', line)
            name, frames = (m.group(1) if m else "?"), []
        elif name is not None:
            m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?([\w:~<>,\[\]* ]+?)\s*\(", line)
            if m:
                frames.append(m.group(1).strip()[:60])
            elif (m := re.match(r"#\d+\s+0x[0-9a-f]+ in \?\? \(\) from \S*/([^/\s]+)", line)):
                frames.append(f"??@{m.group(1)}")
    return "\n".join(f"  {n}x {name}: {stack}" for (name, stack), n in groups.most_common())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--config", action="append", default=[], help="key=value,... (repeatable)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=40.0)
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    ap.add_argument("--_beside", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--_load", default="loader", help=argparse.SUPPRESS)
    ap.add_argument("--engine-widths", help="images per engine, comma-separated: the bare loop first")
    args = ap.parse_args()
    if args.engine_widths:
        engine_widths(args.data, args.engine_widths, args.seconds)
        if not args.config:
            return 0
    if args._child is not None:
        child(args.data, parse(args._child), args.seconds)
        return 0
    if args._beside is not None:
        beside(args.data, args._beside, args._load)
        return 0
    rows = []
    if any(parse(c).get("source") == "shards" for c in args.config):
        shards_of(args.data)
    for config in args.config or ["route=auto"]:
        cfg = parse(config)
        env = dict(os.environ, SLUICE_TRACE="1")
        env.update({k[4:]: v for k, v in cfg.items() if k.startswith("env.")})
        cmd = [sys.executable, os.path.abspath(__file__), args.data, "--_child", config,
               "--seconds", str(args.seconds)]
        others = neighbours(args.data, cfg)
        if others:
            time.sleep(2)  # their threads are busy before the measured loader starts
        with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
            p = subprocess.Popen(cmd, env=env, stdout=fo, stderr=fe, text=True)
            try:
                p.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                if os.environ.get("SLUICE_PROBE_GDB"):  # where every thread is, before the kill
                    print(f"{config}: timed out; thread stacks:", flush=True)
                    print(stacks(p.pid), flush=True)
                p.kill()
                p.wait()
                fe.write("\ntimeout")
            for other in others:
                other.kill()
                other.wait()
            fo.seek(0)
            fe.seek(0)
            out, err = fo.read(), fe.read()
        result = next((json.loads(ln) for ln in out.splitlines() if ln.startswith("{")), None)
        trace = [ln for ln in err.splitlines() if ln.startswith(("sluice trace", "sluice: waited", "  batch"))
                 and not ln.startswith("sluice trace: route window")]  # those come from the stats
        if result is None:
            print(f"{config}: FAILED {err.strip().splitlines()[-3:] if err.strip() else ''}", flush=True)
            for line in trace[:40]:
                print("   ", line, flush=True)
            continue
        rows.append((config, result))
        print(f"{config}: {result['images_per_s']:,.0f} img/s, {result['cores']:.1f} cores "
              f"({result.get('cores_stolen', 0):.2f} stolen), "
              f"routes {result['routes']}, pool peak {result['gpu_peak_mib']:.0f} MiB, "
              f"process {result['process_mib']:.0f} MiB, "
              f"threads {result['threads']}+{result['io']} io, engines busy {result['engine_busy']:.0%}, "
              f"engines {result.get('engine_mpix_per_s', 0):,.0f} MP/s, "
              f"nvJPEG states made {result.get('states', 0)} ({result.get('state_seconds', 0):.2f} s), "
              f"pads {result.get('pads', 0):,} in {result.get('calls', 0):,} calls, "
              f"thread groups (cores) {result['groups']}", flush=True)
        if result.get("placed"):
            print(f"    placed: {result['placed']}", flush=True)
        if result.get("uploads_mb_per_s") is not None:
            print(f"    uploads beside it: {result['uploads_mb_per_s']:,.0f} MB/s", flush=True)
        for line in trace:
            print("   ", line, flush=True)
        windows = result.get("windows") or []
        if windows:
            print(f"    route windows (share: count x mean img/s, in order of first use): {window_summary(windows)}",
                  flush=True)
            print(f"    route windows in order (share, phase x count): {window_sequence(windows)}", flush=True)
    print("\n| config | img/s | cores | engines busy | engines MP per busy s | off the engines "
          "| engine threads' CPU us per engine image | engine threads: turn / turn wait / memory wait / pack "
          "(s per s) | nvjpeg / cpu / io threads (cores) | process MiB |\n"
          "|---|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for config, r in rows:
        g = r["groups"]
        print(f"| {config} | {r['images_per_s']:,.0f} | {r['cores']:.1f} | {r['engine_busy']:.0%} | "
              f"{per_busy_second(r):,.0f} | {off_engines(r['routes']):.0%} | {engine_cpu_us(r):.1f} | "
              f"{engine_split(r)} | "
              f"{g.get('sluice-nvjpeg', 0):.2f} / {g.get('sluice-cpu', 0):.2f} / {g.get('sluice-io', 0):.2f} | "
              f"{r['process_mib']:,.0f} |")
    return 0


def engine_split(result: dict) -> str:
    """The engine threads' seconds per second in their turns, waiting for a turn, waiting for a
    batch's memory and packing samples, summed over the threads (stats' engine_thread_seconds
    over the wall time): where they are when the engines idle. "-" without those stats."""
    t = result.get("engine_threads") or {}
    if not t:
        return "-"
    return " / ".join(f"{t.get(k, 0):.2f}" for k in ("turn", "turn_wait", "memory_wait", "pack"))


def per_busy_second(result: dict) -> float:
    """The engines' megapixels per second they were busy (0 when they never were): beside CPU
    work their calls can hold them longer for the same pixels, which busy shares alone hide."""
    busy = result.get("engine_busy") or 0
    return result.get("engine_mpix_per_s", 0) / busy if busy > 0 else 0.0


def engine_cpu_us(result: dict) -> float:
    """The engine threads' CPU microseconds per image the engines decoded (their cores over
    those images per second; their spin-waits for the engines included); 0 without engine
    images."""
    engine_rate = result["images_per_s"] * (1 - off_engines(result["routes"]))
    return result["groups"].get("sluice-nvjpeg", 0) / engine_rate * 1e6 if engine_rate > 0 else 0.0


def off_engines(routes: dict) -> float:
    """The share of the samples decoded other than on the engines."""
    total = sum(routes.values())
    return 1 - routes.get("hardware", 0) / total if total else 0.0


if __name__ == "__main__":
    sys.exit(main())
