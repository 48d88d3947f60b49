#!/usr/bin/env bash
# Runs the libFuzzer targets of a fuzz build (`make fuzz`, `make fuzz-ci`) one after the other,
# each for SECONDS, and prints per target the inputs it executed (libFuzzer's final
# stat::number_of_executed_units), its speed and the corpus it ended with.
#
# Each target fuzzes a working corpus outside the source tree, BUILD/corpus/NAME, seeded from
# tests/fuzz/corpus/NAME and tests/fuzz/regressions/NAME and kept between runs, so that a later
# run goes on from what an earlier one found. tests/fuzz/NAME.dict, where there is one, gives the
# fuzzer the format's words. A crash, a leak, a timeout (-timeout) or running out of memory
# (-rss_limit_mb) is written to BUILD/crashes/NAME/ and fails the script once every target ran;
# the target's output is BUILD/logs/NAME.log.
#
#   tools/fuzz.sh BUILD_DIR SECONDS [NAME...]      (default: every NAME of tests/fuzz/corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
seconds=$2
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
# As `make sanitize` runs the suite: leaks count, and UBSan shows where it stopped.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

failed=()
printf '%-18s %14s %9s %7s %11s  %s\n' target executions exec/s files bytes result
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  crashes=$build/crashes/$t
  log=$build/logs/$t.log
  mkdir -p "$corpus" "$crashes" "$build/logs"
  for seeds in tests/fuzz/corpus/$t tests/fuzz/regressions/$t; do
    if [ -d "$seeds" ]; then cp -n "$seeds"/* "$corpus"/; fi
  done
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$crashes/")
  if [ -f "tests/fuzz/$t.dict" ]; then options+=(-dict="tests/fuzz/$t.dict"); fi
  result=ok
  if ! "$build/fuzz_$t" "${options[@]}" "$corpus" >"$log" 2>&1; then
    found=$(ls -t "$crashes" | head -n 1)
    result="FAILED: ${found:-see the log} in $crashes (log: $log)"
    failed+=("$t")
  fi
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(find "$corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  printf '%-18s %14s %9s %7s %11s  %s\n' "$t" "${executions:-?}" "${speed:-?}" "$files" "$bytes" \
    "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${failed[*]} found a bug: reproduce with $build/fuzz_NAME FILE" >&2
  exit 1
fi
