"""The parent side of the scaling benchmarks: one torchrun job per (system, GPU count), killed with
its whole process tree after a timeout (with every rank's stacks first when gdb is at hand), its
rank 0 JSON line as the row, and the table and targets of a run.

    run_and_report(script, systems, gpu_counts, args, meta, data_line, settings, unit, extra_meta, ours)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from torchrun_jobs import RANK_ERROR

TARGETS = {2: 1.9, 4: 3.7}  # GPUs -> speed-up over one GPU (issue 21)
TARGET_VS_DALI = 1.3


def descendants(pid: int) -> list[int]:
    """Every living process below `pid` (torchrun puts each rank in a session of its own, so the
    job's process group alone does not reach them)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def kill_tree(p: subprocess.Popen) -> None:
    """SIGTERM to torchrun (it stops its ranks), then SIGKILL to whatever of the job is left:
    torchrun's group, each rank's own group (its DataLoader workers included)."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    for pid in [p.pid] + descendants(p.pid):
        try:
            pgid = os.getpgid(pid)
            if pgid != os.getpgrp():
                os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()


def write_stacks(p: subprocess.Popen, path: str) -> None:
    """Every rank's thread stacks into `path` (SLUICE_PROBE_GDB names gdb): where a job hangs."""
    from gpu_probe import stacks
    with open(path, "w") as err:
        for pid in descendants(p.pid):
            try:
                with open(f"/proc/{pid}/cmdline") as f:
                    is_rank = "--_worker" in f.read()
            except OSError:
                continue
            if is_rank:
                err.write(f"=== stacks of rank process {pid}\n{stacks(pid)}\n")


def rank_error_tail(stderr: str) -> str:
    """A rank's own traceback, which says more than torchrun's summary of it (which comes last)."""
    start = stderr.find(RANK_ERROR)
    end = stderr.find(RANK_ERROR + " end", start + 1)
    return stderr[start:end].strip()[-3000:] if start >= 0 else stderr[-3000:]


PARENT_ONLY = ("--json", "--logs", "--systems")  # torchrun would take --logs for its --logs-specs


def rank_args(argv: list) -> list:
    """The parent's arguments for the ranks, less the options only the parent uses."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in PARENT_ONLY:
            skip = True
        elif not a.startswith(tuple(o + "=" for o in PARENT_ONLY)):
            out.append(a)
    return out


def run_job(script: str, system: str, gpus: int, worker_args: list, args, tmp: str) -> dict:
    """One torchrun job of `gpus` ranks running `script --_worker system worker_args`: its row."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(gpus),
           script, *rank_args(worker_args), "--_worker", system]
    env = dict(os.environ)  # PYTHONPATH and the rest pass through to the ranks
    # torchrun sets OMP_NUM_THREADS=1 only with several ranks; 1 for every job, so the 1-GPU job
    # is no different (the loaders' threads are set by their options, DataLoader workers use 1).
    env.setdefault("OMP_NUM_THREADS", "1")
    out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
    t0 = time.perf_counter()
    with open(out_path, "w") as out, open(err_path, "w") as err:  # files, not pipes: ranks may linger
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            pass
        timed_out = p.poll() is None
        stacks_path = err_path + ".stacks"
        if timed_out and os.environ.get("SLUICE_PROBE_GDB"):
            write_stacks(p, stacks_path)
        kill_tree(p)
    if os.path.exists(stacks_path):  # after torchrun's last words, which would overwrite them
        with open(err_path, "a") as err, open(stacks_path) as st:
            err.write(st.read())
        os.remove(stacks_path)
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
        shutil.copy(err_path, os.path.join(args.logs, f"{system}_{gpus}gpu.stderr"))
    with open(out_path) as out, open(err_path, errors="replace") as err:
        lines, stderr = [ln for ln in out if ln.startswith("{")], err.read()
    if lines:
        result = json.loads(lines[-1])
        if timed_out:
            result["note"] = f"measured, then did not exit within {args.timeout:g} s"
    else:
        result = {"error": f"timeout after {args.timeout:g} s" if timed_out else f"exit {p.returncode}",
                  "stderr_tail": rank_error_tail(stderr)}
    return {"system": system, "gpus": gpus, "wall_seconds": time.perf_counter() - t0, **result}


