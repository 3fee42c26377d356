"""Multi-GPU scaling benchmark: one epoch on 1, 2 (and 4) GPUs, sluice against PyTorch's DataLoader.

The seed article's experiment: 21,453 VOC-like photos (about 500x375 JPEGs, from
`sluice make-dataset DIR --preset voc -n 21453`), resized to 640x640, batch 32 per GPU. Target:
2 GPUs at least 1.8x the images/s of one GPU.

Pipeline for both systems, per rank: decode JPEG, Resize((640, 640)) (bilinear, antialiased),
Normalize(ImageNet mean/std), float16 NCHW on this rank's GPU, batch 32, a new permutation every
epoch, each rank reading its own shard of the same files.
  sluice      sluice.Loader(DATA, [Resize, Normalize], device="cuda:LOCAL_RANK", dtype="float16",
              shuffle=True, seed=0, num_threads=CPUs // ranks on this host); rank and world size
              come from torch.distributed.
  DataLoader  a Dataset over the same ImageFolder files (sorted as torchvision's ImageFolder sorts
              them); in the workers read_file + decode_jpeg + transforms.v2.Resize on uint8 tensors
              (PIL + NumPy when torchvision is missing: the row's name says so);
              DistributedSampler(shuffle=True, seed=0) + set_epoch, --workers workers per rank,
              pin_memory, persistent_workers, prefetch_factor=4; on the GPU: .cuda(non_blocking),
              cast to float16, normalize.

Method: for each number of GPUs G and each system, one job of G processes under
`python -m torch.distributed.run --standalone --nproc_per_node G` (NCCL; gloo with --device cpu),
killed with its whole process tree after --timeout seconds. Every batch is consumed as a DDP step
would be: a tiny reduction of the images on the GPU, all-reduced across ranks (one element, every
step; DDP's gradient all-reduce is what keeps ranks in lockstep, modelled here without a model).
Warm-up: the first 20 (--warmup) batches of epoch 0 (the DataLoader's sampler is cut short there, so no
epoch-0 batches are still in flight afterwards), then a barrier. Timed: the whole of epoch 1, from
a barrier to a barrier after the last batch and a device synchronize; epoch seconds are the
slowest rank's, images/s = samples over all ranks / epoch seconds. sluice's shards hold every
sample once (last_batch="partial"); DistributedSampler pads to a multiple of the rank count, and
the rows report what each gave. Before the first job every file is read once, so all rows find
the data in the page cache. Every job runs with OMP_NUM_THREADS=1 (unless set), as torchrun sets it
for several ranks.

    python bench/scaling_bench.py DATA [--gpus 1,2] [--systems sluice,dataloader] [--batch-size 32]
                                  [--size 640] [--workers 8] [--json out.json] [--device cuda|cpu]
                                  [--timeout 600]

`--device cpu` runs the same jobs on the CPU (gloo; sluice device="cpu"; the DataLoader without
pin_memory and .cuda) to check the plumbing on a machine without GPUs; its rates mean little.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # = sluice.IMAGENET_MEAN / _STD
SEED = 0
SYSTEMS = ("sluice", "dataloader")
# torchvision's ImageFolder extensions (IMG_EXTENSIONS), so both systems list the same files.
IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
RANK_ERROR = "=== scaling_bench rank error"  # brackets a rank's traceback in the job's stderr


def image_folder_samples(root: str) -> list[tuple[str, int]]:
    """(path, label) pairs in torchvision ImageFolder's order: classes are the sorted sub-folders,
    files sorted within each class folder's (sorted) walk."""
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    samples = []
    for label, name in enumerate(classes):
        for folder, _, files in sorted(os.walk(os.path.join(root, name), followlinks=True)):
            samples += [(os.path.join(folder, f), label) for f in sorted(files)
                        if f.lower().endswith(IMG_EXTENSIONS)]
    return samples


# ----------------------------------------------------------------------------- one rank
class Rank:
    """This process's place in the job, its device, and the collectives the timing needs."""

    def __init__(self, device_kind: str):
        import torch.distributed as dist

        self.dist = dist
        self.rank, self.world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.local_world = int(os.environ["LOCAL_WORLD_SIZE"])
        self.cuda = device_kind == "cuda"
        if self.cuda:
            torch.cuda.set_device(self.local_rank)
            self.device = torch.device("cuda", self.local_rank)
        else:
            self.device = torch.device("cpu")
        dist.init_process_group("nccl" if self.cuda else "gloo")

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def barrier(self) -> None:
        """Every rank's queued work done, then all ranks meet (an all-reduce the host waits for:
        with NCCL it also leaves no doubt about which GPU the collective runs on)."""
        self.sync()
        self.dist.all_reduce(torch.ones(1, device=self.device))
        self.sync()


