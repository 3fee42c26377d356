"""The loader's tuner against today's defaults and a hand sweep (issue 19), CPU or GPU path.

For each dataset and consumer, rows each in their own process, same files:
  default        num_threads = all of this process's CPUs, prefetch 2 and 2 I/O threads, all given
                 (no tuner): what a loader ran with before the tuner
  tuned          nothing given: the tuner chooses (timed once it has settled, at most --settle s)
  T threads, prefetch P   the sweep (--threads x --prefetch), given (with 2 I/O threads)
The rate is the training loop's: batches taken per second, times the batch size (images/s),
with the consumer's step in the loop. Consumers:
  none           the loop takes batches and does nothing (the loader is the bottleneck)
  sleep:MS       a step that sleeps MS ms (a GPU step: the CPU is free meanwhile)
  torch:N        a CPU training step: a small CNN's forward and backward on the batch, torch on N
                 threads (competes with the loader's threads for cores)

    python bench/tune_bench.py DATA [DATA ...] --consumers none,sleep:40,torch:4 --seconds 5
        [--threads 2,4,8,16] [--prefetch 2,4] [--repeats 3] [--confirm 12] [--device cuda] [--warmup 8]
        [--json out.json]
--warmup S: every row runs S seconds before it is timed, as the tuned row does while the tuner
settles (without it the swept rows are timed after 3 batches, before the route scheduler and the
caches settle: a bias for the tuned row).
With --device cuda (consumers none and sleep:MS; batches float16 on the GPU, the rate timed to
a device sync) the tuner tunes the I/O threads and the prefetch, not the compute threads (the
route scheduler splits the decoding): the sweep's --threads are I/O threads, default is 4 I/O
threads and prefetch 2.
Prints a table per dataset and consumer, then: tuned / default and tuned / best swept (with
several rounds also round by round: the median of the ratios of runs in one round), and, where a
swept row has the default's setting, default / that row: one setting run in two rows, the
spread any ratio here carries. With --repeats R the rows run R times in interleaved rounds, each
round starting one row later (so that a drift of the machine's speed, or a row's place in the
round, touches every row alike); a row's rate is the median of its runs, shown with their range.
--confirm N then runs the best swept setting again beside the tuner, N rounds of the two (which
runs first alternates): the best of several noisy medians sits above a typical run of its own
setting, so the sweep picks the setting and these fresh runs measure it (mean of the ratios
round by round, with its standard error).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


def consumer_step(kind: str):
    """A function of one batch (images as a NumPy array, NCHW float32) for the loop to call."""
    if kind == "none":
        return lambda images: None
    name, _, arg = kind.partition(":")
    if name == "sleep":
        return lambda images: time.sleep(float(arg) / 1000)
    if name == "torch":
        import torch
        torch.set_num_threads(int(arg))
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, stride=2), torch.nn.ReLU(),
                                  torch.nn.Conv2d(16, 32, 3, stride=2), torch.nn.ReLU(),
                                  torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10))
        opt = torch.optim.SGD(net.parameters(), lr=0.01)

        def step(images):
            x = torch.from_numpy(images)
            loss = net(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return step
    raise SystemExit(f"unknown consumer {kind!r}")


CPU_IO_THREADS = 2  # the CPU path's I/O threads before the tuner (src/pipeline/resolve_options.cc)


def child(data: str, kind: str, threads: int, prefetch: int, seconds: float, settle: float, batch: int,
          device: str, warmup: float) -> dict:
    import sluice
    import sluice.transforms as T
    cuda = device == "cuda"
    kw = {} if threads <= 0 else {"io_threads" if cuda else "num_threads": threads, "prefetch": prefetch}
    if kw and not cuda:
        kw["io_threads"] = CPU_IO_THREADS  # given too: nothing of these rows is tuned
    if cuda:
        kw.update(device="cuda", dtype="float16", output="torch")
    loader = sluice.Loader(data, [T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                  T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)],
                           batch_size=batch, shuffle=True, **({"output": "numpy"} | kw))
    step = consumer_step(kind)

    def batches():
        while True:
            for images, _labels in loader:
                yield images

    it = batches()
    start = time.perf_counter()
    for _ in range(3):
        step(next(it))
    # Every row runs --warmup s before it is timed (the route scheduler and the caches settle
    # meanwhile); the tuned row also until the tuner has settled, at most --settle s.
    deadline = start + (settle if threads <= 0 else 0)
    while time.perf_counter() < start + warmup or (time.perf_counter() < deadline and
                                                   not loader.stats()["tuning"]["settled"]):
        step(next(it))
    routes0 = loader.stats().get("route_samples") or {}
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < 4:
        step(next(it))
        n += 1
    if cuda:
        __import__("torch").cuda.synchronize()
    rate = n * batch / (time.perf_counter() - t0)
    s = loader.stats()
    loader.close()
    row = {"images_per_s": rate, "threads": s["io_threads" if cuda else "num_threads"], "prefetch": s["prefetch"],
           "tuning": s["tuning"]}
    # The GPU path: the share of the timed samples its route scheduler sent to the CPU side.
    routed = {r: c - routes0.get(r, 0) for r, c in (s.get("route_samples") or {}).items()}
    if sum(routed.values()) > 0:
        row["cpu_side_share"] = 1 - routed.get("hardware", 0) / sum(routed.values())
    return row


def run_row(data, kind, threads, prefetch, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), data, "--_child", kind, str(threads), str(prefetch),
           "--seconds", str(args.seconds), "--settle", str(args.settle), "--batch-size", str(args.batch_size),
           "--device", args.device, "--warmup", str(args.warmup)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}


def median_row(runs: list[dict]) -> dict:
    """The run with the median rate (its threads, prefetch, tuning), with the runs' low and high;
    an error when every run failed."""
    ok = sorted((r for r in runs if "error" not in r), key=lambda r: r["images_per_s"])
    if not ok:
        return runs[-1]
    mid = dict(ok[(len(ok) - 1) // 2])
    mid["low"], mid["high"], mid["runs"] = ok[0]["images_per_s"], ok[-1]["images_per_s"], len(ok)
    return mid


def paired(a: list[dict], b: list[dict]) -> list[float]:
    """a's rate over b's, round by round (the runs of one round ran back to back), where both ran."""
    return sorted(x["images_per_s"] / y["images_per_s"] for x, y in zip(a, b) if "error" not in x and "error" not in y)


def best_swept(table: dict) -> str | None:
    """The swept row (neither default nor tuned) with the highest rate; None when none ran."""
    swept = {k: v for k, v in table.items() if k not in ("default", "tuned") and "error" not in v}
    return max(swept, key=lambda k: swept[k]["images_per_s"]) if swept else None


def print_ratios(table: dict, runs: dict) -> None:
    """tuned / default and tuned / the best swept row: of the medians, and with several rounds
    also the median of the ratios round by round, with their range (a drift of the machine
    between rounds then counts less)."""
    ok = {k: v for k, v in table.items() if "error" not in v}
    swept = {k: v for k, v in ok.items() if k not in ("default", "tuned")}
    best = best_swept(table)
    if not ("tuned" in ok and "default" in ok and best):
        return
    tuned = ok["tuned"]["images_per_s"]
    print(f"\ntuned / default {tuned / ok['default']['images_per_s']:.2f}x; tuned / best swept "
          f"({best}) {tuned / swept[best]['images_per_s']:.2f}x; tuner: {ok['tuned']['tuning']['why']}")
    pairs = [("tuned", "default"), ("tuned", best)]
    # The noise floor: a swept row with the default's setting runs it a second time.
    same = [k for k, v in swept.items() if (v["threads"], v["prefetch"]) ==
            (ok["default"]["threads"], ok["default"]["prefetch"])]
    if same:
        pairs.append(("default", same[0]))
        print(f"  control, one setting in two rows: default / {same[0]} "
              f"{ok['default']['images_per_s'] / swept[same[0]]['images_per_s']:.2f}x")
    for row, other in pairs:
        ratios = paired(runs[row], runs[other])
        if len(ratios) > 1:
            print(f"  round by round, {row} / {other}: median {ratios[(len(ratios) - 1) // 2]:.2f}x "
                  f"({ratios[0]:.2f}-{ratios[-1]:.2f}x over {len(ratios)} rounds)")


def confirm_best(data: str, kind: str, rows: list, table: dict, args) -> dict | None:
    """The tuned row against a fresh run of the best swept setting, --confirm rounds of the pair
    (which runs first alternates); prints and returns the ratios' mean, standard error and median."""
    best = best_swept(table)
    if args.confirm < 1 or best is None:
        return None
    setting = next((t, p) for name, t, p in rows if name == best)
    pair = {"tuned": [], best: []}
    for k in range(args.confirm):
        order = [("tuned", (0, 0)), (best, setting)]
        for name, (t, p) in order[k % 2:] + order[:k % 2]:
            pair[name].append(run_row(data, kind, t, p, args))
            r = pair[name][-1]
            print(f"  confirm {k + 1}, {name}: " + (r["error"] if "error" in r else
                  f"{r['images_per_s']:,.0f} images/s at {r['threads']}, {r['prefetch']}"), file=sys.stderr, flush=True)
    ratios = [x["images_per_s"] / y["images_per_s"] for x, y in zip(pair["tuned"], pair[best])
              if "error" not in x and "error" not in y]
    if len(ratios) < 2:
        return None
    mean = sum(ratios) / len(ratios)
    se = (sum((x - mean) ** 2 for x in ratios) / (len(ratios) - 1) / len(ratios)) ** 0.5
    median = sorted(ratios)[(len(ratios) - 1) // 2]
    print(f"\nconfirm: tuned / {best}, run again in {len(ratios)} rounds of the pair: mean {mean:.3f}x "
          f"(standard error {se:.3f}), median {median:.3f}x, range {min(ratios):.2f}-{max(ratios):.2f}x", flush=True)
    return {"best": best, "ratios": ratios, "mean": mean, "se": se, "median": median,
            "tuned_images_per_s": [x.get("images_per_s") for x in pair["tuned"]],
            "best_images_per_s": [x.get("images_per_s") for x in pair[best]],
            "tuned_settings": [[x.get("threads"), x.get("prefetch")] for x in pair["tuned"]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+")
    ap.add_argument("--consumers", default="none,sleep:40,torch:4")
    ap.add_argument("--threads", default="2,4,8,16")
    ap.add_argument("--prefetch", default="2,4")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--settle", type=float, default=20, help="the tuned row's wait for the tuner to settle")
    ap.add_argument("--warmup", type=float, default=0, help="seconds every row runs before it is timed")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--repeats", type=int, default=1, help="rounds over the rows; a row's rate is their median")
    ap.add_argument("--confirm", type=int, default=0,
                    help="then N rounds of the tuned row beside the best swept setting run again")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--json")
    ap.add_argument("--_child", nargs=3, metavar=("KIND", "THREADS", "PREFETCH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        kind, threads, prefetch = args._child
        print(json.dumps(child(args.data[0], kind, int(threads), int(prefetch), args.seconds, args.settle,
                               args.batch_size, args.device, args.warmup)))
        return
    cpus = len(os.sched_getaffinity(0))
    results = []
    for data in args.data:
        for kind in args.consumers.split(","):
            what = "I/O threads" if args.device == "cuda" else "threads"
            rows = [("default", 4 if args.device == "cuda" else cpus, 2), ("tuned", 0, 0)]
            rows += [(f"{t} {what}, prefetch {p}", int(t), int(p)) for t in args.threads.split(",")
                     for p in args.prefetch.split(",") if int(t) <= cpus]
            print(f"\n## {data}, consumer {kind} ({cpus} CPUs, batch {args.batch_size}, {args.device})\n\n"
                  f"| row | images/s | {what} | prefetch |\n|---|---:|---:|---:|", flush=True)
            runs = {name: [] for name, _, _ in rows}
            for k in range(max(1, args.repeats)):
                # Each round starts one row later, so that no row always runs first (or after the
                # same neighbour): a drift or a warm-up of the machine touches every row alike.
                for name, t, p in rows[k % len(rows):] + rows[:k % len(rows)]:
                    runs[name].append(run_row(data, kind, t, p, args))
                    r = runs[name][-1]  # as it comes (a bench cut short still shows these)
                    print(f"  {name}, run {k + 1}: " + (r["error"] if "error" in r else
                          f"{r['images_per_s']:,.0f} images/s at {r['threads']}, {r['prefetch']}" +
                          (f", CPU side {r['cpu_side_share']:.1%}" if "cpu_side_share" in r else "")),
                          file=sys.stderr, flush=True)
            table = {name: median_row(runs[name]) for name, _, _ in rows}
            for name, r in table.items():
                if "error" in r:
                    print(f"| {name} | {r['error']} | | |", flush=True)
                else:
                    spread = f" ({r['low']:,.0f}-{r['high']:,.0f})" if len(runs[name]) > 1 else ""
                    print(f"| {name} | {r['images_per_s']:,.0f}{spread} | {r['threads']} | {r['prefetch']} |",
                          flush=True)
            print_ratios(table, runs)
            for name, r in table.items():  # every run's rate, in round order
                r["runs_images_per_s"] = [x.get("images_per_s") for x in runs[name]]
            results.append({"data": data, "consumer": kind, "cpus": cpus, "device": args.device, "rows": table,
                            "confirm": confirm_best(data, kind, rows, table, args)})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