def gpu_info() -> tuple[int, str]:
    """(number of GPUs, the first one's name), asked in a child: this process stays CUDA-free."""
    probe = subprocess.run([sys.executable, "-c", "import torch; n = torch.cuda.device_count(); "
                            "print(n); print(torch.cuda.get_device_name(0) if n else 'none')"],
                           capture_output=True, text=True, timeout=300)
    lines = probe.stdout.split("\n")
    if probe.returncode == 0 and lines[0].strip().isdigit():
        return int(lines[0]), lines[1].strip()
    return 0, "none: " + (probe.stderr.strip().splitlines() or ["?"])[-1][:100]


def machine_info(device: str) -> dict:
    import torch
    count, gpu = gpu_info() if device == "cuda" else (0, "none (--device cpu)")
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    return {"gpu": gpu, "gpu_count": count, "cpus": len(os.sched_getaffinity(0)), "cpu": cpu,
            "machine": platform.node(), "python": platform.python_version(), "torch": torch.__version__}


def per_rank_epochs(epochs: list, keys: tuple, value) -> list:
    """value(before, after) of each rank's loader record after each timed epoch but the first and
    after the epoch before it, by rank; [] when there are fewer than two epochs or a record lacks
    one of `keys` (the CPU path, another loader)."""
    after = [x.get("per_rank_after") or [] for x in epochs]
    if len(after) < 2 or not all(len(a) == len(after[0]) and all(k in r for r in a for k in keys) for a in after):
        return []
    return [[value(b[rank], a[rank]) for b, a in zip(after, after[1:])] for rank in range(len(after[0]))]


def off_engine_shares(epochs: list) -> list:
    """Each rank's share of images decoded off the engines in each timed epoch but the first (from
    the loader's running route counts after each epoch; those before the first timed epoch are
    not kept): under DDP a rank cannot tell from its own pace whether its CPU share helps, and
    ranks may settle on different shares."""
    def share(before: dict, after: dict):
        b, a = before["route_samples"], after["route_samples"]
        done = {route: a[route] - b.get(route, 0) for route in a}
        total = sum(done.values())
        return round(1 - done.get("hardware", 0) / total, 2) if total else None
    return per_rank_epochs(epochs, ("route_samples",), share)


def engine_rates(epochs: list) -> list:
    """Each rank's engines in each timed epoch but the first: [busy share, images per busy second,
    megapixels per busy second] (from the loader's running route counts, engine and wall seconds
    after each epoch; megapixels None where the loader does not count them). An epoch slower than
    the others with the same busy share and fewer megapixels per busy second is the engines' own
    slowing, not a feeding gap; fewer images at the same megapixels, larger files left to them."""
    def rates(b: dict, a: dict) -> list:
        busy = a["engine_busy_seconds"] - b["engine_busy_seconds"]
        wall = a["wall_seconds"] - b["wall_seconds"]
        images = a["route_samples"].get("hardware", 0) - b["route_samples"].get("hardware", 0)
        pixels = None
        if "route_pixels" in a and "route_pixels" in b:
            pixels = a["route_pixels"].get("hardware", 0) - b["route_pixels"].get("hardware", 0)
        return [round(busy / wall, 2) if wall > 0 else None, round(images / busy) if busy > 0 else None,
                round(pixels / busy / 1e6) if busy > 0 and pixels is not None else None]
    return per_rank_epochs(epochs, ("route_samples", "engine_busy_seconds", "wall_seconds"), rates)


def engine_busy_shares(epochs: list) -> list:
    """Each rank's engines' busy share from the end of the first timed epoch to the end of the
    last (from the loader's running engine and wall seconds after each epoch): a rank slower than
    the others with its engines idle is short of feeding, with them busy, of engine time."""
    first, last = (x.get("per_rank_after") or [] for x in (epochs[0], epochs[-1]))
    if len(epochs) < 2 or not first or len(first) != len(last):
        return []
    out = []
    for a, b in zip(first, last):
        if a.get("engine_busy_seconds") is None or b.get("wall_seconds", 0) <= a.get("wall_seconds", 0):
            return []
        out.append(round((b["engine_busy_seconds"] - a["engine_busy_seconds"]) / (b["wall_seconds"] - a["wall_seconds"]), 2))
    return out


