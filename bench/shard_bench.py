"""Shard benchmark (issue 17): the same images read as files, as local tar shards (indexed and
streamed) and as shards streamed from a real HTTP server on loopback, by sluice (GPU and CPU
paths), by the `webdataset` library with torchvision's DataLoader, and by DALI's
readers.webdataset where DALI is installed.

Pipeline for every row (as bench/gpu_bench.py): decode JPEG, RandomResizedCrop(224),
RandomHorizontalFlip, Normalize(ImageNet) to float16 NCHW on the GPU, batch 256, shuffled.

Preparation (in this process, before the rows): DATA (an ImageFolder tree from
`sluice make-dataset`) is packed once by `sluice pack` into SHARDS (DATA + "-shards" unless
--shards; --shard-mib per shard): its images/s is reported. An HTTP server serves SHARDS on
127.0.0.1: nginx when --nginx names its binary (sendfile on), else Python's http.server
(ThreadingHTTPServer) in a process of its own; the table says which.

Rows:
  sluice GPU|CPU files             sluice.Loader(DATA): the image folder.
  sluice GPU|CPU shards            sluice.WebDataset(SHARDS/shard-*.tar): indexed, read by offset.
  sluice GPU|CPU shards streamed   the same shards with mode="stream" (start to end, lanes 4
                                   unless --lanes, shuffle_buffer 1000).
  sluice GPU|CPU HTTP              sluice.WebDataset("http://127.0.0.1:PORT/shard-{...}.tar"),
                                   counts from the manifest the server also serves.
  sluice GPU HTTP + disk cache     the same with cache_dir: the first epoch fills it (timed in
                                   the row, which runs several epochs), later ones read it.
  sluice GPU files cache=memory    cache="memory": the first and the second epoch timed apart, then
                                   the epochs after them together for >= --seconds (its images/s:
                                   from memory, the loader's start behind it).
  DataLoader webdataset (local|HTTP)  webdataset.WebDataset(urls, shardshuffle, .shuffle(1000)),
                                   torchvision decode_jpeg + v2 RandomResizedCrop + flip in 16
                                   workers (shards split by worker), batched by the WebLoader
                                   (each worker's batches); normalized on the GPU.
  DALI webdataset T threads hw L   fn.readers.webdataset (local shards; DALI reads no http) ->
                                   decoders.image_random_crop mixed -> resize -> crop_mirror_normalize.

Method: as gpu_bench.py (each row in its own process, 3 warm-up batches and more until
--warmup-seconds have passed, then >= --seconds, machine cores busy, GPU memory peaks).

    python bench/shard_bench.py DATA [--shards DIR] [--seconds 8] [--warmup-seconds 0] [--rows sub,str] [--json out.json]
                                [--nginx /path/to/nginx] [--lanes 4] [--dry-run]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gpu_bench  # noqa: E402  (shares its measurement, process and table code)
from gpu_bench import BATCH, SIZE, WORKERS, measure, torch_reserved_peak  # noqa: E402

import dali_rows  # noqa: E402
import torch  # noqa: E402


# ----------------------------------------------------------------------------- sources
def sluice_source(kind: str, spec: dict, tmp: str):
    import sluice

    if kind == "files":
        return spec["files"]
    if kind == "shards":
        return sluice.WebDataset(spec["local"])
    lanes = spec.get("lanes", 4)
    if kind == "streamed":
        return sluice.WebDataset(spec["local"], mode="stream", lanes=lanes)
    if kind == "http":
        return sluice.WebDataset(spec["http"], lanes=lanes)
    if kind == "http+cache":
        return sluice.WebDataset(spec["http"], cache_dir=os.path.join(tmp, "disk-cache"), lanes=lanes)
    raise ValueError(kind)


def sluice_row(kind: str, path: str):
    """path "GPU" (the GPU path, decode_route auto) or "CPU" (the CPU path, uploaded)."""
    def make(spec: dict, tmp: str):
        source = sluice_source(kind, spec, tmp)
        return gpu_bench.sluice_row(source, gpu_bench.GPU, "auto") if path == "GPU" else \
            gpu_bench.sluice_row(source, "cpu", None)
    return make


def webdataset_row(where: str):
    def make(spec: dict, tmp: str):
        import webdataset as wds
        from torchvision.io import ImageReadMode, decode_jpeg
        from torchvision.transforms import v2

        tf = v2.Compose([v2.RandomResizedCrop(SIZE, antialias=True), v2.RandomHorizontalFlip()])

        def decode(sample):
            img = decode_jpeg(torch.frombuffer(bytearray(sample["jpg"]), dtype=torch.uint8), mode=ImageReadMode.RGB)
            return tf(img), int(sample["cls"])

        urls = spec["local" if where == "local" else "http"]
        # Each worker reads its own shards (split_by_worker) and the DataLoader batches what each
        # worker yields (a worker's last batch of an epoch is short): no sample is dropped.
        ds = (wds.WebDataset(urls, shardshuffle=1000, nodesplitter=None, workersplitter=wds.split_by_worker,
                             empty_check=False)
              .shuffle(1000).map(decode))
        loader = wds.WebLoader(ds, batch_size=BATCH, num_workers=WORKERS, pin_memory=gpu_bench.GPU == "cuda",
                               persistent_workers=True, prefetch_factor=4)
        first = iter(loader)  # forks the workers before this process initializes CUDA

        def batches():
            epoch, normalize = first, gpu_bench.gpu_normalizer()
            while True:
                for images, labels in epoch:
                    yield normalize(images), torch.as_tensor(labels).to(gpu_bench.GPU, non_blocking=True)
                epoch = iter(loader)

        return batches(), lambda: {"gpu_alloc_peak": torch_reserved_peak()}
    return make


def dali_row(threads: int, hw_load: float):
    def make(spec: dict, tmp: str):
        if gpu_bench.GPU != "cuda":
            raise dali_rows.RowSkipped("DALI runs on a GPU: no GPU in a dry run")
        return dali_rows.webdataset_rrc_row(sorted(glob.glob(os.path.join(spec["shards_dir"], "*.tar"))),
                                            threads, hw_load)
    return make


def memory_cache_row(spec: dict, seconds: float) -> dict:
    """sluice GPU on the files with cache="memory": the first epoch (read from the files into the
    cache) and the second, each timed whole, then the epochs after them timed together until
    `seconds` have passed: the rate from memory once the loader's start (and its route scheduler's
    first windows) lies behind it, as the other rows measure theirs."""
    import sluice
    import sluice.transforms as ST

    loader = sluice.Loader(spec["files"], [ST.RandomResizedCrop(SIZE), ST.RandomHorizontalFlip(),
                                           ST.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                           batch_size=BATCH, device=gpu_bench.GPU, dtype="float16", shuffle=True, cache="memory")
    sync = torch.cuda.synchronize if gpu_bench.GPU == "cuda" else (lambda: None)

    def timed(epochs: range, at_least: float = 0.0) -> dict:
        sync()
        before, t0, n, done = gpu_bench.core_reading(), time.perf_counter(), 0, 0
        for epoch in epochs:
            loader.set_epoch(epoch)
            for images, _ in loader:
                n += images.shape[0]
            done += 1
            if time.perf_counter() - t0 >= at_least:
                break
        sync()
        el = time.perf_counter() - t0
        return {"images": n, "epochs": done, "seconds": el, "images_per_s": n / el,
                **gpu_bench.interval_cores(before)}

    first, second = timed(range(0, 1)), timed(range(1, 2))
    loader.reset_stats()
    later = timed(range(2, 1 << 20), seconds)
    return {**later, "first_epoch": first, "second_epoch": second, "sluice_stats": loader.stats(),
            "gpu_alloc_peak": loader.stats().get("gpu_memory_peak")}


def measured(make):
    def row(spec: dict, seconds: float) -> dict:
        with tempfile.TemporaryDirectory(prefix="shard_row_") as tmp:
            batches, extra, *warmed = make(spec, tmp)
            return {**measure(batches, seconds, *(warmed or [None]), warmup_seconds=gpu_bench.WARMUP_SECONDS),
                    **extra()}
    return row


ROWS = {
    "sluice GPU files": measured(sluice_row("files", "GPU")),
    "sluice GPU shards": measured(sluice_row("shards", "GPU")),
    "sluice GPU shards streamed": measured(sluice_row("streamed", "GPU")),
    "sluice GPU HTTP": measured(sluice_row("http", "GPU")),
    "sluice GPU HTTP + disk cache": measured(sluice_row("http+cache", "GPU")),
    "sluice GPU files cache=memory": memory_cache_row,
    "sluice CPU files": measured(sluice_row("files", "CPU")),
    "sluice CPU shards": measured(sluice_row("shards", "CPU")),
    "sluice CPU shards streamed": measured(sluice_row("streamed", "CPU")),
    "sluice CPU HTTP": measured(sluice_row("http", "CPU")),
    "DataLoader webdataset local (16 workers)": measured(webdataset_row("local")),
    "DataLoader webdataset HTTP (16 workers)": measured(webdataset_row("http")),
    **{f"DALI webdataset {t} threads hw_decoder_load {h:g}": measured(dali_row(t, h))
       for t in dali_rows.THREADS for h in dali_rows.HW_LOADS},
}


def run_row(name: str, spec: dict, seconds: float) -> dict:
    poller = gpu_bench.GpuMemoryPoller()
    poller.start()
    try:
        result = ROWS[name](spec, seconds)
    except dali_rows.RowSkipped as e:
        result = {"skipped": str(e)}
    except Exception as e:  # noqa: BLE001 - reported as the row's result
        import traceback

        result = {"error": f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}",
                  "traceback": traceback.format_exc()}
    poller.stop()
    return {**result, "torch_reserved_peak": torch_reserved_peak(), "gpu_process_peak": poller.peak,
            "gpu_process_source": poller.source, "gpu_process_match": poller.match}


# ----------------------------------------------------------------------------- preparation
def pack_once(data: str, shards: str, shard_mib: int) -> dict:
    """SHARDS packed from DATA by sluice pack (once: a folder holding a manifest is kept)."""
    import sluice.pack

    if os.path.exists(os.path.join(shards, sluice.pack.MANIFEST)):
        m = sluice.pack.read_manifest(shards)
        return {"shards": len(m["shards"]), "samples": m["samples"], "packed_now": False}
    summary = sluice.pack.pack(data, shards, shard_bytes=shard_mib << 20, progress=False)
    return {"shards": summary["shards"], "samples": summary["samples"], "packed_now": True,
            "images_per_s": summary["images_per_s"], "seconds": summary["seconds"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(shards: str, nginx: str | None, tmp: str):
    """(process, port, what): an HTTP server for SHARDS on loopback, ready."""
    port = free_port()
    if nginx:
        try:
            return start_nginx(shards, nginx, tmp, port)
        except RuntimeError as e:
            print(f"# nginx did not start ({e}); Python's http.server serves instead", flush=True)
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", shards], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(proc, port, "http.server")
    return proc, port, f"Python {sys.version.split()[0]} http.server"


def wait_for_port(proc, port: int, what: str) -> None:
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with status {proc.returncode}")
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{what} did not listen within 10 s")


def start_nginx(shards: str, nginx: str, tmp: str, port: int):
    """nginx (the binary `nginx`) serving SHARDS with sendfile: (process, port, what)."""
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes 4; pid {tmp}/nginx.pid; error_log stderr;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; types {{ }} default_type application/x-tar;
  client_body_temp_path {tmp}/b; proxy_temp_path {tmp}/p; fastcgi_temp_path {tmp}/f;
  uwsgi_temp_path {tmp}/u; scgi_temp_path {tmp}/s;
  server {{ listen 127.0.0.1:{port}; root {shards}; }} }}
""")
    log = open(os.path.join(tmp, "nginx.log"), "w")
    proc = subprocess.Popen([nginx, "-e", "stderr", "-p", tmp, "-c", conf], stdout=log, stderr=log)
    try:
        wait_for_port(proc, port, "nginx")
    except RuntimeError as e:
        with open(os.path.join(tmp, "nginx.log")) as f:
            raise RuntimeError(f"{e}: {f.read()[-300:]}") from None
    version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
    return proc, port, f"nginx {version} (sendfile)"


