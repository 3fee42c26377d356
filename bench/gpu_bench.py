"""GPU benchmark (issue 3): sluice's CUDA path against torchvision's ways of feeding a GPU.

Pipeline for every row: decode JPEG, RandomResizedCrop(224) (torchvision's default scale and
ratio), RandomHorizontalFlip, Normalize(ImageNet) to float16 NCHW on the GPU, batch 256,
shuffled, the same files (an ImageFolder tree from `sluice make-dataset DIR -n 4096`).

Rows:
  sluice GPU auto|hardware|hybrid|cpu-decode  sluice.Loader(device="cuda", dtype="float16",
      decode_route=auto|hardware|hybrid|cpu): nvJPEG on the hardware engines, nvJPEG hybrid, or
      libjpeg-turbo then upload; crop, resize, flip, normalize in CUDA; torch cuda tensors out.
  sluice CPU  sluice.Loader(device="cpu", dtype="float16"): decodes and normalizes on the CPU;
      the consumer uploads with images.cuda(non_blocking=True).
  DataLoader PIL (16 workers)  torchvision ImageFolder + transforms v1 (PIL) RandomResizedCrop,
      RandomHorizontalFlip, PILToTensor (uint8); pinned, uploaded, cast and normalized on the GPU.
  DataLoader decode_jpeg+v2 (16 workers)  read_file + torchvision.io.decode_jpeg on the CPU and
      transforms.v2 on uint8 tensors in the workers; on the GPU as the row above.
  torchvision GPU decode_jpeg  one process: 4 threads read files ahead, decode_jpeg(list,
      device="cuda") per batch (nvJPEG, batched), then per image v2.functional.resized_crop and
      flip on the GPU, stack, cast, normalize.
  DALI T threads hw_decoder_load L  NVIDIA DALI with its own pipeline for the same work
      (bench/dali_rows.py): T = 16, 8; L = 0.65 (DALI's default), 0.9, 1.0. Skipped, with the
      reason, where DALI is not installed.
  engines alone, bare loop  not a loader: the JPEG engines' own rate on the same files, whole
      images in calls of 7 x 32, each call waited for (codec/engine_rate.h). The ceiling of the
      engine route: no reading, no crop, no resize. Only the files the engines take count.

Method: each row runs in its own process (this script with --_row), so GPU memory peaks are per
row and a hang costs --timeout seconds. A row builds its loader, takes 3 warm-up batches (and
more until --warmup-seconds have passed since the first), then times at least --seconds and 6
batches between two torch.cuda.synchronize() calls; each batch is consumed by a tiny reduction
on the GPU (no per-batch sync). Cores busy: machine-wide /proc/stat jiffies over the timed
interval, the part of them the VM's host took (steal), and the row process's own threads by name
(/proc/self/task) over the same interval.
GPU memory: the allocator's peak (sluice's pool or torch's reserved bytes) and the process's
peak as NVML reports it (pynvml, else nvidia-smi).
sluice rows: loader.stats() counts from the end of the warm-up (memory peaks from the start), and
route_rates gives each decode route's images/s over the timed interval, route_mpix_rates its
megapixels/s (the samples' whole files: what the engines decode), engine_busy_share the share of
that interval in which the JPEG engines were decoding for the loader.

    python bench/gpu_bench.py DATA_A [DATA_B ...] [--seconds 8] [--warmup-seconds 0]
                              [--rows sluice,DataLoader] [--json out.json] [--timeout 150] [--dry-run]
"""
from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402

import dali_rows  # noqa: E402

BATCH, SIZE, WARMUP, MIN_BATCHES, WORKERS = 256, 224, 3, 6, 16
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # = sluice.IMAGENET_MEAN / _STD
GPU = "cuda"  # --dry-run makes it "cpu"
WARMUP_SECONDS = 0.0  # --warmup-seconds


