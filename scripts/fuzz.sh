#!/usr/bin/env bash
# The fuzzing stage of CI: five libFuzzer targets (tests/fuzz/), built with
# clang, AddressSanitizer and UndefinedBehaviorSanitizer against build/, each
# run for FUZZ_SECONDS (default 60) from its committed seed corpus
# (tests/fuzz/corpus/<target>/, copied: the run's new inputs stay in
# build/fuzz/). A crash, a sanitizer report, a leak, a timeout or an exception
# out of the API fails the stage; the crashing input is kept in build/fuzz/
# and named in the log. Prints executions per target.
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
failed=0
for target in npy json api cli argv; do
  corpus="$out/corpus-$target"
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/$target/* "$corpus"/ 2>/dev/null || true
  log="$out/fuzz_$target.log"
  rm -f "$out"/crash-$target-*  # a finding of an earlier run is not this run's
  set +e
  # Allocations past 512 MB return null (std::bad_alloc: ResourceExhausted
  # in the API) so that a fuzzed size is refused, not swapped.
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
    failed=1
    echo "[fuzz] fuzz_$target: FINDING (exit $rc) after ${execs:-?} executions; log $log:"
    # -a: the log quotes the input's bytes. The input itself goes into the log
    # of this stage too, so that a finding on a CI machine can be replayed:
    #   base64 -d >input <<<'...'; build/fuzz/fuzz_<target> input
    grep -aE "ERROR|runtime error|SUMMARY|Test unit written|deadly signal|timeout" "$log" | head -20
    for input in "$out"/crash-$target-*; do
      [ -f "$input" ] && echo "[fuzz] $(basename "$input") (base64): $(head -c 4096 "$input" | base64 -w0)"
    done
  fi
done
exit "$failed"
