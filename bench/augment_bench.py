"""Augmentation benchmark (the seed pipeline's issue): sluice against torchvision's DataLoader
(16 workers) on the seed pipeline, and what each way of writing its Cutout costs.

The seed pipeline (img_size 224, n_holes 1, length 16 unless --img-size/--n-holes/--length):

    Resize(int(img_size * 1.2)), RandomRotation(20), RandomCrop(img_size), RandomHorizontalFlip(),
    ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), ToTensor(),
    Normalize([0.5] * 3, [0.5] * 3), <cutout>

float32 NCHW on the GPU, batch 256, shuffled, the same ImageFolder files for every row.

Rows:
  DataLoader torchvision (16 workers)  ImageFolder + torchvision.transforms v1 (PIL), <cutout> =
      the user's CUTOUT class (NumPy mask, per sample, in the workers); pin_memory,
      persistent workers, prefetch_factor 4; the consumer moves batches with non_blocking=True.
  sluice GPU, Cutout (built-in)        sluice.Loader(device="cuda"), <cutout> = T.Cutout (in the
      kernel that writes the sample).
  sluice GPU, BatchLambda(cutout)      <cutout> = T.BatchLambda(batched_cutout): torch ops on the
      whole batch on the GPU (centres from a torch.Generator on the batch's device, mask by
      arange comparisons and broadcasting, one in-place multiply).
  sluice GPU, Lambda(CUTOUT)           <cutout> = T.Lambda(CUTOUT(...)): a per-sample Python
      function, so the loader runs the list on its CPU threads and uploads the batches.
  sluice CPU, Cutout (built-in)        device="cpu"; the consumer uploads each batch with
      .to("cuda", non_blocking=True) from pinned memory (pin_memory() when it is not pinned).
  DALI T threads hw_decoder_load L      NVIDIA DALI with the same list in its own operators
      (bench/dali_rows.py; Cutout as `erase`), T = 16, 8 and L = 0.65, 0.9, 1.0; skipped, with
      the reason, where DALI is not installed.
  --routes adds the sluice GPU Cutout and BatchLambda rows with decode_route="hardware" (the
  others use "auto").

Method (as bench/gpu_bench.py): each row in its own process (this script with --_row), 3 warm-up
batches (and more until --warmup-seconds have passed since the first), then at least --seconds
and 6 batches between two torch.cuda.synchronize() calls, each batch consumed by a tiny GPU
reduction (no per-batch sync); a row is killed after --timeout s.
Cores busy: machine-wide /proc/stat over the timed interval. GPU memory: allocator peak (sluice's
pool + torch's reserved bytes) and the process's peak per NVML.

Kernels per batch (sluice GPU rows): after timing, sync, then torch.profiler.profile(activities=
[CUDA]) around --profile-batches more batches (same consumer), sync inside the window; the chrome
trace's "kernel" events are counted by name. Then the loader is closed and the consumer alone is
profiled on a tensor of the batch's shape (baseline); its per-batch counts are subtracted by name.
sluice kernels = ResizeFinishKernel/WarpFinishKernel/ColorFinishKernel/FilterKernel plus every kernel that is
not torch's (nvJPEG's); total = every kernel but the consumer's. "n/a" when the profiler saw no
kernel at all, or none of sluice's in a row that runs on the GPU.

--pipeline randaug / simclr: the same method on two other lists users bring (the rows then are
the DataLoader, sluice GPU and sluice CPU, each with the list as written; <cutout> is unused):
    randaug: RandomResizedCrop(img_size), RandomHorizontalFlip(), RandAugment(), ToTensor(),
             Normalize(ImageNet mean, std)
    simclr:  RandomResizedCrop(img_size), RandomHorizontalFlip(), ColorJitter(0.4, 0.4, 0.4, 0.1),
             RandomGrayscale(0.2), GaussianBlur(23, (0.1, 2.0)), ToTensor(), Normalize(ImageNet)

    python bench/augment_bench.py DATA [DATA ...] [--seconds 8] [--timeout 150] [--routes]
                                  [--pipeline seed|randaug|simclr]
                                  [--rows Cutout,Lambda] [--json out.json] [--dry-run]
"""
from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import re
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import dali_rows  # noqa: E402
from gpu_bench import (MIN_BATCHES, WARMUP, GpuMemoryPoller, dataset_info,  # noqa: E402
                       machine_info, run_row_process, select_rows, thread_line, timed, warm_up)
