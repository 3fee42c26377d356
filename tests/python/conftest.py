"""Shared fixtures: small real datasets written by sluice's generator and by PIL."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The package under test: the tree's, or a sanitized build's copy (`make asan`).
PYTHON_DIR = os.environ.get("SLUICE_PYTHON_DIR", os.path.join(ROOT, "python"))
sys.path.insert(0, PYTHON_DIR)
# Set by `make asan`: the module runs under AddressSanitizer (tests that measure memory, limit
# the address space or preload another malloc skip).
SANITIZED = bool(os.environ.get("SLUICE_SANITIZED"))

from sluice import datasets  # noqa: E402

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402


def run_child(code: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter that imports sluice from this tree, with `env` added to
    the environment. One that does not finish in `timeout` s fails the test, with every thread's
    native stack where gdb is at hand (SLUICE_PROBE_GDB, as scripts/device_run.sh sets it)."""
    full_env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    full_env.update(env or {})
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=full_env)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        where = "no stacks: set SLUICE_PROBE_GDB to a gdb command line"
        if os.environ.get("SLUICE_PROBE_GDB"):
            sys.path.insert(0, os.path.join(ROOT, "bench"))
            from gpu_probe import stacks
            where = stacks(p.pid)
        p.kill()
        p.communicate()
        pytest.fail(f"the child process did not finish in {timeout:.0f} s; its threads:\n{where}")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def photo(width: int, height: int, seed: int = 0) -> np.ndarray:
    """A photo-like RGB test image (the dataset generator's synthesis)."""
    return datasets.synthesize(np.random.default_rng(seed), width, height)


def pil_bytes(img: "Image.Image", fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


@pytest.fixture(scope="session")
def small_folder(tmp_path_factory) -> str:
    """An ImageFolder of 3 classes x 5 JPEGs (120-200 px wide), made by the generator."""
    root = str(tmp_path_factory.mktemp("small_folder"))
    datasets.make_dataset(root, num_images=15, num_classes=3, width=(120, 200), progress=False)
    return root


@pytest.fixture(scope="session")
def imagenet_folder(tmp_path_factory) -> str:
    """48 ImageNet-like JPEGs (400-600 px, 4:4:4, q90-96) in 4 classes."""
    root = str(tmp_path_factory.mktemp("imagenet_folder"))
    datasets.make_dataset(root, num_images=48, num_classes=4, progress=False)
    return root
