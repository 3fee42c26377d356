"""sluice doctor (issue 19) on the CPU path with real files: the verdict in constructed cases (a
model slow on purpose is model-bound, a loader throttled on purpose loader-bound), the marginal
cost of a transform made expensive on purpose, the chart, the JSON against the report, and the
command end to end."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import PYTHON_DIR

torch = pytest.importorskip("torch")
from PIL import Image  # noqa: E402

import sluice  # noqa: E402
import sluice.transforms as T  # noqa: E402
from sluice import datasets  # noqa: E402
from sluice.doctor import PARTS, advice, run_doctor  # noqa: E402
from sluice.doctor.models import resolve_model  # noqa: E402
from sluice.doctor.report import format_report  # noqa: E402

ENV = dict(os.environ, PYTHONPATH=PYTHON_DIR)
NORMALIZE = "T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)"
CHEAP = f"[T.RandomResizedCrop(32), T.RandomHorizontalFlip(), {NORMALIZE}]"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    """48 small JPEGs (120-200 px) in 4 classes, made by the generator."""
    root = str(tmp_path_factory.mktemp("doctor_folder"))
    datasets.make_dataset(root, num_images=48, num_classes=4, width=(120, 200), progress=False)
    return root


def cheap() -> list:
    return [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]


class Sleepy(torch.nn.Module):
    """A model slow on purpose: 80 ms a forward whatever the batch (8 images: at most 100/s)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)

    def forward(self, x):
        time.sleep(0.08)
        return self.fc(x.mean((2, 3)))


class Trivial(torch.nn.Module):
    """A model that costs next to nothing: a linear layer on the channel means."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)

    def forward(self, x):
        return self.fc(x.mean((2, 3)))


@pytest.fixture
def one_torch_thread():
    """torch's own ops on one thread: on a loaded 2-core machine its thread pool's workers, waiting
    for cores beside the loader's threads, added 10-35 ms to each training step (training read
    79-90% of the headspace, a "balanced" verdict), more than to the headspace's steps."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_a_slow_model_is_model_bound(folder, one_torch_thread):
    r = run_doctor(folder, cheap(), Sleepy(), batch_size=8, seconds=0.8, progress=False, skip=PARTS)
    assert r["verdict"]["verdict"] == "model-bound", r["verdict"]["reason"]
    assert r["headspace"]["images_per_s"] < 105
    assert r["loader"]["images_per_s"] > 3 * r["headspace"]["images_per_s"]
    assert r["training"]["idle_share"] < 0.1
    assert r["model"]["name"] == "Sleepy"