def sluice_system(args, rank: Rank):
    """(name, number of samples, batches per rank, epoch(e, limit) -> iterator of (images, labels))."""
    import sluice
    import sluice.transforms as ST

    cpus = len(os.sched_getaffinity(0))
    threads = args.threads or max(1, cpus // rank.local_world)  # the host's CPUs shared by its ranks
    loader = sluice.Loader(args.data, [ST.Resize((args.size, args.size)), ST.Normalize(MEAN, STD)],
                           batch_size=args.batch_size, device=str(rank.device), dtype="float16",
                           shuffle=True, seed=SEED, num_threads=threads, decode_route=args.decode_route)

    def epoch(e: int, limit: int | None = None):
        loader.set_epoch(e)
        # Cut short (the warm-up), the loader cancels what is in flight at the next iter().
        return itertools.islice(loader, limit)

    return f"sluice ({threads} threads/rank)", loader.num_samples, len(loader), epoch


class FileDataset(torch.utils.data.Dataset):
    """(uint8 3 x size x size tensor, label) per file: decoded and resized in the worker."""

    def __init__(self, samples: list[tuple[str, int]], size: int):
        self.samples, self.size = samples, size
        try:
            from torchvision.transforms import v2

            self.resize = v2.Resize((size, size), antialias=True)  # bilinear by default
            self.how = "decode_jpeg+v2"
        except ImportError:
            self.resize, self.how = None, "PIL fallback, no torchvision"

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int):
        path, label = self.samples[i]
        if self.resize is not None:
            from torchvision.io import ImageReadMode, decode_jpeg, read_file

            return self.resize(decode_jpeg(read_file(path), mode=ImageReadMode.RGB)), label
        import numpy as np
        from PIL import Image

        with Image.open(path) as im:  # PIL's bilinear resize is antialiased when it shrinks
            im = im.convert("RGB").resize((self.size, self.size), Image.BILINEAR)
            return torch.from_numpy(np.asarray(im)).permute(2, 0, 1), label


class WarmupSampler(torch.utils.data.Sampler):
    """A DistributedSampler that can be cut short after `limit` indices: the warm-up epoch then
    ends by itself, and no batches of it are still being prepared when the timed epoch starts
    (abandoning a persistent-worker iterator would drain them at the next iter())."""

    def __init__(self, dataset):
        self.inner = torch.utils.data.DistributedSampler(dataset, shuffle=True, seed=SEED)
        self.limit: int | None = None

    def set_epoch(self, e: int) -> None:
        self.inner.set_epoch(e)

    def __iter__(self):
        return itertools.islice(iter(self.inner), self.limit)

    def __len__(self) -> int:
        return len(self.inner) if self.limit is None else min(self.limit, len(self.inner))


def dataloader_system(args, rank: Rank):
    """As sluice_system, for torch's DataLoader: uint8 batches from the workers, finished on the GPU."""
    dataset = FileDataset(image_folder_samples(args.data), args.size)
    sampler = WarmupSampler(dataset)
    extra = {"persistent_workers": True, "prefetch_factor": 4} if args.workers > 0 else {}
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                                         num_workers=args.workers, pin_memory=rank.cuda, **extra)
    mean, std = (torch.tensor(v, device=rank.device).view(1, 3, 1, 1).mul(255).half() for v in (MEAN, STD))

    def epoch(e: int, limit: int | None = None):
        sampler.set_epoch(e)
        sampler.limit = None if limit is None else limit * args.batch_size
        for images, labels in loader:  # uint8 NCHW, pinned when on the GPU
            images = images.to(rank.device, non_blocking=True).half().sub_(mean).div_(std)
            yield images, labels.to(rank.device, non_blocking=True)

    name = f"DataLoader {dataset.how} ({args.workers} workers/rank)"
    return name, len(dataset), math.ceil(len(sampler.inner) / args.batch_size), epoch


