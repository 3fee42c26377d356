"""``sluice doctor``: where a training job's time goes, measured, and what to change.

    from sluice.doctor import run_doctor
    result = run_doctor("data/train", model="resnet50", device="cuda", json_path="doctor.json")

It times, each for ``seconds`` (after a short warm-up): the model step alone on a synthetic batch
held on the device (the headspace), the loader alone, and the loader feeding the model (the
verdict: loader-bound, model-bound or balanced, with the device's idle share); then each stage
alone (reading cold and warm, decoding, the transform list and each transform's marginal cost,
collating, the copy to the GPU, the consumer's wait); then alternative settings (threads,
prefetch, decode route). Recommendations follow from those numbers only (sluice.doctor.advice).
The parts: models (the model and its step), measure (timing runs), stages, tuning, advice,
report (the text), chart (the PNG), cli_args (the command line).
"""
from __future__ import annotations

import json
import os
import time
from typing import Any, Callable

from .. import datasets
from .._progress import Progress
from .._user_code import transform_arg
from . import advice, chart, report, stages, tuning  # noqa: F401  (report: sluice.doctor.report for users)
from .measure import Setup, open_loader, time_loader, time_model
from .models import ModelChoice, ModelStep, resolve_model

__all__ = ["run_doctor", "PARTS"]

PARTS = ("stages", "transforms", "tuning")  # what `skip` may leave out (the verdict always runs)


def _data_root(data: Any, sample_preset: str, sample_images: int, progress: bool) -> str:
    if data is None:
        return datasets.sample_dataset(sample_preset, sample_images, progress=progress)
    path = os.fspath(data)
    if not os.path.isdir(path):
        what = "is not a directory" if os.path.exists(path) else "no such directory"
        raise FileNotFoundError(f"DATA {path}: {what} (an ImageFolder root: one sub-folder of images per class)")
    return path


def _memory_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


def _probe(setup: Setup) -> dict:
    """What the measurements need to know before they start: the output size, the classes, the
    files and the loader's automatic settings."""
    loader = open_loader(setup)
    try:
        o = loader.options
        return {"output_size": loader.output_size, "num_classes": len(loader.classes) or 1,
                "num_samples": loader.num_samples, "paths": [p for p, _ in loader.samples],
                "num_threads": o.num_threads, "io_threads": o.io_threads, "prefetch": o.prefetch}
    finally:
        loader.close()


def _plan(setup: Setup, probe: dict, model: ModelChoice, skip: set) -> int:
    """How many measurements the run makes (the progress bar's length)."""
    n = 1 + (2 if model.module is not None else 0)
    if "stages" not in skip:
        n += 2 + (4 if setup.cuda else 0)
    if "transforms" not in skip:
        n += len(setup.transform) + 2  # + the whole list again (the noise), + the costliest again
    if "tuning" not in skip:
        # + prefetch, + the current settings again, + second runs of promising alternatives
        n += len(tuning.thread_choices(probe["num_threads"])) + 2 + tuning.CONFIRM_RUNS
    return n


def _core_runs(setup: Setup, probe: dict, step: ModelStep | None, tick: Callable[[], None]) -> dict:
    """The headspace, the loader alone and training (the loader feeding the model)."""
    out: dict[str, Any] = {"headspace": None, "training": None}
    h, w = probe["output_size"]
    if step is not None:
        out["headspace"] = time_model(step, (setup.batch_size, 3, h, w), probe["num_classes"], setup.device,
                                      setup.seconds)
        tick()
    out["loader"] = time_loader(open_loader(setup), setup.seconds, cuda=setup.cuda)
    tick()
    if step is not None:
        out["training"] = time_loader(open_loader(setup), setup.seconds, step, cuda=setup.cuda)
        tick()
    return out


def _stage_runs(setup: Setup, probe: dict, result: dict, tick: Callable[[], None]) -> dict:
    """Each stage alone: reads (cold, warm), the loader's stages, decode routes and the copy to the
    GPU (GPU only), the consumer's wait."""
    loader, training = result["loader"], result["training"]
    out: dict[str, Any] = {}
    io = probe["io_threads"]
    out["read_cold"] = stages.read_speed(probe["paths"], io, setup.seconds, cold=True, seed=setup.seed)
    tick()
    out["read_warm"] = stages.read_speed(probe["paths"], io, setup.seconds, cold=False, seed=setup.seed)
    tick()
    cold, warm = out["read_cold"]["images_per_s"], out["read_warm"]["images_per_s"]
    if cold is not None:
        out["read_cold"]["over_loader"] = cold / loader["images_per_s"]
        if cold >= stages.COLD_NOT_COLDER * warm:
            out["read_cold"]["note"] = ("cold reads were no slower than warm ones: the files were probably not "
                                        "dropped from the page cache (tmpfs, or a file system that ignores the advice)")
    rates = stages.stage_rates(loader, setup.cuda)
    out["read_in_loader"] = rates.pop("read")
    out.update(rates)
    out["decode"]["decoder"] = f"GPU, decode_route={setup.decode_route!r}" if setup.cuda else "CPU (libjpeg-turbo)"
    if setup.cuda:
        result["decode_routes"] = stages.decode_routes(setup, tick)
        h, w = probe["output_size"]
        out["copy_to_gpu"] = stages.copy_to_gpu((setup.batch_size, 3, h, w), setup.device, setup.seconds)
        tick()
    else:
        out["copy_to_gpu"] = {"images_per_s": None, "note": "n/a: --device cpu, the batches stay on the CPU"}
    out["consumer_wait"] = {"loader_alone_share": loader["consumer_wait_share"],
                            "training_share": training["consumer_wait_share"] if training else None,
                            "training_seconds": training["consumer_wait_seconds"] if training else None}
    return out


