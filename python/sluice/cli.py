"""The ``sluice`` command: ``sluice bench [DATA]``, ``sluice preview [DATA] -o grid.png``,
``sluice make-dataset OUT``, ``sluice make-videos DIR`` (sluice.video_data),
``sluice pack SRC DST`` and ``sluice doctor [DATA]`` (sluice.doctor)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import Loader, datasets
from ._progress import Progress
from ._user_code import transform_arg


def _range(text: str) -> tuple[int, int]:
    parts = text.replace(":", "-").split("-")
    if len(parts) == 1:
        return int(parts[0]), int(parts[0])
    if len(parts) == 2:
        return int(parts[0]), int(parts[1])
    raise argparse.ArgumentTypeError(f"expected N or LO-HI, got {text!r}")


def _bench_loader(args: argparse.Namespace, data: str) -> tuple[Loader, list]:
    transform = transform_arg(args.transform, args.size, not args.no_flip, args.dtype != "uint8")
    loader = Loader(data, transform, batch_size=args.batch_size, device=args.device, shuffle=True,
                    seed=args.seed, dtype=args.dtype, layout=args.layout, on_error=args.on_error,
                    num_threads=args.threads, io_threads=args.io_threads, prefetch=args.prefetch,
                    output="numpy" if args.numpy else "auto",
                    **({"decode_route": args.decode_route} if args.device.startswith("cuda") else {}))
    return loader, transform


def _time_epochs(loader: Loader, args: argparse.Namespace) -> tuple[int, float]:
    """(images, seconds) of args.epochs timed epochs, after an untimed warm-up one (it fills the
    page cache and the memory pools)."""
    cuda = args.device.startswith("cuda")

    def sync() -> None:  # GPU batches are queued work: count them once they are done
        if cuda:
            import torch  # noqa: PLC0415

            torch.cuda.synchronize()
    if args.warmup:
        with Progress(len(loader), "warm-up", unit="batch", enabled=not args.quiet) as bar:
            for _ in loader:
                bar.update()
    sync()
    loader.reset_stats()
    images = 0
    start = time.perf_counter()
    with Progress(loader.num_samples * args.epochs, "bench", enabled=not args.quiet) as bar:
        for _ in range(args.epochs):
            for x, _y in loader:
                images += x.shape[0]
                bar.update(x.shape[0])
    sync()
    return images, time.perf_counter() - start


def _bench_result(args: argparse.Namespace, data: str, st: dict, images: int, wall: float) -> dict:
    rate = images / wall
    compute = sum(v for k, v in st["stage_seconds"].items() if k != "read")
    compute_cpu = sum(v for k, v in st["stage_cpu_seconds"].items() if k != "read")
    result = {
        "data": data, "images": images, "seconds": wall, "images_per_s": rate,
        "device": args.device, "threads": st["num_threads"], "io_threads": st["io_threads"],
        "batch_size": args.batch_size, "size": args.size if args.transform is None else None,
        "transform": args.transform, "dtype": args.dtype,
        "layout": args.layout, "stage_ms_per_image": {k: 1e3 * v / max(images, 1)
                                                       for k, v in st["stage_seconds"].items()},
        "stage_cpu_ms_per_image": {k: 1e3 * v / max(images, 1) for k, v in st["stage_cpu_seconds"].items()},
        "consumer_wait_fraction": st["wait_seconds"] / wall if wall else 0.0,
        "compute_threads_busy": compute / wall if wall else 0.0,
        "compute_threads_cpu": compute_cpu / wall if wall else 0.0,
        "host_memory_peak_mib": st["host_memory_peak"] / 2**20,
        "skipped": st["skipped_count"],
    }
    if args.device.startswith("cuda"):
        result["gpu_memory_peak_mib"] = st["gpu_memory_peak"] / 2**20
        result["route_samples"] = st["route_samples"]
    return result


def _print_bench(args: argparse.Namespace, loader: Loader, transform: list, st: dict, result: dict) -> None:
    rate, per, cpu = result["images_per_s"], result["stage_ms_per_image"], result["stage_cpu_ms_per_image"]
    tf = " ".join(repr(t).split("(")[0] for t in transform)
    print()
    print(f"sluice bench  {result['data']}")
    print(f"  {loader.num_samples:,} images, {len(loader.classes)} classes; {args.epochs} epoch(s) timed after "
          f"{'one warm-up epoch' if args.warmup else 'no warm-up'}")
    print(f"  device={args.device} threads={st['num_threads']} io_threads={st['io_threads']} "
          f"batch_size={args.batch_size}{f' size={args.size}' if args.transform is None else ''} "
          f"dtype={args.dtype} layout={args.layout}")
    print(f"  transforms: {tf}")
    print()
    rows = [
        ("images/s", f"{rate:,.0f}"),
        ("images/s per thread", f"{rate / st['num_threads']:,.0f}"),
        ("wall seconds", f"{result['seconds']:.2f}"),
        ("read ms/image, wall / CPU (I/O)", f"{per['read']:.3f} / {cpu['read']:.3f}"),
        ("decode ms/image, wall / CPU", f"{per['decode']:.3f} / {cpu['decode']:.3f}"),
        ("transform ms/image, wall / CPU", f"{per['transform']:.3f} / {cpu['transform']:.3f}"),
        ("collate ms/image, wall / CPU", f"{per['collate']:.3f} / {cpu['collate']:.3f}"),
        ("compute threads busy (wall)", f"{result['compute_threads_busy']:.2f} of {st['num_threads']}"),
        ("compute threads busy (CPU)", f"{result['compute_threads_cpu']:.2f} of {st['num_threads']}"),
        ("consumer waiting", f"{100 * result['consumer_wait_fraction']:.0f}% of the time"),
        ("host memory peak", f"{result['host_memory_peak_mib']:.0f} MiB"),
        ("skipped files", f"{st['skipped_count']}"),
    ]
    if "route_samples" in result:
        routes = st["route_samples"]
        rows += [("GPU memory peak (pool)", f"{result['gpu_memory_peak_mib']:.0f} MiB"),
                 ("decoded hw / hybrid / cpu", f"{routes['hardware']}/{routes['hybrid']}/{routes['cpu']}")]
    w = max(len(r[0]) for r in rows)
    print(f"| {'metric':<{w}} | {'value':>14} |")
    print(f"|{'-' * (w + 2)}|{'-' * 16}|")
    for k, v in rows:
        print(f"| {k:<{w}} | {v:>14} |")
    for s in st["skipped"][:10]:
        print(f"  skipped {s['path']}: {s['reason']}")


def cmd_bench(args: argparse.Namespace) -> int:
    data = args.data
    if data is None:
        print(f"sluice bench: no DATA given; using the built-in sample dataset "
              f"({args.sample_images} '{args.sample_preset}' images, generated once into "
              f"{datasets.cache_dir()})", file=sys.stderr)
        data = datasets.sample_dataset(args.sample_preset, args.sample_images,
                                       progress=not args.quiet)
    loader, transform = _bench_loader(args, data)
    images, wall = _time_epochs(loader, args)
    st = loader.stats()
    result = _bench_result(args, data, st, images, wall)
    if args.json:
        print(json.dumps(result))
    else:
        _print_bench(args, loader, transform, st, result)
    return 0


def cmd_preview(args: argparse.Namespace) -> int:
    from . import preview  # noqa: PLC0415

    transform = (preview.default_transform(args.size) if args.transform is None
                 else preview.load_transform(args.transform))
    data = args.data
    if data is None:
        print(f"sluice preview: no DATA given; using the built-in sample dataset "
              f"({args.sample_images} '{args.sample_preset}' images, generated once into "
              f"{datasets.cache_dir()})", file=sys.stderr)
        data = datasets.sample_dataset(args.sample_preset, args.sample_images,
                                       progress=not args.quiet)
    grid = preview.build_grid(data, transform, args.images, args.draws, args.seed, args.device,
                              args.cell_pad, args.size, progress=not args.quiet)
    image = None if args.no_captions else preview.captioned(grid, args.cell_pad, args.seed)
    image = grid.array if image is None else image
    preview.write_png(args.output, image)
    h, w = image.shape[:2]
    print(f"wrote {args.output}: {grid.rows} x {grid.cols} grid ({grid.rows} images; original + "
          f"{grid.cols - 1} draws, seed {args.seed}), {w}x{h} px, cells {grid.cell[1]}x{grid.cell[0]}; "
          f"pipeline {preview.describe(grid.transforms)}")
    return 0


def cmd_make_dataset(args: argparse.Namespace) -> int:
    spec = datasets.PRESETS[args.preset]
    overrides = {"num_images": args.num_images, "num_classes": args.classes, "seed": args.seed,
                 "canvases": args.canvases}
    if args.width is not None:
        overrides["width"] = args.width
    if args.quality is not None:
        overrides["quality"] = args.quality
    if args.subsampling is not None:
        overrides["subsampling"] = args.subsampling
    if args.noise is not None:
        overrides["noise"] = args.noise
    if args.progressive is not None:
        overrides["progressive"] = args.progressive
    summary = datasets.make_dataset(args.out, spec, workers=args.workers, progress=not args.quiet,
                                    **overrides)
    print(f"wrote {summary['files']:,} JPEGs in {summary['classes']} classes to {summary['root']}: "
          f"{summary['mean_kib']:.1f} KiB and {summary['mean_mpix']:.3f} MP on average, "
          f"{summary['subsampling']} chroma, quality {summary['quality'][0]}-{summary['quality'][1]}")
    return 0


def _bytes(text: str) -> int:
    """"256MB", "1GiB", "500k", "1000" -> bytes."""
    units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    unit = t[-1] if t and t[-1] in units else ""
    try:
        value = float(t[:-1] if unit else t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size such as 256MB, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a size > 0, got {text!r}")
    return int(value * units[unit])


def cmd_pack(args: argparse.Namespace) -> int:
    from . import pack as packing

    src = args.src if os.path.isdir(args.src) else packing.read_list(args.src)
    s = packing.pack(src, args.dst, shard_bytes=args.shard_size, max_side=args.max_side, quality=args.quality,
                     shuffle=not args.no_shuffle, seed=args.seed, on_error=args.on_error, workers=args.workers,
                     progress=not args.quiet)
    print(f"packed {s['samples']:,} images into {s['shards']} shards ({s['bytes'] / 2**20:,.1f} MiB) in "
          f"{args.dst} in {s['seconds']:.2f} s: {s['images_per_s']:,.0f} images/s; manifest {s['manifest']}")
    for path, reason in s["skipped"][:10]:
        print(f"skipped {reason}")
    if len(s["skipped"]) > 10:
        print(f"... and {len(s['skipped']) - 10} more skipped")
    return 0


def _add_pack_parser(sub) -> None:
    k = sub.add_parser("pack", help="pack an image folder or a list into WebDataset tar shards",
                       description="Pack SRC (an ImageFolder root, or a list file of 'PATH LABEL' lines) "
                                   "into WebDataset shards in DST ({key}.jpg + {key}.cls), shuffled, with "
                                   "a manifest.json; read them with sluice.WebDataset('DST/shard-*.tar') "
                                   "or the webdataset library.")
    k.add_argument("src")
    k.add_argument("dst")
    k.add_argument("--shard-size", type=_bytes, default=256 << 20, help="target shard size (default 256MB)")
    k.add_argument("--max-side", type=int, help="re-encode: shrink images to this longer side")
    k.add_argument("--quality", type=int, help="re-encode: JPEG quality (default 90 when re-encoding)")
    k.add_argument("--no-shuffle", action="store_true", help="keep the source order (class-sorted for a folder)")
    k.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    k.add_argument("--on-error", default="raise", choices=["raise", "skip"])
    k.add_argument("--workers", type=int, default=None, help="threads (default: all CPUs)")
    k.add_argument("--quiet", action="store_true", help="no progress bar")
    k.set_defaults(func=cmd_pack)


def _add_preview_parser(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser(
        "preview", help="write a PNG grid of the same images under several augmentation draws",
        description="Write a PNG grid: one row per image (the first K of DATA, in sorted order), "
                    "column 1 the original image resized (squashed) to the cell size, columns 2.. "
                    "the pipeline's output for epochs 0, 1, ... (one random draw each, "
                    "reproducible from --seed). Normalize is undone for display. Cells are the "
                    "pipeline's output size; a pipeline without a fixed size gets cells of the "
                    "largest sample, each placed top-left on dark grey.")
    v.add_argument("data", nargs="?", help="ImageFolder root (default: built-in sample dataset)")
    v.add_argument("-o", "--output", required=True, help="PNG file to write")
    v.add_argument("--images", type=int, default=8, help="rows: the first K images (default 8)")
    v.add_argument("--draws", type=int, default=6, help="augmentation draws, one column each (default 6)")
    v.add_argument("--transform", metavar="EXPR",
                   help="the pipeline: a Python expression with T (sluice.transforms) and sluice in "
                        "scope, e.g. \"T.Compose([T.RandomResizedCrop(224), T.ColorJitter(0.4)])\", or "
                        "@FILE.py:NAME to take NAME from a Python file (default: RandomResizedCrop(SIZE), "
                        "RandomHorizontalFlip, ColorJitter(0.4, 0.4, 0.4))")
    v.add_argument("--size", type=int, default=224, help="output size of the default pipeline (default 224)")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    v.add_argument("--cell-pad", type=int, default=2, help="grey pixels between cells (default 2)")
    v.add_argument("--no-captions", action="store_true",
                   help="no header row and file-name column (they need Pillow; without it there are none)")
    v.add_argument("--sample-preset", default="imagenet", choices=sorted(datasets.PRESETS))
    v.add_argument("--sample-images", type=int, default=1024)
    v.add_argument("--quiet", action="store_true", help="no progress bar")
    v.set_defaults(func=cmd_preview)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="sluice", description="sluice: fast image loading for PyTorch")
    p.add_argument("--version", action="version", version=f"sluice {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="measure loader throughput on DATA (or a sample dataset)")
    b.add_argument("data", nargs="?", help="ImageFolder root (default: built-in sample dataset)")
    b.add_argument("--device", default="cpu")
    b.add_argument("--threads", type=int, default=None, help="compute threads (default: all CPUs)")
    b.add_argument("--io-threads", type=int, default=None)
    b.add_argument("--batch-size", type=int, default=256)
    b.add_argument("--size", type=int, default=224, help="RandomResizedCrop output size")
    b.add_argument("--transform", metavar="EXPR",
                   help="your pipeline instead of RandomResizedCrop(SIZE), flip and Normalize: a Python "
                        "expression with T (sluice.transforms) in scope, e.g. \"[T.Resize(256), "
                        "T.CenterCrop(224), T.ToTensor()]\", or @FILE.py:NAME (as preview takes it)")
    b.add_argument("--dtype", default="float32", choices=["float32", "float16", "uint8"])
    b.add_argument("--layout", default="NCHW", choices=["NCHW", "NHWC"])
    b.add_argument("--epochs", type=int, default=2, help="timed epochs")
    b.add_argument("--no-warmup", dest="warmup", action="store_false")
    b.add_argument("--no-flip", action="store_true")
    b.add_argument("--prefetch", type=int, default=None,
                   help="batches ahead (default 2; on the GPU enough for 128 images, at least 4 "
                        "for batches of up to 64)")
    b.add_argument("--decode-route", default="auto", choices=["auto", "hardware", "hybrid", "cpu"],
                   help="GPU path: which JPEG decoder (default: all together)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--on-error", default="skip", choices=["raise", "skip"])
    b.add_argument("--numpy", action="store_true", help="NumPy output instead of torch")
    b.add_argument("--sample-preset", default="imagenet", choices=sorted(datasets.PRESETS))
    b.add_argument("--sample-images", type=int, default=1024)
    b.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    b.add_argument("--quiet", action="store_true", help="no progress bars")
    b.set_defaults(func=cmd_bench)

    _add_preview_parser(sub)

    m = sub.add_parser("make-dataset", help="write a synthetic photo-like JPEG ImageFolder")
    m.add_argument("out")
    m.add_argument("-n", "--num-images", type=int, default=1024)
    m.add_argument("--classes", type=int, default=8)
    m.add_argument("--preset", default="imagenet", choices=sorted(datasets.PRESETS),
                   help="imagenet: 400-600 px, 4:4:4, q90-96, ~145 KiB; small: 4:2:0, ~32 KiB; "
                        "voc: ~485x352, 4:2:0, q75-95, ~60 KiB")
    m.add_argument("--width", type=_range, help="width range, e.g. 400-600")
    m.add_argument("--quality", type=_range, help="JPEG quality range, e.g. 90-96")
    m.add_argument("--subsampling", choices=["444", "422", "420"])
    m.add_argument("--noise", type=float, help="sensor noise sigma in 8-bit levels")
    m.add_argument("--progressive", type=float, help="fraction of progressive JPEGs")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--canvases", type=int, default=0, metavar="N",
                   help="cut the images from N synthesized scenes (~30x faster; 0, the default: "
                        "synthesize every image)")
    m.add_argument("--workers", type=int, default=None)
    m.add_argument("--quiet", action="store_true")
    m.set_defaults(func=cmd_make_dataset)
    from . import video_data  # noqa: PLC0415  (imports PyAV only when make-videos runs)

    video_data.add_parser(sub)

    _add_pack_parser(sub)
    from .doctor.cli_args import add_doctor_parser  # noqa: PLC0415

    add_doctor_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (OSError, ValueError, TypeError, NotImplementedError, RuntimeError, MemoryError) as e:
        # Bad paths, bad data, bad arguments, a device that cannot be used: one clear line, not a
        # traceback (SLUICE_TRACEBACK=1 shows it).
        if os.environ.get("SLUICE_TRACEBACK"):
            raise
        print(f"sluice {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"sluice {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