# ----------------------------------------------------------------------------- measurement
def cpu_times() -> list[int]:
    """The machine's CPU time so far by kind, in jiffies: /proc/stat's first line (user, nice,
    system, idle, iowait, irq, softirq, steal, ...)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def cpu_jiffies(vals: list[int] | None = None) -> int:
    """The machine's busy CPU time so far, from `vals` (a cpu_times() reading) or a new one."""
    vals = vals or cpu_times()
    return sum(vals) - vals[3] - (vals[4] if len(vals) > 4 else 0)  # minus idle and iowait


def steal_jiffies(vals: list[int]) -> int:
    """The machine's stolen CPU time in `vals`, a cpu_times() reading (0 where not counted): in a
    VM, the time its vCPUs were ready to run while the host ran something else."""
    return vals[7] if len(vals) > 7 else 0


def thread_groups() -> dict:
    """CPU seconds of this process's threads so far, summed by name: sluice's threads by their
    name without its trailing digits (sluice-cpu, sluice-io, sluice-nvjpeg, ...), the rest as
    "other" (Python, torch, DALI's own threads)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                text = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        group = re.sub(r"\d+$", "", name) if name.startswith("sluice") else "other"
        out[group] = out.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return out


def thread_cores(before: dict, after: dict, seconds: float) -> dict:
    """Cores per thread group between two thread_groups() readings: threads that started in
    between count from 0, those that ended in between are left out (never below 0)."""
    return {k: round(max(0.0, v - before.get(k, 0.0)) / seconds, 2) for k, v in sorted(after.items())}


def warm_up(it, consume, seconds: float) -> dict:
    """The warm-up before a row is timed: WARMUP batches, and more until `seconds` have passed
    since the first came (--warmup-seconds; 0 by default). The same for every row, DALI's too:
    a long one leaves out a loader's start (buffers growing, `auto`'s first probes) as a
    training run of many minutes would."""
    t0, done = None, 0
    while done < WARMUP or time.perf_counter() - t0 < seconds:
        consume(next(it)[0])
        t0 = time.perf_counter() if t0 is None else t0
        done += 1
    return {"warmup_batches": done, "warmup_seconds": time.perf_counter() - t0}


def measure(batches, seconds: float, warmed=None, warmup_seconds: float = 0.0) -> dict:
    """Consumes an endless iterator of (images, labels) on the GPU: images/s and cores busy.
    warmed(), if given, is called once the warm-up is done."""
    sync = torch.cuda.synchronize if GPU == "cuda" else (lambda: None)
    sink = torch.zeros((), device=GPU)
    it = iter(batches)

    def consume(images):
        nonlocal sink
        sink += images[:, 0, 0, 0].float().sum()  # the batch is really consumed, on the GPU

    warm = warm_up(it, consume, warmup_seconds)
    sync()
    if warmed is not None:
        warmed()
    return {**timed(it, consume, seconds, sync), **warm}


def timed(it, consume, seconds: float, sync) -> dict:
    """At least `seconds` and MIN_BATCHES batches of `it` through `consume`, up to a sync():
    images, batches, seconds, images/s and where the cores went meanwhile."""
    before, t0 = core_reading(), time.perf_counter()
    n = done = 0
    while done < MIN_BATCHES or time.perf_counter() - t0 < seconds:
        images, _ = next(it)
        consume(images)
        n, done = n + images.shape[0], done + 1
    sync()
    el = time.perf_counter() - t0
    return {"images": n, "batches": done, "seconds": el, **interval_cores(before), "images_per_s": n / el}


def core_reading() -> dict:
    """The counters interval_cores() compares (thread_groups(), cpu_jiffies(), steal_jiffies()),
    stamped with the perf_counter() midpoint of reading them: the reading can take a large part
    of a second where a Python thread spins, as each /proc read hands that thread the GIL."""
    t0 = time.perf_counter()
    groups, times = thread_groups(), cpu_times()
    return {"at": (t0 + time.perf_counter()) / 2, "groups": groups, "jiffies": cpu_jiffies(times),
            "steal": steal_jiffies(times)}


def interval_cores(before: dict, after: dict | None = None) -> dict:
    """Between two core_reading()s (`after` read now if not given), over the time between their
    stamps: the machine's cores busy (stolen time included), the cores the host took from the
    VM, this process's threads' by group, and the difference (other processes)."""
    after = after or core_reading()
    seconds = after["at"] - before["at"]
    hz = os.sysconf("SC_CLK_TCK")
    busy = (after["jiffies"] - before["jiffies"]) / hz / seconds
    stolen = (after["steal"] - before["steal"]) / hz / seconds
    threads = thread_cores(before["groups"], after["groups"], seconds)
    return {"cores_seconds": seconds, "cores_busy": busy, "cores_stolen": stolen, "thread_cores": threads,
            "other_processes_cores": max(0.0, busy - stolen - sum(threads.values()))}


def gpu_process_query():
    """(source, query): query() -> [(pid, bytes used or None)] for every compute process."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        return "pynvml", lambda: [(p.pid, p.usedGpuMemory) for h in handles
                                  for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)]
    except Exception:  # noqa: BLE001 - no pynvml, or no driver behind it
        pass
    if shutil.which("nvidia-smi") is None:
        return None, None

    def smi():
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
        rows = [[s.strip() for s in line.split(",")] + [""] for line in out.stdout.splitlines()]
        return [(int(r[0]), int(r[1]) * 2**20 if r[1].isdigit() else None)  # "[N/A]" -> None
                for r in rows if r[0].isdigit()]

    return "nvidia-smi", smi


