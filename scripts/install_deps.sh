#!/usr/bin/env bash
# Installs what sluice needs on a fresh Debian/Ubuntu machine, skipping what is already there.
#   system: a C++20 compiler, CMake, Ninja, pkg-config, libjpeg-turbo, libspng, libwebp, GoogleTest,
#           libcurl's header (libcurl itself is loaded at run time, for http:// shards), FFmpeg's
#           headers and libraries (libavformat, libavcodec, libavutil: loaded at run time, for video),
#           the ffnvcodec headers (NVDEC's declarations; the driver's library is loaded at run time)
#   Python: numpy, nanobind, scikit-build-core, pytest, pytest-timeout, Pillow, webdataset (the
#           tests read and write its shards), lightning (a test resumes a fit from its
#           checkpoint), matplotlib (sluice doctor's chart), torch (CPU pin), jax[cpu] (output="jax"),
#           and nvidia-nvjpeg (the nvJPEG header) where a CUDA compiler is installed
#   `install_deps.sh fuzz` also installs Clang and its libFuzzer runtime (make fuzz)
set -euo pipefail
PYTHON=${PYTHON:-python3}

apt_pkgs=(g++ make ninja-build libjpeg62-turbo-dev libspng-dev libwebp-dev libgtest-dev libcurl4-openssl-dev
          libavformat-dev libavcodec-dev libavutil-dev libffmpeg-nvenc-dev)
[ "${1:-}" = fuzz ] && apt_pkgs+=(clang libclang-rt-dev)
# Ubuntu names libjpeg-turbo's headers libjpeg-turbo8-dev.
if ! apt-cache show libjpeg62-turbo-dev >/dev/null 2>&1; then
  apt_pkgs=("${apt_pkgs[@]/libjpeg62-turbo-dev/libjpeg-turbo8-dev}")
fi
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v cmake >/dev/null 2>&1 || "$PYTHON" -m pip install -q cmake

py_missing=()
for mod in numpy:numpy nanobind:nanobind scikit_build_core:scikit-build-core pytest:pytest \
           pytest_timeout:pytest-timeout PIL:pillow webdataset:webdataset lightning:lightning \
           matplotlib:matplotlib av:av "jax:jax[cpu]"; do
  "$PYTHON" -c "import ${mod%%:*}" >/dev/null 2>&1 || py_missing+=("${mod##*:}")
done
# torch: pinned to 2.13.0, which this workplace serves as a CPU wheel (a bare `torch` from PyPI
# pulls gigabytes of CUDA libraries). Any torch already installed is kept.
"$PYTHON" -c "import torch" >/dev/null 2>&1 || py_missing+=("torch==${TORCH_VERSION:-2.13.0}")
# The CUDA path builds when nvcc is found; it needs nvjpeg.h, which a toolkit without nvJPEG
# lacks: the PyPI package carries it (and libnvjpeg.so.13).
if { command -v nvcc || [ -x /usr/local/cuda/bin/nvcc ]; } >/dev/null 2>&1 &&
   [ ! -f /usr/local/cuda/include/nvjpeg.h ] &&
   ! "$PYTHON" -c "import nvidia, os, sys; sys.exit(not any(os.path.exists(os.path.join(p, 'cu13/include/nvjpeg.h')) for p in nvidia.__path__))" >/dev/null 2>&1; then
  py_missing+=("nvidia-nvjpeg")
fi
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "install_deps: pip install ${py_missing[*]}"
  "$PYTHON" -m pip install -q "${py_missing[@]}"
fi
echo "install_deps: ok"
