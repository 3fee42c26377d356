"""``sluice doctor``'s command line: its arguments (added to the ``sluice`` parser by
sluice.cli) and the command, which runs :func:`sluice.doctor.run_doctor`, prints the report and
writes the JSON and the chart."""
from __future__ import annotations

import argparse
import sys

from .. import datasets
from .models import DEFAULT_MODEL, MODEL_NAMES

__all__ = ["add_doctor_parser", "cmd_doctor"]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}")
    return value


def cmd_doctor(args: argparse.Namespace) -> int:
    from . import run_doctor  # noqa: PLC0415
    from .report import format_report  # noqa: PLC0415

    if args.data is None:
        print(f"sluice doctor: no DATA given; using the built-in sample dataset ({args.sample_images} "
              f"'{args.sample_preset}' images, generated once into {datasets.cache_dir()})", file=sys.stderr)
    result = run_doctor(args.data, args.transform, args.model, device=args.device, batch_size=args.batch_size,
                        seconds=args.seconds, num_threads=args.threads, io_threads=args.io_threads,
                        prefetch=args.prefetch, decode_route=args.decode_route, seed=args.seed, size=args.size,
                        json_path=args.json, chart_path=args.chart, progress=not args.quiet,
                        sample_preset=args.sample_preset, sample_images=args.sample_images)
    print()
    print(format_report(result))
    return 0


def add_doctor_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser(
        "doctor", help="measure where a training job's time goes (model, loader, each stage) and what to change",
        description="Times, each for --seconds: the model step alone on a synthetic batch held on the device "
                    "(the headspace), the loader alone, and the loader feeding the model (verdict: loader-bound, "
                    "model-bound or balanced, with the device's idle share); then each stage alone (reading cold "
                    "and warm, decoding, the transform list and each transform's marginal cost, collating, the "
                    "copy to the GPU, the consumer's wait) and alternative settings (threads, prefetch, decode "
                    "route). Prints a report with recommendations, each from a measurement; writes every figure "
                    "to --json and a chart to --chart (matplotlib).")
    d.add_argument("data", nargs="?", help="ImageFolder root (default: built-in sample dataset)")
    d.add_argument("--transform", metavar="EXPR",
                   help="your pipeline instead of RandomResizedCrop(SIZE), flip and Normalize: a Python expression "
                        "with T (sluice.transforms) in scope, or @FILE.py:NAME (as bench and preview take it)")
    d.add_argument("--model", metavar="NAME", default=None,
                   help=f"{', '.join(MODEL_NAMES)} or @FILE.py:NAME (a torch.nn.Module, or a function or class "
                        f"making one). Default {DEFAULT_MODEL} (torchvision), else tiny, a small built-in CNN; "
                        "none: the loader alone")
    d.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N: the loader's and the model's")
    d.add_argument("--batch-size", type=int, default=None, help="default 256 on a GPU, 64 on the CPU")
    d.add_argument("--seconds", type=_seconds, default=3.0, help="budget of each measurement (default 3)")
    d.add_argument("--size", type=int, default=224, help="RandomResizedCrop output size of the default pipeline")
    d.add_argument("--threads", type=int, default=None, help="compute threads (default: the loader's)")
    d.add_argument("--io-threads", type=int, default=None)
    d.add_argument("--prefetch", type=int, default=None, help="batches ahead (default: the loader's)")
    d.add_argument("--decode-route", default="auto", choices=["auto", "hardware", "hybrid", "cpu"],
                   help="GPU path: the decoder of the baseline runs (every route is measured too)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--json", default="doctor.json", metavar="PATH", help="every figure (default doctor.json)")
    d.add_argument("--chart", default="doctor.png", metavar="PATH", help="PNG chart (default doctor.png)")
    d.add_argument("--sample-preset", default="imagenet", choices=sorted(datasets.PRESETS))
    d.add_argument("--sample-images", type=int, default=1024)
    d.add_argument("--quiet", action="store_true", help="no progress bar")
    d.set_defaults(func=cmd_doctor)
