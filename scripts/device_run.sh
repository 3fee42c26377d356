#!/usr/bin/env bash
# One call on the GPU machine: build with 16 cores (sm_90, from the Debian packages carried in
# .deb/: that machine has no libjpeg-turbo/libspng/libwebp/GoogleTest headers and no network),
# run the C++ and Python tests (the GPU ones included), make the benchmark datasets (a) and (b), run
# the GPU benchmark (bench/gpu_bench.py) and the CPU one (bench/cpu_bench.py), print a table.
#   usage (device tool, carry [".deb", ".whl"]):  bash scripts/device_run.sh [tests|bench|gpubench|probe|capacity|hunt|multigpu|shards|video|videobench|all]
#   env: N (files per dataset, 4096), CORES (cpu_bench, 1,4,16), SECONDS_PER_ROW (8)
#   probe: builds the Python module only and runs bench/gpu_probe.py on the datasets in
#   PROBE_DATASETS ("a") with the configurations in PROBE (separated by spaces; see that script),
#   after the engines' bare loop at the images per engine in ENGINE_WIDTHS (e.g. 16,32,37), if set.
#   capacity: bench/engine_capacity.py on the datasets in PROBE_DATASETS ("a b"): the engines'
#   bare loop on 1, 2 and 3 handles, their calls taking turns or overlapping (SECONDS_PER_ROW).
#   multigpu (a machine with 2+ GPUs, issue 21): the tests, then `scaling`.
#   scaling: bench/scaling_bench.py on a VOC-like dataset (21,453 files, N_VOC) with 1, 2 and 4
#   GPUs (GPUS), sluice against DALI and the DataLoader (SYSTEMS, ROUTE: one or more routes,
#   JOB_TIMEOUT); each job's stderr in $OUT, gdb stacks of the ranks of a job that hangs; then,
#   with EPOCHS20 (GPU counts, e.g. "2 4"), 20 epochs of sluice `auto`, each checked
#   (SCALING_MAIN=0: those only). SCALING_VARIANTS: one run per set of experiment knobs (below).
#   SCALING_ARGS="--epochs 4 --warmup-seconds 6": untimed epochs until 6 s, the same at every count.
#   scalingfree: scaling's 1-GPU job alone, then one per GPU at once (no NCCL; see below).
#   videoscaling: bench/video_scaling.py on videobench's videos: sluice on NVDEC (whole epochs),
#   then VS_SLOW (default dali,sluice-cpu; torchcodec needs its wheel) cut at VS_MAX_BATCHES
#   (25) batches per rank. JOB_TIMEOUT (120 s): a job that hangs costs no more.
#   DALI rows need `bash .peer/peer_wheels.sh install` first. `prepare` with VOC=1 and
#   SEED_VIDEOS=1 makes both datasets in the background.
#   shards (issue 17; after `prepare` in the call before): the tests of shards and the GPU
#   path (ctest; pytest on the webdataset, pack and GPU files), then bench/shard_bench.py on
#   dataset (a) with nginx from .deb/nginx (SHARD_ROWS: substrings of the rows to run; SHARD_ARGS:
#   more options, e.g. "--lanes 8"; SHARD_TAG: a suffix for the JSON's name; SHARD_TESTS=0: no tests).
#   doctor: `sluice doctor` on (a), seed pipeline, ResNet-50, on the GPU (report, JSON, chart).
#   tunebench: bench/tune_bench.py (the tuner against the defaults and a sweep; TUNE_DEVICE=cuda: the GPU path;
#   TUNE_CONFIRM=N: then N rounds of the tuner beside the best swept setting run again).
#   video: the C++ tests and the video tests (NVDEC against the CPU decode); carry .ffmpeg too
#   (scripts/build_device_ffmpeg.sh: the machine has no FFmpeg) and PyAV in .whl.
#   videobench: bench/video_bench.py on the seed experiment's videos (see below).
#   soak: bench/soak.py on a 2,048-file ImageNet-like set, 100 epochs (EPOCHS), batch 256, on the
#   GPU for each route in SOAK_ROUTES (auto) and on the CPU; one JSON per run in $OUT. SOAK_DATA=voc:
#   the VOC-like set instead (made by `prepare` with VOC=1), SOAK_ARGS: more options (e.g.
#   "--resize 640 --batch-size 32 --stall-ms 3"; the last --batch-size given wins), SOAK_TAG: a
#   suffix for the JSON's name.
#   prepare / compare (issue 14: a change that must not change speed): see below; OLD=.old.
#   scalingcompare: the multi-GPU experiment for this tree and older ones (OLDS); see below.
#   Carry .old in the prepare call only: a later call that carries it again replaces the built
#   copy there with the bare one here, and the old rows fail to import sluice._core.
# Logs and JSON results go to $OUT (at most 8 files come back).
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/sluice-out}
[ "$what" = prepare ] && OUT=/tmp/sluice-prepare  # a later call empties its own $OUT
mkdir -p "$OUT"
source scripts/device_env.sh
PY=$(command -v python3)
nproc; lscpu 2>/dev/null | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|L3 cache)' | tr -s ' ' | paste -sd ';'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
"$PY" -c "import torch, torchvision, PIL; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'PIL', PIL.__version__)"