def run_worker(args) -> int:
    rank = Rank(args.device)
    try:
        build = sluice_system if args.system == "sluice" else dataloader_system
        name, dataset_size, num_batches, epoch = build(args, rank)
        sink = torch.zeros(1, device=rank.device)

        def step(images) -> None:
            # What a DDP step does to the data without a model: a reduction on the GPU that
            # needs the batch, all-reduced across ranks (async with NCCL, as DDP's is).
            r = images[:, 0, 0, 0].float().sum().reshape(1)
            rank.dist.all_reduce(r)
            sink.add_(r)

        # Warm-up: the first batches of epoch 0 (workers started, pools and caches filled).
        warmup = min(args.warmup, num_batches)
        for images, _ in epoch(0, warmup):
            step(images)
        rank.barrier()

        # Timed: all of epoch 1, barrier to barrier.
        samples = batches = 0
        waits = []  # seconds this rank waited for each batch (the loader's share of the epoch)
        t0 = time.perf_counter()
        t_prev = t0
        for images, _ in epoch(1):
            t_got = time.perf_counter()
            waits.append(t_got - t_prev)
            step(images)
            samples, batches = samples + images.shape[0], batches + 1
            t_prev = time.perf_counter()
        rank.sync()
        own = time.perf_counter() - t0  # this rank done; the barrier waits for the slowest
        rank.barrier()
        seconds = time.perf_counter() - t0
        slowest = max(range(len(waits)), key=waits.__getitem__) if waits else -1
        mine = {"rank": rank.rank, "samples": samples, "batches": batches, "own_seconds": own,
                "seconds": seconds, "first_batch_s": waits[0] if waits else 0.0,
                "slowest_wait": [slowest, waits[slowest] if waits else 0.0],
                "last_batch_s": waits[-1] if waits else 0.0}
        everyone = [None] * rank.world
        rank.dist.all_gather_object(everyone, mine)
        if rank.rank == 0:
            total = sum(r["samples"] for r in everyone)
            epoch_s = max(r["seconds"] for r in everyone)
            print(json.dumps({
                "system": args.system, "row": name, "gpus": rank.world, "epoch_seconds": epoch_s,
                "total_samples": total, "images_per_s": total / epoch_s, "dataset_size": dataset_size,
                # sluice: every sample once; DistributedSampler: padded to a multiple of the ranks.
                "samples_minus_dataset": total - dataset_size, "warmup_batches": warmup,
                "batches_per_rank": num_batches,
                "per_rank_samples": [r["samples"] for r in everyone],
                "per_rank_batches": [r["batches"] for r in everyone],
                "per_rank_own_seconds": [round(r["own_seconds"], 3) for r in everyone],
                # Where the time went: the wait for the first batch, for the last, and the
                # longest single wait (batch number, seconds), per rank.
                "per_rank_first_batch_s": [round(r["first_batch_s"], 4) for r in everyone],
                "per_rank_last_batch_s": [round(r["last_batch_s"], 4) for r in everyone],
                "per_rank_slowest_wait": [[r["slowest_wait"][0], round(r["slowest_wait"][1], 4)] for r in everyone],
                "device": torch.cuda.get_device_name(rank.device) if rank.cuda else "cpu"}), flush=True)
        return 0
    except Exception:
        print(f"{RANK_ERROR} (rank {rank.rank})\n{traceback.format_exc()}{RANK_ERROR} end", file=sys.stderr,
              flush=True)
        return 1
    finally:
        rank.dist.destroy_process_group()


# ----------------------------------------------------------------------------- parent
def descendants(pid: int) -> list[int]:
    """Every living process below `pid` (torchrun puts each rank in a session of its own, so the
    job's process group alone does not reach them)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def kill_tree(p: subprocess.Popen) -> None:
    """SIGTERM to torchrun (it stops its ranks), then SIGKILL to whatever of the job is left:
    torchrun's group, each rank's own group (its DataLoader workers included)."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    for pid in [p.pid] + descendants(p.pid):
        try:
            pgid = os.getpgid(pid)
            if pgid != os.getpgrp():
                os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()


