#!/usr/bin/env bash
# Records transfer at configure time: with no record of this machine's class,
# the build takes the nearest other class's record for each shape (compiled
# for this target), and a record of this class for the same shape wins over
# it.
# Usage: records_transfer_test.sh <cmake> <source dir> <target class>
set -euo pipefail
cmake="$1"; source="$2"; class="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
record() {  # record <N> <tile_y>
  cat <<JSON
 {"op": "DepthwiseConv2dNativeBackpropInput", "device": "cpu",
  "structure": {"T": "float32", "data_format": "NHWC", "depth_multiplier": 1, "dilation_height": 1, "dilation_width": 1,
                "filter_height": 3, "filter_width": 3, "stride": 1},
  "padding": "SAME", "shape": {"N": $1, "H": 8, "W": 8, "C": 16}, "call": {},
  "knobs": {"channel_outer": 0, "rows_per_task": 4, "stage_out_backprop": 0, "tile_other": 4, "tile_y": $2,
            "unroll_taps": 0, "vector_width": 16, "vectors_per_tile": 2},
  "median_ms": 1, "generic_median_ms": 2, "target": "x86-64-linux", "halide_version": "21.0.0", "source_hash": "x"}
JSON
}
file() {  # file <class> <record JSON>...
  local dir="$work/records/$1"
  mkdir -p "$dir"
  { echo "{\"schema_version\": 1, \"op\": \"DepthwiseConv2dNativeBackpropInput\", \"target_class\": \"$1\", \"records\": ["
    shift; local first=1
    for r in "$@"; do [ $first = 1 ] || echo ","; first=0; echo "$r"; done
    echo "]}"; } >"$dir/DepthwiseConv2dNativeBackpropInput.json"
}
configure() {
  "$cmake" -S "$source" -B "$work/build" -G Ninja -DGRADTUNE_RECORDS_DIR="$work/records" -DGRADTUNE_CPU_TARGETS=host \
    -DGRADTUNE_OP_FILTER=DepthwiseConv2dNativeBackpropInput -DGRADTUNE_CUDA=OFF >"$1" 2>&1 ||
    { echo "configure failed:"; cat "$1"; exit 1; }
}
# Two foreign classes: the nearer one (same ISA level) gives N=1, the farther
# one only adds N=2; both have N=1 with different knobs.
near="${class%-*}-avx512_other_vendor"; far="arm-64-linux-sve2"
[ "$near" != "$class" ] || near="${class%-*}-avx512_skylake"
file "$near" "$(record 1 2)"
file "$far" "$(record 1 3)" "$(record 2 3)"
configure "$work/out1.log"
summary=$(grep "target class" "$work/out1.log")
[[ "$summary" == *"0 own record(s)"* && "$summary" == *"1 transferred from $near"* && "$summary" == *"1 transferred from $far"* ]] ||
  { echo "expected one record from each class:"; grep "target class" "$work/out1.log"; exit 1; }
grep -q "tile_y=2" "$work/build/runtime/variants.cmake" || { echo "the nearer class's N=1 record was not used"; exit 1; }
# This class's own record for N=1 wins over both.
file "$class" "$(record 1 4)"
configure "$work/out2.log"
summary=$(grep "target class" "$work/out2.log")
[[ "$summary" == *"1 own record(s)"* && "$summary" == *"1 transferred from $far"* && "$summary" != *"from $near"* ]] ||
  { echo "the own record did not win:"; grep "target class" "$work/out2.log"; exit 1; }
grep -q "\"$class\"" "$work/build/runtime/variant_table.cpp" && grep -q "\"$far\"" "$work/build/runtime/variant_table.cpp" ||
  { echo "the variant table does not name the records' classes"; exit 1; }
echo "records transfer: nearest class first, own class wins"
