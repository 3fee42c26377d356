"""Each stage of the loader alone, for ``sluice doctor``: reading the files (warm, from the page
cache, and cold, each file dropped from it first), decoding, the transform list and each
transform's marginal cost, collating, the copy to the GPU.

Rates are images/s on the loader's own threads, so that every stage sits on one scale with the
loader and the model: reading with ``io_threads`` threads, the compute stages as ``num_threads``
threads would run them with nothing else to do (``num_threads / ms per image``, the milliseconds
from ``loader.stats()``: a stage's wall time summed over the threads).
"""
from __future__ import annotations

import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from .. import transforms as T
from .advice import MIN_GAIN
from .measure import Setup, open_loader, time_loader

__all__ = ["read_speed", "stage_rates", "transform_name", "repeat_baseline", "transform_costs", "decode_routes", "copy_to_gpu"]

COLD_NOT_COLDER = 0.8  # a cold read at least this fraction of the warm rate: the drop did not take


def _drop_from_cache(path: str) -> str | None:
    """Drops ``path``'s pages from the page cache (written back first: dirty pages stay); the
    reason when it cannot be done, else None."""
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            os.fdatasync(fd)
        except OSError:
            pass  # read-only or special file systems: nothing of ours is dirty there
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError as e:
        return f"posix_fadvise(POSIX_FADV_DONTNEED) failed: {e.strerror or e}"
    finally:
        os.close(fd)
    return None


def _read(path: str) -> int:
    with open(path, "rb", buffering=0) as f:
        return len(f.read())


def read_speed(paths: list[str], threads: int, seconds: float, cold: bool, seed: int = 0) -> dict:
    """Reads whole files in a shuffled order on ``threads`` threads (the loader's I/O threads) for
    ``seconds`` of reading: ``images_per_s``, ``mib_per_s``. ``cold``: each chunk of files is
    dropped from the page cache before it is read (not timed), so that it comes from storage;
    ``images_per_s`` is None and ``note`` says why where that cannot be done. Warm: a few hundred
    files, read once untimed (so that they are in the cache), then timed over and over."""
    if cold and not hasattr(os, "posix_fadvise"):
        return {"images_per_s": None, "mib_per_s": None,
                "note": "cold reads not measured: this platform has no posix_fadvise to drop files from the page cache"}
    order = list(paths)
    random.Random(seed).shuffle(order)
    chunk = max(8 * threads, 32)
    files = nbytes = pos = 0
    spent = 0.0
    deadline = time.perf_counter() + 2 * seconds  # dropping files takes time too: bound the wall time
    with ThreadPoolExecutor(max(threads, 1)) as pool:
        if not cold:  # warm: a set of files read once untimed, then again and again from the cache
            order = order[:4 * chunk]
            list(pool.map(_read, order))
        while spent < seconds and (files == 0 or time.perf_counter() < deadline):
            part = [order[(pos + k) % len(order)] for k in range(min(chunk, len(order)))]
            pos += len(part)
            if cold:
                problem = next((p for p in map(_drop_from_cache, part) if p), None)
                if problem:
                    return {"images_per_s": None, "mib_per_s": None, "note": f"cold reads not measured: {problem}"}
            t0 = time.perf_counter()
            nbytes += sum(pool.map(_read, part))
            spent += time.perf_counter() - t0
            files += len(part)
    return {"images_per_s": files / spent, "mib_per_s": nbytes / spent / 2**20, "files": files,
            "seconds": spent, "threads": threads, "mean_kib": nbytes / max(files, 1) / 1024}


GPU_KERNEL_NOTE = ("on the GPU: the batch's fused kernels, whose time is in the loader-alone rate and the "
                   "transforms' marginal costs; the host threads spent {ms:.3f} ms/image preparing them")


def stage_rates(loader_run: dict, cuda: bool = False) -> dict:
    """Per stage of a loader-alone run: ms per image (wall, summed over threads) and the images/s
    the loader's threads would give doing that stage alone (None where it took no time). On the
    GPU path the transforms and the collate run in the batch's kernels: their thread time is only
    the host's preparation, so they get no rate, and a note says so."""
    out = {}
    for stage, ms in loader_run["stage_ms_per_image"].items():
        threads = loader_run["io_threads"] if stage == "read" else loader_run["num_threads"]
        out[stage] = {"ms_per_image": ms, "threads": threads,
                      "images_per_s": 1e3 * threads / ms if ms > 0 else None}
        if cuda and stage in ("transform", "collate"):
            out[stage].update(images_per_s=None, note=GPU_KERNEL_NOTE.format(ms=ms))
    return out


def transform_name(t: Any) -> str:
    """A transform's short name for the report: its class, a Lambda by its function."""
    return t._name() if isinstance(t, T.Lambda) else type(t).__name__


