"""Multi-GPU scaling benchmark, images (issue 21): epochs on 1, 2 and 4 GPUs under torchrun,
sluice against DALI and PyTorch's DataLoader.

The seed article's experiment: 21,453 VOC-like photos (about 500x375 JPEGs, from
`sluice make-dataset DIR --preset voc -n 21453`), resized to 640x640, batch 32 per GPU. Targets:
2 GPUs at least 1.9x the images/s of one GPU, 4 GPUs 3.7x; sluice 1.3x DALI at each GPU count.

Pipeline for every system, per rank: decode JPEG, Resize((640, 640)) (bilinear, antialiased),
Normalize(ImageNet mean/std), float16 NCHW on this rank's GPU, batch 32, a new order every epoch,
each rank reading its own shard of the same files.
  sluice      sluice.Loader(DATA, [Resize, Normalize], device="cuda:LOCAL_RANK", dtype="float16",
              shuffle=True, seed=0, num_threads=--threads, decode_route=--decode-route); rank and
              world size come from torch.distributed. Ids: loader.last_indices.
  dali        NVIDIA's pipeline: readers.file(files, labels=index, random_shuffle, shard_id=rank,
              num_shards=world) -> decoders.image(device="mixed", hw_decoder_load=--hw-load) ->
              resize -> crop_mirror_normalize(float16, CHW), --threads threads, DALIGenericIterator
              (LastBatchPolicy.PARTIAL). Ids: the labels. Its warm-up drains the rest of epoch 0
              untimed (DALI cannot restart an epoch it is in).
  dataloader  a Dataset over the same ImageFolder files; in the workers read_file + decode_jpeg +
              transforms.v2.Resize on uint8 tensors (PIL + NumPy when torchvision is missing: the
              row's name says so); DistributedSampler(shuffle=True, seed=0) + set_epoch, --workers
              workers per rank, pin_memory, persistent_workers, prefetch_factor=4; on the GPU:
              .cuda(non_blocking), cast to float16, normalize. DistributedSampler pads its shards
              to equal length, so its rows repeat a few samples ("padded").

Method (bench/torchrun_jobs.py): one job of G processes per system and GPU count under
`python -m torch.distributed.run --standalone --nproc_per_node G` (NCCL; gloo with --device cpu),
killed with its whole process tree after --timeout seconds. Each step all-reduces a value
computed from the batch, as DDP's gradient all-reduce keeps ranks in step. Warm-up: the first
--warmup batches of epoch 0 (and with --warmup-seconds S whole epochs until S seconds have
passed, the same wall time at every GPU count); timed: the next --epochs epochs, barrier to
barrier, each checked: every sample exactly once over all ranks. Before the first job every file
is read once, so all rows find the data in the page cache. Every job runs with OMP_NUM_THREADS=1
(unless set), as torchrun sets it for several ranks. Threads per rank are the same for every GPU
count (the host's CPUs / the largest count), so the rows scale GPUs, not cores.

    python bench/scaling_bench.py DATA [--gpus 1,2,4] [--systems sluice,dataloader,dali]
        [--batch-size 32] [--size 640] [--workers 8] [--threads N] [--hw-load 0.65] [--epochs 1]
        [--warmup 20] [--warmup-seconds S] [--decode-route auto] [--prefetch N] [--json out.json]
        [--logs DIR] [--device cuda|cpu] [--timeout 600]

`--device cpu` runs the same jobs on the CPU (gloo; sluice device="cpu"; the DataLoader without
pin_memory and .cuda) to check the plumbing on a machine without GPUs; its rates mean little.
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
from torchrun_jobs import Rank, System, run_worker  # noqa: E402
from torchrun_launch import common_args, machine_info, parse_common, run_and_report, warmup_text  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # = sluice.IMAGENET_MEAN / _STD
SEED = 0
# torchvision's ImageFolder extensions (IMG_EXTENSIONS), so both systems list the same files.
IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


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
def sluice_system(args, rank: Rank) -> System:
    import sluice
    import sluice.transforms as ST

    loader = sluice.Loader(args.data, [ST.Resize((args.size, args.size)), ST.Normalize(MEAN, STD)],
                           batch_size=args.batch_size, device=str(rank.device), dtype="float16",
                           shuffle=True, seed=SEED, num_threads=args.threads, decode_route=args.decode_route,
                           **({"prefetch": args.prefetch} if args.prefetch else {}))

    def epoch(e: int, limit: int | None = None):
        loader.set_epoch(e)
        # Cut short (the warm-up), the loader cancels what is in flight at the next iter().
        for images, _ in itertools.islice(loader, limit):
            yield images, loader.last_indices

    def extra() -> dict:
        st = loader.stats()
        out = {key: st.get(key) for key in ("route_samples", "gpu_memory_peak", "engine_state_inits", "prefetch",
                                            "io_threads", "tuning")}
        if st.get("engine_busy_seconds") is not None and st.get("wall_seconds"):
            out["engine_busy_share"] = round(st["engine_busy_seconds"] / st["wall_seconds"], 3)  # the loader's life
        return out

    def after_epoch() -> dict:  # the GPU memory held and the routes taken so far, epoch by epoch (issue 21)
        st = loader.stats()
        keys = ("gpu_memory_in_use", "gpu_memory_reserved", "gpu_memory_reserved_nvjpeg", "gpu_memory_allocated",
                "gpu_memory_allocated_nvjpeg", "gpu_memory_peak", "gpu_pool_overflows", "engine_state_inits",
                "engine_state_seconds", "route_samples", "route_pixels", "gpu_local_cpus", "engine_busy_seconds",
                "wall_seconds", "stage_seconds", "stage_cpu_seconds", "wait_seconds")
        return {key: st[key] for key in keys if key in st}

    prefetch = f", prefetch {args.prefetch}" if args.prefetch else ""
    return System(f"sluice {args.decode_route} ({args.threads} threads/rank{prefetch})", loader.num_samples,
                  len(loader), epoch, extra=extra, after_epoch=after_epoch)


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
        """(image, i): the index stands for the label, for the exactly-once check."""
        path, _ = self.samples[i]
        if self.resize is not None:
            from torchvision.io import ImageReadMode, decode_jpeg, read_file

            return self.resize(decode_jpeg(read_file(path), mode=ImageReadMode.RGB)), i
        import numpy as np
        from PIL import Image

        with Image.open(path) as im:  # PIL's bilinear resize is antialiased when it shrinks
            im = im.convert("RGB").resize((self.size, self.size), Image.BILINEAR)
            return torch.from_numpy(np.asarray(im)).permute(2, 0, 1), i


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


def dataloader_system(args, rank: Rank) -> System:
    """uint8 batches from the workers, finished on the GPU."""
    dataset = FileDataset(image_folder_samples(args.data), args.size)
    sampler = WarmupSampler(dataset)
    extra = {"persistent_workers": True, "prefetch_factor": 4} if args.workers > 0 else {}
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                                         num_workers=args.workers, pin_memory=rank.cuda, **extra)
    mean, std = (torch.tensor(v, device=rank.device).view(1, 3, 1, 1).mul(255).half() for v in (MEAN, STD))

    def epoch(e: int, limit: int | None = None):
        sampler.set_epoch(e)
        sampler.limit = None if limit is None else limit * args.batch_size
        for images, ids in loader:  # uint8 NCHW, pinned when on the GPU
            yield images.to(rank.device, non_blocking=True).half().sub_(mean).div_(std), ids

    return System(f"DataLoader {dataset.how} ({args.workers} workers/rank)", len(dataset),
                  math.ceil(len(sampler.inner) / args.batch_size), epoch, pads=True)


def dali_system(args, rank: Rank) -> System:
    """DALI's own pipeline for the same work, on this rank's shard: readers.file (shuffled, shard
    rank of world, the sample's index as its label) -> decoders.image (mixed: the hardware
    engines take hw_decoder_load of the images) -> resize -> crop_mirror_normalize to float16."""
    from dali_rows import import_dali, sharded_epochs
    dali = import_dali()
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    fn, types = dali.fn, dali.types
    files = [p for p, _ in image_folder_samples(args.data)]

    # On --device cpu (the plumbing check) DALI decodes on the CPU.
    decoder = {"device": "mixed", "hw_decoder_load": args.hw_load} if rank.cuda else {"device": "cpu"}

    @dali.pipeline_def(batch_size=args.batch_size, num_threads=args.threads,
                       device_id=rank.device.index if rank.cuda else None, seed=SEED)
    def pipeline():
        jpegs, ids = fn.readers.file(files=files, labels=list(range(len(files))), random_shuffle=True,
                                     shard_id=rank.rank, num_shards=rank.world, name="Reader")
        images = fn.decoders.image(jpegs, output_type=types.RGB, **decoder)
        images = fn.resize(images, resize_x=args.size, resize_y=args.size)
        return fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                        mean=[255 * m for m in MEAN], std=[255 * s for s in STD]), ids

    pipe = pipeline()
    pipe.build()
    it = DALIGenericIterator([pipe], ["images", "ids"], reader_name="Reader", auto_reset=True,
                             last_batch_policy=LastBatchPolicy.PARTIAL)

    epoch = sharded_epochs(it, bool(args.max_batches) and args.max_batches < len(it),
                           lambda out: (out["images"], out["ids"].reshape(-1).tolist()))

    name = f"DALI {dali.__version__} ({args.threads} threads/rank, hw_decoder_load {args.hw_load:g})"
    return System(name, len(files), len(it), epoch)


SYSTEMS = {"sluice": sluice_system, "dataloader": dataloader_system, "dali": dali_system}


# ----------------------------------------------------------------------------- parent
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="ImageFolder root (make with `sluice make-dataset DIR --preset voc -n 21453`)")
    common_args(ap, SYSTEMS, batch_size=32, warmup=20)
    ap.add_argument("--size", type=int, default=640, help="Resize((size, size))")
    ap.add_argument("--workers", type=int, default=8, help="DataLoader workers per GPU")
    ap.add_argument("--decode-route", default="auto", choices=["auto", "hardware", "hybrid", "cpu"],
                    help="sluice's decode_route")
    ap.add_argument("--prefetch", type=int, default=0, help="sluice's prefetch (0: its default)")
    ap.add_argument("--hw-load", type=float, default=0.65, help="DALI's hw_decoder_load (its default 0.65)")
    args = ap.parse_args()
    gpu_counts, systems = parse_common(ap, args, SYSTEMS)
    if args.system:  # a rank under torchrun
        return run_worker(args, SYSTEMS[args.system])

    meta, info = machine_info(args.device), dataset_info(args.data)
    data_line = (f"{args.data}: {info['files']:,} files, {info['mean_kib']:.1f} KiB mean" +
                 (f", {info['mean_width']:.0f} x {info['mean_height']:.0f} mean W x H (first "
                  f"{info['sampled']} files)" if "sampled" in info else ""))
    settings = (f"batch {args.batch_size}/GPU, Resize(({args.size}, {args.size})) + Normalize -> float16 "
                f"NCHW on {args.device}, sluice and DALI {args.threads} threads/GPU, DataLoader {args.workers} "
                "workers/GPU, " + warmup_text(args)
                + (f" (at most {args.max_batches} batches/rank)" if args.max_batches else "")
                + f", timeout {args.timeout:g} s/job")
    run_and_report(os.path.abspath(__file__), systems, gpu_counts, args, meta, data_line, settings, "images",
                   {"data": {"root": args.data, **info}}, ours="sluice")
    return 0


if __name__ == "__main__":
    sys.exit(main())
