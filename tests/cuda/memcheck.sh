#!/bin/sh
# Every CUDA variant under compute-sanitizer's memcheck, on the fixtures and
# the default suite's layers at N=1: one process per op, since the first
# error ends a process's CUDA context and every later run with it. Skipped
# (77) without a GPU or without compute-sanitizer.
# Usage: memcheck.sh <gradtune_cuda_tests>
tests="$1"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "no compute-sanitizer: skipped"; exit 77; }
status=0
for op in $("$tests" --list-ops); do
    log=$(mktemp)
    "$sanitizer" --tool memcheck --print-limit 10 --error-exitcode 9 "$tests" --layers "${op}_cuda_" >"$log" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then cat "$log"; rm -f "$log"; exit 77; fi
    echo "$op: $(grep -a 'ERROR SUMMARY' "$log" | head -1) | $(grep -a 'runs on the GPU' "$log")"
    [ $rc -eq 0 ] || { cat "$log"; status=1; }
    rm -f "$log"
done
exit $status