class GpuMemoryPoller(threading.Thread):
    """Peak GPU memory of this process as the driver reports it, CUDA context included. In a
    container with its own pid namespace NVML reports host pids: when no pid matches and exactly
    one compute process exists, that one is taken (and .match says so)."""

    def __init__(self, interval: float = 0.1):
        super().__init__(daemon=True)
        self.source, self._query = gpu_process_query()
        self.peak = self.match = None
        self._interval, self._done = interval, threading.Event()

    def run(self):
        while self._query and not self._done.is_set():
            try:
                procs = [(pid, used) for pid, used in self._query() if used is not None]
            except Exception:  # noqa: BLE001 - a failed poll is a missing sample
                procs = []
            mine = [used for pid, used in procs if pid == os.getpid()]
            if mine or len(procs) == 1:
                used = sum(mine) if mine else procs[0][1]
                if self.peak is None or used > self.peak:
                    self.peak, self.match = used, "pid" if mine else "sole compute process (pid not visible)"
            self._done.wait(self._interval)

    def stop(self):
        self._done.set()
        self.join()


def torch_reserved_peak():
    return torch.cuda.max_memory_reserved() if GPU == "cuda" else None


# ----------------------------------------------------------------------------- rows
def sluice_row(data: str, device: str, route: str | None):
    import sluice
    import sluice.transforms as ST

    loader = sluice.Loader(data, [ST.RandomResizedCrop(SIZE), ST.RandomHorizontalFlip(),
                                  ST.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                           batch_size=BATCH, device=device, dtype="float16", shuffle=True, seed=0,
                           **({"decode_route": route} if route else {}))

    def batches():
        for epoch in itertools.count():
            loader.set_epoch(epoch)
            for images, labels in loader:
                if device == "cpu":  # the sluice CPU row: normalized on the CPU, uploaded here
                    images, labels = images.to(GPU, non_blocking=True), labels.to(GPU, non_blocking=True)
                yield images, labels

    def extra():
        st = loader.stats()
        return {"gpu_alloc_peak": st.get("gpu_memory_peak") if device != "cpu" else torch_reserved_peak(),
                "sluice_stats": st}

    return batches(), extra, loader.reset_stats  # stats count from the end of the warm-up


def gpu_normalizer():
    """uint8 NCHW (pinned CPU or GPU) -> normalized float16 NCHW on the GPU."""
    mean, std = (torch.tensor(v, device=GPU).view(1, 3, 1, 1).mul(255).half() for v in (MEAN, STD))
    return lambda x: x.to(GPU, non_blocking=True).half().sub_(mean).div_(std)


def dataloader_row(dataset):
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=WORKERS,
                                         pin_memory=GPU == "cuda", persistent_workers=True,
                                         prefetch_factor=4)
    first = iter(loader)  # forks the workers now, before this process initializes CUDA

    def batches():
        epoch, normalize = first, gpu_normalizer()
        while True:
            for images, labels in epoch:
                yield normalize(images), labels.to(GPU, non_blocking=True)
            epoch = iter(loader)

    return batches(), lambda: {"gpu_alloc_peak": torch_reserved_peak()}


