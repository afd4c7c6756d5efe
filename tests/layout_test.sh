#!/usr/bin/env bash
# Every op of the op list (cmake/GradtuneOps.cmake) in every layer: the files
# a new op adds (README, "Adding an op"), its
# knob-space version, its rows in the default suite and its TensorFlow
# fixtures. (Its TensorFlow custom op comes from its OpSpec, python/gradtune_tf/ops.cc;
# tests/tf/test_ops.py checks it is TF's.) The build itself stops on a missing generator, schedule, runtime,
# reference or test file of an op it builds; this test also names the layers
# the build does not need (the suite, the fixtures) and the ops a
# GRADTUNE_OP_FILTER build leaves out.
# Usage: layout_test.sh <repository root>
set -euo pipefail
root="$1"
cd "$root"

ops=$(sed -n 's/^[[:space:]]*\([A-Za-z0-9]*\):\([a-z0-9_]*\)[[:space:]]*$/\1:\2/p' cmake/GradtuneOps.cmake)
[ -n "$ops" ] || { echo "no 'Name:stem' entries found in cmake/GradtuneOps.cmake"; exit 1; }

missing=0
lack() { echo "$1: $2"; missing=$((missing + 1)); }
count=0
for entry in $ops; do
  op="${entry%%:*}" stem="${entry#*:}"
  count=$((count + 1))
  for f in "generators/${stem}_generator.cpp" \
           "schedules/${stem}.h" "schedules/${stem}_space.h" \
           "runtime/include/gradtune/${stem}.h" "runtime/src/${stem}.cpp" \
           "tests/reference/${stem}.h" "tests/test_${stem}.cpp" \
           "tests/golden/${op}.json"; do
    [ -f "$f" ] || lack "$op" "no $f"
  done
  [ ! -f "schedules/${stem}_space.h" ] || grep -q "knob_space_version = [0-9]" "schedules/${stem}_space.h" ||
    lack "$op" "schedules/${stem}_space.h declares no knob_space_version"
  grep -q "^${op}[[:space:]]" bench/suites/default.txt ||
    lack "$op" "no row in bench/suites/default.txt"
done
if [ "$missing" -gt 0 ]; then
  echo "$missing piece(s) missing; the list of files an op adds is in README.md, \"Adding an op\""
  exit 1
fi
echo "$count ops, each in every layer"
