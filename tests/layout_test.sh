#!/usr/bin/env bash
# Every op (one per generators/<stem>_generator.cpp) in every layer: the files
# a new op adds (docs/contributing.md, "Adding an op"), its
# knob-space version, its rows in the default suite, its cases in the
# golden-fixture generator and its TensorFlow fixtures. (Its TensorFlow custom op comes from its OpSpec, python/gradtune_tf/ops.cc;
# tests/tf/test_ops.py checks it is TF's.) The build itself stops on a missing generator, schedule, runtime,
# reference or test file of an op it builds; this test also names the layers
# the build does not need (the suite, the fixtures) and the ops a
# GRADTUNE_OP_FILTER build leaves out.
# Usage: layout_test.sh <repository root>
set -euo pipefail
root="$1"
cd "$root"

# The op list as cmake/GradtuneOps.cmake finds it: one op per
# generators/<stem>_generator.cpp, named by its HALIDE_REGISTER_GENERATOR line.
ops=""
for generator in generators/*_generator.cpp; do
  stem=$(basename "$generator" _generator.cpp)
  op=$(sed -n 's/^HALIDE_REGISTER_GENERATOR([A-Za-z0-9_]*, *\([A-Za-z0-9]*\))$/\1/p' "$generator")
  [ -n "$op" ] || { echo "$generator: no 'HALIDE_REGISTER_GENERATOR(<class>, <TF op name>)' line"; exit 1; }
  ops="$ops $op:$stem"
done
[ -n "$ops" ] || { echo "no generators/*_generator.cpp found"; exit 1; }

missing=0
lack() { echo "$1: $2"; missing=$((missing + 1)); }
count=0
for entry in $ops; do
  op="${entry%%:*}" stem="${entry#*:}"
  count=$((count + 1))
  for f in "generators/${stem}_generator.cpp" \
           "schedules/${stem}.h" \
           "runtime/include/gradtune/${stem}.h" "runtime/src/${stem}.cpp" \
           "tests/reference/${stem}.h" "tests/test_${stem}.cpp" \
           "tests/golden/${op}.json"; do
    [ -f "$f" ] || lack "$op" "no $f"
  done
  [ ! -f "schedules/${stem}.h" ] || grep -q "knob_space_version = [0-9]" "schedules/${stem}.h" ||
    lack "$op" "schedules/${stem}.h declares no knob_space_version"
  grep -q "^${op}[[:space:]]" bench/suites/default.txt ||
    lack "$op" "no row in bench/suites/default.txt"
  grep -q "\"${op}\"" scripts/tf_fixtures/*.py ||
    lack "$op" "no cases in scripts/tf_fixtures/ (the golden-fixture generator)"
done
if [ "$missing" -gt 0 ]; then
  echo "$missing piece(s) missing; the list of files an op adds is in docs/contributing.md, \"Adding an op\""
  exit 1
fi
echo "$count ops, each in every layer"
