"""Soak: many epochs of one loader, with the process's memory after each (host RSS; on the GPU
also the loader's GPU memory and the device memory in use), to show it stays flat.

    python bench/soak.py DATA --epochs 100 [--device cuda] [--json soak.json]
    python bench/soak.py DATA --epochs 20 --device cuda --resize 640 --batch-size 32 --stall-ms 3

--stall-ms makes the consumer's stream sleep after each batch without the host waiting for it, as
a collective waiting for other ranks does under DDP (issue 21: the reserve climbed there).

Prints one line per 10 epochs and a verdict: the mean of the second half of the run against the
mean of the first half after the warm-up (epochs --warmup to the middle), within --tolerance-mib
(--device-tolerance-mib for the device memory, which the pool reserves in 32 MiB steps and gives
back as each epoch starts). A level that moves up and down is flat; a creep of 0.5 MiB per epoch
over 100 epochs is not.
Exit status 1 when it grows more.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time

import sluice
import sluice.transforms as T


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    return kb / 1024


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


def malloc_mib() -> tuple[float, float] | None:
    """glibc's heap: (bytes in use by malloc, bytes free but kept), MiB; None without glibc."""
    try:
        f = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    f.restype = _MallInfo2
    m = f()
    return (m.uordblks + m.hblkhd) / 2**20, m.fordblks / 2**20


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
    p.add_argument("--decode-route", default="auto")
    p.add_argument("--tolerance-mib", type=float, default=16)
    p.add_argument("--device-tolerance-mib", type=float, default=32)
    p.add_argument("--resize", type=int, help="Resize((N, N)) + Normalize instead of the RandomResizedCrop(224) list")
    p.add_argument("--threads", type=int)
    p.add_argument("--stall-ms", type=float, default=0.0)
    p.add_argument("--json")
    a = p.parse_args(argv)
    cuda = a.device.startswith("cuda")
    normalize = T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)
    transforms = ([T.Resize((a.resize, a.resize)), normalize] if a.resize else
                  [T.RandomResizedCrop(224), T.RandomHorizontalFlip(), normalize])
    loader = sluice.Loader(a.data, transforms, batch_size=a.batch_size, shuffle=True, device=a.device,
                           dtype="float16", output="torch" if cuda else "auto",
                           **({"num_threads": a.threads} if a.threads else {}),
                           **({"decode_route": a.decode_route} if cuda else {}))
    stall = None
    if cuda and a.stall_ms > 0:
        import torch
        # torch.cuda._sleep spins for a number of GPU clock cycles: how many make a millisecond.
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(10**7)
        end.record()
        end.synchronize()
        cycles = int(a.stall_ms * 10**7 / start.elapsed_time(end))

        def stall() -> None:
            torch.cuda._sleep(cycles)
    rows = []
    t0 = time.time()
    for epoch in range(a.epochs):
        n = 0
        for images, _ in loader:
            n += images.shape[0]
            if stall is not None:
                images.view(-1)[:1].float().sum()  # a use of the batch on the consumer's stream
                stall()
        if cuda:
            import torch
            torch.cuda.synchronize()
        stats = loader.stats()

        def mib(key: str) -> float:
            return round(stats[key] / 2**20, 1)
        row = {"epoch": epoch, "samples": n, "rss_mib": round(rss_mib(), 1),
               "host_peak_mib": mib("host_memory_peak"), "host_cached_mib": mib("host_memory_cached")}
        heap = malloc_mib()
        if heap is not None:
            row["malloc_in_use_mib"], row["malloc_free_mib"] = round(heap[0], 1), round(heap[1], 1)
        if cuda:
            row["gpu_pool_mib"] = mib("gpu_memory_in_use")
            row["gpu_reserved_mib"] = mib("gpu_memory_reserved")
            row["gpu_reserved_nvjpeg_mib"] = mib("gpu_memory_reserved_nvjpeg")
            row["gpu_allocated_mib"] = mib("gpu_memory_allocated")
            row["pinned_held_mib"] = mib("pinned_memory_held")
            row["device_used_mib"] = round(device_used_mib() or 0, 1)
        row["seconds"] = round(time.time() - t0, 1)
        rows.append(row)
        if epoch % 10 == 9 or epoch == a.epochs - 1 or a.epochs <= 20:
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    warmup = min(a.warmup, len(rows) - 1)
    mid = max(warmup + 1, (warmup + len(rows)) // 2)
    early, late = rows[warmup:mid], rows[mid:] or rows[-1:]

    def growth_of(key: str) -> float:
        return round(sum(r[key] for r in late) / len(late) - sum(r[key] for r in early) / len(early), 1)
    growth = {k: growth_of(k) for k in ("rss_mib", "gpu_pool_mib", "device_used_mib") if k in rows[-1]}
    detail = {k: growth_of(k) for k in rows[-1] if k.endswith("_mib") and k not in growth}
    ok = all(v <= (a.device_tolerance_mib if k == "device_used_mib" else a.tolerance_mib) for k, v in growth.items())
    print(f"soak {a.device}: {a.epochs} epochs of {rows[-1]['samples']} samples; mean of epochs {mid}-{len(rows) - 1} "
          f"over mean of {warmup}-{mid - 1}: " + ", ".join(f"{k} {v:+.1f}" for k, v in growth.items()) +
          f" (tolerance {a.tolerance_mib} MiB, device {a.device_tolerance_mib} MiB): {'flat' if ok else 'GROWS'}; also "
          + ", ".join(f"{k} {v:+.1f}" for k, v in detail.items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": a.device, "rows": rows, "growth": growth, "flat": ok}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
