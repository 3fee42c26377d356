"""Do the JPEG engines have room beyond one call at a time?

The loader's engine calls take turns on one lock (concurrent calls on one nvJPEG handle
deadlocked inside nvJPEG 13.0), and each call's host work (parsing, launches) runs while the
engines wait for it. This measures the engines' bare loop (codec/engine_rate.h: whole images,
calls of 7 x 32 on an H100/H200, each waited for) on the same files in several ways, each row in
its own process:

  1 handle                     the ceiling row of bench/gpu_bench.py
  2 handles, one turn          two loops in one process taking turns, as the loader's threads do
  2 handles, a turn each       the same with SLUICE_ENGINE_TURNS=1: calls on the two handles overlap
  3 handles, a turn each
  2 processes at once          two processes of one handle each, started together (the column
                               "processes together": the share of the longest call they overlapped)

If the rows with overlapping calls deliver more images per second than one handle, the engines
wait on the host between calls, and the loader could feed them from several handles.

    python3 bench/engine_capacity.py /tmp/data_a --seconds 5 --json out.json

A row that does not finish within --timeout seconds is reported as hung (the deadlock above).
"""
import argparse
import json
import os
import subprocess
import sys
import time

START_DELAY = 8.0  # seconds from launching a row's processes to their common start

ROWS = [
    ("1 handle", 1, {}, 1),
    ("2 handles, one turn", 2, {}, 1),
    ("2 handles, a turn each", 2, {"SLUICE_ENGINE_TURNS": "1"}, 1),
    ("3 handles, a turn each", 3, {"SLUICE_ENGINE_TURNS": "1"}, 1),
    ("2 processes at once", 1, {}, 2),
]


def read_files(data: str) -> list:
    files = []
    for root, _, names in os.walk(data):
        for n in sorted(names):
            with open(os.path.join(root, n), "rb") as f:
                files.append(f.read())
    return files


def child(data: str, seconds: float, handles: int, start_at: float) -> None:
    """One loop set, printed as one JSON line."""
    from sluice import _core

    files = read_files(data)
    time.sleep(max(0.0, start_at - time.time()))
    began = time.time()
    r = _core._engine_rate(files, seconds, 0, handles=handles)
    print(json.dumps({**r, "began": began, "ended": time.time()}), flush=True)


def run_row(args, handles: int, env: dict, processes: int) -> dict:
    start_at = time.time() + START_DELAY  # every process has read its files by then
    cmd = [sys.executable, __file__, args.data, "--child", str(handles), "--seconds", str(args.seconds),
           "--start-at", str(start_at)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, **env}) for _ in range(processes)]
    results, errors = [], []
    for p in procs:
        try:
            out, err = p.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return {"error": f"hung: no result after {args.timeout:.0f} s"}
        if p.returncode != 0:
            errors.append(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
        else:
            results.append(json.loads(out.strip().splitlines()[-1]))
    if errors:
        return {"error": "; ".join(errors)}
    # Summed over the processes; each measured its own loop, started together.
    images = sum(r["images"] for r in results)
    pixels = sum(r["pixels"] for r in results)
    seconds = max(r["seconds"] for r in results)
    # How much of the longest process's call the processes ran together (1: all of it).
    together = min(r["ended"] for r in results) - max(r["began"] for r in results)
    longest = max(r["ended"] - r["began"] for r in results)
    return {"images": images, "pixels": pixels, "seconds": seconds, "images_per_s": images / seconds,
            "mpix_per_s": pixels / 1e6 / seconds, "together": max(0.0, together) / longest if longest > 0 else 1.0,
            "loops": results}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", help="a folder of JPEG files")
    ap.add_argument("--seconds", type=float, default=5.0, help="timed seconds per loop")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a row counts as hung")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.data, args.seconds, args.child, args.start_at)
    rows = {}
    print(f"# {args.data}: the engines' bare loop, {args.seconds:g}-s loops, each row in its own process")
    print("\n| row | images/s | MP/s | x 1 handle | processes together |\n|---|---:|---:|---:|---:|")
    for name, handles, env, processes in ROWS:
        r = run_row(args, handles, env, processes)
        rows[name] = r
        if "error" in r:
            print(f"| {name} | {r['error']} | | | |", flush=True)
            continue
        base = rows["1 handle"].get("images_per_s")
        ratio = f"{r['images_per_s'] / base:.2f}" if base else "-"
        together = f"{r['together']:.0%}" if processes > 1 else "-"
        print(f"| {name} | {r['images_per_s']:,.0f} | {r['mpix_per_s']:,.0f} | {ratio} | {together} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"data": args.data, "seconds": args.seconds, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
