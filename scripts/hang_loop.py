"""Hunts a rare hang of the GPU loader: runs the trace test's child (a `hardware` loader over 48
ImageNet-like files, batch 8, one epoch, then `del loader`) 8 processes at a time, for a set time per
variant, and keeps gdb's stacks (every thread) of each child that does not finish in 25 s.

    python3 scripts/hang_loop.py NAME:SECONDS:ENV=VALUE,ENV=VALUE ...   (on the GPU machine)

e.g. `nowait:150:SLUICE_ENGINE_WAIT=0 sleep:60 default:150:` (`sleep:S` leaves the GPU idle for S
seconds). A variant stops early after its second hang. gdb's output, unabridged, goes to
$OUT/hang_NAME.txt (gdb from SLUICE_PROBE_GDB: device_run.sh hunt sets it up from the carried
.deb/gdb). Variants run in turn: the hangs found (page-locked reads without the engine wait, about
1 run in 9) came in a fresh machine's first variant only, so compare first variants of fresh
machines (docs/benchmarks.md).
"""
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_probe import gdb_threads  # noqa: E402
from sluice import datasets  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/sluice-out")
DATA = "/tmp/hang_loop_48"
TIMEOUT_S = 25
CODE = (f"import sluice, sluice.transforms as ST\n"
        f"loader = sluice.Loader({DATA!r}, [ST.RandomResizedCrop(64)], batch_size=8, device='cuda', "
        f"decode_route='hardware')\n"
        f"print(sum(images.shape[0] for images, _ in loader))\ndel loader\n")


def run_variant(name: str, seconds: float, env_items: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    for item in filter(None, env_items.split(",")):
        key, value = item.split("=", 1)
        env[key] = value
    stop = time.time() + seconds
    counts = {"ok": 0, "hang": 0, "fail": 0}
    lock = threading.Lock()

    def worker(_: int) -> None:
        while time.time() < stop and counts["hang"] < 2:
            p = subprocess.Popen([sys.executable, "-c", CODE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env)
            try:
                out, err = p.communicate(timeout=TIMEOUT_S)
                ok = p.returncode == 0 and out.strip() == "48"
                with lock:
                    counts["ok" if ok else "fail"] += 1
                    if not ok and counts["fail"] <= 2:
                        print(f"{name}: a child failed (rc {p.returncode}): {err[-600:]}", flush=True)
            except subprocess.TimeoutExpired:
                text = gdb_threads(p.pid)
                p.kill()
                out, err = p.communicate()
                with lock:
                    counts["hang"] += 1
                    with open(os.path.join(OUT, f"hang_{name}.txt"), "a") as f:
                        f.write(f"==== hang {counts['hang']} stdout {out!r} stderr {err[-800:]!r}\n{text}\n")

    t0 = time.time()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    print(f"variant {name} ({env_items or 'no env'}): {counts} in {time.time() - t0:.0f} s", flush=True)
    return counts


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    if not os.path.isdir(DATA):
        datasets.make_dataset(DATA, num_images=48, num_classes=4, progress=False)
    for spec in sys.argv[1:]:
        name, seconds, env_items = (spec.split(":", 2) + [""])[:3]
        if name == "sleep":
            time.sleep(float(seconds))
        else:
            run_variant(name, float(seconds), env_items)
    return 0


if __name__ == "__main__":
    sys.exit(main())
