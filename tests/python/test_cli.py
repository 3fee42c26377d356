"""The sluice command line: bench (on a folder and on the built-in sample) and make-dataset."""
from __future__ import annotations

import json
import os
import subprocess
import sys


from conftest import PYTHON_DIR

ENV = dict(os.environ, PYTHONPATH=PYTHON_DIR)


def run(*args, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "sluice", *args], capture_output=True, text=True,
                          env=env or ENV, timeout=timeout)


def test_bench_prints_a_table(small_folder):
    r = run("bench", small_folder, "--batch-size", "4", "--threads", "2", "--epochs", "1", "--size", "64")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "| images/s" in out and "decode ms/image" in out and "threads=2" in out
    assert "15 images, 3 classes" in out
    assert "bench [" in r.stderr  # the progress bar


def test_bench_json(small_folder):
    r = run("bench", small_folder, "--batch-size", "8", "--epochs", "1", "--size", "32", "--json",
            "--quiet", "--dtype", "float16", "--layout", "NHWC")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["images"] == 15 and res["images_per_s"] > 0 and res["dtype"] == "float16"
    assert set(res["stage_ms_per_image"]) == {"read", "decode", "transform", "collate"}


def test_bench_without_data_makes_the_sample_once(tmp_path):
    env = dict(ENV, SLUICE_CACHE=str(tmp_path / "cache"))
    args = ("bench", "--sample-images", "24", "--batch-size", "8", "--epochs", "1", "--size", "64")
    r = run(*args, env=env)
    assert r.returncode == 0, r.stderr
    assert "built-in sample dataset" in r.stderr and "make-dataset [" in r.stderr
    assert "24 images, 8 classes" in r.stdout
    r2 = run(*args, env=env)
    assert r2.returncode == 0 and "make-dataset [" not in r2.stderr  # cached


def test_make_dataset_knobs(tmp_path):
    out = tmp_path / "ds"
    r = run("make-dataset", str(out), "-n", "12", "--classes", "3", "--width", "100-120",
            "--quality", "80", "--subsampling", "420", "--progressive", "0.5")
    assert r.returncode == 0, r.stderr
    assert "wrote 12 JPEGs in 3 classes" in r.stdout and "4:2:0" not in r.stdout
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs)
    assert len(files) == 12 and len(os.listdir(out)) == 3
    import sluice
    infos = [sluice._core.image_info(open(f, "rb").read()) for f in files]
    assert all(100 <= i["width"] <= 120 and i["subsampling"] == "420" for i in infos)
    assert 0 < sum(i["progressive"] for i in infos) < 12


def test_version_and_a_device_that_cannot_be_used(small_folder):
    import sluice

    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"sluice {sluice.__version__}"
    if getattr(sluice._core, "cuda_device_count", lambda: 0)() > 0:
        return  # a GPU here: --device cuda works
    r = run("bench", small_folder, "--device", "cuda", "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("sluice bench: error: ") and "cuda" in r.stderr and r.stderr.count("\n") == 1


def test_bench_runs_the_users_transform_list(small_folder, tmp_path):
    r = run("bench", small_folder, "--transform", "[T.Resize(40), T.CenterCrop(32), T.ToTensor()]",
            "--batch-size", "5", "--epochs", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "transforms: Resize CenterCrop ToTensor" in r.stdout
    aug = tmp_path / "aug.py"
    aug.write_text("import sluice.transforms as T\ntrain = T.Compose([T.RandomResizedCrop(48), T.ColorJitter(0.4)])\n")
    r = run("bench", small_folder, "--transform", f"@{aug}:train", "--batch-size", "5", "--epochs", "1", "--json",
            "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["images"] == 15
    r = run("bench", small_folder, "--transform", "[T.Resize(", "--quiet")
    assert r.returncode == 2 and r.stderr.startswith("sluice bench: error: --transform '[T.Resize(': not a Python")


def test_bad_cli_arguments(tmp_path):
    r = run("make-dataset", str(tmp_path / "x"), "--width", "abc")
    assert r.returncode != 0 and "width" in r.stderr
    r = run("bench", str(tmp_path / "missing"), "--quiet")
    assert r.returncode == 2
    assert r.stderr.strip() == f"sluice bench: error: {tmp_path / 'missing'}: no such directory"



CPU_SCRIPT = r"""
import os, subprocess, sys, json
core = sorted(os.sched_getaffinity(0))[0]
os.sched_setaffinity(0, {core})  # the loader's threads and a busy process share one core
hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
import sluice, sluice.transforms as T
try:
    loader = sluice.Loader(sys.argv[1], [T.Resize(64)], batch_size=2, num_threads=1, output="numpy",
                           dct_scaling=False)
    for e in range(3):
        loader.set_epoch(e)
        for _ in loader:
            pass
finally:
    hog.kill()
st = loader.stats()
print(json.dumps({"wall": st["stage_seconds"], "cpu": st["stage_cpu_seconds"]}))
"""


def test_stage_cpu_time_is_what_the_threads_computed(tmp_path):
    """A compute thread sharing its core with a busy process: its stages' wall time counts the
    turns it waited for the core, their CPU time does not (about half)."""
    from PIL import Image

    from conftest import PYTHON_DIR, photo
    (tmp_path / "c").mkdir()
    for i in range(4):
        Image.fromarray(photo(1600, 1200, seed=i)).save(tmp_path / "c" / f"{i}.jpg", quality=95)
    r = subprocess.run([sys.executable, "-c", CPU_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=PYTHON_DIR), timeout=300)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    wall = st["wall"]["decode"] + st["wall"]["transform"]
    cpu = st["cpu"]["decode"] + st["cpu"]["transform"]
    assert 0 < cpu < 0.8 * wall, st
    assert set(st["cpu"]) == {"read", "decode", "transform", "collate"}