GPU = "cuda"  # --dry-run makes it "cpu"
SLUICE_KERNELS = ("ResizeFinishKernel", "WarpFinishKernel", "ColorFinishKernel", "FilterKernel")
TORCH_KERNEL_MARKS = ("at::", "at_cuda_detail", "c10::")  # torch's own kernels' namespaces


Skip = dali_rows.RowSkipped  # a row that cannot run here (reported as skipped, not as an error)


# ----------------------------------------------------------------------------- the cutouts
class CUTOUT:
    """The seed pipeline's Cutout class, verbatim (as tests/python/test_lambda.py carries it)."""

    def __init__(self, n_holes, length):
        self.n_holes = n_holes
        self.length = length

    def __call__(self, img):
        h = img.size(1)
        w = img.size(2)
        mask = np.ones((h, w), np.float32)
        for n in range(self.n_holes):
            y = np.random.randint(h)
            x = np.random.randint(w)
            y1 = np.clip(y - self.length // 2, 0, h)
            y2 = np.clip(y + self.length // 2, 0, h)
            x1 = np.clip(x - self.length // 2, 0, w)
            x2 = np.clip(x + self.length // 2, 0, w)
            mask[y1: y2, x1: x2] = 0.
        mask = torch.from_numpy(mask)
        mask = mask.expand_as(img)
        img = img * mask
        return img


class BatchedCutout:
    """CUTOUT on a whole N x C x H x W batch with torch ops, on the batch's device: per image
    `n_holes` centres from a torch.Generator on that device, the squares by comparing aranges
    with the clipped bounds (r in [clip(y - l//2), clip(y + l//2)) <=> y - l//2 <= r < y + l//2
    for 0 <= r < h), broadcast to N x H x W, multiplied in place (the batch is the loader's)."""

    def __init__(self, n_holes: int, length: int, seed: int = 0):
        self.n_holes, self.length, self.seed = n_holes, length, seed
        self._gens: dict = {}
        self._ranges: dict = {}

    def __call__(self, x):
        dev = x.device
        g = self._gens.get(dev)
        if g is None:
            g = self._gens[dev] = torch.Generator(device=dev).manual_seed(self.seed)
        n, _, h, w = x.shape
        key = (dev, h, w)
        if key not in self._ranges:
            self._ranges[key] = (torch.arange(h, device=dev), torch.arange(w, device=dev))
        rows, cols = self._ranges[key]
        half = self.length // 2
        ys = torch.randint(h, (n, self.n_holes, 1), generator=g, device=dev)
        xs = torch.randint(w, (n, self.n_holes, 1), generator=g, device=dev)
        in_rows = (rows >= ys - half) & (rows < ys + half)  # n x holes x h
        in_cols = (cols >= xs - half) & (cols < xs + half)  # n x holes x w
        hole = (in_rows[..., :, None] & in_cols[..., None, :]).any(dim=1)  # n x h x w
        return x.mul_((~hole).to(x.dtype)[:, None])


def batched_cutout_for(args):
    fn = BatchedCutout(args.n_holes, args.length)

    def batched_cutout(x):  # the name BatchLambda reports
        return fn(x)

    return batched_cutout


# ----------------------------------------------------------------------------- rows
def seed_list(T, size: int, cutout, pipeline: str = "seed") -> list:
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    if pipeline == "randaug":
        return [T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.RandAugment(), T.ToTensor(),
                T.Normalize(mean, std)]
    if pipeline == "simclr":
        return [T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1),
                T.RandomGrayscale(0.2), T.GaussianBlur(23, (0.1, 2.0)), T.ToTensor(), T.Normalize(mean, std)]
    return [T.Resize(int(size * 1.2)), T.RandomRotation(20), T.RandomCrop(size), T.RandomHorizontalFlip(),
            T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(),
            T.Normalize([0.5] * 3, [0.5] * 3), cutout]


def torch_reserved_peak():
    return torch.cuda.max_memory_reserved() if GPU == "cuda" else None


class Row:
    """batches: endless iterator of (images, labels) on GPU; extra(): memory figures; close()."""

    def __init__(self, batches, extra, close=lambda: None, uploads=False):
        self.batches, self.extra, self.close, self.uploads = batches, extra, close, uploads


def dataloader_row(data: str, args) -> Row:
    try:
        import torchvision.datasets as tvd
        import torchvision.transforms as T
    except ImportError as e:
        raise Skip(f"torchvision is not installed ({e})") from None
    tf = T.Compose(seed_list(T, args.img_size, CUTOUT(args.n_holes, args.length), args.pipeline))
    loader = torch.utils.data.DataLoader(tvd.ImageFolder(data, transform=tf), batch_size=args.batch_size,
                                         shuffle=True, num_workers=args.workers, pin_memory=GPU == "cuda",
                                         persistent_workers=True, prefetch_factor=4)
    first = iter(loader)  # forks the workers now, before this process initializes CUDA

    def batches():
        epoch = first
        while True:
            for images, labels in epoch:
                yield images.to(GPU, non_blocking=True), labels.to(GPU, non_blocking=True)
            epoch = iter(loader)

    return Row(batches(), lambda: {"gpu_alloc_peak": torch_reserved_peak()})


def has_builtin_cutout() -> str | None:
    """None when T.Cutout can run here, else why not."""
    import sluice.transforms as ST

    if not hasattr(ST, "Cutout"):
        return "sluice.transforms.Cutout does not exist in this tree yet"
    try:
        ST.Cutout()
    except ValueError as e:  # the built module (_core) has no such op
        return f"sluice.transforms.Cutout exists, but the built module (_core) lacks it ({e}): rebuild"
    return None


def sluice_row(data: str, args, device: str, cutout: str, route: str = "auto") -> Row:
    import sluice
    import sluice.transforms as ST

    if cutout == "builtin":
        why = has_builtin_cutout()
        if why:
            raise Skip(why)
        last = ST.Cutout(args.n_holes, args.length)
    elif cutout == "batch":
        last = ST.BatchLambda(batched_cutout_for(args))
    else:
        last = ST.Lambda(CUTOUT(args.n_holes, args.length))
    loader = sluice.Loader(data, seed_list(ST, args.img_size, last, args.pipeline), batch_size=args.batch_size, device=device,
                           dtype="float32", shuffle=True, seed=0,
                           **({"decode_route": route} if device != "cpu" else {}))
    consumer_uploads = device == "cpu" and GPU == "cuda"  # the sluice CPU row

    def batches():
        for epoch in itertools.count():
            loader.set_epoch(epoch)
            for images, labels in loader:
                if consumer_uploads:
                    images = images if images.is_pinned() else images.pin_memory()
                    labels = labels if labels.is_pinned() else labels.pin_memory()
                    images, labels = images.to(GPU, non_blocking=True), labels.to(GPU, non_blocking=True)
                yield images, labels

    def extra():
        st = loader.stats()
        pool = st.get("gpu_memory_peak")  # sluice's device pool (GPU path without upload only)
        torch_peak = torch_reserved_peak()
        alloc = None if pool is None and torch_peak is None else (pool or 0) + (torch_peak or 0)
        return {"gpu_alloc_peak": alloc, "sluice_pool_peak": pool, "upload_by_loader": loader._upload,
                "sluice_stats": {k: v for k, v in st.items() if k != "skipped"}}

    return Row(batches(), extra, loader.close, uploads=loader._upload)


def dali_row(data: str, args, threads: int, hw_load: float) -> Row:
    batches, extra = dali_rows.seed_row(data, threads, hw_load, args.batch_size, args.img_size, args.n_holes,
                                        args.length)
    return Row(batches, extra)


def make_rows(routes: bool, pipeline: str = "seed") -> dict:
    """name -> (builder(data, args), profile kernels?)"""
    if pipeline != "seed":
        return {
            "DataLoader torchvision (16 workers)": (dataloader_row, False),
            "sluice GPU": (lambda d, a: sluice_row(d, a, GPU, "builtin"), True),
            "sluice CPU": (lambda d, a: sluice_row(d, a, "cpu", "builtin"), False),
        }
    rows = {
        "DataLoader torchvision (16 workers)": (dataloader_row, False),
        "sluice GPU, Cutout (built-in)": (lambda d, a: sluice_row(d, a, GPU, "builtin"), True),
        "sluice GPU, BatchLambda(cutout)": (lambda d, a: sluice_row(d, a, GPU, "batch"), True),
        "sluice GPU, Lambda(CUTOUT)": (lambda d, a: sluice_row(d, a, GPU, "lambda"), True),
        "sluice CPU, Cutout (built-in)": (lambda d, a: sluice_row(d, a, "cpu", "builtin"), False),
    }
    for threads in dali_rows.THREADS:
        for load in dali_rows.HW_LOADS:
            rows[dali_rows.row_name(threads, load)] = (lambda d, a, t=threads, h=load: dali_row(d, a, t, h), False)
    if routes:
        rows["sluice GPU, Cutout (built-in) [hardware]"] = (
            lambda d, a: sluice_row(d, a, GPU, "builtin", "hardware"), True)
        rows["sluice GPU, BatchLambda(cutout) [hardware]"] = (
            lambda d, a: sluice_row(d, a, GPU, "batch", "hardware"), True)
    return rows


# ----------------------------------------------------------------------------- measurement
def sync():
    if GPU == "cuda":
        torch.cuda.synchronize()  # cudaDeviceSynchronize: every stream, sluice's included


class Consumer:
    """The tiny reduction every batch goes through (as gpu_bench): no per-batch sync."""

    def __init__(self):
        self.sink = torch.zeros((), device=GPU)

    def __call__(self, images):
        self.sink += images[:, 0, 0, 0].float().sum()


def measure(it, consume, seconds: float, warmup_seconds: float = 0.0) -> dict:
    warm = warm_up(it, consume, warmup_seconds)
    sync()
    return {**timed(it, consume, seconds, sync), **warm}


def profiled_kernels(step, n: int) -> collections.Counter:
    """Kernel launches by name while `step` runs n times, from the profiler's chrome trace."""
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.CUDA if GPU == "cuda" else ProfilerActivity.CPU  # dry run: plumbing only
    sync()
    with profile(activities=[activity]) as prof:
        for _ in range(n):
            step()
        sync()
    with tempfile.TemporaryDirectory(prefix="augment_trace_") as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    kernels = collections.Counter(e.get("name", "?") for e in events
                                  if isinstance(e, dict) and str(e.get("cat", "")).lower() == "kernel")
    if not kernels and GPU == "cuda":  # another trace layout: the device events of the event list
        from torch.autograd import DeviceType

        kernels = collections.Counter(e.name for e in prof.events() if e.device_type == DeviceType.CUDA
                                      and not e.name.startswith(("Memcpy", "Memset")))
    return kernels


def kernel_report(window: collections.Counter, baseline: collections.Counter, n: int, uploads: bool) -> dict:
    """Per-batch counts: the window's minus the consumer's (baseline, per name)."""
    per_name = {k: (c - baseline.get(k, 0)) / n for k, c in window.items()}
    per_name = {k: v for k, v in sorted(per_name.items(), key=lambda kv: -kv[1]) if v > 0}
    finish = sum(v for k, v in per_name.items() if any(s in k for s in SLUICE_KERNELS))
    torch_k = sum(v for k, v in per_name.items() if any(s in k for s in TORCH_KERNEL_MARKS)
                  and not any(s in k for s in SLUICE_KERNELS))
    total = sum(per_name.values())
    out = {"profiled_batches": n, "window_raw": dict(window), "consumer_baseline_raw": dict(baseline),
           "per_batch_by_name": per_name, "sluice_finish_per_batch": finish,
           "sluice_per_batch": total - torch_k, "torch_per_batch": torch_k, "total_per_batch": total}
    if not baseline:
        out["na"] = "the profiler saw no kernel (not even the consumer's reduction)"
    elif not uploads and finish == 0:
        out["na"] = "the profiler saw none of sluice's kernels in a row that runs them"
    return out


def run_row(name: str, data: str, args) -> dict:
    """In the child process: one row on one dataset."""
    poller = GpuMemoryPoller()
    poller.start()
    result: dict = {}
    row = None
    try:
        builder, want_kernels = make_rows(args.routes, args.pipeline)[name]
        row = builder(data, args)
        consume = Consumer()
        result = measure(row.batches, consume, args.seconds, args.warmup_seconds)
        if want_kernels:
            n = args.profile_batches
            window = profiled_kernels(lambda: consume(next(row.batches)[0]), n)
            result.update(row.extra())
            row.close()
            sync()
            probe = torch.zeros((args.batch_size, 3, args.img_size, args.img_size), device=GPU)
            baseline = profiled_kernels(lambda: consume(probe), n)
            baseline = collections.Counter({k: v // n * n for k, v in baseline.items()})  # whole per-batch counts
            del probe
            result["kernels"] = kernel_report(window, baseline, n, row.uploads)
        else:
            result.update(row.extra())
    except Skip as e:
        result = {"skipped": str(e)}
    except Exception as e:  # noqa: BLE001 - reported as the row's result
        first = (str(e).strip().splitlines() or [""])[0]
        result = {"error": f"{type(e).__name__}: {first}", "traceback": traceback.format_exc()}
    finally:
        if row is not None:
            try:
                row.close()
            except Exception:  # noqa: BLE001
                pass
    poller.stop()
    return {**result, "torch_reserved_peak": torch_reserved_peak(), "gpu_process_peak": poller.peak,
            "gpu_process_source": poller.source, "gpu_process_match": poller.match}


# ----------------------------------------------------------------------------- parent
ROW_FLAGS = ("seconds", "warmup_seconds", "batch_size", "img_size", "n_holes", "length", "workers",
             "profile_batches", "pipeline")


def spawn_row(name: str, data: str, args, tmp: str) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--_row", name, data]
    for k in ROW_FLAGS:
        cmd += ["--" + k.replace("_", "-"), str(getattr(args, k))]
    cmd += (["--dry-run"] if args.dry_run else []) + (["--routes"] if args.routes else [])
    return run_row_process(name, cmd, args.timeout, tmp)


def kernels_cell(r: dict) -> str:
    k = r.get("kernels")
    if k is None:
        return "-"
    if "na" in k:
        return "n/a"
    return f"{k['sluice_per_batch']:.1f} sluice / {k['total_per_batch']:.1f} total"


def table(rows: list) -> list:
    def mib(b):
        return "n/a" if b is None else f"{b / 2**20:,.0f}"

    base = next((r["images_per_s"] for r in rows if r["row"].startswith("DataLoader") and "images_per_s" in r), None)
    out = ["| system | images/s | x DataLoader | cores busy | GPU MiB (alloc / process) | kernels/batch |",
           "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['row']} | skipped: {r['skipped'][:90].replace('|', '/')} | - | - | - | - |")
        elif "error" in r:
            err = r["error"] if r["error"] == "timeout" else "error: " + r["error"][:90].replace("|", "/")
            out.append(f"| {r['row']} | {err} | - | - | - | - |")
        else:
            ratio = "n/a" if base is None else f"{r['images_per_s'] / base:.2f}x"
            star = "*" if r.get("gpu_process_match") not in (None, "pid") else ""
            out.append(f"| {r['row']} | {r['images_per_s']:,.0f} | {ratio} | {r['cores_busy']:.1f} | "
                       f"{mib(r.get('gpu_alloc_peak'))} / {mib(r.get('gpu_process_peak'))}{star} | {kernels_cell(r)} |")
    return out


def short(name: str) -> str:
    """A kernel's name for the summary: its base name plus the first functor or kernel function
    in its template arguments (torch's elementwise kernels differ only there); full names in the JSON."""
    s = (name[5:] if name.startswith("void ") else name).replace("(anonymous namespace)", "anon")
    head = s.split("(")[0]
    base = head.split("<")[0].split("::")[-1]
    inner = head[head.find("<") + 1:] if "<" in head else ""
    words = re.findall(r"[A-Za-z_]\w*", inner)
    hint = next((w for w in words if "functor" in w.lower() and w != base), "") or \
        next((w for w in words if w.endswith(("_kernel", "_impl")) and w != base), "")
    return base + (f"[{hint}]" if hint else "")


def kernel_lines(rows: list) -> list:
    out = []
    for r in rows:
        k = r.get("kernels")
        if not k:
            continue
        if "na" in k:
            out.append(f"  {r['row']}: n/a ({k['na']})")
            continue
        names = ", ".join(f"{short(n)} {v:.1f}" for n, v in list(k["per_batch_by_name"].items())[:8]) or "none"
        out.append(f"  {r['row']}: sluice {k['sluice_per_batch']:.1f} (finish kernels {k['sluice_finish_per_batch']:.1f}),"
                   f" torch {k['torch_per_batch']:.1f}, total {k['total_per_batch']:.1f} per batch over "
                   f"{k['profiled_batches']} batches: {names}")
    return out


NOTES = """\
x DataLoader: images/s over the DataLoader torchvision row's. cores busy: machine-wide over the timed interval.
GPU MiB: alloc = sluice's pool peak (loader.stats()["gpu_memory_peak"]) + torch.cuda.max_memory_reserved();
  process = the driver's per-process peak (NVML, every 0.1 s), CUDA context included; * = our pid not
  visible to NVML, the sole compute process taken instead.
kernels/batch: CUDA kernels per batch over the profiled batches (full names in the JSON), the consumer's
  reduction (measured alone on a tensor of the batch's shape) subtracted; sluice = its finish kernels +
  every non-torch kernel (nvJPEG); total also counts torch kernels (BatchLambda's). The producer runs up to
  `prefetch` batches ahead, so a window of N batches may hold +-1 batch of sluice's kernels.
Lambda(CUTOUT) on device="cuda": the loader runs the list on its CPU threads and uploads the batches."""


def main() -> int:
    global GPU
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+", help="ImageFolder roots (make with `sluice make-dataset`)")
    ap.add_argument("--seconds", type=float, default=8.0, help="minimum timed seconds per row")
    ap.add_argument("--warmup-seconds", type=float, default=0.0,
                    help=f"untimed seconds before it, at least {WARMUP} batches (every row alike)")
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds per row before it is killed")
    ap.add_argument("--rows", help="comma-separated substrings of row names to run (default: all; a comma "
                    "followed by a space is part of a name)")
    ap.add_argument("--routes", action="store_true",
                    help='also the sluice GPU Cutout and BatchLambda rows with decode_route="hardware"')
    ap.add_argument("--json", help="write every result here (rewritten after each row)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--img-size", type=int, default=224)
    ap.add_argument("--n-holes", type=int, default=1)
    ap.add_argument("--length", type=int, default=16)
    ap.add_argument("--workers", type=int, default=16, help="DataLoader workers")
    ap.add_argument("--pipeline", choices=("seed", "randaug", "simclr"), default="seed",
                    help="the transform list (see above)")
    ap.add_argument("--profile-batches", type=int, default=10, help="batches in the kernel-count window")
    ap.add_argument("--dry-run", action="store_true",
                    help="check the plumbing without a GPU: 'cuda' becomes 'cpu' (rates meaningless)")
    ap.add_argument("--_row", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dry_run:
        GPU = "cpu"
    if args._row:
        print(json.dumps(run_row(args._row, args.data[0], args), default=str), flush=True)
        return 0

    all_rows = make_rows(args.routes, args.pipeline)
    names = select_rows(list(all_rows), args.rows)
    if not names:
        ap.error(f"--rows {args.rows!r} matches none of: {', '.join(all_rows)}")
    meta = machine_info()
    machine = (f"# GPU {meta['gpu']} | {meta['cpus']} CPUs ({meta['cpu']}) | Python {meta['python']} | "
               f"torch {meta['torch']} | torchvision {meta['torchvision']} | Pillow {meta['pillow']} | "
               f"process GPU memory via {meta['gpu_process_memory_source']}" + (" | DRY RUN" if args.dry_run else ""))
    what = (f"seed pipeline, img_size {args.img_size}, Cutout(n_holes={args.n_holes}, length={args.length})"
            if args.pipeline == "seed" else f"{args.pipeline} pipeline, img_size {args.img_size}")
    setup = (f"# {what}; "
             f"batch {args.batch_size} float32 NCHW; each row in its own process: {WARMUP} warm-up batches"
             + (f" and >= {args.warmup_seconds:g} s" if args.warmup_seconds else "") + ", then "
             f">= {args.seconds:g} s and >= {MIN_BATCHES} batches; kernels over {args.profile_batches} more; "
             f"timeout {args.timeout:g} s")
    print(machine + "\n" + setup, flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="augment_bench_") as tmp:
        for data in args.data:
            info, rows = dataset_info(data), []
            dline = (f"## {data}: {info['files']:,} files, {info['mean_kib']:.1f} KiB mean, {info['mean_mpix']:.3f} "
                     f"MP mean, chroma {info['chroma']} ({info['sampled']} sampled)")
            results.append({"data": data, "info": info, "dataset_line": dline, "rows": rows})
            print("\n" + dline, flush=True)
            for name in names:
                r = spawn_row(name, data, args, tmp)
                rows.append(r)
                what = (f"{r['images_per_s']:,.0f} img/s" if "images_per_s" in r else
                        "skipped: " + r["skipped"] if "skipped" in r else r["error"][:100])
                print(f"  {name}: {what} ({r['wall_seconds']:.0f} s){' ' + r['note'] if 'note' in r else ''}",
                      flush=True)
                if args.json:  # after every row: a run cut short keeps what it measured
                    with open(args.json, "w") as f:
                        json.dump({"machine": meta, "args": vars(args), "datasets": results}, f, indent=1,
                                  default=str)
    print("\n" + NOTES)
    for d in results:
        print(f"\nkernels per batch, {d['data']}:")
        print("\n".join(kernel_lines(d["rows"])) or "  (no sluice GPU row measured)")
        if thread_line(d["rows"]):
            print("  " + thread_line(d["rows"]))
    print("\n" + machine + "\n" + setup)
    for d in results:
        print("\n" + d["dataset_line"] + "\n\n" + "\n".join(table(d["rows"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