def dataloader_pil_row(data: str):
    import torchvision.datasets as tvd
    import torchvision.transforms as T

    tf = T.Compose([T.RandomResizedCrop(SIZE), T.RandomHorizontalFlip(), T.PILToTensor()])
    return dataloader_row(tvd.ImageFolder(data, transform=tf))


def read_and_decode_jpeg(path: str):
    from torchvision.io import ImageReadMode, decode_jpeg, read_file

    return decode_jpeg(read_file(path), mode=ImageReadMode.RGB)


def dataloader_decode_jpeg_row(data: str):
    import torchvision.datasets as tvd
    from torchvision.transforms import v2

    tf = v2.Compose([v2.RandomResizedCrop(SIZE, antialias=True), v2.RandomHorizontalFlip()])
    return dataloader_row(tvd.ImageFolder(data, loader=read_and_decode_jpeg, transform=tf))


def torchvision_gpu_row(data: str):
    import torchvision.datasets as tvd
    import torchvision.transforms as T
    from torchvision.io import ImageReadMode, decode_jpeg
    from torchvision.transforms.v2 import functional as F

    samples = tvd.ImageFolder(data).samples
    all_labels = torch.tensor([label for _, label in samples])
    pool = ThreadPoolExecutor(4)

    def read(path):
        with open(path, "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)

    def file_batches():  # endless shuffled epochs of ([future file bytes], labels)
        for epoch in itertools.count():
            order = torch.randperm(len(samples), generator=torch.Generator().manual_seed(epoch))
            for i in range(0, len(order), BATCH):
                idx = order[i:i + BATCH]
                yield [pool.submit(read, samples[j][0]) for j in idx.tolist()], all_labels[idx]

    def batches():
        source, normalize = file_batches(), gpu_normalizer()
        ahead = collections.deque(itertools.islice(source, 2))  # two batches of reads in flight
        while True:
            futures, labels = ahead.popleft()
            ahead.append(next(source))
            crops = []
            for img in decode_jpeg([f.result() for f in futures], mode=ImageReadMode.RGB, device=GPU):
                top, left, h, w = T.RandomResizedCrop.get_params(img, scale=[0.08, 1.0], ratio=[3 / 4, 4 / 3])
                img = F.resized_crop(img, top, left, h, w, [SIZE, SIZE], antialias=True)
                crops.append(F.horizontal_flip(img) if random.random() < 0.5 else img)
            yield normalize(torch.stack(crops)), labels.to(GPU, non_blocking=True)

    return batches(), lambda: {"gpu_alloc_peak": torch_reserved_peak()}


def engine_loop_row(data: str, seconds: float) -> dict:
    if GPU != "cuda":
        raise dali_rows.RowSkipped("measures the GPU's JPEG engines: no GPU in a dry run")
    from sluice import _core

    files = []
    for root, _, names in os.walk(data):
        for n in sorted(names):
            with open(os.path.join(root, n), "rb") as f:
                files.append(f.read())
    j0 = cpu_jiffies()
    r = _core._engine_rate(files, seconds, 0)
    busy = (cpu_jiffies() - j0) / os.sysconf("SC_CLK_TCK") / r["seconds"]
    return {"images": r["images"], "seconds": r["seconds"], "images_per_s": r["images"] / r["seconds"],
            "mpix_per_s": r["pixels"] / 1e6 / r["seconds"], "cores_busy": busy, "engine_loop": r}


def measured(make):
    """A row that yields batches, timed by measure(). make: data -> (batches, extra) or
    (batches, extra, warmed). A sluice GPU row also gets each decode route's images/s."""
    def row(data: str, seconds: float) -> dict:
        batches, extra, *warmed = make(data)
        result = {**measure(batches, seconds, *(warmed or [None]), warmup_seconds=WARMUP_SECONDS), **extra()}
        stats = result.get("sluice_stats", {})
        if stats.get("route_samples"):
            result["route_rates"] = {r: n / result["seconds"] for r, n in stats["route_samples"].items()}
        if stats.get("route_pixels"):  # the engines decode whole files: their work in pixels
            result["route_mpix_rates"] = {r: n / 1e6 / result["seconds"] for r, n in stats["route_pixels"].items()}
        if stats.get("wall_seconds"):  # counted, like route_samples, from the end of the warm-up
            result["engine_busy_share"] = stats.get("engine_busy_seconds", 0) / stats["wall_seconds"]
        return result
    return row


ENGINE_ROW = "engines alone, bare loop"
ROWS = {  # name -> (data, seconds) -> result
    "sluice GPU auto": measured(lambda d: sluice_row(d, GPU, "auto")),
    "sluice GPU hardware": measured(lambda d: sluice_row(d, GPU, "hardware")),
    "sluice GPU hybrid": measured(lambda d: sluice_row(d, GPU, "hybrid")),
    "sluice GPU cpu-decode": measured(lambda d: sluice_row(d, GPU, "cpu")),
    "sluice CPU": measured(lambda d: sluice_row(d, "cpu", None)),
    "DataLoader PIL (16 workers)": measured(dataloader_pil_row),
    "DataLoader decode_jpeg+v2 (16 workers)": measured(dataloader_decode_jpeg_row),
    "torchvision GPU decode_jpeg": measured(torchvision_gpu_row),
    **{name: measured(make) for name, make in dali_rows.rrc_rows().items()},
    ENGINE_ROW: engine_loop_row,
}


def run_row(name: str, data: str, seconds: float) -> dict:
    """In the child process: one row on one dataset."""
    poller = GpuMemoryPoller()
    poller.start()
    try:
        result = ROWS[name](data, seconds)
    except dali_rows.RowSkipped as e:
        result = {"skipped": str(e)}
    except Exception as e:  # noqa: BLE001 - reported as the row's result
        first = (str(e).strip().splitlines() or [""])[0]
        result = {"error": f"{type(e).__name__}: {first}", "traceback": traceback.format_exc()}
    poller.stop()
    return {**result, "torch_reserved_peak": torch_reserved_peak(), "gpu_process_peak": poller.peak,
            "gpu_process_source": poller.source, "gpu_process_match": poller.match}


# ----------------------------------------------------------------------------- parent
def spawn_row(name: str, data: str, args, tmp: str) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--_row", name, data, "--seconds", str(args.seconds),
           "--warmup-seconds", str(args.warmup_seconds)]
    return run_row_process(name, cmd + (["--dry-run"] if args.dry_run else []), args.timeout, tmp)


