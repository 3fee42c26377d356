#!/usr/bin/env bash
# Runs every fuzz target of a SLUICE_SANITIZE=fuzz build on its corpus and prints one line each.
#   usage: scripts/run_fuzzers.sh BUILD_DIR [SECONDS]     each target for SECONDS (default 30)
#          FUZZ_RUNS=10000000 scripts/run_fuzzers.sh BUILD_DIR   each target for that many inputs
#   env: FUZZ_TARGETS (default: every fuzz_* in BUILD_DIR), FUZZ_JSON (a file for the results)
# Seeds come from BUILD_DIR/seeds (scripts/make_fuzz_corpus.py); what a run learns is kept in
# BUILD_DIR/corpus, and an input that fails is written to BUILD_DIR/artifacts/. Exit status 1 if
# any target fails (a crash, a sanitizer report, a broken invariant, a timeout or a leak).
set -uo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS]}
seconds=${2:-30}
mkdir -p "$build/artifacts"
targets=${FUZZ_TARGETS:-$(cd "$build" && ls fuzz_* | sed 's/^fuzz_//')}
status=0
json="["
printf '%-10s %12s %9s %8s %6s %s\n' target executions exec/s corpus cov result
for t in $targets; do
  mkdir -p "$build/corpus/$t"
  budget=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && budget=(-runs="$FUZZ_RUNS")
  log="$build/fuzz_$t.log"
  t0=$(date +%s)
  "$build/fuzz_$t" "${budget[@]}" -print_final_stats=1 -rss_limit_mb=2048 -timeout=20 -max_len=65536 \
    -artifact_prefix="$build/artifacts/${t}_" "$build/corpus/$t" "$build/seeds/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  rate=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'cov: [0-9]*' | awk '{print $2}')
  corpus=$(ls "$build/corpus/$t" | wc -l)
  result=ok
  if [ $rc -ne 0 ]; then
    result="FAILED (exit $rc, $log)"; status=1
    grep -E 'ERROR|SUMMARY|invariant|==[0-9]+==' "$log" | head -5
  fi
  printf '%-10s %12s %9s %8s %6s %s\n' "$t" "${runs:-?}" "${rate:-?}" "$corpus" "${cov:-?}" "$result"
  json+="{\"target\": \"$t\", \"executions\": ${runs:-0}, \"exec_per_s\": ${rate:-0}, \"corpus\": $corpus, \"cov\": ${cov:-0}, \"seconds\": $(( $(date +%s) - t0 )), \"ok\": $([ $rc -eq 0 ] && echo true || echo false)},"
done
[ -n "${FUZZ_JSON:-}" ] && echo "${json%,}]" >"$FUZZ_JSON"
exit $status
