"""CPU benchmark: sluice vs PyTorch's DataLoader with PIL transforms, same files, same cores.

Pipeline for every row: decode JPEG, RandomResizedCrop(224), RandomHorizontalFlip, to float,
Normalize(ImageNet), batch of 256, NCHW float32 on the CPU.

Equal cores: for each core count C the whole process (and the DataLoader's worker processes,
which inherit it) is pinned to C CPUs with sched_setaffinity; sluice then runs C compute threads
(its default), the DataLoader C workers.

Rows:
  sluice                      sluice.Loader(num_threads=C)
  DataLoader + PIL            torchvision ImageFolder + transforms (v1 PIL path), num_workers=C
                              (where torchvision is missing, the same algorithm written with PIL)
  PIL decode only, 1 core     Image.open().convert("RGB"): the per-core ceiling of the PIL path
  PIL draft decode, 1 core    with draft() at 1/2 scale: DCT-scaled like sluice's
Each rate is measured after warm-up batches, for at least --seconds seconds.

    python bench/cpu_bench.py DATA --cores 1,4,16 [--json results.json]
"""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

import sluice  # noqa: E402
import sluice.transforms as ST  # noqa: E402

MEAN, STD = sluice.IMAGENET_MEAN, sluice.IMAGENET_STD


# ----------------------------------------------------------------------------- measurement
def cpu_jiffies() -> int:
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    vals = [int(x) for x in parts]
    return sum(vals) - vals[3] - (vals[4] if len(vals) > 4 else 0)  # minus idle and iowait


def measure(batches, batch_size: int, warmup: int, seconds: float, min_batches: int = 4) -> dict:
    """Consumes an endless batch iterator; returns images/s and machine-wide cores busy."""
    it = iter(batches)
    for _ in range(warmup):
        next(it)
    hz = os.sysconf("SC_CLK_TCK")
    j0, t0 = cpu_jiffies(), time.perf_counter()
    n = done = 0
    while True:
        x, _ = next(it)
        n += x.shape[0]
        done += 1
        el = time.perf_counter() - t0
        if el >= seconds and done >= min_batches:
            break
    busy = (cpu_jiffies() - j0) / hz / el
    return {"images": n, "seconds": el, "images_per_s": n / el, "cores_busy": busy}


def forever(make_epoch_iter):
    epoch = 0
    while True:
        yield from make_epoch_iter(epoch)
        epoch += 1


# ----------------------------------------------------------------------------- peers
def torchvision_or_equivalent():
    """torchvision's ImageFolder and PIL transforms, or the same algorithm written out."""
    try:
        import torchvision.datasets as tvd
        import torchvision.transforms as tvt

        tf = tvt.Compose([tvt.RandomResizedCrop(224), tvt.RandomHorizontalFlip(), tvt.ToTensor(),
                          tvt.Normalize(MEAN, STD)])
        return "torchvision", lambda root: tvd.ImageFolder(root, transform=tf)
    except Exception:  # noqa: BLE001 - no (working) torchvision on this machine
        return "PIL, torchvision-equivalent", lambda root: _EquivalentImageFolder(root)


class _EquivalentImageFolder(torch.utils.data.Dataset):
    """torchvision.datasets.ImageFolder + RandomResizedCrop/Flip/ToTensor/Normalize (v1, PIL),
    transcribed: the same PIL calls in the same order."""

    def __init__(self, root):
        self.samples = sluice.Loader(root, [ST.CenterCrop(1)]).samples  # same listing rules
        self.mean = torch.tensor(MEAN).view(3, 1, 1)
        self.std = torch.tensor(STD).view(3, 1, 1)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")
        w, h = img.size
        area = w * h
        for _ in range(10):
            target = area * random.uniform(0.08, 1.0)
            ar = math.exp(random.uniform(math.log(3 / 4), math.log(4 / 3)))
            cw, ch = int(round(math.sqrt(target * ar))), int(round(math.sqrt(target / ar)))
            if 0 < cw <= w and 0 < ch <= h:
                top, left = random.randint(0, h - ch), random.randint(0, w - cw)
                break
        else:
            cw, ch, top, left = w, h, 0, 0
        img = img.crop((left, top, left + cw, top + ch)).resize((224, 224), Image.BILINEAR)
        if random.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        t = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1).float().div(255)
        return (t - self.mean) / self.std, label


def dataloader_batches(dataset, cores: int, batch_size: int):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                         num_workers=cores, persistent_workers=True,
                                         prefetch_factor=2, drop_last=True)
    return forever(lambda _e: iter(loader))


