"""Jobs under torchrun for the scaling benchmarks (bench/scaling_bench.py for images,
bench/video_scaling.py for clips): one process per GPU, the timed epochs, the check that every
sample came exactly once over all ranks, and the parent that starts each job and kills what is
left of it.

A benchmark's worker builds a `System` for its rank and hands it to `measure`. Its epoch(e, limit)
yields (batch on the rank's device, the batch's sample ids or None). Every batch is consumed as a
DDP step would be: a reduction on the GPU that needs the batch, all-reduced across ranks (one
element, every step: DDP's gradient all-reduce is what keeps ranks in lockstep, modelled without
a model). Warm-up: the first --warmup batches of epoch 0, then, with --warmup-seconds S, whole
epochs until S seconds have passed since the warm-up began on every rank (the same wall time at
any GPU count: a loader that tunes itself by time, as sluice's `auto` does, has then had as long
at 4 GPUs as at 1), then a barrier. Timed: the next --epochs epochs, each barrier to barrier (a
device synchronize first), cut at --max-batches batches per rank when given (then seconds per
epoch are extrapolated from the rate and nothing is checked). Epoch seconds are the slowest
rank's; the row's rate is the samples of all ranks over the timed epochs' seconds, its seconds
per epoch their mean (single epochs of 0.3 s on 4 GPUs varied by 30%). rank 0 prints one JSON
line for the job. BENCH_NO_ALLREDUCE=1 leaves the all-reduce out (a probe: what keeping the ranks
in step costs). BENCH_ONE_GPU_PER_RANK=1 shows each rank only its own GPU (CUDA_VISIBLE_DEVICES,
as separate jobs have; a probe: does any thread of a rank touch another rank's GPU).
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Iterable

import torch

RANK_ERROR = "=== torchrun_jobs rank error"  # brackets a rank's traceback in the job's stderr
ONE_GPU_PER_RANK = os.environ.get("BENCH_ONE_GPU_PER_RANK") == "1"


@dataclass
class System:
    """One row's loader on one rank."""
    name: str  # the row's name, with its threads or workers
    dataset_size: int  # samples (clips) in an epoch over all ranks
    num_batches: int  # batches per rank in an epoch
    epoch: Callable[[int, int | None], Iterable]  # (e, limit) -> (batch, ids or None) ...
    pads: bool = False  # ranks get repeated samples to even out (DistributedSampler)
    extra: Callable[[], dict] = dict  # figures of the loader's own, after the run
    after_epoch: Callable[[], dict] = dict  # figures of the loader's own after each timed epoch


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
            index = 0 if ONE_GPU_PER_RANK else self.local_rank
            torch.cuda.set_device(index)
            self.device = torch.device("cuda", index)
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

    def max(self, value: float) -> float:
        """The largest of every rank's value (all ranks get it)."""
        t = torch.tensor([value], dtype=torch.float64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t.item())

    def gather(self, obj) -> list:
        everyone = [None] * self.world
        self.dist.all_gather_object(everyone, obj)
        return everyone


def exactly_once(ids_per_rank: list, dataset_size: int) -> dict:
    """What the ranks' sample ids of one epoch say: every id in [0, dataset_size) once?"""
    ids = [int(i) for rank_ids in ids_per_rank for i in rank_ids]
    unique = set(ids)
    outside = sum(1 for i in unique if not 0 <= i < dataset_size)
    return {"delivered": len(ids), "unique": len(unique), "repeated": len(ids) - len(unique),
            "missing": dataset_size - (len(unique) - outside), "outside": outside,
            "exactly_once": len(ids) == len(unique) == dataset_size and outside == 0}


def host_cpu_jiffies() -> tuple[int, int, int]:
    """(steal, idle + iowait, total) of the whole machine's CPUs so far, from /proc/stat (zeros
    where there is none): in a VM, steal is time its vCPUs were runnable but the host ran others."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0, 0
    steal = fields[7] if len(fields) > 7 else 0
    return steal, fields[3] + fields[4], sum(fields[:8])


def host_shares(before: tuple, after: tuple) -> dict:
    """The machine's CPU time between two host_cpu_jiffies(): the share stolen and the share busy."""
    steal, idle, total = (b - a for a, b in zip(before, after))
    if total <= 0:
        return {"steal": 0.0, "busy": 0.0}
    return {"steal": steal / total, "busy": 1 - idle / total}


def timed_epoch(rank: Rank, system: System, e: int, limit: int | None, step) -> dict:
    """Epoch e, barrier to barrier: this rank's samples, ids, and waits for each batch."""
    samples, ids, waits = 0, [], []
    cpu0 = time.process_time()  # this process's threads (not a DataLoader's worker processes)
    host0 = host_cpu_jiffies()
    t0 = t_prev = time.perf_counter()
    for batch, batch_ids in system.epoch(e, limit):
        waits.append(time.perf_counter() - t_prev)
        step(batch)
        samples += batch.shape[0]
        if batch_ids is not None:
            ids.extend(int(i) for i in batch_ids)
        t_prev = time.perf_counter()
    rank.sync()
    own = time.perf_counter() - t0  # this rank done; the barrier waits for the slowest
    cores = (time.process_time() - cpu0) / own if own > 0 else 0.0
    host = host_shares(host0, host_cpu_jiffies())
    after = system.after_epoch()
    rank.barrier()
    slowest = max(range(len(waits)), key=waits.__getitem__) if waits else -1
    return {"rank": rank.rank, "samples": samples, "batches": len(waits), "own_seconds": own, "cores": cores,
            "cpus": len(os.sched_getaffinity(0)),
            "seconds": time.perf_counter() - t0, "ids": ids if limit is None else None,
            "first_batch_s": waits[0] if waits else 0.0, "first10_s": sum(waits[:10]), "after": after,
            "host": host,
            "slowest_wait": [slowest, waits[slowest] if waits else 0.0]}