def test_a_throttled_loader_is_loader_bound(folder):
    def throttle(img):
        time.sleep(0.01)  # one compute thread: at most 100 images/s
        return img

    tf = [T.RandomResizedCrop(32), T.Lambda(throttle), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    r = run_doctor(folder, tf, Trivial(), batch_size=8, seconds=0.6, num_threads=1, progress=False, skip=PARTS)
    assert r["verdict"]["verdict"] == "loader-bound", r["verdict"]["reason"]
    assert r["loader"]["images_per_s"] < 110 and r["loader"]["num_threads"] == 1
    # Most of the training loop waits for the loader (0.42 on a GPU machine running 8 test
    # processes at once, which slow the model's step too; above 0.9 alone).
    assert r["training"]["idle_share"] > 0.3
    assert "training" in r["verdict"]["reason"] and r["verdict"]["loader_over_headspace"] < 0.9


def test_the_costly_transform_has_the_largest_marginal_cost(folder):
    def costly(img):
        time.sleep(0.004)
        return img

    tf = [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ColorJitter(0.2), T.Lambda(costly),
          T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    r = run_doctor(folder, tf, "none", batch_size=8, seconds=0.5, progress=False, skip=("stages", "tuning"))
    costs = r["transform_costs"]
    assert [c["name"] for c in costs] == ["RandomResizedCrop", "RandomHorizontalFlip", "ColorJitter",
                                          "Lambda(costly)", "Normalize"]
    assert "no fixed size" in costs[0]["skipped"]  # without the crop a batch would be a list
    measured = [c for c in costs if "skipped" not in c]
    top = max(measured, key=lambda c: c["marginal_ms_per_image"])
    assert top["name"] == "Lambda(costly)", costs
    assert top["marginal_ms_per_image"] > 2 and top["gain"] > 0.5
    assert r["verdict"]["verdict"] is None  # no model: nothing to compare the loader with
    assert any("Lambda(costly)" in rec["change"] for rec in r["recommendations"]), r["recommendations"]
    report = format_report(r)
    assert "3. Lambda(costly) (most)" in report and "skipped: without it the images have no fixed size" in report


def test_verdict_thresholds():
    h, lo = {"images_per_s": 1000.0}, {"images_per_s": 1050.0}
    tr = {"images_per_s": 980.0, "idle_share": 0.02}
    assert advice.verdict(h, lo, tr)["verdict"] == "balanced"  # within 10%
    assert advice.verdict(h, {"images_per_s": 850.0}, tr)["verdict"] == "loader-bound"
    assert advice.verdict(h, {"images_per_s": 2000.0}, tr)["verdict"] == "model-bound"
    shared = advice.verdict(h, {"images_per_s": 2000.0}, {"images_per_s": 600.0, "idle_share": 0.0})
    assert shared["verdict"] == "balanced" and "share the machine" in shared["reason"]
    assert advice.verdict(None, lo, None)["verdict"] is None


def test_a_recommendation_needs_two_runs_that_beat_the_current_settings():
    def result(alt_runs):
        now = {"num_threads": 2, "prefetch": 2, "images_per_s": 102.0, "runs": [100.0, 104.0]}
        alt = {"num_threads": 4, "prefetch": 2, "images_per_s": sum(alt_runs) / len(alt_runs), "runs": alt_runs}
        tuning = {"measured_with": "loader + model", "threads": [now, alt], "prefetch": [now]}
        return {"tuning": tuning, "verdict": {"verdict": "model-bound"}, "transform_costs": None}

    assert advice.recommendations(result([140.0]))[0] == []  # one lucky run is not enough
    assert advice.recommendations(result([140.0, 112.0]))[0] == []  # 112 is 8% over 104
    (rec,), _ = advice.recommendations(result([140.0, 125.0]))
    assert rec["change"] == "num_threads=4" and rec["gain"] == pytest.approx(125 / 104 - 1)
    assert "140 and 125 images/s in two runs" in rec["measured"]


def test_model_from_a_file_and_bad_models(tmp_path):
    f = tmp_path / "net.py"
    f.write_text("import torch\n\ndef make():\n    return torch.nn.Linear(3, 2)\n\nnot_a_model = 3\n")
    choice = resolve_model(f"@{f}:make", 4)
    assert choice.name == "make" and isinstance(choice.module, torch.nn.Linear)
    with pytest.raises(TypeError, match="expected a torch.nn.Module"):
        resolve_model(f"@{f}:not_a_model", 4)
    with pytest.raises(ValueError, match="expected one of resnet18, resnet50, tiny, none"):
        resolve_model("vgg", 4)
    assert resolve_model("none", 4).module is None
    assert resolve_model("tiny", 4).module(torch.zeros(2, 3, 32, 32)).shape == (2, 4)


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "sluice", "doctor", *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=300)


# A figure of the report: a number not inside a word ("resnet18", "32x32"); "6.2x" counts.
FIGURE = re.compile(r"(?<![\w.])([-+]?\d[\d,]*(?:\.\d+)?)(?=x\b|[^\w]|$)")


def _numbers(obj) -> list[float]:
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return []
    if isinstance(obj, (int, float)):
        return [float(obj)]
    items = obj.values() if isinstance(obj, dict) else obj
    return [v for x in items for v in _numbers(x)]


def assert_json_holds_every_figure(report: str, result: dict) -> None:
    """Every number the report prints is a number of the JSON as printed (rounded to the digits
    shown), or a stored fraction as a percentage."""
    for path in (result["data"], result["json"], (result["chart"] or {}).get("path")):
        if path:
            report = report.replace(path, "")
    values = _numbers(result)
    figures = FIGURE.findall(report)
    assert len(figures) > 30
    for text in figures:
        x = float(text.replace(",", ""))
        tol = 0.5 * 10 ** -len(text.partition(".")[2]) + 1e-9
        assert any(abs(v - x) <= tol or abs(100 * v - x) <= tol for v in values), f"{text} is not in the JSON"


def test_cli_with_the_tiny_model_end_to_end(folder, tmp_path):
    r = run_cli(folder, "--model", "tiny", "--seconds", "0.4", "--batch-size", "8", "--transform", CHEAP, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "doctor [" in r.stderr  # the progress bar
    out = r.stdout
    result = json.loads((tmp_path / "doctor.json").read_text())  # the default paths
    assert result["json"] == "doctor.json" and result["chart"]["path"] == "doctor.png"
    assert result["model"]["name"] == "tiny" and result["verdict"]["verdict"] in ("loader-bound", "model-bound",
                                                                                   "balanced")
    assert f"verdict: {result['verdict']['verdict']}: " in out and "model: tiny" in out
    for label in ("model step alone (headspace)", "loader alone", "training: loader + model", "read, cold",
                  "read, warm", "decode, CPU", "transform list", "collate", "copy to GPU", "consumer wait"):
        assert f"| {label}" in out, label
    assert "n/a: --device cpu" in out and "recommendations (each from a measurement" in out
    assert {"num_threads", "prefetch"} <= {k for row in result["tuning"]["threads"] + result["tuning"]["prefetch"]
                                           for k in row}
    assert len(result["training"]["timeline"]) == result["training"]["steps"] >= 2
    with Image.open(tmp_path / "doctor.png") as im:
        assert im.format == "PNG"
        assert im.size == (result["chart"]["width_px"], result["chart"]["height_px"]) == (1200, 800)
        im.verify()
    assert "wrote doctor.png (1200x800 px)" in out
    assert_json_holds_every_figure(out, result)


def test_cli_with_no_model(folder, tmp_path):
    js, png = tmp_path / "out" / "d.json", tmp_path / "d.png"
    js.parent.mkdir()
    r = run_cli(folder, "--model", "none", "--seconds", "0.3", "--batch-size", "8", "--transform", CHEAP,
                "--json", str(js), "--chart", str(png), "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "doctor [" not in r.stderr
    result = json.loads(js.read_text())
    assert result["headspace"] is None and result["training"] is None and result["verdict"]["verdict"] is None
    assert result["tuning"]["measured_with"] == "loader alone"
    assert "verdict: none: no model step (--model none)" in r.stdout
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size == (1200, 800)
    assert_json_holds_every_figure(r.stdout, result)


def test_a_bad_data_path_is_one_clear_line(tmp_path):
    missing = tmp_path / "no_such_data"
    r = run_cli(str(missing), "--model", "none", "--quiet", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr == f"sluice doctor: error: DATA {missing}: no such directory (an ImageFolder root: one " \
                       "sub-folder of images per class)\n"
    assert not (tmp_path / "doctor.json").exists()


def test_without_matplotlib_the_json_is_written_and_the_chart_skipped(folder, tmp_path, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    js, png = tmp_path / "d.json", tmp_path / "d.png"
    r = run_doctor(folder, cheap(), "none", batch_size=8, seconds=0.2, progress=False, skip=PARTS,
                   json_path=str(js), chart_path=str(png))
    assert r["chart"]["path"] is None and "matplotlib is not installed" in r["chart"]["skipped"]
    assert json.loads(js.read_text())["loader"]["images_per_s"] > 0 and not png.exists()
    assert "no chart: matplotlib is not installed" in format_report(r)


def test_gpu_kernel_stages_get_no_rate():
    """On the GPU path the transforms and the collate run in the batch's kernels: the host threads'
    time is not their cost, so the report gives them no images/s (a rate of 10^8 was printed)."""
    from sluice.doctor import stages
    run = {"stage_ms_per_image": {"read": 0.2, "decode": 0.5, "transform": 0.0001, "collate": 0.03},
           "io_threads": 4, "num_threads": 12}
    gpu, cpu = stages.stage_rates(run, cuda=True), stages.stage_rates(run)
    assert gpu["transform"]["images_per_s"] is None and "fused kernels" in gpu["transform"]["note"]
    assert gpu["collate"]["images_per_s"] is None
    assert gpu["decode"]["images_per_s"] == pytest.approx(12 / 0.5e-3)
    assert cpu["collate"]["images_per_s"] == pytest.approx(12 / 0.03e-3)
