"""Soak: many epochs of one loader, with the process's memory after each (host RSS; on the GPU
also the loader's GPU memory and the device memory in use), to show it stays flat.

    python bench/soak.py DATA --epochs 100 [--device cuda] [--json soak.json]

Prints one line per 10 epochs and a verdict: the growth from the end of the warm-up (epoch
--warmup) to the last epoch, against --tolerance-mib. Exit status 1 when it grows more.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import sluice
import sluice.transforms as T


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    return kb / 1024


def device_used_mib() -> float | None:
    """Device memory in use by every process (NVML), or None without a GPU."""
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).used / 2**20
    except Exception:
        pass
    try:
        import torch
        free, total = torch.cuda.mem_get_info()
        return (total - free) / 2**20
    except Exception:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--tolerance-mib", type=float, default=16)
    p.add_argument("--json")
    a = p.parse_args(argv)
    cuda = a.device.startswith("cuda")
    loader = sluice.Loader(a.data, [T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                    T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                           batch_size=a.batch_size, shuffle=True, device=a.device, dtype="float16",
                           output="torch" if cuda else "auto")
    rows = []
    t0 = time.time()
    for epoch in range(a.epochs):
        n = 0
        for images, _ in loader:
            n += images.shape[0]
        if cuda:
            import torch
            torch.cuda.synchronize()
        stats = loader.stats()
        row = {"epoch": epoch, "samples": n, "rss_mib": round(rss_mib(), 1),
               "host_pool_peak_mib": round(stats["host_memory_peak"] / 2**20, 1), "seconds": round(time.time() - t0, 1)}
        if cuda:
            row["gpu_pool_mib"] = round(stats["gpu_memory_in_use"] / 2**20, 1)
            row["device_used_mib"] = round(device_used_mib() or 0, 1)
        rows.append(row)
        if epoch % 10 == 9 or epoch == a.epochs - 1:
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    base, last = rows[min(a.warmup, len(rows) - 1)], rows[-1]
    growth = {k: round(last[k] - base[k], 1) for k in ("rss_mib", "gpu_pool_mib", "device_used_mib") if k in last}
    ok = all(v <= a.tolerance_mib for v in growth.values())
    print(f"soak {a.device}: {a.epochs} epochs of {rows[-1]['samples']} samples; growth from epoch {base['epoch']} "
          f"to {last['epoch']}: " + ", ".join(f"{k} {v:+.1f}" for k, v in growth.items()) +
          f" (tolerance {a.tolerance_mib} MiB): {'flat' if ok else 'GROWS'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": a.device, "rows": rows, "growth": growth, "flat": ok}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