# A build in the background (prepare) can find a source file missing for a moment while the
# device tool copies the working tree again for the next call (five calls back to back bringing
# DALI's parts did that twice in a row): then it builds again, up to 5 times, 20 s apart.
#   usage: build_retrying LOG DIR [cmake --build options]
build_retrying() {
  local log=$1 dir=$2 k rc; shift 2
  for k in 1 2 3 4 5; do
    cmake --build "$dir" -j "$(nproc)" "$@" >"$log.try" 2>&1; rc=$?
    cat "$log.try" >>"$log"
    [ $rc = 0 ] && return 0
    grep -q "No such file or directory" "$log.try" || return 1
    echo "build: a file was missing (the tree being copied again?); again in 20 s ($k)" >>"$log"
    sleep 20
  done
  return 1
}

# Builds the tree in $1 (this one, or OLD) into $1/$2 with 16 cores; logs to $OUT/build_<name>.log.
build_tree() {
  local tree=$1 dir=$2 type=$3 name=$4 t0; t0=$(date +%s)
  local target=(); { [ "$what" = probe ] || [ "$what" = hunt ] || [ "$what" = scaling ] || [ "$what" = scalingfree ] || [ "$what" = tunebench ] || [ "$what" = doctor ] ||
    [ -n "${CORE_ONLY:-}" ]; } && target=(--target _core)
  (cd "$tree" &&
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DCMAKE_CUDA_ARCHITECTURES=90 -DSLUICE_BUILD_TESTS=ON \
      -DSLUICE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY" >"$OUT/build_$name.log" 2>&1 &&
    rm -f python/sluice/_core*.so &&  # both build dirs write it: relink it from this one
    build_retrying "$OUT/build_$name.log" "$dir" "${target[@]}") ||
    { grep -E "error|Error" "$OUT/build_$name.log" | head -30; return 1; }
  echo "build $name: $(( $(date +%s) - t0 ))s"
}

# Datasets (a) and (b), kept by a warm machine.
make_datasets() {  # DATASETS: which ("a b" by default)
  case " ${DATASETS:-a b} " in *" a "*)
    [ -f /tmp/data_a.done ] || { "$PY" -m sluice make-dataset /tmp/data_a -n "${N:-4096}" --preset imagenet --quiet && touch /tmp/data_a.done; } ;;
  esac
  case " ${DATASETS:-a b} " in *" b "*)
    [ -f /tmp/data_b.done ] || { "$PY" -m sluice make-dataset /tmp/data_b -n "${N:-4096}" --preset small --quiet && touch /tmp/data_b.done; } ;;
  esac
}

# The seed experiment's videos for videobench (kept by a warm machine; see there).
make_seed_videos() {
  [ -f /tmp/seed.done ] || { "$PY" bench/video_bench.py /tmp/seed --make 173 --distinct "${VB_DISTINCT:-16}" \
    --speed "${VB_SPEED:-veryfast}" --frames 300 --size 1920x1080 --make-only >"$OUT/seed_videos.log" 2>&1 &&
    touch /tmp/seed.done; }
}