def run_job(system: str, gpus: int, args, tmp: str) -> dict:
    """One torchrun job of `gpus` ranks; its result row (or an error row with the stderr tail)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(gpus),
           os.path.abspath(__file__), args.data, "--_worker", system, "--batch-size", str(args.batch_size),
           "--size", str(args.size), "--workers", str(args.workers), "--device", args.device,
           "--warmup", str(args.warmup), "--decode-route", args.decode_route, "--threads", str(args.threads)]
    env = dict(os.environ)  # PYTHONPATH and the rest pass through to the ranks
    # torchrun sets OMP_NUM_THREADS=1 only with several ranks; 1 for every job, so the 1-GPU job
    # is no different (sluice's threads are set by num_threads, DataLoader workers use 1 anyway,
    # and torch's OpenMP threads in the main process would only compete with the workers).
    env.setdefault("OMP_NUM_THREADS", "1")
    out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
    t0 = time.perf_counter()
    with open(out_path, "w") as out, open(err_path, "w") as err:  # files, not pipes: ranks may linger
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            pass
        timed_out = p.poll() is None
        if timed_out and os.environ.get("SLUICE_PROBE_GDB"):  # where every rank's threads are
            from gpu_probe import stacks
            with open(err_path, "a") as err:
                for pid in descendants(p.pid):
                    try:
                        with open(f"/proc/{pid}/cmdline") as f:
                            is_rank = "--_worker" in f.read()
                    except OSError:
                        continue
                    if is_rank:
                        err.write(f"=== stacks of rank process {pid}\n{stacks(pid)}\n")
        kill_tree(p)
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
        shutil.copy(err_path, os.path.join(args.logs, f"{system}_{gpus}gpu.stderr"))
    with open(out_path) as out, open(err_path, errors="replace") as err:
        lines, stderr = [ln for ln in out if ln.startswith("{")], err.read()
    # A rank's own traceback says more than torchrun's summary of it, which comes last.
    start = stderr.find(RANK_ERROR)
    end = stderr.find(RANK_ERROR + " end", start + 1)
    rank_error = stderr[start:end].strip().splitlines() if start >= 0 else []
    stderr_tail = "\n".join(rank_error)[-3000:] if rank_error else stderr[-3000:]
    if lines:
        result = json.loads(lines[-1])
        if timed_out:
            result["note"] = f"measured, then did not exit within {args.timeout:g} s"
    elif timed_out:
        result = {"error": f"timeout after {args.timeout:g} s"}
    else:
        result = {"error": f"exit {p.returncode}" + (": " + rank_error[-1] if rank_error else "")}
    if "error" in result:
        result["stderr_tail"] = stderr_tail
    return {"system": system, "gpus": gpus, "wall_seconds": time.perf_counter() - t0, **result}


def machine_info(device: str) -> dict:
    gpu, count = "none (--device cpu)", 0
    if device == "cuda":  # asked in a child: this process stays CUDA-free, no context on GPU 0
        probe = subprocess.run([sys.executable, "-c", "import torch; n = torch.cuda.device_count(); "
                                "print(n); print(torch.cuda.get_device_name(0) if n else 'none')"],
                               capture_output=True, text=True, timeout=300)
        lines = probe.stdout.split("\n")
        if probe.returncode == 0 and lines[0].strip().isdigit():
            count, gpu = int(lines[0]), lines[1].strip()
        else:
            gpu = "none: " + (probe.stderr.strip().splitlines() or ["?"])[-1][:100]
    try:
        import torchvision
        tv = torchvision.__version__
    except ImportError:
        tv = "missing (DataLoader rows decode with PIL)"
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    return {"gpu": gpu, "gpu_count": count, "cpus": len(os.sched_getaffinity(0)), "cpu": cpu,
            "machine": platform.node(), "python": platform.python_version(), "torch": torch.__version__,
            "torchvision": tv}


def dataset_info(root: str) -> dict:
    samples = image_folder_samples(root)
    if not samples:
        raise SystemExit(f"no images under {root}")
    total = 0
    for path, _ in samples:  # also fills the page cache once, for every job alike
        with open(path, "rb") as f:
            total += len(f.read())
    info = {"files": len(samples), "mean_kib": total / len(samples) / 1024}
    try:
        from PIL import Image
    except ImportError:
        return info
    sizes = []
    for path, _ in samples[:200]:  # header reads only
        with Image.open(path) as im:
            sizes.append(im.size)
    info.update(mean_width=sum(w for w, _ in sizes) / len(sizes),
                mean_height=sum(h for _, h in sizes) / len(sizes), sampled=len(sizes))
    return info


def table(rows: list) -> list:
    base = {r["system"]: r["images_per_s"] for r in rows if r["gpus"] == 1 and "images_per_s" in r}
    out = ["| system | GPUs | epoch s | images/s | speed-up vs 1 GPU | samples (dataset) |",
           "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        name = r.get("row", r["system"])
        if "error" in r:
            out.append(f"| {name} | {r['gpus']} | {r['error'][:80].replace('|', '/')} | - | - | - |")
            continue
        up = f"{r['images_per_s'] / base[r['system']]:.2f}x" if r["system"] in base else "n/a"
        out.append(f"| {name} | {r['gpus']} | {r['epoch_seconds']:.2f} | {r['images_per_s']:,.0f} | {up} | "
                   f"{r['total_samples']:,} ({r['dataset_size']:,}) |")
    return out


def target_lines(rows: list) -> list:
    rate = {(r["system"], r["gpus"]): r["images_per_s"] for r in rows if "images_per_s" in r}
    out = []
    for system in dict.fromkeys(r["system"] for r in rows):
        if (system, 1) in rate and (system, 2) in rate:
            x = rate[(system, 2)] / rate[(system, 1)]
            out.append(f"target 2 GPUs >= 1.8x 1 GPU: {system} {x:.2f}x ({'met' if x >= 1.8 else 'NOT met'})")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="ImageFolder root (make with `sluice make-dataset DIR --preset voc -n 21453`)")
    ap.add_argument("--gpus", default="1,2", help="comma-separated rank counts, e.g. 1,2,4")
    ap.add_argument("--systems", default="sluice,dataloader", help="comma-separated: sluice, dataloader")
    ap.add_argument("--batch-size", type=int, default=32, help="per GPU")
    ap.add_argument("--size", type=int, default=640, help="Resize((size, size))")
    ap.add_argument("--workers", type=int, default=8, help="DataLoader workers per GPU")
    ap.add_argument("--warmup", type=int, default=20, help="warm-up batches of epoch 0")
    ap.add_argument("--json", help="write every row here (rewritten after each job)")
    ap.add_argument("--logs", help="keep each job's stderr in this directory")
    ap.add_argument("--decode-route", default="auto", choices=["auto", "hardware", "hybrid", "cpu"],
                    help="sluice's decode_route")
    ap.add_argument("--threads", type=int, default=0,
                    help="sluice's num_threads per rank (default: the host's CPUs / ranks on it)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: the same jobs with gloo and CPU tensors, to check the plumbing")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per job before it is killed")
    ap.add_argument("--_worker", choices=SYSTEMS, dest="system", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.system:  # a rank under torchrun
        return run_worker(args)

    try:
        gpu_counts = [int(g) for g in args.gpus.split(",") if g.strip()]
    except ValueError:
        ap.error(f"--gpus must be comma-separated integers, got {args.gpus!r}")
    systems = [s.strip().lower() for s in args.systems.split(",") if s.strip()]
    if not gpu_counts or min(gpu_counts) < 1 or not systems or set(systems) - set(SYSTEMS):
        ap.error(f"--gpus needs counts >= 1 and --systems a list of {', '.join(SYSTEMS)}")
    meta, info = machine_info(args.device), dataset_info(args.data)
    data_line = (f"{args.data}: {info['files']:,} files, {info['mean_kib']:.1f} KiB mean" +
                 (f", {info['mean_width']:.0f} x {info['mean_height']:.0f} mean W x H (first "
                  f"{info['sampled']} files)" if "sampled" in info else ""))
    settings = (f"batch {args.batch_size}/GPU, Resize(({args.size}, {args.size})) + Normalize -> float16 "
                f"NCHW on {args.device}, DataLoader {args.workers} workers/GPU, warm-up {args.warmup} "
                f"batches of epoch 0, epoch 1 timed, timeout {args.timeout:g} s/job")
    print(f"# {meta['gpu']} x {meta['gpu_count']} | {meta['cpus']} CPUs ({meta['cpu']}) | Python "
          f"{meta['python']} | torch {meta['torch']} | torchvision {meta['torchvision']}", flush=True)
    print(f"# {data_line}\n# {settings}", flush=True)

    rows = []
    with tempfile.TemporaryDirectory(prefix="scaling_bench_") as tmp:
        for system in systems:
            for g in gpu_counts:
                if args.device == "cuda" and g > meta["gpu_count"]:
                    r = {"system": system, "gpus": g, "error": f"needs {g} GPUs, {meta['gpu_count']} visible"}
                else:
                    r = run_job(system, g, args, tmp)
                rows.append(r)
                if "error" in r:
                    print(f"  {system} x {g}: {r['error']}", flush=True)
                    if r.get("stderr_tail"):
                        print("    " + r["stderr_tail"].strip().replace("\n", "\n    "), flush=True)
                else:
                    print(f"  {r['row']} x {g}: {r['epoch_seconds']:.2f} s, {r['images_per_s']:,.0f} images/s, "
                          f"samples per rank {r['per_rank_samples']} ({r['wall_seconds']:.0f} s job); "
                          f"first batch {r['per_rank_first_batch_s']} s, last {r['per_rank_last_batch_s']} s, "
                          f"slowest wait {r['per_rank_slowest_wait']}"
                          + (f"; {r['note']}" if "note" in r else ""), flush=True)
                if args.json:  # after every job: a run cut short keeps what it measured
                    with open(args.json, "w") as f:
                        json.dump({"machine": meta, "data": {"root": args.data, **info}, "args": vars(args),
                                   "rows": rows}, f, indent=1, default=str)
    print(f"\nmachine: {meta['gpu']} x {meta['gpu_count']}, {meta['cpus']} CPUs ({meta['cpu']})")
    print(f"data:    {data_line}")
    print(f"settings: {settings}\n")
    print("\n".join(table(rows) + [""] + target_lines(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
