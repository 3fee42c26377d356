"""The scaling benchmarks' plumbing (issue 21) without GPUs: torchrun jobs of 1 and 2 ranks with
gloo (--device cpu), every sample checked exactly once over the ranks, and the check itself
against hand-made id lists."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import PYTHON_DIR, ROOT
from sluice import datasets

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from torchrun_jobs import exactly_once, host_shares  # noqa: E402
from torchrun_launch import engine_busy_shares, engine_rates, off_engine_shares, rank_args, stage_rates  # noqa: E402

CHILD_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [PYTHON_DIR, os.environ.get("PYTHONPATH")])))


def test_exactly_once_counts_repeats_misses_and_strays():
    assert exactly_once([[0, 2], [1, 3]], 4)["exactly_once"]
    bad = exactly_once([[0, 1, 1], [3, 7]], 4)  # 1 twice, 2 missing (only 2), 7 outside
    assert (bad["delivered"], bad["unique"], bad["repeated"], bad["missing"], bad["outside"]) == (5, 4, 1, 1, 1)
    assert not bad["exactly_once"]
    assert not exactly_once([[0, 1], [2]], 4)["exactly_once"]  # one short


def test_each_ranks_share_off_the_engines_comes_from_its_counts_between_epochs():
    def after(*counts):
        return {"per_rank_after": [{"route_samples": {"hardware": h, "hybrid": y, "cpu": c}} for h, y, c in counts]}
    # Rank 0: 10 images on the engines and 10 on the CPU in epoch 2, then 20 and 0 in epoch 3;
    # rank 1: 10 on the hybrid decoder only, then 5 on each of the engines and the CPU.
    epochs = [after((10, 0, 0), (8, 0, 2)), after((20, 0, 10), (8, 10, 2)), after((40, 0, 10), (13, 10, 7))]
    assert off_engine_shares(epochs) == [[0.5, 0.0], [1.0, 0.5]]
    assert off_engine_shares(epochs[:1]) == []  # one epoch: nothing between epochs
    assert off_engine_shares([{"per_rank_after": [{}]}, {"per_rank_after": [{}]}]) == []  # the CPU path: no routes


def test_each_ranks_engine_busy_share_is_taken_between_the_first_and_last_epoch():
    def after(*ranks):
        return {"per_rank_after": [{"engine_busy_seconds": b, "wall_seconds": w} for b, w in ranks]}
    # Rank 0: 1.5 s of engine time in the 2 s after epoch 1 (75%); rank 1: 0.5 s in 2 s (25%).
    epochs = [after((1.0, 3.0), (2.0, 3.0)), after((2.0, 4.0), (2.1, 4.0)), after((2.5, 5.0), (2.5, 5.0))]
    assert engine_busy_shares(epochs) == [0.75, 0.25]
    assert engine_busy_shares(epochs[:1]) == []  # one epoch: no interval
    assert engine_busy_shares([{"per_rank_after": [{}]}, {"per_rank_after": [{}]}]) == []  # the CPU path


def test_each_ranks_engine_rate_is_taken_epoch_by_epoch():
    def after(*ranks):
        return {"per_rank_after": [{"route_samples": {"hardware": h, "cpu": 0},
                                    "route_pixels": {"hardware": h * 200_000},
                                    "engine_busy_seconds": b, "wall_seconds": w} for h, b, w in ranks]}
    # Rank 0: 800 images of 0.2 MP in 0.8 busy s of a 1-s epoch, then 600 in 0.8 s of 1 s (the
    # engines slower); rank 1: 500 in 0.5 s of 1 s, then none (idle).
    epochs = [after((100, 1.0, 2.0), (0, 0.5, 2.0)), after((900, 1.8, 3.0), (500, 1.0, 3.0)),
              after((1500, 2.6, 4.0), (500, 1.0, 4.0))]
    assert engine_rates(epochs) == [[[0.8, 1000, 200], [0.8, 750, 150]], [[0.5, 1000, 200], [0.0, None, None]]]
    for e in epochs:  # a loader that does not count pixels: no megapixels
        for r in e["per_rank_after"]:
            del r["route_pixels"]
    assert engine_rates(epochs)[0] == [[0.8, 1000, None], [0.8, 750, None]]
    assert engine_rates(epochs[:1]) == []  # one epoch: nothing between epochs
    assert engine_rates([{"per_rank_after": [{}]}, {"per_rank_after": [{}]}]) == []  # the CPU path


def test_each_ranks_stage_rates_are_taken_between_the_first_and_last_epoch():
    def after(read, read_cpu, decode, decode_cpu, wait, wall):
        return {"stage_seconds": {"read": read, "decode": decode}, "wall_seconds": wall, "wait_seconds": wait,
                "stage_cpu_seconds": {"read": read_cpu, "decode": decode_cpu}}
    # 2 s of wall between the first and last epoch: 1 s reading (0.5 s of it on a CPU), 6 s
    # decoding on several threads (all of it CPU), 0.4 s waited; a rank that did nothing.
    epochs = [{"per_rank_after": [after(1, 1, 2, 2, 0.1, 3), after(0, 0, 0, 0, 0, 3)]},
              {"per_rank_after": [after(2, 1.5, 8, 8, 0.5, 5), after(0, 0, 0, 0, 0, 5)]}]
    assert stage_rates(epochs) == [{"read": [0.5, 0.5], "decode": [3.0, 1.0], "wait": 0.2},
                                   {"read": [0.0, None], "decode": [0.0, None], "wait": 0.0}]
    assert stage_rates(epochs[:1]) == []  # one epoch: no interval
    assert stage_rates([{"per_rank_after": [{}]}, {"per_rank_after": [{}]}]) == []  # older rows


def test_the_machines_cpu_shares_come_from_the_jiffies_between_two_readings():
    # (steal, idle + iowait, total): 1,000 jiffies passed, 50 stolen, 600 idle or waiting.
    assert host_shares((10, 100, 1000), (60, 700, 2000)) == {"steal": 0.05, "busy": 0.4}
    assert host_shares((0, 0, 0), (0, 0, 0)) == {"steal": 0.0, "busy": 0.0}  # no /proc/stat


def test_the_ranks_get_no_option_torchrun_would_take():
    argv = ["/d", "--json", "x.json", "--logs=L", "--gpus", "1,2", "--systems", "sluice", "--threads", "3"]
    assert rank_args(argv) == ["/d", "--gpus", "1,2", "--threads", "3"]


def run(script: str, data, tmp_path, *args: str) -> dict:
    out = tmp_path / "rows.json"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), str(data), "--device", "cpu",
                        "--gpus", "1,2", "--threads", "1", "--epochs", "2", "--timeout", "200", "--logs",
                        str(tmp_path / "logs"), "--json", str(out), *args],
                       capture_output=True, text=True, timeout=600, env=CHILD_ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    return {(row["system"], row["gpus"]): row for row in json.loads(out.read_text())["rows"]}


def test_images_two_epochs_on_one_and_two_ranks_each_exactly_once(tmp_path):
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=40, num_classes=2, width=(48, 64), progress=False)
    rows = run("scaling_bench.py", data, tmp_path, "--systems", "sluice", "--size", "32", "--batch-size", "8",
               "--warmup", "2")
    for gpus in (1, 2):
        row = rows[("sluice", gpus)]
        assert "error" not in row, row
        assert row["exactly_once"] is True and row["epochs_checked"] == 2, row
        assert row["dataset_size"] == 40 and row["epochs"][0]["samples"] == 40
        assert len(row["epochs"][0]["per_rank_samples"]) == gpus
        # Each rank's process worked (decoding on its threads) while its epoch ran; a rank's
        # threads cannot use more cores than the machine has.
        assert all(0 < c <= os.cpu_count() + 0.5 for c in row["epochs"][0]["per_rank_cores"]), row
        assert "engine_busy_share" not in row  # no engines on the CPU path
        # The machine's shares are shares (an epoch of a few ms may fall within one tick of
        # /proc/stat: 0); the waits for the first 10 batches include the first batch's.
        e = row["epochs"][0]
        assert 0 <= e["host_busy_share"] <= 1 and 0 <= e["host_steal_share"] < 1, e
        assert all(f >= b for f, b in zip(e["per_rank_first10_s"], e["per_rank_first_batch_s"])), e
        rates = stage_rates(row["epochs"])
        assert len(rates) == gpus and any(x["decode"][0] > 0 for x in rates), row  # the ranks decoded
    assert rows[("sluice", 2)]["epochs"][0]["per_rank_samples"] == [20, 20]


def test_a_warmup_in_seconds_runs_whole_epochs_before_the_timed_ones(tmp_path):
    # --warmup-seconds: untimed whole epochs until that long has passed on every rank, then the
    # timed epochs, numbered after them and each still exactly once.
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=40, num_classes=2, width=(48, 64), progress=False)
    rows = run("scaling_bench.py", data, tmp_path, "--systems", "sluice", "--size", "32", "--batch-size", "8",
               "--warmup", "1", "--warmup-seconds", "1.5")
    for gpus in (1, 2):
        row = rows[("sluice", gpus)]
        assert "error" not in row, row
        assert row["warmup_epochs"] >= 1 and row["warmup_seconds"] >= 1.5, row
        assert row["exactly_once"] is True and row["epochs_checked"] == 2, row


def test_images_cut_epochs_are_extrapolated_and_not_checked(tmp_path):
    data = tmp_path / "data"
    datasets.make_dataset(str(data), num_images=40, num_classes=2, width=(48, 64), progress=False)
    rows = run("scaling_bench.py", data, tmp_path, "--systems", "sluice", "--size", "32", "--batch-size", "4",
               "--warmup", "1", "--max-batches", "2")
    row = rows[("sluice", 2)]
    assert row["epoch_time"] == "extrapolated" and row["exactly_once"] is None, row
    assert row["epochs"][0]["per_rank_samples"] == [8, 8]


def test_video_clips_on_one_and_two_ranks_each_exactly_once(tmp_path):
    pytest.importorskip("av")
    from sluice.video_data import make_videos
    data = tmp_path / "videos"
    make_videos(str(data), count=3, classes=1, frames=40, width=64, height=48, codec="h264", fps=30, gop=10,
                bframes=0, progress=False)
    rows = run("video_scaling.py", data, tmp_path, "--systems", "sluice-cpu", "--sequence-length", "4",
               "--stride", "2", "--batch-size", "2", "--out-size", "24x32", "--warmup", "1")
    for gpus in (1, 2):
        row = rows[("sluice-cpu", gpus)]
        assert "error" not in row, row
        # 40 frames, clips of 4 frames 2 apart, starts 8 apart: 5 clips a video.
        assert row["dataset_size"] == 15 and row["exactly_once"] is True, row
