#!/usr/bin/env bash
# On the GPU machine, which has no codec packages (libjpeg-turbo, libspng, libwebp) and no
# network: the wheel from `make wheel` installed into virtual environments and run there.
#   usage (device tool): bash scripts/device_wheel.sh   carry ["dist", ".venvwheels"] and NOT .deb
#   .venvwheels: NumPy for that machine's Python and nvidia-nvjpeg (pip download, here)
#   1. a clean venv (the wheel and NumPy only): a CPU loader on generated JPEGs;
#   2. a venv that also sees the machine's torch, the wheel with its [cuda] extra: a GPU loader, its
#      batches against the CPU loader's (decode_route="cpu": the same decoded pixels), and which
#      libnvjpeg the process mapped (the wheel's).
set -uo pipefail
python3 --version
nvidia-smi -L
echo "codec libraries known to the loader: $(ldconfig -p | grep -cE 'libspng|libwebp\.so|libjpeg\.so') (0: none installed)"
wheel=$(ls dist/sluice_loader-*manylinux*.whl) || exit 1
unset PYTHONPATH LD_LIBRARY_PATH

python3 -m venv /tmp/wv1 && /tmp/wv1/bin/pip install -q --no-index --find-links .venvwheels "$wheel" || exit 1
/tmp/wv1/bin/python - <<'PY'
import numpy as np, sluice, sluice.transforms as T
from sluice.datasets import make_dataset
make_dataset("/tmp/wv_data", num_images=64, num_classes=4, width=(96, 160), progress=False)
loader = sluice.Loader("/tmp/wv_data", [T.RandomResizedCrop(64), T.RandomHorizontalFlip(), T.ToTensor()],
                       batch_size=16, seed=1)
n = sum(len(y) for _, y in loader)
print(f"clean venv: sluice {sluice.__version__} from {sluice.__file__}: CPU loader {n} images, numpy {np.__version__}")
PY

# torch where the machine keeps it (a user site a venv does not see), through a .pth file.
torch_dir=$(python3 -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))") || exit 1
python3 -m venv /tmp/wv2 && echo "$torch_dir" > "$(/tmp/wv2/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/machine_torch.pth" &&
  /tmp/wv2/bin/pip install -q --no-index --find-links .venvwheels "$wheel[cuda]" || exit 1
/tmp/wv2/bin/python - <<'PY'
import torch, sluice, sluice.transforms as T
tf = [T.RandomResizedCrop(64), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)]
kw = dict(batch_size=16, seed=2, dtype="float32", dct_scaling=False)
cpu = sluice.Loader("/tmp/wv_data", tf, **kw)
gpu = sluice.Loader("/tmp/wv_data", tf, device="cuda", decode_route="cpu", **kw)
same = all(torch.equal(x.cpu(), cx) and torch.equal(y.cpu(), cy) for (x, y), (cx, cy) in zip(gpu, cpu, strict=True))
engines = sluice.Loader("/tmp/wv_data", tf, device="cuda", decode_route="hardware", **kw)
n = sum(len(y) for _, y in engines)
maps = {line.split()[-1] for line in open("/proc/self/maps") if "libnvjpeg" in line}
print(f"torch venv: GPU batches equal the CPU loader's: {same}; engine route {n} images; libnvjpeg mapped: {sorted(maps)}")
PY
