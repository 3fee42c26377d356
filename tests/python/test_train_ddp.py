"""examples/train_ddp.py under torchrun (issue 4): real DDP training, 2 processes with gloo on the
CPU (and one process per GPU where two GPUs are present), checking from what each rank recorded
(loader.last_indices per step) that every epoch's union over ranks is the dataset exactly once,
that all ranks took the same number of steps, and that a job stopped mid-epoch and resumed on
another number of processes sees every remaining image exactly once.
"""
from __future__ import annotations

import collections
import glob
import json
import os
import subprocess
import sys

import pytest

from sluice import datasets

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "train_ddp.py")
NUM_IMAGES = 45


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("ddp_data"))
    datasets.make_dataset(root, num_images=NUM_IMAGES, num_classes=3, width=(96, 160), progress=False)
    return root


def torchrun(nproc: int, *args: str, timeout: int = 240) -> str:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           EXAMPLE, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
    return r.stdout


def records(folder: str) -> dict[int, list[dict]]:
    """rank -> its steps, as the example wrote them."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "rank*.jsonl"))):
        rank = int(os.path.basename(path)[4:-6])
        with open(path) as f:
            out[rank] = [json.loads(line) for line in f]
    return out


def per_epoch(steps_by_rank: dict[int, list[dict]]) -> dict[int, collections.Counter]:
    seen = collections.defaultdict(collections.Counter)
    for steps in steps_by_rank.values():
        for s in steps:
            seen[s["epoch"]].update(i for i, v in zip(s["indices"], s["valid"]) if v)
    return seen


def assert_exactly_once(counter: collections.Counter, what: str):
    repeated = sorted(i for i, c in counter.items() if c > 1)
    missing = sorted(set(range(NUM_IMAGES)) - set(counter))
    assert not repeated and not missing, f"{what}: repeated {repeated}, missing {missing}"


@pytest.mark.parametrize("last_batch", ["partial", "pad"])
def test_two_processes_see_every_image_once_per_epoch(data, tmp_path, last_batch):
    rec = str(tmp_path / "rec")
    out = torchrun(2, data, "--epochs", "2", "--batch-size", "4", "--size", "32", "--last-batch", last_batch,
                   "--record", rec, "--device", "cpu")
    assert "epoch 1: 45 images over 2 process(es)" in out, out
    steps = records(rec)
    assert sorted(steps) == [0, 1]
    # The same number of steps on both ranks (45 over 2 ranks at 4 per batch: 6 each per epoch).
    assert len(steps[0]) == len(steps[1]) == 12
    seen = per_epoch(steps)
    assert sorted(seen) == [0, 1]
    for epoch, counter in seen.items():
        assert_exactly_once(counter, f"epoch {epoch}")
    # A new permutation each epoch.
    assert [s["indices"] for s in steps[0] if s["epoch"] == 0] != [s["indices"] for s in steps[0] if s["epoch"] == 1]


def test_stop_and_resume_on_another_number_of_processes(data, tmp_path):
    ckpt, rec = str(tmp_path / "ckpt.pt"), str(tmp_path / "rec")
    common = [data, "--epochs", "2", "--batch-size", "4", "--size", "32", "--checkpoint", ckpt, "--record", rec,
              "--device", "cpu"]
    out = torchrun(2, *common, "--stop-after", "3")
    assert "stopped after step 3 (epoch 0)" in out, out
    before = per_epoch(records(rec))
    assert sum(before[0].values()) == 2 * 3 * 4  # 2 ranks x 3 steps x 4 images
    out = torchrun(3, *common, "--resume")
    after = records(rec)  # appended: the first run's steps and the resumed run's
    assert sorted(after) == [0, 1, 2]
    seen = per_epoch(after)
    assert_exactly_once(seen[0], "epoch 0, before and after the resume")
    assert_exactly_once(seen[1], "epoch 1, after the resume")
    assert "epoch 0: 21 images over 3 process(es)" in out, out  # the 45 - 24 left


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_one_process_per_gpu(data, tmp_path):
    rec = str(tmp_path / "rec")
    out = torchrun(2, data, "--epochs", "2", "--batch-size", "4", "--size", "32", "--record", rec,
                   "--device", "cuda")
    assert "epoch 1: 45 images over 2 process(es)" in out, out
    for epoch, counter in per_epoch(records(rec)).items():
        assert_exactly_once(counter, f"epoch {epoch}")
