"""The GPU benchmark's plumbing, without a GPU (--dry-run): a sluice row measures, a DALI row
either measures or is skipped with the reason (DALI is not installed on the CI machine), and the
engines' bare-loop row is skipped with the reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import PYTHON_DIR, ROOT
import sluice
from sluice import datasets

pytest.importorskip("torch")
# The benchmarks' own processes see what this one sees (DALI from PYTHONPATH included), sluice first.
CHILD_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [PYTHON_DIR, os.environ.get("PYTHONPATH")])))


def test_gpu_bench_dry_run_has_a_sluice_row_and_a_dali_row(tmp_path):
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=32, num_classes=2, width=(48, 64), progress=False)
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gpu_bench.py"), str(data), "--dry-run",
                        "--seconds", "0.2", "--rows", "sluice CPU,DALI 8 threads hw_decoder_load 0.65,bare loop",
                        "--json", str(out)], capture_output=True, text=True, timeout=300,
                       env=CHILD_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["row"]: row for row in json.loads(out.read_text())["datasets"][0]["rows"]}
    assert rows["sluice CPU"]["images_per_s"] > 0
    assert rows["engines alone, bare loop"]["skipped"].startswith("measures the GPU's JPEG engines"), rows
    dali = rows["DALI 8 threads hw_decoder_load 0.65"]
    try:
        import nvidia.dali  # noqa: F401
    except ImportError:
        assert dali["skipped"].startswith("DALI is not installed"), dali
        assert "| DALI 8 threads hw_decoder_load 0.65 | skipped: DALI is not installed" in r.stdout
    else:
        assert "images_per_s" in dali or "error" in dali, dali  # a dry run has no GPU for DALI


def test_augment_bench_dry_run_has_a_sluice_row_and_a_dali_row(tmp_path):
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=32, num_classes=2, width=(48, 64), progress=False)
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "augment_bench.py"), str(data), "--dry-run",
                        "--seconds", "0.2", "--batch-size", "16", "--rows",
                        "sluice CPU,DALI 16 threads hw_decoder_load 1", "--json", str(out)],
                       capture_output=True, text=True, timeout=300, env=CHILD_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {row["row"]: row for row in json.loads(out.read_text())["datasets"][0]["rows"]}
    assert rows["sluice CPU, Cutout (built-in)"]["images_per_s"] > 0
    try:
        import nvidia.dali  # noqa: F401
    except ImportError:
        assert rows["DALI 16 threads hw_decoder_load 1"]["skipped"].startswith("DALI is not installed")


def test_a_warm_up_of_seconds_goes_on_past_its_batches_in_every_row(tmp_path):
    # --warmup-seconds: the untimed start of each row lasts at least that long (and 3 batches),
    # the sluice rows' and the CPU-side rows' alike; without it, 3 batches.
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=32, num_classes=2, width=(48, 64), progress=False)
    for script, extra in (("gpu_bench.py", []), ("augment_bench.py", ["--batch-size", "16"])):
        for warmup in (0.0, 1.5):
            out = tmp_path / f"{script}-{warmup}.json"
            r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), str(data), "--dry-run",
                                "--seconds", "0.2", "--warmup-seconds", str(warmup), "--rows", "sluice CPU",
                                "--json", str(out), *extra], capture_output=True, text=True, timeout=300,
                               env=CHILD_ENV)
            assert r.returncode == 0, r.stdout + r.stderr
            row = json.loads(out.read_text())["datasets"][0]["rows"][0]
            assert row["images_per_s"] > 0, row
            if warmup:
                assert row["warmup_seconds"] >= warmup and row["warmup_batches"] > 3, (script, row)
                assert f"3 warm-up batches and >= {warmup:g} s" in r.stdout
            else:
                assert row["warmup_batches"] == 3, (script, row)


def test_the_shard_bench_warms_up_its_rows_as_the_others_do(tmp_path):
    # shard_bench.py packs the folder, serves the shards over HTTP and times a row from them,
    # after 3 batches and at least --warmup-seconds; the memory-cache row times whole epochs.
    # Both record where the cores went.
    pytest.importorskip("webdataset")
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=48, num_classes=2, width=(48, 64), progress=False)
    out = tmp_path / "shards.json"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "shard_bench.py"), str(data), "--dry-run",
                        "--shard-mib", "1", "--seconds", "0.2", "--warmup-seconds", "1.5",
                        "--rows", "sluice CPU HTTP,cache=memory", "--json", str(out)],
                       capture_output=True, text=True, timeout=300, env=CHILD_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    results = json.loads(out.read_text())
    assert results["pack"]["samples"] == 48
    cached, row = results["rows"]  # in the benchmark's order
    assert row["row"] == "sluice CPU HTTP" and row["images_per_s"] > 0, row
    assert row["warmup_seconds"] >= 1.5 and row["warmup_batches"] > 3, row
    assert "3 warm-up batches and >= 1.5 s" in r.stdout
    assert cached["row"] == "sluice GPU files cache=memory" and cached["first_epoch"]["epochs"] == 1, cached
    for timed in (row, cached, cached["first_epoch"]):
        assert timed["cores_stolen"] >= 0 and timed["cores_busy"] >= timed["cores_stolen"], timed
        assert "thread_cores" in timed, timed


def test_rows_are_chosen_by_substrings_and_a_name_with_a_comma_by_its_whole_name(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    from gpu_bench import select_rows

    names = ["sluice GPU, Cutout (built-in)", "sluice GPU, Cutout (built-in) [hardware]",
             "sluice GPU, Lambda(CUTOUT)", "sluice CPU, Cutout (built-in)", "DALI 8 threads hw_decoder_load 1"]
    assert select_rows(names, None) == names
    assert select_rows(names, "") == names
    assert select_rows(names, "sluice GPU, Cutout") == names[:2]  # not every GPU row, nor the CPU's
    assert select_rows(names, "lambda,dali") == [names[2], names[4]]
    assert select_rows(names, "sluice GPU, Cutout (built-in) [hardware],DALI") == [names[1], names[4]]
    assert select_rows(names, "video") == []


def test_a_measured_row_reports_each_routes_rate_and_warms_up_first(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import gpu_bench
    import torch

    monkeypatch.setattr(gpu_bench, "GPU", "cpu")
    taken, warmed_after = [], []

    def make(data):
        def batches():
            while True:
                taken.append(1)
                yield torch.zeros(4, 3, 2, 2), torch.zeros(4)
        stats = {"sluice_stats": {"route_samples": {"hardware": 300, "hybrid": 0, "cpu": 100},
                                  "route_pixels": {"hardware": 75_000_000, "hybrid": 0, "cpu": 15_000_000},
                                  "engine_busy_seconds": 0.75, "wall_seconds": 1.0}}
        return batches(), lambda: stats, lambda: warmed_after.append(len(taken))

    r = gpu_bench.measured(make)("unused", 0.05)
    assert warmed_after == [gpu_bench.WARMUP]  # once, after the warm-up batches
    assert r["batches"] >= gpu_bench.MIN_BATCHES and r["images"] == 4 * r["batches"]
    assert r["route_rates"] == {"hardware": pytest.approx(300 / r["seconds"]), "hybrid": 0.0,
                                "cpu": pytest.approx(100 / r["seconds"])}
    assert r["engine_busy_share"] == pytest.approx(0.75)
    assert r["route_mpix_rates"]["hardware"] == pytest.approx(75 / r["seconds"])
    assert r["route_mpix_rates"]["cpu"] == pytest.approx(15 / r["seconds"])
    line = gpu_bench.ratio_line("d", [{"row": "sluice GPU auto", **r}])
    assert "engines busy: sluice GPU auto 75%" in line, line
    assert f"the engines' megapixels/s: sluice GPU auto {75 / r['seconds']:,.0f}" in line, line
    # Beside the bare loop: the share of its megapixels/s.
    loop = {"row": gpu_bench.ENGINE_ROW, "images_per_s": 1000.0, "mpix_per_s": 150 / r["seconds"]}
    line = gpu_bench.ratio_line("d", [{"row": "sluice GPU auto", **r}, loop])
    assert "(0.50 of the bare loop)" in line and f"bare loop {150 / r['seconds']:,.0f}" in line, line


def test_a_measured_row_gives_its_threads_cores_by_name(monkeypatch):
    # A thread named as sluice names its pool threads spins through the timed interval of a row
    # whose batches come slowly (the main thread sleeps): its group gets about one core, the
    # sleeping main thread about none, and the table line names both. The reference: the
    # kernel's CPU clock of that thread (pthread_getcpuclockid), read around each core_reading().
    # 24 idle threads make each reading slow (every /proc read hands the spinner the GIL for up
    # to 5 ms), as torch's threads did on the GPU machine: timed from outside the readings, the
    # spinner came out at 1.45-1.64 cores there.
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import ctypes
    import threading

    import gpu_bench
    import torch

    monkeypatch.setattr(gpu_bench, "GPU", "cpu")
    stop, named = threading.Event(), threading.Event()

    def spin():
        ctypes.CDLL(None).prctl(15, b"sluice-spin7", 0, 0, 0)  # PR_SET_NAME: this thread's name
        named.set()  # named before the interval starts, or its earlier CPU would count in it
        while not stop.is_set():
            pass

    def make(data):
        def batches():
            while True:
                time.sleep(0.02)
                yield torch.zeros(4, 3, 2, 2), torch.zeros(4)
        return batches(), dict

    idle = [threading.Thread(target=stop.wait) for _ in range(24)]
    spinner = threading.Thread(target=spin)
    for t in idle + [spinner]:
        t.start()
    assert named.wait(10)
    spin_clock, clock_readings = time.pthread_getcpuclockid(spinner.ident), []
    read = gpu_bench.core_reading

    def core_reading():
        c0 = time.clock_gettime(spin_clock)
        reading = read()
        clock_readings.append((c0 + time.clock_gettime(spin_clock)) / 2)
        return reading

    monkeypatch.setattr(gpu_bench, "core_reading", core_reading)
    try:
        r = gpu_bench.measured(make)("unused", 0.6)
    finally:
        stop.set()
        for t in idle + [spinner]:
            t.join()
    cores = r["thread_cores"]
    assert len(clock_readings) == 2, clock_readings  # the interval's start and end
    own = (clock_readings[1] - clock_readings[0]) / r["cores_seconds"]
    # /proc counts in ticks (10 ms): over 0.6 s about 0.03 cores either way.
    assert abs(cores["sluice-spin"] - own) <= 0.1, (cores, own)
    # The GIL: the spinner holds it whenever the sleeping main thread does not need it (on a
    # loaded 2-core machine it may get less of a core; a wrong count would give about none).
    # Above one core: the interval is not the one the readings span.
    assert 0.3 <= cores["sluice-spin"] <= 1.15, (cores, own)
    assert cores.get("other", 0) < 0.5, cores
    assert r["other_processes_cores"] >= 0
    assert r["cores_stolen"] >= 0
    line = gpu_bench.ratio_line("d", [{"row": "sluice GPU auto", "images_per_s": 1.0, **r}])
    assert "cores by thread group: sluice GPU auto: " in line and "sluice-spin " in line, line
    assert ", stolen " in line, line


def test_gpu_bench_interval_cores_leaves_stolen_time_out_of_other_processes(monkeypatch):
    """Over 4 s, 8 busy CPU-seconds of which the host stole 2 (/proc/stat's readings made up):
    2.0 cores busy, 0.5 stolen, and the other 1.5 (less this process's own threads, here idle)
    counted as other processes'."""
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import gpu_bench

    hz = os.sysconf("SC_CLK_TCK")
    groups = gpu_bench.thread_groups()
    before = {"at": 10.0, "groups": groups, "jiffies": 1000, "steal": 300}
    after = {"at": 14.0, "groups": groups, "jiffies": 1000 + 8 * hz, "steal": 300 + 2 * hz}
    r = gpu_bench.interval_cores(before, after)
    assert r["cores_busy"] == 2.0 and r["cores_stolen"] == 0.5
    assert 1.4 <= r["other_processes_cores"] <= 1.5, r


def test_tune_bench_pairs_runs_by_round_and_takes_medians(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    from tune_bench import median_row, paired

    tuned = [{"images_per_s": 90.0}, {"images_per_s": 110.0}, {"error": "timed out"}, {"images_per_s": 100.0}]
    default = [{"images_per_s": 100.0}, {"images_per_s": 100.0}, {"images_per_s": 120.0}, {"images_per_s": 80.0}]
    # Round 3 failed for tuned and is left out; the others pair round by round, sorted.
    assert paired(tuned, default) == [0.9, 1.1, 1.25]
    m = median_row(tuned)
    assert (m["images_per_s"], m["low"], m["high"], m["runs"]) == (100.0, 90.0, 110.0, 3)


def test_tune_bench_reports_the_default_setting_run_twice_as_a_control(monkeypatch, capsys):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    from tune_bench import print_ratios

    def row(rate, threads, prefetch):
        return {"images_per_s": rate, "threads": threads, "prefetch": prefetch, "tuning": {"why": "settled"}}

    table = {"default": row(95.0, 16, 2), "tuned": row(96.0, 16, 2), "16 threads, prefetch 2": row(100.0, 16, 2),
             "16 threads, prefetch 4": row(98.0, 16, 4)}
    runs = {"default": [{"images_per_s": 90.0}, {"images_per_s": 100.0}],
            "tuned": [{"images_per_s": 96.0}, {"images_per_s": 96.0}],
            "16 threads, prefetch 2": [{"images_per_s": 100.0}, {"images_per_s": 100.0}],
            "16 threads, prefetch 4": [{"images_per_s": 98.0}, {"images_per_s": 98.0}]}
    print_ratios(table, runs)
    out = capsys.readouterr().out
    assert "tuned / best swept (16 threads, prefetch 2) 0.96x" in out
    # The swept row of the default's setting is that setting's second run: 95 / 100.
    assert "control, one setting in two rows: default / 16 threads, prefetch 2 0.95x" in out
    assert "round by round, default / 16 threads, prefetch 2: median 0.90x (0.90-1.00x over 2 rounds)" in out


def test_tune_bench_confirms_the_best_swept_setting_in_fresh_pairs(monkeypatch, capsys):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import tune_bench

    rows = [("default", 16, 2), ("tuned", 0, 0), ("16 threads, prefetch 2", 16, 2), ("16 threads, prefetch 4", 16, 4)]
    table = {"default": {"images_per_s": 95.0}, "tuned": {"images_per_s": 90.0},
             "16 threads, prefetch 2": {"images_per_s": 97.0}, "16 threads, prefetch 4": {"images_per_s": 110.0}}
    calls = []
    fresh = {(0, 0): iter([90.0, 99.0, 95.0]), (16, 4): iter([100.0, 100.0, 100.0])}

    def fake_run_row(data, kind, threads, prefetch, args):
        calls.append((threads, prefetch))
        return {"images_per_s": next(fresh[(threads, prefetch)]), "threads": threads, "prefetch": prefetch}

    monkeypatch.setattr(tune_bench, "run_row", fake_run_row)
    args = type("Args", (), {"confirm": 3})()
    c = tune_bench.confirm_best("d", "none", rows, table, args)
    # The best swept median (110, prefetch 4) is run again beside the tuner; the order alternates.
    assert calls == [(0, 0), (16, 4), (16, 4), (0, 0), (0, 0), (16, 4)]
    assert c["best"] == "16 threads, prefetch 4"
    assert c["ratios"] == pytest.approx([0.90, 0.99, 0.95])
    assert c["mean"] == pytest.approx(0.9466667)
    assert c["se"] == pytest.approx(((0.0466667 ** 2 + 0.0433333 ** 2 + 0.0033333 ** 2) / 2 / 3) ** 0.5, rel=1e-3)
    assert c["median"] == pytest.approx(0.95)
    assert "confirm: tuned / 16 threads, prefetch 4, run again in 3 rounds of the pair: mean 0.947x" in capsys.readouterr().out
    assert tune_bench.confirm_best("d", "none", rows, table, type("Args", (), {"confirm": 0})()) is None


def test_autos_windows_are_listed_in_order_with_their_phases(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import gpu_bench

    def w(share, rate, phase, busy=0.99):
        return {"cpu_share": share, "images_per_s": rate, "seconds": 0.26, "engine_busy": busy, "phase": phase}

    windows = ([w(0.1875, 20000, "hold")] * 3 + [w(0.25, 21000, "probe")] * 2
               + [w(0.1875, 19000, "check"), w(0.25, 22000, "probe"), w(0.25, 22000, "hold", 0.95)])
    assert gpu_bench.window_sequence(windows) == ("0.1875 hold x3, 0.2500 probe x2, 0.1875 check x1, "
                                                  "0.2500 probe x1, 0.2500 hold x1")
    assert gpu_bench.window_summary(windows) == "0.1875: 4 x 19,750 (99%); 0.2500: 4 x 21,500 (98%)"
    # The benchmark's ratio line names them for each row that has them, with its nvJPEG states.
    row = {"row": "sluice GPU auto", "images_per_s": 20000.0,
           "sluice_stats": {"route_windows": windows, "engine_state_inits": 6, "engine_state_seconds": 0.5}}
    line = gpu_bench.ratio_line("d", [row, {"row": "sluice GPU hardware", "images_per_s": 18000.0,
                                            "sluice_stats": {"route_windows": [], "engine_state_inits": 2}}])
    assert ("sluice GPU auto: 6 nvJPEG states made (0.50 s); windows (CPU share: count x mean img/s, engines busy): "
            "0.1875: 4 x 19,750 (99%); 0.2500: 4 x 21,500 (98%)") in line, line
    assert "sluice GPU hardware:" not in line, line
    # With the pads the engines decoded (stats()["engine_pads"]), over the calls they filled.
    row["sluice_stats"].update(engine_pads=1600, engine_calls=846)
    line = gpu_bench.ratio_line("d", [row])
    assert "sluice GPU auto: 6 nvJPEG states made (0.50 s), 1,600 pads in 846 calls; windows" in line, line


def test_the_probe_gives_the_engines_rate_per_busy_second_their_threads_cpu_and_the_share_off_them(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import gpu_probe

    # Hand-computed: 2,683 MP/s while busy 80% of the time is 3,353.75 MP per busy second; 41,104
    # of 164,408 samples off the engines is 25%.
    row = {"engine_mpix_per_s": 2683.0, "engine_busy": 0.8}
    assert gpu_probe.per_busy_second(row) == pytest.approx(3353.75)
    assert gpu_probe.per_busy_second({"engine_mpix_per_s": 0.0, "engine_busy": 0.0}) == 0.0  # a CPU-only row
    assert gpu_probe.off_engines({"hardware": 123304, "hybrid": 0, "cpu": 41104}) == pytest.approx(0.25, abs=1e-4)
    assert gpu_probe.off_engines({"hardware": 5, "hybrid": 0, "cpu": 0}) == 0.0
    assert gpu_probe.off_engines({}) == 0.0
    # 1.59 cores for 3/4 of 20,000 images/s: 106 us of the engine threads' CPU per engine image.
    row = {"images_per_s": 20000.0, "routes": {"hardware": 3, "cpu": 1}, "groups": {"sluice-nvjpeg": 1.59}}
    assert gpu_probe.engine_cpu_us(row) == pytest.approx(106.0)
    assert gpu_probe.engine_cpu_us({"images_per_s": 500.0, "routes": {"cpu": 4}, "groups": {}}) == 0.0
    # The engine threads' split, in the stats' order whatever the dict's: turn, turn wait, memory
    # wait, pack; a row without those stats (an older build, the CPU route) shows "-".
    split = {"pack": 0.3, "memory_wait": 0.004, "turn": 0.76, "turn_wait": 0.417}
    assert gpu_probe.engine_split({"engine_threads": split}) == "0.76 / 0.42 / 0.00 / 0.30"
    assert gpu_probe.engine_split({"engine_threads": {}}) == "-"
    assert gpu_probe.engine_split({}) == "-"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("load", ["spin", "stream"])
def test_the_probes_neighbours_are_n_busy_processes(tmp_path, monkeypatch, load):
    # beside=N with load=spin|stream: N processes of that load, each busy on a core until killed
    # (the CPU time they gather over wall time, read from /proc); none without beside.
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    import gpu_probe

    assert gpu_probe.neighbours(str(tmp_path), {"route": "hardware"}) == []
    with pytest.raises(ValueError, match="load='disk'"):
        gpu_probe.neighbours(str(tmp_path), {"beside": "2", "load": "disk"})
    others = gpu_probe.neighbours(str(tmp_path), {"beside": "2", "load": load})
    try:
        assert len(others) == 2
        time.sleep(3)
        assert all(p.poll() is None for p in others), "a neighbour ended on its own"
        start = [cpu_seconds(p.pid) for p in others]
        time.sleep(2)
        busy = [cpu_seconds(p.pid) - s for p, s in zip(others, start)]
        assert all(b > 0.3 for b in busy), busy  # of 2 s wall, on a machine that may be busy
    finally:
        for p in others:
            p.kill()
            p.wait()


def _capacity_args(folder: str, timeout: float):
    import argparse
    return argparse.Namespace(data=folder, seconds=0.3, timeout=timeout)


def _capacity_folder(tmp_path) -> str:
    for i in range(4):
        img = (np.arange(64 * 48 * 3, dtype=np.uint32).reshape(48, 64, 3) * (i + 1) % 251).astype(np.uint8)
        (tmp_path / f"{i}.jpg").write_bytes(sluice._core.encode_jpeg(img, quality=90, subsampling="444"))
    return str(tmp_path)


def test_engine_capacity_reports_a_row_that_does_not_finish_in_time_as_hung(tmp_path, monkeypatch):
    # The children wait 5 s for their common start, longer than this row's 1-s limit: both are
    # killed and the row says so (the deadlock the per-handle turns may meet).
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    monkeypatch.setenv("PYTHONPATH", CHILD_ENV["PYTHONPATH"])
    import engine_capacity

    monkeypatch.setattr(engine_capacity, "START_DELAY", 5.0)
    t0 = time.monotonic()
    r = engine_capacity.run_row(_capacity_args(_capacity_folder(tmp_path), 1.0), 1, {}, 2)
    assert r == {"error": "hung: no result after 1 s"}
    assert time.monotonic() - t0 < 2.5  # the second process was not waited for again


def test_engine_capacity_sums_the_loops_of_every_process(tmp_path, monkeypatch):
    # Without a GPU every row carries the driver's error; with one, each row's loops are summed:
    # images and pixels added, seconds the longest loop's.
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    monkeypatch.setenv("PYTHONPATH", CHILD_ENV["PYTHONPATH"])
    import engine_capacity

    monkeypatch.setattr(engine_capacity, "START_DELAY", 3.0)
    r = engine_capacity.run_row(_capacity_args(_capacity_folder(tmp_path), 60.0), 2, {}, 2)
    if "error" in r:
        assert sluice._core.cuda_device_count() == 0 or "no JPEG engines" in r["error"], r
        assert "CUDA" in r["error"] or "JPEG engines" in r["error"], r
        return
    loops = r["loops"]
    assert len(loops) == 2 and all(x["handles"] == 2 for x in loops)
    assert r["images"] == sum(x["images"] for x in loops) and r["pixels"] == r["images"] * 64 * 48
    assert r["seconds"] == max(x["seconds"] for x in loops) >= 0.3
    assert r["images_per_s"] == pytest.approx(r["images"] / r["seconds"])
    assert 0.0 <= r["together"] <= 1.0