def brace(names: list[str]) -> str:
    """shard-000000.tar ... shard-000015.tar -> shard-{000000..000015}.tar"""
    first, last = names[0], names[-1]
    digits = len(first) - len("shard-.tar")
    return f"shard-{{{first[6:6 + digits]}..{last[6:6 + digits]}}}.tar"


# ----------------------------------------------------------------------------- parent
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="an ImageFolder root (sluice make-dataset)")
    ap.add_argument("--shards", help="where the shards are packed (default: DATA-shards)")
    ap.add_argument("--shard-mib", type=int, default=32, help="target shard size for sluice pack")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--warmup-seconds", type=float, default=0.0,
                    help=f"untimed seconds before each row, at least {gpu_bench.WARMUP} batches (every row alike)")
    ap.add_argument("--rows", help="comma-separated substrings of row names (default: all)")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=float, default=150.0)
    ap.add_argument("--lanes", type=int, default=4, help="streamed and HTTP rows: shards read at once")
    ap.add_argument("--nginx", help="an nginx binary to serve the shards (else Python's http.server)")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: 'cuda' rows run on the CPU (rates meaningless)")
    ap.add_argument("--_row", help=argparse.SUPPRESS)
    ap.add_argument("--_spec", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dry_run:
        gpu_bench.GPU = "cpu"
    gpu_bench.WARMUP_SECONDS = args.warmup_seconds
    if args._row:
        print(json.dumps(run_row(args._row, json.loads(args._spec), args.seconds), default=str), flush=True)
        return 0

    names = gpu_bench.select_rows(list(ROWS), args.rows)
    if not names:
        ap.error(f"--rows {args.rows!r} matches none of: {', '.join(ROWS)}")
    shards = os.path.abspath(args.shards or args.data.rstrip("/") + "-shards")
    info = gpu_bench.dataset_info(args.data)
    packed = pack_once(args.data, shards, args.shard_mib)
    tar_names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(shards, "shard-*.tar")))
    for p in glob.glob(os.path.join(shards, "*.tar")):  # the page cache holds them, as it holds the files
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    meta = gpu_bench.machine_info()
    results = {"machine": meta, "args": vars(args), "data": info, "pack": packed, "rows": []}
    with tempfile.TemporaryDirectory(prefix="shard_bench_") as tmp:
        server, port, served_by = start_server(shards, args.nginx, tmp)
        results["server"] = served_by
        pattern = brace(tar_names)
        spec = {"files": os.path.abspath(args.data), "shards_dir": shards, "local": os.path.join(shards, pattern),
                "http": f"http://127.0.0.1:{port}/{pattern}", "lanes": args.lanes}
        warmup = f"{gpu_bench.WARMUP} warm-up batches" + (f" and >= {args.warmup_seconds:g} s"
                                                          if args.warmup_seconds else "")
        print(f"# GPU {meta['gpu']} | {meta['cpus']} CPUs | torch {meta['torch']} | HTTP: {served_by} | {warmup}"
              + (" | DRY RUN" if args.dry_run else ""))
        print(f"# {args.data}: {info['files']:,} files, {info['mean_kib']:.1f} KiB mean, chroma {info['chroma']}; "
              f"{packed['shards']} shards" + (f", packed at {packed['images_per_s']:,.0f} images/s"
                                               if packed.get("packed_now") else " (packed before)"), flush=True)
        try:
            for name in names:
                cmd = [sys.executable, os.path.abspath(__file__), args.data, "--_row", name, "--_spec", json.dumps(spec),
                       "--seconds", str(args.seconds), "--warmup-seconds", str(args.warmup_seconds),
                       *(["--dry-run"] if args.dry_run else [])]
                r = gpu_bench.run_row_process(name, cmd, args.timeout, tmp)
                results["rows"].append(r)
                rate = (f"{r['images_per_s']:,.0f} img/s" if "images_per_s" in r else
                        "skipped: " + r["skipped"] if "skipped" in r else r["error"][:100])
                extra = ""
                if "first_epoch" in r:
                    extra = (f" (epochs after the second; first epoch {r['first_epoch']['images_per_s']:,.0f} img/s, "
                             f"second {r['second_epoch']['images_per_s']:,.0f})")
                stream = r.get("sluice_stats", {}).get("stream")
                if stream:
                    extra += f" (streams {stream['shards']}, from the disk cache {stream['shards_from_disk_cache']})"
                print(f"  {name}: {rate}{extra} ({r['wall_seconds']:.0f} s)", flush=True)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(results, f, indent=1, default=str)
        finally:
            server.terminate()
            server.wait()
    print("\n" + "\n".join(gpu_bench.table(results["rows"])))
    rate = {r["row"]: r["images_per_s"] for r in results["rows"] if "images_per_s" in r}
    lines = []
    for a, b in (("sluice GPU shards", "sluice GPU files"), ("sluice GPU HTTP", "sluice GPU shards"),
                 ("sluice GPU HTTP", "sluice GPU shards streamed"), ("sluice CPU HTTP", "sluice CPU shards"),
                 ("sluice CPU HTTP", "sluice CPU shards streamed")):
        if a in rate and b in rate:
            lines.append(f"{a} / {b} = {rate[a] / rate[b]:.2f}")
    dali = {n: v for n, v in rate.items() if n.startswith("DALI")}
    for a in ("sluice GPU shards", "sluice GPU HTTP"):
        if a in rate and dali:
            best = max(dali, key=dali.get)
            lines.append(f"{a} / best DALI webdataset row ({best}) = {rate[a] / dali[best]:.2f}")
    if gpu_bench.thread_line(results["rows"]):
        lines.append(gpu_bench.thread_line(results["rows"]))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
