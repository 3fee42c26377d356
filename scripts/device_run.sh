#!/usr/bin/env bash
# One call on the GPU machine: build with 16 cores (sm_90, from the Debian packages carried in
# .deb/: that machine has no libjpeg-turbo/libspng/libwebp/GoogleTest headers and no network),
# run the C++ and Python tests (the GPU ones included), make the two REFERENCE.md datasets, run
# the GPU benchmark (bench/gpu_bench.py) and the CPU one (bench/cpu_bench.py), print a table.
#   usage (device tool, carry [".deb"]):  bash scripts/device_run.sh [tests|bench|gpubench|all]
#   env: N (files per dataset, 4096), CORES (cpu_bench, 1,4,16), SECONDS_PER_ROW (8)
# Logs and JSON results go to $OUT (at most 8 files come back).
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/sluice-out}
mkdir -p "$OUT"
source scripts/device_env.sh
PY=$(command -v python3)
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
"$PY" -c "import torch, torchvision, PIL; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'PIL', PIL.__version__)"

t0=$(date +%s)
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSLUICE_BUILD_TESTS=ON -DSLUICE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY" >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
cmake --build build/gpu -j 16 >>"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -30; exit 1; }
echo "build: $(( $(date +%s) - t0 ))s"

summary=()
if [ "$what" = tests ] || [ "$what" = all ]; then
  ctest --test-dir build/gpu -j 16 --output-on-failure >"$OUT/ctest.log" 2>&1
  summary+=("ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")")
  "$PY" -m pytest -q -p no:cacheprovider -n 8 tests/python >"$OUT/pytest.log" 2>&1
  summary+=("pytest: $(tail -1 "$OUT/pytest.log")")
  grep -E "FAILED|Error" "$OUT/pytest.log" | head -20
fi
if [ "$what" != tests ]; then
  t1=$(date +%s)
  # A warm machine keeps the datasets of an earlier call.
  [ -f /tmp/data_a.done ] || { "$PY" -m sluice make-dataset /tmp/data_a -n "${N:-4096}" --preset imagenet --quiet | tee -a "$OUT/bench.log" && touch /tmp/data_a.done; }
  [ -f /tmp/data_b.done ] || { "$PY" -m sluice make-dataset /tmp/data_b -n "${N:-4096}" --preset small --quiet | tee -a "$OUT/bench.log" && touch /tmp/data_b.done; }
  echo "datasets: $(( $(date +%s) - t1 ))s"
  timeout "${GPUBENCH_TIMEOUT:-560}" "$PY" bench/gpu_bench.py /tmp/data_a /tmp/data_b --seconds "${SECONDS_PER_ROW:-8}" \
    --timeout 90 --json "$OUT/gpu.json" 2>&1 | tee -a "$OUT/gpubench.log" | grep -v "^  "
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  for d in a b; do
    "$PY" bench/cpu_bench.py /tmp/data_$d --cores "${CORES:-1,4,16}" --seconds "${SECONDS_PER_ROW:-6}" \
      --json "$OUT/cpu_$d.json" 2>&1 | tee -a "$OUT/bench.log"
  done
fi
printf '%s\n' "${summary[@]}"