def sluice_batches(root: str, batch_size: int):
    loader = sluice.Loader(root, [ST.RandomResizedCrop(224), ST.RandomHorizontalFlip(),
                                  ST.Normalize(MEAN, STD)],
                           batch_size=batch_size, shuffle=True, last_batch="drop")

    def epoch_iter(e):
        loader.set_epoch(e)
        return iter(loader)

    return loader, forever(epoch_iter)


def pil_decode_rate(paths, seconds: float, draft: bool) -> float:
    blobs = [open(p, "rb").read() for p in paths[:256]]
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for b in blobs:
            im = Image.open(io.BytesIO(b))
            if draft:  # 1/2 DCT scale: PIL decode with draft
                im.draft("RGB", (im.width // 2, im.height // 2))
            im.convert("RGB")
            n += 1
    return n / (time.perf_counter() - t0)


# ----------------------------------------------------------------------------- main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="ImageFolder root (make one with `sluice make-dataset`)")
    ap.add_argument("--cores", default=str(len(os.sched_getaffinity(0))),
                    help="comma-separated core counts, e.g. 1,4,16")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=8.0, help="minimum timed seconds per row")
    ap.add_argument("--warmup", type=int, default=2, help="untimed batches per row")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    all_cpus = sorted(os.sched_getaffinity(0))
    cores_list = [int(c) for c in args.cores.split(",")]
    if max(cores_list) > len(all_cpus):
        ap.error(f"--cores {max(cores_list)} > {len(all_cpus)} CPUs available")
    peer_name, make_dataset = torchvision_or_equivalent()
    probe = sluice.Loader(args.data, [ST.CenterCrop(1)])
    paths = [p for p, _ in probe.samples]
    sizes = [os.path.getsize(p) for p in paths]
    info = sluice._core.image_info(open(paths[0], "rb").read())
    for p in paths:  # fill the page cache once for everybody
        with open(p, "rb") as f:
            f.read()
    meta = {
        "data": args.data, "files": len(paths), "mean_kib": sum(sizes) / len(sizes) / 1024,
        "subsampling_of_first": info["subsampling"], "machine": platform.node(),
        "cpu": _cpu_model(), "cpus": len(all_cpus), "python": platform.python_version(),
        "torch": torch.__version__, "peer": peer_name, "batch_size": args.batch_size,
    }
    print(f"# {meta['files']} files, {meta['mean_kib']:.0f} KiB mean, {meta['cpu']}, "
          f"{meta['cpus']} CPUs, torch {meta['torch']}, peer: {peer_name}", flush=True)
    rows = []
    for cores in cores_list:
        os.sched_setaffinity(0, all_cpus[:cores])
        loader, it = sluice_batches(args.data, args.batch_size)
        r = measure(it, args.batch_size, args.warmup, args.seconds)
        st = loader.stats()
        rows.append({"row": "sluice", "cores": cores, **r,
                     "stage_ms": {k: 1e3 * v / max(st["samples"], 1) for k, v in st["stage_seconds"].items()}})
        print(f"sluice             cores={cores:2d}  {r['images_per_s']:8.0f} img/s  busy {r['cores_busy']:.1f}", flush=True)
        del loader, it
        r = measure(dataloader_batches(make_dataset(args.data), cores, args.batch_size),
                    args.batch_size, args.warmup, args.seconds)
        rows.append({"row": "DataLoader + PIL", "cores": cores, **r})
        print(f"DataLoader + PIL   cores={cores:2d}  {r['images_per_s']:8.0f} img/s  busy {r['cores_busy']:.1f}", flush=True)
    os.sched_setaffinity(0, all_cpus[:1])
    ceil_full = pil_decode_rate(paths, min(args.seconds, 5), draft=False)
    ceil_draft = pil_decode_rate(paths, min(args.seconds, 5), draft=True)
    os.sched_setaffinity(0, all_cpus)

    print()
    print("| cores | sluice img/s | DataLoader + PIL img/s | ratio | sluice img/s per core |")
    print("|---:|---:|---:|---:|---:|")
    for cores in cores_list:
        s = next(r for r in rows if r["row"] == "sluice" and r["cores"] == cores)
        d = next(r for r in rows if r["row"] != "sluice" and r["cores"] == cores)
        print(f"| {cores} | {s['images_per_s']:,.0f} | {d['images_per_s']:,.0f} | "
              f"{s['images_per_s'] / d['images_per_s']:.2f}x | {s['images_per_s'] / cores:,.0f} |")
    print(f"\nper-core decode ceilings (1 core, no crop/resize): PIL full decode {ceil_full:,.0f} img/s, "
          f"PIL draft decode {ceil_draft:,.0f} img/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows, "pil_decode_1core": ceil_full,
                       "pil_draft_decode_1core": ceil_draft}, f, indent=1)
    return 0


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