def epoch_row(everyone: list, system: System, cut: bool) -> dict:
    """rank 0's summary of one timed epoch from every rank's timed_epoch."""
    total, seconds = sum(r["samples"] for r in everyone), max(r["seconds"] for r in everyone)
    row = {"seconds": seconds, "rate": total / seconds, "samples": total,
           "epoch_seconds": system.dataset_size / (total / seconds) if cut else seconds,
           "per_rank_samples": [r["samples"] for r in everyone],
           "per_rank_batches": [r["batches"] for r in everyone],
           "per_rank_own_seconds": [round(r["own_seconds"], 3) for r in everyone],
           # CPU time of each rank's process (its threads; not a DataLoader's workers) per second.
           "per_rank_cores": [round(r["cores"], 1) for r in everyone],
           "per_rank_cpus": [r["cpus"] for r in everyone],  # the CPUs its process may run on
           # How fast each rank's loader starts an epoch: the consumer's waits for its first 10 batches.
           "per_rank_first10_s": [round(r["first10_s"], 4) for r in everyone],
           # The whole machine's CPUs over rank 0's epoch: busy share, and the share the VM's host
           # took away (steal): a slow epoch with steal up is the host's, not the loader's.
           "host_busy_share": round(everyone[0]["host"]["busy"], 3),
           "host_steal_share": round(everyone[0]["host"]["steal"], 4),
           # Where the time went: each rank's wait for its first batch, and its longest single
           # wait (batch number, seconds).
           "per_rank_first_batch_s": [round(r["first_batch_s"], 4) for r in everyone],
           "per_rank_slowest_wait": [[r["slowest_wait"][0], round(r["slowest_wait"][1], 4)] for r in everyone]}
    if any(r["after"] for r in everyone):
        row["per_rank_after"] = [r["after"] for r in everyone]  # e.g. the GPU memory sluice holds
    if not cut and all(r["ids"] is not None for r in everyone) and any(r["ids"] for r in everyone):
        row["check"] = exactly_once([r["ids"] for r in everyone], system.dataset_size)
    return row


NO_ALLREDUCE = os.environ.get("BENCH_NO_ALLREDUCE") == "1"  # probe: ranks not kept in step


def measure(rank: Rank, system: System, args) -> dict | None:
    """Warm-up, then the timed epochs; the job's result on rank 0 (None elsewhere)."""
    sink = torch.zeros(1, device=rank.device)

    def step(batch) -> None:
        r = batch.reshape(batch.shape[0], -1)[:, 0].float().sum().reshape(1)
        if not NO_ALLREDUCE:
            rank.dist.all_reduce(r)  # async with NCCL, as DDP's is
        sink.add_(r)

    t_warm = time.perf_counter()
    warmup = min(args.warmup, system.num_batches)
    for batch, _ in system.epoch(0, warmup):
        step(batch)
    warm_epochs = 0
    while args.warmup_seconds > 0 and rank.max(time.perf_counter() - t_warm) < args.warmup_seconds:
        warm_epochs += 1
        for batch, _ in system.epoch(warm_epochs, None):
            step(batch)
    rank.barrier()
    warm_seconds = rank.max(time.perf_counter() - t_warm)  # the longest rank's
    cut = bool(args.max_batches) and args.max_batches < system.num_batches
    epochs = []
    for e in range(warm_epochs + 1, warm_epochs + args.epochs + 1):
        everyone = rank.gather(timed_epoch(rank, system, e, args.max_batches if cut else None, step))
        if rank.rank == 0:
            epochs.append(epoch_row(everyone, system, cut))
    if rank.rank != 0:
        return None
    first = epochs[0]
    checks = [r["check"] for r in epochs if "check" in r]
    rate = sum(r["samples"] for r in epochs) / sum(r["seconds"] for r in epochs)
    return {"row": system.name, "gpus": rank.world,
            "epoch_seconds": sum(r["epoch_seconds"] for r in epochs) / len(epochs),
            "epoch_time": "extrapolated" if cut else "measured", "rate": rate,
            "total_samples": first["samples"], "dataset_size": system.dataset_size, "pads": system.pads,
            "batches_per_rank": system.num_batches, "warmup_batches": warmup,
            "warmup_epochs": warm_epochs, "warmup_seconds": round(warm_seconds, 2),
            "max_batches": args.max_batches if cut else None,
            "exactly_once": (all(c["exactly_once"] for c in checks) if checks else None),
            "epochs_checked": len(checks), "epochs": epochs, **system.extra(),
            "device": torch.cuda.get_device_name(rank.device) if rank.cuda else "cpu"}


def run_worker(args, build: Callable) -> int:
    """A rank's whole life: its System from build(args, rank), measured; 0 or 1."""
    if ONE_GPU_PER_RANK and args.device == "cuda":  # before anything starts CUDA
        os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["LOCAL_RANK"]
    if str(args.system).startswith("sluice"):
        # At the top, as a training script would: before CUDA starts, so that sluice can widen
        # its work queues (sluice/_cuda_queues.py).
        import sluice  # noqa: F401
    rank = Rank(args.device)
    try:
        result = measure(rank, build(args, rank), args)
        if result is not None:
            print(json.dumps(result, default=str), flush=True)
        return 0
    except Exception:
        print(f"{RANK_ERROR} (rank {rank.rank})\n{traceback.format_exc()}{RANK_ERROR} end", file=sys.stderr,
              flush=True)
        return 1
    finally:
        rank.dist.destroy_process_group()
