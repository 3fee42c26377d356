"""Without PyTorch the loader yields NumPy arrays (checked in a process where torch cannot import)."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import PYTHON_DIR

SCRIPT = r"""
import sys
sys.modules["torch"] = None  # import torch now raises ImportError
import numpy as np, sluice, sluice.transforms as T
loader = sluice.Loader(sys.argv[1], [T.RandomResizedCrop(24), T.Normalize([0.5]*3, [0.5]*3)],
                       batch_size=4, dtype="float16")
x, y = next(iter(loader))
assert isinstance(x, np.ndarray) and x.dtype == np.float16 and x.shape == (4, 3, 24, 24), x
assert isinstance(y, np.ndarray) and y.dtype == np.int64
try:
    sluice.Loader(sys.argv[1], [T.CenterCrop(8)], output="torch")
except ImportError as e:
    assert "needs PyTorch" in str(e)
else:
    raise AssertionError("output='torch' without torch must fail")
print("ok")
"""


def test_numpy_without_torch(small_folder):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    r = subprocess.run([sys.executable, "-c", SCRIPT, small_folder], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