def _header(setup: Setup, probe: dict, model: ModelChoice) -> dict:
    h, w = probe["output_size"] or (None, None)
    return {"data": setup.data, "num_samples": probe["num_samples"], "num_classes": probe["num_classes"],
            "device": setup.device, "batch_size": setup.batch_size, "output_height": h, "output_width": w,
            "seconds_per_measurement": setup.seconds,
            "transforms": [stages.transform_name(t) for t in setup.transform],
            "transform_reprs": [repr(t) for t in setup.transform],
            "model": {"name": model.name, "note": model.note},
            "settings": {"num_threads": probe["num_threads"], "io_threads": probe["io_threads"],
                         "prefetch": probe["prefetch"], "decode_route": setup.decode_route if setup.cuda else None},
            "memory_gib": _memory_gib()}


def _measure(setup: Setup, probe: dict, model: ModelChoice, skip: set, progress: bool) -> dict:
    result = _header(setup, probe, model)
    step = ModelStep(model.module, setup.device) if model.module is not None else None
    result["measurements"] = _plan(setup, probe, model, skip)
    with Progress(result["measurements"], "doctor", unit="run", enabled=progress) as bar:
        tick = bar.update
        result.update(_core_runs(setup, probe, step, tick))
        result["verdict"] = advice.verdict(result["headspace"], result["loader"], result["training"])
        if "stages" not in skip:
            result["stages"] = _stage_runs(setup, probe, result, tick)
            mean_kib = result["stages"]["read_warm"].get("mean_kib") or 0.0
            result["dataset_mib_estimate"] = mean_kib * probe["num_samples"] / 1024
        if "transforms" not in skip:
            result["transform_costs"], result["transform_baseline"] = stages.transform_costs(
                setup, result["loader"], probe["output_size"], tick)
        if "tuning" not in skip:
            baseline = result["training"] if step is not None else result["loader"]
            result["tuning"] = tuning.measure_alternatives(setup, baseline, step, tick)
    return result


def run_doctor(data: Any = None, transform: Any = None, model: Any = None, *, device: str = "cpu",
               batch_size: int | None = None, seconds: float = 3.0, num_threads: int | None = None,
               io_threads: int | None = None, prefetch: int | None = None, decode_route: str = "auto",
               seed: int = 0, size: int = 224, json_path: str | None = None, chart_path: str | None = None,
               progress: bool = True, skip: Any = (), sample_preset: str = "imagenet",
               sample_images: int = 1024) -> dict:
    """Measures where the time goes for ``data`` (an ImageFolder root; None: the built-in sample
    dataset) under ``transform`` (a list, ``T.Compose``, a ``--transform`` string, or None:
    RandomResizedCrop(size), RandomHorizontalFlip, Normalize) and ``model`` (see
    sluice.doctor.models: a name, ``@FILE.py:NAME``, a Module or a factory; None: resnet18, or
    the tiny CNN without torchvision). ``batch_size`` None: 256 on a GPU, 64 on the CPU.
    ``skip``: parts of PARTS to leave out. Writes the JSON to ``json_path`` and the PNG chart to
    ``chart_path`` when given. Returns every figure as a dict (the JSON's content)."""
    start = time.perf_counter()
    skip = set(skip)
    if skip - set(PARTS):
        raise ValueError(f"skip: unknown parts {sorted(skip - set(PARTS))}; expected some of {PARTS}")
    if seconds <= 0:
        raise ValueError(f"seconds must be > 0, got {seconds}")
    root = _data_root(data, sample_preset, sample_images, progress)
    if transform is None or isinstance(transform, str):
        transform = transform_arg(transform, size)
    from .. import transforms as T  # noqa: PLC0415

    setup = Setup(root, T.flatten(transform), device=str(device),
                  batch_size=batch_size or (256 if str(device).startswith("cuda") else 64), seconds=float(seconds),
                  num_threads=num_threads, io_threads=io_threads, prefetch=prefetch, decode_route=decode_route,
                  seed=seed)
    probe = _probe(setup)
    if probe["output_size"] is None:
        raise ValueError("the transforms end in no fixed size, so a batch is a list of images of several sizes: "
                         "end them in a crop or Resize((h, w)) for the doctor to time them")
    choice = resolve_model(model, probe["num_classes"])
    result = _measure(setup, probe, choice, skip, progress)
    result["thresholds"] = {"balance": advice.BALANCE, "min_gain": advice.MIN_GAIN,
                            "cold_not_colder": stages.COLD_NOT_COLDER}
    result["recommendations"], result["notes"] = advice.recommendations(result)
    result["chart"] = chart.draw(result, chart_path) if chart_path else None
    result["json"] = os.fspath(json_path) if json_path else None
    result["elapsed_seconds"] = time.perf_counter() - start
    if json_path:
        with open(json_path, "w") as f:
            json.dump(result, f, indent=1)
    return result