def stage_rates(epochs: list) -> list:
    """Each rank's stages from the end of the first timed epoch to the end of the last: for read,
    decode, transform and collate the seconds its threads spent per second of wall time (several
    threads: above 1) and the CPU share of those seconds (below 1: threads that waited for a core
    or blocked inside the stage), and the consumer's wait per second. A rank slower than the
    others shows in which stage its time grew, and whether that time was work."""
    first, last = (x.get("per_rank_after") or [] for x in (epochs[0], epochs[-1]))
    if len(epochs) < 2 or not first or len(first) != len(last):
        return []
    out = []
    for a, b in zip(first, last):
        wall = b.get("wall_seconds", 0) - a.get("wall_seconds", 0)
        if "stage_seconds" not in a or "stage_seconds" not in b or wall <= 0:
            return []
        row = {}
        for stage in a["stage_seconds"]:
            spent = b["stage_seconds"][stage] - a["stage_seconds"][stage]
            cpu = b["stage_cpu_seconds"][stage] - a["stage_cpu_seconds"][stage]
            row[stage] = [round(spent / wall, 2), round(cpu / spent, 2) if spent > 0 else None]
        row["wait"] = round((b["wait_seconds"] - a["wait_seconds"]) / wall, 2)
        out.append(row)
    return out


def print_row(r: dict, unit: str) -> None:
    if "error" in r:
        print(f"  {r['system']} x {r['gpus']}: {r['error']}\n    " + r.get("stderr_tail", "").replace("\n", "\n    "),
              flush=True)
        return
    checked = {None: "not checked"}.get(r["exactly_once"], f"exactly once: {r['exactly_once']} "
                                        f"({r['epochs_checked']} epochs)")
    e = r["epochs"][0]
    print(f"  {r['row']} x {r['gpus']}: {r['epoch_seconds']:.2f} s/epoch ({r['epoch_time']}), {r['rate']:,.1f} "
          f"{unit}/s, {checked}, samples per rank {e['per_rank_samples']} ({r['wall_seconds']:.0f} s job); "
          f"first batch {e['per_rank_first_batch_s']} s, slowest wait {e['per_rank_slowest_wait']}, "
          f"process cores {e.get('per_rank_cores')} of CPUs {e.get('per_rank_cpus')}"
          + (f", engines busy {r['engine_busy_share']:.0%}" if r.get("engine_busy_share") is not None else "")
          + (f"; {r['note']}" if "note" in r else ""), flush=True)
    if len(r["epochs"]) > 1:
        secs = [x["seconds"] for x in r["epochs"]]
        print(f"    {len(secs)} epochs: {min(secs):.2f}-{max(secs):.2f} s: {[round(x, 2) for x in secs]}", flush=True)
        # nvJPEG states made so far, all ranks: making one holds the engines 0.1-0.2 s, and under
        # DDP one rank's wait is every rank's (the epochs where this grows are the slow ones).
        inits = [sum(a.get("engine_state_inits") or 0 for a in x.get("per_rank_after") or []) for x in r["epochs"]]
        if any(inits):
            secs = [round(max(a.get("engine_state_seconds") or 0 for a in x.get("per_rank_after") or [{}]), 2)
                    for x in r["epochs"]]
            print(f"    nvJPEG states initialized (all ranks) by the end of each epoch: {inits}; the slowest "
                  f"rank's seconds on them so far: {secs}", flush=True)
        near = [a.get("gpu_local_cpus") for a in r["epochs"][0].get("per_rank_after") or []]
        if any(near):
            print(f"    CPUs near the GPU each rank's threads were kept on (0: not kept): {near}", flush=True)
        steal = [x.get("host_steal_share") for x in r["epochs"]]
        if any(steal):
            print(f"    the machine's CPUs: busy {[x.get('host_busy_share') for x in r['epochs']]}, "
                  f"stolen by the VM's host {steal} (epoch by epoch)", flush=True)
        busy = engine_busy_shares(r["epochs"])
        if busy:
            print(f"    each rank's engines busy, epochs 2 to {len(r['epochs'])}: {busy}", flush=True)
        for rank, stages in enumerate(stage_rates(r["epochs"])):
            print(f"    rank {rank}'s stage seconds per second [and their CPU share], epochs 2 to "
                  f"{len(r['epochs'])}: {stages}", flush=True)
        shares = off_engine_shares(r["epochs"])
        if shares:
            print(f"    share of each rank's images decoded off the engines, epoch by epoch: {shares}", flush=True)
        rates = engine_rates(r["epochs"])
        if rates:
            print(f"    each rank's engines, epoch by epoch: [busy share, images and megapixels per busy second]: "
                  f"{rates}", flush=True)
        after = [x["per_rank_after"][0] for x in r["epochs"] if x.get("per_rank_after")]
        mib = 2**20
        for key, what, unit in (("gpu_memory_in_use", "GPU memory in use (pending frees included), MiB", mib),
                                ("gpu_memory_allocated", "GPU memory allocated (the driver's count), MiB", mib),
                                ("gpu_memory_reserved", "GPU memory reserved, MiB", mib),
                                ("gpu_memory_reserved_nvjpeg", "nvJPEG's part of it, MiB", mib),
                                ("gpu_memory_peak", "GPU memory peak (since the start), MiB", mib),
                                ("gpu_pool_overflows", "allocations past the pool's cap", 1)):
            held = [a.get(key) for a in after]
            if held and None not in held:
                print(f"    rank 0's {what} after each epoch: {[round(b / unit) for b in held]}", flush=True)