def run_row_process(name: str, cmd: list, timeout: float, tmp: str) -> dict:
    """Runs one row's process (`cmd`) with a time limit, kills its process group (DataLoader
    workers included) and returns the last JSON line it printed, or the error."""
    out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
    t0 = time.perf_counter()
    with open(out_path, "w") as out, open(err_path, "w") as err:  # files, not pipes: workers may linger
        p = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        timed_out = p.poll() is None
        try:  # the row's whole process group, its DataLoader workers included
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    with open(out_path) as out, open(err_path, errors="replace") as err:
        lines, stderr_tail = [ln for ln in out if ln.startswith("{")], err.read()[-2000:]
    if lines:
        result = json.loads(lines[-1])
        if timed_out:
            result["note"] = f"measured, then did not exit within {timeout:g} s"
    elif timed_out:
        result = {"error": "timeout"}
    else:
        result = {"error": f"exit {p.returncode}: " + (stderr_tail.strip().splitlines() or [""])[-1]}
    if "error" in result:
        result["stderr_tail"] = stderr_tail
    return {"row": name, "wall_seconds": time.perf_counter() - t0, **result}


def select_rows(names: list[str], rows: str | None) -> list[str]:
    """The names that contain one of the comma-separated substrings of `rows` (case aside; all
    names without it). A comma followed by a space belongs to the substring, so that a row named
    "sluice GPU, Cutout (built-in)" can be chosen by its whole name."""
    if not rows:
        return list(names)
    wanted = [w.strip().lower() for w in re.split(r",(?!\s)", rows) if w.strip()]
    return [n for n in names if any(w in n.lower() for w in wanted)]


