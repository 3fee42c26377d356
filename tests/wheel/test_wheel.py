"""The built wheel, installed into a clean virtual environment (``scripts/wheel.sh test``): it
imports from there, its module needs no codec library outside the wheel, and a loader decodes
JPEG, PNG and WebP files there exactly as Pillow (run outside the venv) does.

Skipped unless SLUICE_WHEEL_PYTHON names the venv's interpreter."""
from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import pytest

PIL = pytest.importorskip("PIL.Image")
VENV_PYTHON = os.path.abspath(os.environ["SLUICE_WHEEL_PYTHON"]) if os.environ.get("SLUICE_WHEEL_PYTHON") else None
# The venv's own packages only: a PYTHONPATH pointing into the source tree (the Makefile's) is dropped.
VENV_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
pytestmark = pytest.mark.skipif(not VENV_PYTHON, reason="scripts/wheel.sh test sets SLUICE_WHEEL_PYTHON")

# What a manylinux wheel may take from the system (the C and C++ runtimes).
SYSTEM_LIBS = re.compile(r"^(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt|libz|ld-linux-x86-64|linux-vdso)\.so")

LOADER_SCRIPT = r"""
import sys
import numpy as np, sluice, sluice.transforms as T
from sluice.datasets import make_dataset
root, out = sys.argv[1], sys.argv[2]
make_dataset(root, num_images=12, num_classes=2, width=(64, 80), progress=False)
loader = sluice.Loader(root, [T.CenterCrop(32)], batch_size=5, dtype="uint8", layout="NHWC")
images, labels, paths = [], [], []
for x, y in loader:
    images.append(x); labels.append(y)
    paths += [loader.samples[i][0] for i in loader.last_indices]
np.savez(out, images=np.concatenate(images), labels=np.concatenate(labels), paths=np.array(paths))
try:
    next(iter(sluice.Loader([(root + "/truncated.jpg", 0)], [T.CenterCrop(8)], batch_size=1)))
except sluice.DecodeError as e:
    print("error:", e)
"""


def venv(*args: str, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run([VENV_PYTHON, *args], capture_output=True, text=True, timeout=300, env=VENV_ENV, **kw)
    assert r.returncode == 0, r.stderr
    return r


def test_imports_from_the_venv_not_the_tree():
    path = venv("-c", "import sluice; print(sluice.__file__)").stdout.strip()
    assert path.startswith(os.path.dirname(os.path.dirname(VENV_PYTHON))), path
    out = subprocess.run([os.path.join(os.path.dirname(VENV_PYTHON), "sluice"), "--version"],
                         capture_output=True, text=True, timeout=60, env=VENV_ENV)
    assert out.returncode == 0 and out.stdout.startswith("sluice "), out


def test_module_needs_no_codec_library_outside_the_wheel():
    module = venv("-c", "import sluice._core as c; print(c.__file__)").stdout.strip()
    ldd = subprocess.run(["ldd", module], capture_output=True, text=True, check=True).stdout
    bundled = []
    for line in ldd.splitlines():
        name = os.path.basename(line.strip().split(" ")[0])
        assert "not found" not in line, ldd
        if SYSTEM_LIBS.match(name):
            continue
        assert "sluice_loader.libs/" in line, f"{name} comes from outside the wheel:\n{ldd}"
        bundled.append(name)
    assert {n.split("-")[0] for n in bundled} == {"libjpeg", "libspng", "libwebp"}, ldd


def test_loader_in_the_venv_decodes_like_pillow(tmp_path):
    root, out = tmp_path / "data", tmp_path / "out.npz"
    root.mkdir()
    (root / "truncated.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(40))
    r = venv("-c", LOADER_SCRIPT, str(root), str(out))
    assert "truncated.jpg" in r.stdout, r.stdout  # the error names the file
    got = np.load(out)
    assert sorted(got["labels"].tolist()) == [0] * 6 + [1] * 6
    assert len(set(got["paths"].tolist())) == 12  # every file once
    for image, path in zip(got["images"], got["paths"]):
        ref = np.asarray(PIL.open(path).convert("RGB"))
        top, left = round((ref.shape[0] - 32) / 2), round((ref.shape[1] - 32) / 2)  # torchvision CenterCrop
        ref = ref[top:top + 32, left:left + 32]
        assert np.abs(image.astype(int) - ref).max() <= 1, path


@pytest.mark.parametrize("fmt", ["PNG", "WEBP"])
def test_png_and_webp_in_the_venv(tmp_path, fmt):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (40, 56, 3), dtype=np.uint8)
    path = tmp_path / f"image.{fmt.lower()}"
    PIL.fromarray(pixels).save(path, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    script = ("import sys, numpy as np, sluice, sluice.transforms as T\n"
              "x, _ = next(iter(sluice.Loader([(sys.argv[1], 0)], [T.CenterCrop((40, 56))], batch_size=1,"
              " dtype='uint8', layout='NHWC')))\n"
              "np.save(sys.argv[2], x[0])\n")
    venv("-c", script, str(path), str(tmp_path / "x.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), pixels)