def run_all(script: str, systems: list, gpu_counts: list, worker_args: list, args, gpu_count: int,
            unit: str, meta: dict) -> list:
    """Every (system, GPU count) job in turn; the rows, also written to --json after each job."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="scaling_") as tmp:
        for system in systems:
            for g in gpu_counts:
                if args.device == "cuda" and g > gpu_count:
                    r = {"system": system, "gpus": g, "error": f"needs {g} GPUs, {gpu_count} visible"}
                else:
                    r = run_job(script, system, g, worker_args, args, tmp)
                rows.append(r)
                print_row(r, unit)
                if args.json:  # after every job: a run cut short keeps what it measured
                    with open(args.json, "w") as f:
                        json.dump({**meta, "args": vars(args), "rows": rows}, f, indent=1, default=str)
    return rows


def table(rows: list, unit: str) -> list:
    base = {r["system"]: r["rate"] for r in rows if r["gpus"] == 1 and "rate" in r}
    out = [f"| system | GPUs | s/epoch | {unit}/s | vs 1 GPU | exactly once | {unit} (epoch) |",
           "|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['system']} | {r['gpus']} | {r['error'][:80].replace('|', '/')} | - | - | - | - |")
            continue
        up = f"{r['rate'] / base[r['system']]:.2f}x" if r["system"] in base else "n/a"
        once = {None: "not checked", True: "yes"}.get(r["exactly_once"], "NO")
        bad = next((e["check"] for e in r["epochs"] if "check" in e and not e["check"]["exactly_once"]), None)
        if bad:
            once = "padded" if r["pads"] and not bad["missing"] else (
                f"NO: {bad['repeated']} repeated, {bad['missing']} missing")
        est = "" if r["epoch_time"] == "measured" else " (est.)"
        out.append(f"| {r['row']} | {r['gpus']} | {r['epoch_seconds']:.2f}{est} | {r['rate']:,.0f} | {up} | {once} | "
                   f"{r['total_samples']:,} ({r['dataset_size']:,}) |")
    return out


def target_lines(rows: list, ours: str, dali: str) -> list:
    rate = {(r["system"], r["gpus"]): r["rate"] for r in rows if "rate" in r}
    out = []
    for system in dict.fromkeys(r["system"] for r in rows):
        for g, need in TARGETS.items():
            if (system, 1) in rate and (system, g) in rate:
                x = rate[(system, g)] / rate[(system, 1)]
                out.append(f"target {g} GPUs >= {need}x 1 GPU: {system} {x:.2f}x ({'met' if x >= need else 'NOT met'})")
    for g in sorted({g for _, g in rate}):
        if (ours, g) in rate and (dali, g) in rate:
            x = rate[(ours, g)] / rate[(dali, g)]
            out.append(f"target {ours} >= {TARGET_VS_DALI}x {dali} at {g} GPUs: {x:.2f}x "
                       f"({'met' if x >= TARGET_VS_DALI else 'NOT met'})")
    return out


def common_args(ap, systems: dict, batch_size: int, warmup: int) -> None:
    """The options every scaling benchmark takes (the parent passes its own to the ranks)."""
    ap.add_argument("--gpus", default="1,2", help="comma-separated rank counts, e.g. 1,2,4")
    ap.add_argument("--systems", default=",".join(systems), help=f"comma-separated: {', '.join(systems)}")
    ap.add_argument("--batch-size", type=int, default=batch_size, help="per GPU")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads per rank for the loaders that take them (default: the host's CPUs / "
                         "the largest GPU count in --gpus, the same for every job)")
    ap.add_argument("--warmup", type=int, default=warmup, help="warm-up batches of epoch 0")
    ap.add_argument("--warmup-seconds", type=float, default=0.0,
                    help="then whole warm-up epochs until this many seconds since the warm-up began")
    ap.add_argument("--epochs", type=int, default=1, help="epochs timed (each checked: exactly once)")
    ap.add_argument("--max-batches", type=int, default=0,
                    help="cut each timed epoch at this many batches per rank (s/epoch extrapolated, not checked)")
    ap.add_argument("--json", help="write every row here (rewritten after each job)")
    ap.add_argument("--logs", help="keep each job's stderr in this directory")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: the same jobs with gloo and CPU tensors, to check the plumbing")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per job before it is killed")
    ap.add_argument("--_worker", choices=systems, dest="system", help=argparse.SUPPRESS)


def warmup_text(args) -> str:
    """The settings line's words for the warm-up and the timed epochs."""
    more = f" + whole epochs to {args.warmup_seconds:g} s" if args.warmup_seconds else ""
    first = "the next" if args.warmup_seconds else "epochs 1-"
    return f"warm-up {args.warmup} batches of epoch 0{more}, {first}{args.epochs}{' epochs' if more else ''} timed"