# The VOC-like images of the scaling experiment (kept by a warm machine).
make_voc() {
  [ -f /tmp/data_voc.done ] || { "$PY" -m sluice make-dataset /tmp/data_voc -n "${N_VOC:-21453}" --preset voc \
    --classes 20 --quiet >"$OUT/voc.log" 2>&1 && touch /tmp/data_voc.done; }
}

# prepare (run it in the background with setsid): this tree's build, the datasets, and OLD's build
# when OLD names another tree (a `git archive` of the commit before a change, carried), and with
# SEED_VIDEOS=1 videobench's videos; markers in /tmp tell a later call what is done.
if [ "$what" = prepare ]; then
  if build_tree . build/gpu Release new; then touch /tmp/built_new; else touch /tmp/built_new.failed; fi
  # The datasets need the built module (sluice make-dataset).
  [ -f /tmp/built_new ] && [ -n "${DATASETS-a b}" ] && make_datasets && touch /tmp/datasets.done
  [ -n "${VOC:-}" ] && make_voc
  [ -n "${SEED_VIDEOS:-}" ] && make_seed_videos
  if [ -n "${OLD:-}" ]; then build_tree "$OLD" build/gpu Release old || echo "the build of $OLD failed"; fi
  for t in ${OLDS:-}; do build_tree "$t" build/gpu Release "old_${t//\//_}" || echo "the build of $t failed"; done
  touch /tmp/prepared
  exit 0
fi
wait_for() {  # a marker file ($1, or $1.failed); at most ${2:-560} s
  local waited=0
  while [ ! -f "$1" ] && [ ! -f "$1.failed" ] && [ $waited -lt "${2:-560}" ]; do sleep 2; waited=$((waited + 2)); done
  [ -f "$1" ]
}
prepare_done() {  # waits for a `prepare` started in an earlier call, if one was
  if [ -f /tmp/built_new ] || [ -f /tmp/built_new.failed ] || pgrep -f "device_run.sh prepare" >/dev/null; then
    wait_for /tmp/prepared
  fi
}
if [ -f /tmp/built_new ] || [ -f /tmp/built_new.failed ] || pgrep -f "device_run.sh prepare" >/dev/null; then
  wait_for /tmp/built_new || { echo "the background build failed"; tail -30 /tmp/sluice-prepare/build_new.log; exit 1; }
elif [ "$what" = probe ] || [ "$what" = hunt ]; then
  build_tree . build/probe RelWithDebInfo probe || exit 1  # symbols for gdb
else
  build_tree . build/gpu Release new || exit 1
fi

# compare: the GPU benchmark's sluice rows (ROWS) on (a) and (b) for this tree and for OLD, in
# turns (new, old, new, old: ROUNDS rounds), so that the difference between the two trees reads
# against the run-to-run difference of each (DATASETS: the datasets, (a) and (b)). Waits for prepare.
if [ "$what" = compare ]; then
  wait_for /tmp/prepared || { echo "prepare did not finish"; exit 1; }
  for round in $(seq "${ROUNDS:-2}"); do
    trees=(. "$OLD"); [ $((round % 2)) = 0 ] && trees=("$OLD" .)  # the order alternates
    for tree in "${trees[@]}"; do
      name=new; [ "$tree" = . ] || name=old
      (cd "$tree" && PYTHONPATH=$PWD/python timeout 280 "$PY" bench/gpu_bench.py ${DATASETS:-/tmp/data_a /tmp/data_b} \
        --seconds "${SECONDS_PER_ROW:-6}" --timeout 90 --rows "${ROWS:-sluice GPU auto,sluice GPU hardware,sluice CPU}" \
        --json "$OUT/compare_${name}_$round.json" 2>&1 | grep -E "^\|" | sed "s/^/$name $round /")
    done
  done
  exit 0
fi