def dataset_info(root: str) -> dict:
    from PIL import Image, JpegImagePlugin

    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root, followlinks=True)
                   for f in fs if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp")))
    if not paths:
        raise SystemExit(f"no images under {root}")
    total = 0
    for p in paths:  # also fills the page cache once, for every row alike
        with open(p, "rb") as f:
            total += len(f.read())
    sample = paths[::max(1, len(paths) // 200)][:200]
    mpix, chroma = [], collections.Counter()
    for p in sample:  # header reads only
        with Image.open(p) as im:
            mpix.append(im.width * im.height / 1e6)
            sampling = JpegImagePlugin.get_sampling(im) if im.format == "JPEG" else -1
            chroma[{0: "4:4:4", 1: "4:2:2", 2: "4:2:0"}.get(sampling, im.format)] += 1
    return {"files": len(paths), "mean_kib": total / len(paths) / 1024,
            "mean_mpix": sum(mpix) / len(mpix), "sampled": len(sample), "chroma": dict(chroma)}


def machine_info() -> dict:
    import PIL

    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.get_device_name(0))"],
                           capture_output=True, text=True, timeout=300)  # this process stays CUDA-free
    gpu = probe.stdout.strip() or "none: " + (probe.stderr.strip().splitlines() or ["?"])[-1][:100]
    try:
        import torchvision
        tv = torchvision.__version__
    except Exception as e:  # noqa: BLE001
        tv = f"missing ({type(e).__name__})"
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    return {"gpu": gpu, "cpus": os.cpu_count(), "cpu": cpu, "machine": platform.node(),
            "python": platform.python_version(), "torch": torch.__version__, "torchvision": tv,
            "pillow": PIL.__version__, "gpu_process_memory_source": gpu_process_query()[0] or "none"}


def table(rows: list) -> list:
    def mib(b):
        return "n/a" if b is None else f"{b / 2**20:,.0f}"

    out = ["| row | images/s | cores busy | GPU peak allocator MiB | GPU peak process MiB |",
           "|---|---:|---:|---:|---:|"]
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['row']} | skipped: {r['skipped'][:90]} | - | - | - |")
        elif "error" in r:
            err = r["error"] if r["error"] == "timeout" else "error: " + r["error"][:90].replace("|", "/")
            out.append(f"| {r['row']} | {err} | - | - | - |")
        else:
            star = "*" if r.get("gpu_process_match") not in (None, "pid") else ""
            out.append(f"| {r['row']} | {r['images_per_s']:,.0f} | {r['cores_busy']:.1f} | "
                       f"{mib(r.get('gpu_alloc_peak'))} | {mib(r.get('gpu_process_peak'))}{star} |")
    return out


def window_summary(windows: list[dict]) -> str:
    """stats()["route_windows"] by CPU share, in order of first use: windows x mean img/s (mean
    engines busy), e.g. '0.1875: 23 x 21,673 (99%); 0.2500: 2 x 22,454 (100%)'."""
    by_share: dict[float, list[dict]] = {}
    for w in windows:
        by_share.setdefault(w["cpu_share"], []).append(w)
    return "; ".join(f"{share:.4f}: {len(v)} x {sum(w['images_per_s'] for w in v) / len(v):,.0f} "
                     f"({sum(w['engine_busy'] for w in v) / len(v):.0%})" for share, v in by_share.items())


