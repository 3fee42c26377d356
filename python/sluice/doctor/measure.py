"""Timing for ``sluice doctor``: the model step alone on a synthetic batch (the headspace), the
loader alone, and the loader feeding the model (a training loop), each for a fixed budget of
seconds after a short warm-up.

Every run makes its own loader and closes it, so that runs with other settings (threads,
prefetch, a transform left out) start equal. Rates count the images taken by the consumer over
the wall time of the timed window; per-stage costs come from ``loader.stats()`` for that window.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

from .._loader import Loader

__all__ = ["Setup", "open_loader", "time_loader", "time_model", "WARMUP_BATCHES", "MIN_STEPS"]

WARMUP_BATCHES = 2  # untimed batches first: threads started, pools filled, the model's kernels chosen
MIN_STEPS = 2       # timed steps at least, even when one step outlasts the budget


@dataclass
class Setup:
    """What every measurement of one doctor run shares: the data, the pipeline, the device and the
    loader settings the user gave (None: the loader's automatic value)."""
    data: str
    transform: list
    device: str = "cpu"
    batch_size: int = 64
    seconds: float = 3.0
    num_threads: int | None = None
    io_threads: int | None = None
    prefetch: int | None = None
    decode_route: str = "auto"
    seed: int = 0
    loader_kwargs: dict = field(default_factory=dict)

    @property
    def cuda(self) -> bool:
        return self.device.startswith("cuda")

    def but(self, **changes: Any) -> "Setup":
        """This setup with some settings changed (an alternative to measure)."""
        return replace(self, **changes)


def open_loader(setup: Setup, transform: list | None = None) -> Loader:
    """The loader a measurement times: ``setup``'s settings, ``transform`` instead of
    ``setup.transform`` when given; float32 NCHW (what a model takes), shuffled, bad files skipped
    (as ``sluice bench``)."""
    kwargs = dict(batch_size=setup.batch_size, device=setup.device, shuffle=True, seed=setup.seed,
                  dtype="float32", layout="NCHW", on_error="skip", num_threads=setup.num_threads,
                  io_threads=setup.io_threads, prefetch=setup.prefetch)
    if setup.cuda:
        kwargs["decode_route"] = setup.decode_route
    kwargs.update(setup.loader_kwargs)
    return Loader(setup.data, setup.transform if transform is None else transform, **kwargs)


def _batches(loader: Loader) -> Iterator[tuple[Any, Any]]:
    """Batches without end, epoch after epoch (a small dataset must not end a measurement)."""
    while True:
        empty = True
        for batch in loader:
            empty = False
            yield batch[0], batch[1]
        if empty:
            raise ValueError(f"the loader yields no batch: {loader.num_samples} samples")


def _sync(cuda: bool) -> None:
    """Waits for the GPU's queued work, so that it is counted where it ran."""
    if cuda:
        import torch  # noqa: PLC0415

        torch.cuda.synchronize()


def time_loader(loader: Loader, seconds: float, step: Callable[[Any, Any], None] | None = None,
                cuda: bool = False) -> dict:
    """Takes batches from ``loader`` for ``seconds`` (after WARMUP_BATCHES), passing each to
    ``step`` (the model step) when given, and closes the loader.

    Returns the rate (``images_per_s``), the stage costs per image from ``loader.stats()``
    (``stage_ms_per_image``: wall milliseconds summed over the loader's threads; ``compute_ms_per_image``:
    those of decode, transform and collate, the compute threads' share), the consumer's wait as
    the loader counts it, and with ``step`` the timeline: per step ``[start, wait, compute]``
    seconds, the wait timed around ``next(loader)`` and the compute around the step (which
    synchronizes the GPU), and ``idle_share``, the share of the wall time spent waiting."""
    try:
        batches = _batches(loader)
        for _ in range(WARMUP_BATCHES):
            x, y = next(batches)
            if step is not None:
                step(x, y)
        _sync(cuda)
        loader.reset_stats()
        timeline, images = [], 0
        start = end = time.perf_counter()
        while end - start < seconds or len(timeline) < MIN_STEPS:
            t0 = time.perf_counter()
            x, y = next(batches)
            t1 = time.perf_counter()
            if step is not None:
                step(x, y)
            end = time.perf_counter()
            images += len(x)
            timeline.append([t0 - start, t1 - t0, end - t1])
        _sync(cuda)
        wall = time.perf_counter() - start
        st, options = loader.stats(), loader.options
    finally:
        loader.close()
    return _loader_figures(st, options, images, wall, timeline if step is not None else None)


def _loader_figures(st: dict, options: Any, images: int, wall: float, timeline: list | None) -> dict:
    samples = max(st["samples"], 1)
    per = {k: 1e3 * v / samples for k, v in st["stage_seconds"].items()}
    out = {
        "images": images, "seconds": wall, "images_per_s": images / wall, "steps": None,
        "num_threads": st["num_threads"], "io_threads": st["io_threads"], "prefetch": st.get("prefetch", options.prefetch),
        "tuning": st.get("tuning"),  # the loader's own tuner (CPU path): its last decision
        "samples_prepared": st["samples"],
        "stage_ms_per_image": per,
        "stage_cpu_ms_per_image": {k: 1e3 * v / samples for k, v in st["stage_cpu_seconds"].items()},
        "compute_ms_per_image": sum(v for k, v in per.items() if k != "read"),
        "consumer_wait_seconds": st["wait_seconds"],
        "consumer_wait_share": st["wait_seconds"] / wall if wall else 0.0,
    }
    if "route_samples" in st:
        out["route_samples"] = dict(st["route_samples"])
    if timeline is not None:
        out["steps"] = len(timeline)
        out["idle_share"] = sum(w for _, w, _ in timeline) / wall if wall else 0.0
        out["timeline"] = timeline
    return out


def time_model(step: Callable[[Any, Any], None], shape: tuple[int, ...], num_classes: int, device: str,
               seconds: float) -> dict:
    """The headspace: ``step`` on one synthetic batch of ``shape`` (float32, normal values) and
    random labels, made once on ``device``, for ``seconds`` after WARMUP_BATCHES untimed steps. No
    loading at all: the images/s the model alone can take."""
    import torch  # noqa: PLC0415

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen).to(device)
    y = torch.randint(0, max(num_classes, 1), (shape[0],), generator=gen).to(device)
    for _ in range(WARMUP_BATCHES):
        step(x, y)
    steps = 0
    start = end = time.perf_counter()
    while end - start < seconds or steps < MIN_STEPS:
        step(x, y)
        steps += 1
        end = time.perf_counter()
    wall = end - start
    return {"images_per_s": steps * shape[0] / wall, "ms_per_step": 1e3 * wall / steps, "steps": steps,
            "seconds": wall, "batch_shape": list(shape)}