def parse_common(ap, args, systems: dict) -> tuple[list, list]:
    """(GPU counts, systems) from the common options, and args.threads resolved."""
    try:
        gpu_counts = [int(g) for g in args.gpus.split(",") if g.strip()]
    except ValueError:
        ap.error(f"--gpus must be comma-separated integers, got {args.gpus!r}")
    names = [s.strip().lower() for s in args.systems.split(",") if s.strip()]
    if not gpu_counts or min(gpu_counts) < 1 or not names or set(names) - set(systems):
        ap.error(f"--gpus needs counts >= 1 and --systems a list of {', '.join(systems)}")
    if args.epochs < 1 or args.max_batches < 0 or args.warmup < 0 or args.warmup_seconds < 0:
        ap.error("--epochs must be >= 1, --max-batches, --warmup and --warmup-seconds >= 0")
    args.threads = args.threads or max(1, len(os.sched_getaffinity(0)) // max(gpu_counts))
    return gpu_counts, names


def run_and_report(script: str, systems: list, gpu_counts: list, args, meta: dict, data_line: str, settings: str,
                   unit: str, extra_meta: dict, ours: str) -> None:
    """A benchmark's whole parent side: its header, every job, then the machine, data, settings,
    table and targets."""
    print(f"# {meta['gpu']} x {meta['gpu_count']} | {meta['cpus']} CPUs ({meta['cpu']}) | Python "
          f"{meta['python']} | torch {meta['torch']}\n# {data_line}\n# {settings}", flush=True)
    rows = run_all(script, systems, gpu_counts, sys.argv[1:], args, meta["gpu_count"], unit,
                   {"machine": meta, **extra_meta})
    print(f"\nmachine: {meta['gpu']} x {meta['gpu_count']}, {meta['cpus']} CPUs ({meta['cpu']})")
    print(f"data:    {data_line}\nsettings: {settings}\n")
    print("\n".join(table(rows, unit) + [""] + target_lines(rows, ours, "dali")))