def _without(setup: Setup, i: int, full_size: Any) -> tuple[Any, str | None, str | None]:
    """A loader of the list without item ``i``, or why none can be made; and a note when the list
    stays valid but its output changes size."""
    reduced = setup.transform[:i] + setup.transform[i + 1:]
    try:
        loader = open_loader(setup, reduced)
    except (ValueError, TypeError, RuntimeError, NotImplementedError) as e:
        return None, f"the list without it is refused: {str(e).splitlines()[0]}", None
    size = loader.output_size
    if size is None and full_size is not None:
        loader.close()
        return None, "without it the images have no fixed size (a batch would be a list, which no model takes)", None
    note = None if size == full_size else f"without it the output is {size[1]}x{size[0]}, not {full_size[1]}x{full_size[0]}"
    return loader, None, note


def repeat_baseline(first: dict, again: dict, key: str = "images_per_s") -> dict:
    """Two runs of the same settings, the first and one after the alternatives: their mean and
    ``noise``, how far apart they are (a difference between settings below it says nothing)."""
    a, b = first[key], again[key]
    out = {"runs": [a, b], key: (a + b) / 2, "noise": abs(b - a) / max(a, b) if max(a, b) > 0 else 0.0}
    if "compute_ms_per_image" in first:
        out["compute_ms_per_image"] = (first["compute_ms_per_image"] + again["compute_ms_per_image"]) / 2
    return out


def _confirm_top(setup: Setup, entries: list[dict], baseline: dict, full_size: Any) -> None:
    """Times the list without the costliest transform a second time when it looked better by
    MIN_GAIN than both runs of the whole list, so that a recommendation to drop it rests on two runs."""
    measured = [e for e in entries if "skipped" not in e]
    if not measured:
        return
    top = max(measured, key=lambda e: e["marginal_ms_per_image"])
    if top["images_per_s_without"] < (1 + MIN_GAIN) * max(baseline["runs"]):
        return
    loader, _, _ = _without(setup, top["index"], full_size)
    top["runs_without"].append(time_loader(loader, setup.seconds, cuda=setup.cuda)["images_per_s"])


def transform_costs(setup: Setup, base: dict, full_size: Any, tick: Callable[[], None]) -> tuple[list[dict], dict]:
    """Each transform's marginal cost: the loader alone with the list without it, against the
    loader alone with the whole list (``base``, and a second run of it after the others, so that
    a machine whose load changes shows as ``noise``). ``marginal_ms_per_image``: the compute
    threads' milliseconds per image it adds; ``images_per_s_without`` and ``gain``: the loader's
    rate without it (``runs_without``: two runs for the costliest, when it looked worth dropping).
    Items whose removal leaves no valid list are ``skipped``, with the reason. Returns (items,
    baseline); the bar ticks len(list) + 2 times."""
    runs = []
    for i, t in enumerate(setup.transform):
        entry = {"index": i, "name": transform_name(t), "repr": repr(t)}
        loader, skipped, note = _without(setup, i, full_size)
        if loader is None:
            entry["skipped"] = skipped
        elif note:
            entry["note"] = note
        runs.append((entry, None if loader is None else time_loader(loader, setup.seconds, cuda=setup.cuda)))
        tick()
    baseline = repeat_baseline(base, time_loader(open_loader(setup), setup.seconds, cuda=setup.cuda))
    tick()
    for entry, run in runs:
        if run is not None:
            entry.update(marginal_ms_per_image=baseline["compute_ms_per_image"] - run["compute_ms_per_image"],
                         images_per_s_without=run["images_per_s"], runs_without=[run["images_per_s"]],
                         gain=run["images_per_s"] / baseline["images_per_s"] - 1)
            entry["within_noise"] = abs(entry["gain"]) <= baseline["noise"]
    entries = [entry for entry, _ in runs]
    _confirm_top(setup, entries, baseline, full_size)
    tick()
    return entries, baseline


def decode_routes(setup: Setup, tick: Callable[[], None]) -> dict:
    """GPU path: the loader alone with each pinned decode route (``auto`` is the baseline run):
    images/s and which decoder took the samples."""
    out = {}
    for route in ("hardware", "hybrid", "cpu"):
        run = time_loader(open_loader(setup.but(decode_route=route)), setup.seconds, cuda=True)
        out[route] = {"images_per_s": run["images_per_s"], "route_samples": run.get("route_samples"),
                      "decode_ms_per_image": run["stage_ms_per_image"].get("decode")}
        tick()
    return out


def copy_to_gpu(shape: tuple[int, ...], device: str, seconds: float) -> dict:
    """The copy of one float32 batch of ``shape`` from pinned host memory to ``device``, repeated
    for ``seconds``: images/s and GiB/s (what a loader that prepares batches on the CPU pays)."""
    import torch  # noqa: PLC0415

    host = torch.empty(shape, dtype=torch.float32).pin_memory()
    dev = torch.empty(shape, dtype=torch.float32, device=device)
    dev.copy_(host, non_blocking=True)
    torch.cuda.synchronize()
    copies = 0
    start = end = time.perf_counter()
    while end - start < seconds or copies < 3:
        dev.copy_(host, non_blocking=True)
        torch.cuda.synchronize()
        copies += 1
        end = time.perf_counter()
    wall = end - start
    return {"images_per_s": copies * shape[0] / wall, "gib_per_s": copies * host.nbytes / wall / 2**30,
            "ms_per_batch": 1e3 * wall / copies}
