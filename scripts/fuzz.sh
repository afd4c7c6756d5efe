#!/usr/bin/env bash
# The fuzzing stage of CI: five libFuzzer targets (tests/fuzz/), built with
# clang, AddressSanitizer and UndefinedBehaviorSanitizer against build/, each
# run for FUZZ_SECONDS (default 60) from its committed seed corpus
# (tests/fuzz/corpus/<target>/, copied: the run's new inputs stay in
# build/fuzz/). A crash, a sanitizer report, a leak, a timeout or an exception
# out of the API fails the stage; the crashing input is kept in build/fuzz/
# and named in the log. Prints executions per target. The targets run side
# by side, one per core.
#   fuzz_npy   the .npy reader of `gradtune run`
#   fuzz_json  records files, trials lines, suite files and call specs
#   fuzz_api   RunOp with random ops, dtypes, shapes and attrs near the limits
#   fuzz_cli   `gradtune run` command lines: arguments, .npy inputs, -o paths
#   fuzz_argv  every subcommand's command line, as CLI11 parses it
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/bootstrap.sh scripts/apt-packages-fuzz.txt
./scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
seconds="${FUZZ_SECONDS:-60}"
out="$root/build/fuzz"
echo "[fuzz] building the fuzzers (clang, libFuzzer, ASan + UBSan)"
cmake -S tests/fuzz -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 \
  -DGRADTUNE_BUILD_DIR="$root/build" -DHalide_DIR="$(sed -n 's/^Halide_DIR:PATH=//p' build/CMakeCache.txt)" >/dev/null
cmake --build "$out" -j "$(nproc)"
# One target: its run's result in $out/result-<target> (0 = no findings).
fuzz_one() {
  local target="$1" corpus="$out/corpus-$1" log="$out/fuzz_$1.log" rc execs
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/$target/* "$corpus"/ 2>/dev/null || true
  rm -f "$out"/crash-$target-*  # a finding of an earlier run is not this run's
  set +e
  ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=512:detect_leaks=1" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$out/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=4096 \
      -artifact_prefix="$out/crash-$target-" -print_final_stats=1 -close_fd_mask=1 "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  if [ "$rc" -eq 0 ]; then
    echo "[fuzz] fuzz_$target: ${execs:-?} executions in ${seconds} s, no findings"
  else
    echo "[fuzz] fuzz_$target: FINDING (exit $rc) after ${execs:-?} executions; log $log:"
    grep -aE "ERROR|runtime error|SUMMARY|Test unit written|deadly signal|timeout" "$log" | head -20
    for input in "$out"/crash-$target-*; do
      [ -f "$input" ] && echo "[fuzz] $(basename "$input") (base64): $(head -c 4096 "$input" | base64 -w0)"
    done
  fi
  echo "$rc" >"$out/result-$target"
}

# The targets run side by side, one per core (each fuzzer is one process on
# one core): the stage takes FUZZ_SECONDS per core's share of the targets,
# not per target.
targets=(npy json api cli argv)
rm -f "$out"/result-*
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true
failed=0
for target in "${targets[@]}"; do
  [ "$(cat "$out/result-$target" 2>/dev/null || echo missing)" = 0 ] || failed=1
done
exit "$failed"
