"""Tuning probe for sluice's GPU path: runs loader configurations one after another, each in its
own process with SLUICE_TRACE=1, and prints images/s, cores busy, the routes taken and the batch
trace (mean time between stages, engine busy share). Not a benchmark against peers: that is
bench/gpu_bench.py.

    python bench/gpu_probe.py DATA --seconds 5 \
        --config route=hardware --config route=auto,threads=10,prefetch=4 \
        --config route=hardware,pipeline=resize,env.CUDA_MODULE_LOADING=EAGER

Config keys: route (auto|hardware|hybrid|cpu), threads, io, prefetch, budget_mib, batch,
pipeline (rrc: RandomResizedCrop 224 + flip + normalize; resize: Resize 224 + CenterCrop 224,
a decode of the whole image; seed: bench/augment_bench.py's seed list, float32),
source (files: DATA as an image folder, the default; shards: DATA packed once by `sluice pack`
into DATA.shards, read through sluice.WebDataset), env.NAME=VALUE (environment of that run), beside=N (a CPU-only sluice loader of N threads runs
in another process meanwhile, on the same files: does CPU work that is not the GPU loader's own
slow the engines?).

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
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


def cpu_jiffies() -> int:
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    return sum(vals) - vals[3] - (vals[4] if len(vals) > 4 else 0)


def parse(config: str) -> dict:
    out = {}
    for item in filter(None, config.split(",")):
        key, _, value = item.partition("=")
        out[key.strip()] = value.strip()
    return out


def child(data: str, config: dict, seconds: float) -> None:
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

    def batches():
        epoch = 0
        while True:
            loader.set_epoch(epoch)
            for images, _ in loader:
                yield images
            epoch += 1

    it = batches()
    for _ in range(3):
        sink += next(it)[:, 0, 0, 0].float().sum()
    torch.cuda.synchronize()
    loader.reset_stats()
    j0, t0, n = cpu_jiffies(), time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        images = next(it)
        sink += images[:, 0, 0, 0].float().sum()
        n += images.shape[0]
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    cores = (cpu_jiffies() - j0) / os.sysconf("SC_CLK_TCK") / dt
    st = loader.stats()
    poller.stop()
    print(json.dumps({"images_per_s": n / dt, "cores": cores, "routes": st.get("route_samples"),
                      "gpu_peak_mib": st.get("gpu_memory_peak", 0) / 2**20,
                      "process_mib": (poller.peak or 0) / 2**20,
                      "threads": st.get("num_threads"), "io": st.get("io_threads")}), flush=True)
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


def beside(data: str, threads: int) -> None:
    """The neighbour of a `beside=N` configuration: a CPU loader, drained until it is killed."""
    import sluice
    import sluice.transforms as T

    loader = sluice.Loader(data, [T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                  T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                           batch_size=256, dtype="float16", shuffle=True, seed=1, num_threads=threads)
    for epoch in range(1 << 30):
        loader.set_epoch(epoch)
        for _ in loader:
            pass


def stacks(pid: int) -> str:
    """Every thread's native stack (gdb from SLUICE_PROBE_GDB), identical stacks counted once."""
    import collections
    import re
    import shlex
    try:
        text = subprocess.run(shlex.split(os.environ["SLUICE_PROBE_GDB"]) +
                              ["-p", str(pid), "-batch", "-ex", "thread apply all bt 14"],
                              capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"gdb failed: {e}"
    groups = collections.Counter()
    name, frames = None, []
    for line in text.splitlines() + ["Thread end"]:
        if line.startswith("Thread "):
            if name is not None:
                groups[(name, " < ".join(frames))] += 1
            m = re.search(r'"([^"]*)"', line)
            name, frames = (m.group(1) if m else "?"), []
        else:
            m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?([\w:~<>,\[\]* ]+?)\s*\(", line)
            if m and name is not None:
                frames.append(m.group(1).strip()[:60])
    return "\n".join(f"  {n}x {name}: {stack}" for (name, stack), n in groups.most_common())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--config", action="append", default=[], help="key=value,... (repeatable)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=40.0)
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    ap.add_argument("--_beside", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child is not None:
        child(args.data, parse(args._child), args.seconds)
        return 0
    if args._beside is not None:
        beside(args.data, args._beside)
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
        neighbour = None
        if "beside" in cfg:
            neighbour = subprocess.Popen([sys.executable, os.path.abspath(__file__), args.data,
                                          "--_beside", cfg["beside"]], stdout=subprocess.DEVNULL)
            time.sleep(2)  # its threads are busy before the measured loader starts
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
            if neighbour is not None:
                neighbour.kill()
                neighbour.wait()
            fo.seek(0)
            fe.seek(0)
            out, err = fo.read(), fe.read()
        result = next((json.loads(ln) for ln in out.splitlines() if ln.startswith("{")), None)
        trace = [ln for ln in err.splitlines() if ln.startswith(("sluice trace", "sluice: waited", "  batch"))]
        if result is None:
            print(f"{config}: FAILED {err.strip().splitlines()[-3:] if err.strip() else ''}", flush=True)
            for line in trace[:40]:
                print("   ", line, flush=True)
            continue
        rows.append((config, result))
        print(f"{config}: {result['images_per_s']:,.0f} img/s, {result['cores']:.1f} cores, "
              f"routes {result['routes']}, pool peak {result['gpu_peak_mib']:.0f} MiB, "
              f"process {result['process_mib']:.0f} MiB, "
              f"threads {result['threads']}+{result['io']} io", flush=True)
        for line in trace:
            print("   ", line, flush=True)
    print("\n| config | img/s | cores | process MiB |\n|---|---:|---:|---:|")
    for config, r in rows:
        print(f"| {config} | {r['images_per_s']:,.0f} | {r['cores']:.1f} | {r['process_mib']:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