def window_sequence(windows: list[dict]) -> str:
    """The same windows in order, consecutive ones of one share and phase (hold, probe, check)
    merged: '0.1875 hold x8, 0.2500 probe x1, 0.1875 hold x4'."""
    runs: list[list] = []
    for w in windows:
        key = (w["cpu_share"], w["phase"])
        if runs and runs[-1][0] == key:
            runs[-1][1] += 1
        else:
            runs.append([key, 1])
    return ", ".join(f"{share:.4f} {phase} x{n}" for (share, phase), n in runs)


def thread_line(rows: list) -> str:
    """Where each measured row's cores went: its own threads by group, other processes, and the
    time the host took (stolen); "" when no row has them."""
    rows = [r for r in rows if r.get("thread_cores")]
    return "cores by thread group: " + "; ".join(
        f"{r['row']}: " + ", ".join(f"{g} {c:.1f}" for g, c in r["thread_cores"].items() if c >= 0.05)
        + f", other processes {r.get('other_processes_cores', 0):.1f}, stolen {r.get('cores_stolen', 0):.2f}"
        for r in rows) if rows else ""


def ratio_line(data: str, rows: list) -> str:
    """sluice GPU auto against the best DALI row and the best torchvision row of this run."""
    rate = {r["row"]: r["images_per_s"] for r in rows if "images_per_s" in r}
    ceiling = rate.pop(ENGINE_ROW, None)
    out = []
    for kind, peers in (("DALI", {n: v for n, v in rate.items() if n.startswith("DALI")}),
                        ("torchvision", {n: v for n, v in rate.items() if not n.startswith(("sluice", "DALI"))})):
        if "sluice GPU auto" not in rate or not peers:
            out.append(f"best {kind} row n/a")
            continue
        best = max(peers, key=peers.get)
        out.append(f"{rate['sluice GPU auto'] / peers[best]:.2f}x the best {kind} row ({best})")
    line = f"{data}: sluice GPU auto = " + "; ".join(out)
    if ceiling:  # how far each GPU row is from the engines' own rate
        line += "\n  of the engines' bare loop: " + ", ".join(
            f"{n} {v / ceiling:.2f}" for n, v in rate.items() if "GPU" in n or n.startswith("DALI"))
    busy = {r["row"]: r["engine_busy_share"] for r in rows if r.get("engine_busy_share")}
    if busy:
        line += "\n  engines busy: " + ", ".join(f"{n} {v:.0%}" for n, v in busy.items())
    # Per pixel, since the engines decode whole files and auto leaves them the larger ones.
    engine_mpix = {r["row"]: r["route_mpix_rates"]["hardware"] for r in rows
                   if r.get("route_mpix_rates", {}).get("hardware")}
    loop_mpix = next((r["mpix_per_s"] for r in rows if r["row"] == ENGINE_ROW and "mpix_per_s" in r), None)
    if engine_mpix:
        line += "\n  the engines' megapixels/s: " + ", ".join(
            f"{n} {v:,.0f}" + (f" ({v / loop_mpix:.2f} of the bare loop)" if loop_mpix else "")
            for n, v in engine_mpix.items())
        if loop_mpix:
            line += f", bare loop {loop_mpix:,.0f}"
    if thread_line(rows):
        line += "\n  " + thread_line(rows)
    for r in rows:  # auto's windows (from its start, warm-up included) and the engine states made
        st = r.get("sluice_stats") or {}
        if st.get("route_windows"):
            pads = (f", {st['engine_pads']:,} pads in {st.get('engine_calls', 0):,} calls"
                    if "engine_pads" in st else "")  # what filled calls up to their states
            line += (f"\n  {r['row']}: {st.get('engine_state_inits', 0)} nvJPEG states made"
                     f" ({st.get('engine_state_seconds', 0):.2f} s){pads}; windows (CPU share: "
                     f"count x mean img/s, engines busy): {window_summary(st['route_windows'])}")
    return line