# scalingcompare (a regression hunt on the multi-GPU experiment): this tree (once per value in
# PREFETCHES, "0": its default) and each tree in OLDS (`git archive`s of earlier commits unpacked
# under .old/, built by `prepare` with OLDS set; their defaults), each through this tree's
# bench/scaling_bench.py (copied into it, so all use one method) with the route ROUTE (hardware)
# on GPUS (1,2); CUDA_DEVICE_MAX_CONNECTIONS=32 for all (older trees do not set it).
if [ "$what" = scalingcompare ]; then
  wait_for /tmp/prepared || { echo "prepare did not finish"; exit 1; }
  make_voc
  export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
  runs=(); for p in ${PREFETCHES:-0}; do runs+=(".:$p"); done
  for t in ${OLDS:-}; do runs+=("$t:0"); done
  for run in "${runs[@]}"; do
    tree=${run%:*} prefetch=${run##*:}
    name=new_p$prefetch; [ "$tree" = . ] || name=${tree//\//_}
    [ "$tree" = . ] || cp bench/scaling_bench.py bench/torchrun_jobs.py bench/torchrun_launch.py "$tree/bench/"
    (cd "$tree" && timeout "${SCALING_TIMEOUT:-300}" "$PY" bench/scaling_bench.py /tmp/data_voc --gpus "${GPUS:-1,2}" \
      --systems sluice --decode-route "${ROUTE:-hardware}" --prefetch "$prefetch" --timeout "${JOB_TIMEOUT:-90}" \
      --json "$OUT/cmp_$name.json" 2>&1 | grep -E "^\| sluice" | sed "s/^/$name /")
  done
  exit 0
fi

# tunebench (issue 19): bench/tune_bench.py, the CPU path's tuner against the defaults and a sweep
# of threads x prefetch, on (a) and (b) with the consumers in TUNE_CONSUMERS_A / TUNE_CONSUMERS_B.
if [ "$what" = tunebench ]; then  # TUNE_DATASETS: which of (a) and (b) ("a b")
  DATASETS=${TUNE_DATASETS:-a b} make_datasets
  for d in ${TUNE_DATASETS:-a b}; do
    cv="TUNE_CONSUMERS_${d^^}"
    timeout "${TUNE_TIMEOUT:-500}" "$PY" bench/tune_bench.py /tmp/data_$d --consumers "${!cv:-none}" \
      --threads "${TUNE_THREADS:-4,8,12,16}" --prefetch "${TUNE_PREFETCH:-2,4}" --seconds "${SECONDS_PER_ROW:-4}" \
      --repeats "${TUNE_REPEATS:-1}" --device "${TUNE_DEVICE:-cpu}" --warmup "${TUNE_WARMUP:-0}" \
      --confirm "${TUNE_CONFIRM:-0}" \
      --json "$OUT/tune_$d.json" 2>&1 | tee -a "$OUT/tune.log"
  done
  exit 0
fi

# doctor (issue 19): `sluice doctor` on dataset (a) with the seed pipeline and ResNet-50 on the GPU
# (DOCTOR_ARGS adds or overrides options); the report, its JSON and its chart in $OUT.
if [ "$what" = doctor ]; then
  DATASETS=a make_datasets
  seed="[T.Resize(268), T.RandomRotation(20), T.RandomCrop(224), T.RandomHorizontalFlip(), T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3), T.Cutout()]"
  timeout "${DOCTOR_TIMEOUT:-480}" "$PY" -m sluice doctor /tmp/data_a --model resnet50 --device cuda --batch-size 256 \
    --transform "$seed" --seconds "${SECONDS_PER_ROW:-2}" --json "$OUT/doctor.json" --chart "$OUT/doctor.png" --quiet \
    ${DOCTOR_ARGS:-} 2>&1 | tee "$OUT/doctor.txt"
  exit 0
fi

if [ "$what" = soak ]; then
  data=/tmp/data_soak
  if [ "${SOAK_DATA:-}" = voc ]; then prepare_done; make_voc; data=/tmp/data_voc; fi
  [ $data != /tmp/data_soak ] || [ -f /tmp/data_soak.done ] ||
    { "$PY" -m sluice make-dataset /tmp/data_soak -n 2048 --preset imagenet --quiet && touch /tmp/data_soak.done; }
  for route in ${SOAK_ROUTES:-auto}; do
    echo "== GPU, decode_route=$route ${SOAK_ARGS:-}"
    "$PY" bench/soak.py $data --epochs "${EPOCHS:-100}" --batch-size 256 --device cuda \
      --decode-route "$route" --json "$OUT/soak_gpu_$route${SOAK_TAG:-}.json" ${SOAK_ARGS:-} 2>&1 | tail -"${SOAK_LINES:-4}"
  done
  [ "${SOAK_CPU:-1}" = 1 ] && { echo "== CPU"; "$PY" bench/soak.py $data --epochs "${EPOCHS:-100}" \
    --batch-size 256 --json "$OUT/soak_cpu.json" 2>&1 | tail -"${SOAK_LINES:-4}"; }
  exit 0
fi

if [ "$what" = video ]; then  # (issue 20) the C++ tests, and the video tests (NVDEC against the CPU)
  ctest --test-dir build/gpu -j 16 --output-on-failure >"$OUT/ctest.log" 2>&1
  echo "ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
  "$PY" -m pytest -q -p no:cacheprovider -n 8 -rs tests/python/test_video_decode.py tests/python/test_videos.py \
    tests/python/test_make_videos.py >"$OUT/pytest.log" 2>&1
  echo "pytest: $(tail -1 "$OUT/pytest.log")"
  grep -E "^FAILED|^ERROR|^SKIPPED|Error" "$OUT/pytest.log" | head -30
  exit 0
fi

# videobench (issue 20): the seed experiment, bench/video_bench.py on 173 videos of 300 frames at
# 1080p H.264 (VB_DISTINCT of them encoded with x264 preset VB_SPEED, the rest copies: encoding all
# would take ~12 minutes of the machine), clips of 16 frames, batch 8, 640x360, for each stride in
# VB_STRIDES; rows VB_SYSTEMS (VB_SYSTEMS_1 for stride 1), at most VB_MAX_CLIPS clips each. DALI
# rows need `bash .peer/peer_wheels.sh install` first (carried in parts, see that script).
if [ "$what" = videobench ]; then
  wait_for /tmp/prepared 500 || make_seed_videos
  export PYTHONPATH=$PYTHONPATH:/tmp/peer-site LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
  for stride in ${VB_STRIDES:-2 1}; do
    systems=${VB_SYSTEMS:-sluice-cuda,sluice,dali,dali:8,pyav:8,pyav:16,torchcodec:16,torchcodec-cuda}
    [ "$stride" = 1 ] && systems=${VB_SYSTEMS_1:-sluice-cuda,sluice,dali,pyav:16}
    timeout "${VB_TIMEOUT:-500}" "$PY" bench/video_bench.py /tmp/seed --make 173 --distinct "${VB_DISTINCT:-16}" \
      --speed "${VB_SPEED:-veryfast}" --frames 300 --size 1920x1080 --sequence-length 16 --stride "$stride" \
      --batch-size 8 --out-size 360x640 --threads 16 --max-clips "${VB_MAX_CLIPS:-400}" --timeout "${VB_ROW_TIMEOUT:-120}" \
      --systems "$systems" ${VB_ARGS:-} --json "$OUT/video_stride$stride.json" 2>&1 | tee -a "$OUT/videobench.log" |
      grep -v "^  "
  done
  exit 0
fi

if [ "$what" = shards ]; then
  if [ "${SHARD_TESTS:-1}" = 1 ]; then
    ctest --test-dir build/gpu -j 16 --output-on-failure >"$OUT/ctest.log" 2>&1
    echo "ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
    "$PY" -m pytest -q -p no:cacheprovider -n 8 tests/python/test_webdataset.py tests/python/test_webdataset_stream.py \
      tests/python/test_pack.py tests/python/test_gpu.py tests/python/test_shards.py >"$OUT/pytest.log" 2>&1
    echo "pytest: $(tail -1 "$OUT/pytest.log")"
    grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -20
  fi
  wait_for /tmp/datasets.done || { echo "the datasets were not made"; exit 1; }
  nginx=$PWD/.deb/nginxroot/usr/sbin/nginx
  [ -x "$nginx" ] || nginx=
  timeout "${SHARDBENCH_TIMEOUT:-420}" "$PY" bench/shard_bench.py /tmp/data_a --seconds "${SECONDS_PER_ROW:-6}" \
    --timeout 90 ${nginx:+--nginx "$nginx"} ${SHARD_ROWS:+--rows "$SHARD_ROWS"} ${SHARD_ARGS:-} \
    --json "$OUT/shards${SHARD_TAG:-}.json" 2>&1 | tee -a "$OUT/shards.log" | grep -v "^  "
  exit 0
fi

summary=()
if [ "$what" = tests ] || [ "$what" = all ] || [ "$what" = multigpu ]; then
  ctest --test-dir build/gpu -j 16 --output-on-failure >"$OUT/ctest.log" 2>&1
  summary+=("ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")")
  "$PY" -m pytest -q -p no:cacheprovider -n 8 tests/python >"$OUT/pytest.log" 2>&1
  summary+=("pytest: $(tail -1 "$OUT/pytest.log")")
  grep -E "FAILED|Error" "$OUT/pytest.log" | head -20
fi
if [ "$what" = probe ] || [ "$what" = hunt ] || [ "$what" = scaling ] || [ "$what" = multigpu ]; then
  # gdb (carried in .deb/gdb) prints every thread's stack when a configuration hangs.
  if [ -d .deb/gdb ]; then
    rm -rf /tmp/gdbroot && mkdir -p /tmp/gdbroot && for f in .deb/gdb/*.deb; do dpkg -x "$f" /tmp/gdbroot; done
    export SLUICE_PROBE_GDB="env LD_LIBRARY_PATH=/tmp/gdbroot/usr/lib/x86_64-linux-gnu:/tmp/gdbroot/lib/x86_64-linux-gnu /tmp/gdbroot/usr/bin/gdb"
  fi
fi
if [ "$what" = probe ]; then
  [ -f /tmp/built_new ] && { wait_for /tmp/prepared || { echo "prepare did not finish"; exit 1; }; }
  DATASETS=${PROBE_DATASETS:-a} make_datasets
  read -r -a configs <<<"${PROBE:-route=hardware route=auto}"
  args=(); for c in "${configs[@]}"; do args+=(--config "$c"); done
  for d in ${PROBE_DATASETS:-a}; do
    echo "== dataset ($d)" | tee -a "$OUT/probe.log"
    [ -n "${ENGINE_WIDTHS:-}" ] && "$PY" bench/gpu_probe.py /tmp/data_$d --seconds 3 --engine-widths "$ENGINE_WIDTHS" 2>&1 | tee -a "$OUT/probe.log"
    "$PY" bench/gpu_probe.py /tmp/data_$d --seconds "${SECONDS_PER_ROW:-5}" "${args[@]}" 2>&1 | tee -a "$OUT/probe.log"
  done
  exit 0
fi
if [ "$what" = capacity ]; then
  [ -f /tmp/built_new ] && { wait_for /tmp/prepared || { echo "prepare did not finish"; exit 1; }; }
  DATASETS=${PROBE_DATASETS:-a b} make_datasets
  for d in ${PROBE_DATASETS:-a b}; do
    "$PY" bench/engine_capacity.py /tmp/data_$d --seconds "${SECONDS_PER_ROW:-5}" --json "$OUT/capacity_$d.json" 2>&1 | tee -a "$OUT/capacity.log"
  done
  exit 0
fi
# hunt: tests/python/test_gpu.py HUNT_ROUNDS times (5), with the experiment knobs in HUNT_ENV (e.g.
# SLUICE_ENGINE_WAIT=0, with which a loader hung now and then on a fresh machine): a child that hangs
# fails its test with every thread's native stack (gdb), in $OUT/hunt<round>.log.
# With HANG_VARIANTS (e.g. "nowait:120:SLUICE_ENGINE_WAIT=0 sleep:45 default:120:"), scripts/hang_loop.py
# runs instead: the trace test's child, 8 at a time, per variant.
if [ "$what" = hunt ]; then
  if [ -n "${HANG_VARIANTS:-}" ]; then OUT="$OUT" "$PY" scripts/hang_loop.py $HANG_VARIANTS; exit 0; fi
  for r in $(seq "${HUNT_ROUNDS:-5}"); do
    env ${HUNT_ENV:-} timeout 300 "$PY" -m pytest -q -p no:cacheprovider -n 8 tests/python/test_gpu.py >"$OUT/hunt$r.log" 2>&1
    echo "round $r: rc $? $(tail -1 "$OUT/hunt$r.log")"
    grep -E "^FAILED|^ERROR" "$OUT/hunt$r.log" | head -5
  done
  exit 0
fi
# augbench: the seed pipeline (Resize, RandomRotation, RandomCrop, flip, ColorJitter, Normalize,
# Cutout) against the DataLoader (16 workers) on dataset (a), and Cutout built-in / BatchLambda /
# Lambda (bench/augment_bench.py). Env: SECONDS_PER_ROW (8), ROW_TIMEOUT (90), AUGBENCH_ARGS
# (e.g. --routes). Expected: build (as gpubench; seconds when warm) + dataset (a) (~40 s, kept
# by a warm machine) + 5 rows of ~25 s (start, 3 warm-up batches, >= 8 s, 10 profiled batches)
# = about 2-3 min of bench; rows are killed at ROW_TIMEOUT and the whole bench at 480 s.
if [ "$what" = augbench ]; then
  [ -f /tmp/data_a.done ] || { "$PY" -m sluice make-dataset /tmp/data_a -n "${N:-4096}" --preset imagenet --quiet | tee -a "$OUT/augbench.log" && touch /tmp/data_a.done; }
  timeout "${AUGBENCH_TIMEOUT:-480}" "$PY" bench/augment_bench.py /tmp/data_a --seconds "${SECONDS_PER_ROW:-8}" \
    --timeout "${ROW_TIMEOUT:-90}" ${AUGBENCH_ARGS:-} --json "$OUT/augment.json" 2>&1 | tee -a "$OUT/augbench.log"
  exit 0
fi
if [ "$what" = multigpu ] || [ "$what" = scaling ] || [ "$what" = videoscaling ] || [ "$what" = scalingfree ]; then
  export PYTHONPATH=$PYTHONPATH:/tmp/peer-site LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
fi
if [ "$what" = multigpu ] || [ "$what" = scaling ]; then
  t1=$(date +%s)
  prepare_done; make_voc
  echo "dataset: $(( $(date +%s) - t1 ))s"
  # ROUTE may list several routes ("hardware auto"): one benchmark run per route, the systems
  # other than sluice in the first only. ROUTE_GPUS_<route> overrides GPUS for one route.
  first=1
  [ "${SCALING_MAIN:-1}" = 1 ] || ROUTE=  # EPOCHS20 only
  # SCALING_APPS=1: which processes hold a context on which GPU, once a second (a rank with one
  # on another rank's GPU too would show there).
  [ "${SCALING_APPS:-0}" = 1 ] && { nvidia-smi --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader \
    -l 1 >"$OUT/apps.csv" 2>&1 & apps=$!; }
  # SCALING_VARIANTS: experiment knobs, one run each ("base SLUICE_SWEEP_MS=10000
  # SLUICE_ENGINE_GATHER=96,SLUICE_SWEEP_MS=10000": base is none; commas join several).
  for route in ${ROUTE-auto}; do
    for variant in ${SCALING_VARIANTS:-base}; do
      systems=${SYSTEMS:-sluice,dali,dataloader}; [ $first = 1 ] || systems=sluice; first=0
      gv="ROUTE_GPUS_$route"; gpus=${!gv:-${GPUS:-1,2,4}}
      knobs=(); tag=; [ "$variant" = base ] || { IFS=, read -r -a knobs <<<"$variant"; tag=_${variant//[^A-Za-z0-9]/_}; }
      # A variant listed twice ("base SLUICE_TRACE=1 base") keeps each run's JSON and logs.
      base_tag=$tag; run=1
      while [ -e "$OUT/scaling_$route$tag.json" ]; do run=$((run + 1)); tag=${base_tag}_run$run; done
      [ -n "${SCALING_VARIANTS:-}" ] && echo "== $route, $variant" | tee -a "$OUT/scaling.log"
      env "${knobs[@]}" timeout "${SCALING_TIMEOUT:-480}" "$PY" bench/scaling_bench.py /tmp/data_voc --gpus "$gpus" \
        --systems "$systems" --decode-route "$route" --timeout "${JOB_TIMEOUT:-120}" ${SCALING_ARGS:-} \
        --json "$OUT/scaling_$route$tag.json" --logs "$OUT/logs_$route$tag" 2>&1 | tee -a "$OUT/scaling.log" |
        grep -v "^    "
      # The ranks' trace summaries (SLUICE_TRACE) into the log: the device tool brings back only
      # a few files, and a run's per-rank logs may not be among them.
      case "$variant" in *SLUICE_TRACE*)
        grep -H "sluice trace: [0-9]" "$OUT/logs_$route$tag"/*.stderr 2>/dev/null | cut -c1-600 | tee -a "$OUT/scaling.log" ;;
      esac
    done
  done
  for g in ${EPOCHS20:-}; do
    timeout "${SCALING_TIMEOUT:-480}" "$PY" bench/scaling_bench.py /tmp/data_voc --gpus "$g" --systems sluice \
      --epochs 20 --timeout "${JOB_TIMEOUT:-120}" --json "$OUT/epochs20_$g.json" --logs "$OUT/logs_epochs20" 2>&1 |
      tee -a "$OUT/scaling.log" | grep -E "^  |exactly"
  done
  [ -n "${apps:-}" ] && kill "$apps"
  printf '%s\n' "${summary[@]}"
  exit 0
fi
# scalingfree (issue 21: where a rank's rate goes under torchrun): scaling_bench's 1-GPU job
# alone, then FREE_GPUS (4) of them at once, one per GPU (CUDA_VISIBLE_DEVICES), each on the
# whole set with the host's CPUs / FREE_GPUS threads: the same loop and epochs as the G-GPU job
# but no NCCL and no rank waiting for another. ROUTE (hardware), SCALING_ARGS as for scaling.
if [ "$what" = scalingfree ]; then
  prepare_done; make_voc
  g=${FREE_GPUS:-4}; threads=$(( $(nproc) / g ))
  free_job() {  # $1: the GPU, $2: a name
    CUDA_VISIBLE_DEVICES=$1 timeout "${SCALING_TIMEOUT:-300}" "$PY" bench/scaling_bench.py /tmp/data_voc --gpus 1 \
      --systems sluice --decode-route "${ROUTE:-hardware}" --threads "$threads" --timeout "${JOB_TIMEOUT:-150}" \
      ${SCALING_ARGS:-} --json "$OUT/free_$2.json" --logs "$OUT/logs_free_$2" >"$OUT/free_$2.log" 2>&1
  }
  free_job 0 alone
  for i in $(seq 0 $((g - 1))); do free_job "$i" "of${g}_gpu$i" & done
  wait
  for f in "$OUT"/free_*.log; do grep -E "^  sluice" "$f" | cut -c1-160 | sed "s|^|$(basename "$f" .log) |"; done
  exit 0
fi
if [ "$what" = videoscaling ]; then
  prepare_done; make_seed_videos
  common=(/tmp/seed --gpus "${GPUS:-1,2,4}" --sequence-length 16 --stride "${VS_STRIDE:-2}" --batch-size 8
          --out-size 360x640 --timeout "${JOB_TIMEOUT:-120}")
  timeout "${SCALING_TIMEOUT:-480}" "$PY" bench/video_scaling.py "${common[@]}" --systems sluice-cuda \
    --json "$OUT/video_scaling.json" --logs "$OUT/logs_video" 2>&1 | tee -a "$OUT/video_scaling.log" | grep -v "^    "
  [ -n "${VS_SLOW-dali,sluice-cpu}" ] &&
    timeout "${SCALING_TIMEOUT:-480}" "$PY" bench/video_scaling.py "${common[@]}" --systems "${VS_SLOW-dali,sluice-cpu}" \
      --max-batches "${VS_MAX_BATCHES:-25}" --json "$OUT/video_scaling_slow.json" --logs "$OUT/logs_video" 2>&1 |
      tee -a "$OUT/video_scaling.log" | grep -v "^    "
  exit 0
fi
if [ "$what" != tests ]; then
  t1=$(date +%s)
  make_datasets | tee -a "$OUT/bench.log"
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