NOTES = """\
GPU peak allocator: sluice GPU rows = loader.stats()["gpu_memory_peak"] (sluice's device pool, nvJPEG
  buffers included); sluice CPU and torchvision rows = torch.cuda.max_memory_reserved() (for the
  torchvision GPU row that leaves out nvJPEG's own buffers, which it cudaMallocs itself).
GPU peak process: the driver's per-process figure (NVML, polled every 0.1 s), CUDA context included;
  in sluice rows torch also initializes CUDA in the same process, so its context is counted there too.
  * = our pid not visible to NVML (own pid namespace): the sole compute process was taken instead.
cores busy: machine-wide over the timed interval (DataLoader workers and the NVML poller included);
  by thread group: the row process's own threads (sluice's by name, the rest "other"), and the
  machine's cores busy less those ("other processes": DataLoader workers, the parent, the system)."""


def main() -> int:
    global GPU, WARMUP_SECONDS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+", help="ImageFolder roots (make with `sluice make-dataset`)")
    ap.add_argument("--seconds", type=float, default=8.0, help="minimum timed seconds per row")
    ap.add_argument("--warmup-seconds", type=float, default=0.0,
                    help=f"untimed seconds before it, at least {WARMUP} batches (every row alike)")
    ap.add_argument("--rows", help="comma-separated substrings of row names to run (default: all; a comma "
                    "followed by a space is part of a name)")
    ap.add_argument("--json", help="write every result here (rewritten after each row)")
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds per row before it is killed")
    ap.add_argument("--dry-run", action="store_true",
                    help="check the plumbing without a GPU: 'cuda' becomes 'cpu' (rates meaningless)")
    ap.add_argument("--_row", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dry_run:
        GPU = "cpu"
    WARMUP_SECONDS = args.warmup_seconds
    if args._row:
        print(json.dumps(run_row(args._row, args.data[0], args.seconds), default=str), flush=True)
        return 0

    names = select_rows(list(ROWS), args.rows)
    if not names:
        ap.error(f"--rows {args.rows!r} matches none of: {', '.join(ROWS)}")
    meta = machine_info()
    print(f"# GPU {meta['gpu']} | {meta['cpus']} CPUs ({meta['cpu']}) | Python {meta['python']} | "
          f"torch {meta['torch']} | torchvision {meta['torchvision']} | Pillow {meta['pillow']} | "
          f"process GPU memory via {meta['gpu_process_memory_source']}" + (" | DRY RUN" if args.dry_run else ""))
    warmup = f"{WARMUP} warm-up batches" + (f" and >= {args.warmup_seconds:g} s" if args.warmup_seconds else "")
    print(f"# each row in its own process: {warmup}, then >= {args.seconds:g} s and "
          f">= {MIN_BATCHES} batches of {BATCH}; timeout {args.timeout:g} s", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gpu_bench_") as tmp:
        for data in args.data:
            info, rows = dataset_info(data), []
            results.append({"data": data, "info": info, "rows": rows})
            print(f"\n## {data}: {info['files']:,} files, {info['mean_kib']:.1f} KiB mean, {info['mean_mpix']:.3f} "
                  f"MP mean, chroma {info['chroma']} ({info['sampled']} sampled)", flush=True)
            for name in names:
                r = spawn_row(name, data, args, tmp)
                rows.append(r)
                rate = (f"{r['images_per_s']:,.0f} img/s" if "images_per_s" in r else
                        "skipped: " + r["skipped"] if "skipped" in r else r["error"][:100])
                print(f"  {name}: {rate} ({r['wall_seconds']:.0f} s){' ' + r['note'] if 'note' in r else ''}", flush=True)
                if args.json:  # after every row: a run cut short keeps what it measured
                    with open(args.json, "w") as f:
                        json.dump({"machine": meta, "args": vars(args), "datasets": results}, f, indent=1, default=str)
            print("\n" + "\n".join(table(rows)), flush=True)
    print("\n" + NOTES)
    for d in results:
        print(ratio_line(d["data"], d["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
