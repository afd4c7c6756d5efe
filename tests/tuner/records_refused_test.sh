#!/usr/bin/env bash
# A committed record with an unknown knob must stop the configure step with a
# message naming the file and the knob; once mended it is used although it was
# tuned on other sources (validity is the knob-space version, the source hash
# only provenance), the configure step depends on the record file (so that a
# record rewritten by distill is compiled by the next build), and a record of
# another knob-space version is skipped as stale.
# Usage: records_refused_test.sh <cmake> <source dir> <target class> <cpu target>
set -euo pipefail
cmake="$1"; source="$2"; class="$3"; target="$4"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/records/$class"
bad="$work/records/$class/DepthwiseConv2dNativeBackpropInput.json"
cat >"$bad" <<JSON
{"schema_version": 1, "op": "DepthwiseConv2dNativeBackpropInput", "target_class": "$class", "records": [
 {"op": "DepthwiseConv2dNativeBackpropInput", "device": "cpu",
  "structure": {"T": "float32", "data_format": "NHWC", "depth_multiplier": 1, "dilation_height": 1, "dilation_width": 1,
                "filter_height": 3, "filter_width": 3, "stride": 1},
  "padding": "SAME", "shape": {"N": 1, "H": 8, "W": 8, "C": 16}, "call": {},
  "knobs": {"channel_outer": 0, "rows_per_task": 4, "stage_out_backprop": 0, "tile_other": 4, "tile_y": 1,
            "unroll_taps": 0, "vector_width": 16, "vectors_per_tile": 2, "warp_speed": 9},
  "median_ms": 1, "target": "$target", "halide_version": "21.0.0", "source_hash": "x"}]}
JSON
if "$cmake" -S "$source" -B "$work/build" -G Ninja -DGRADTUNE_RECORDS_DIR="$work/records" \
     -DGRADTUNE_OP_FILTER=DepthwiseConv2dNativeBackpropInput -DGRADTUNE_CUDA=OFF >"$work/out.log" 2>&1; then
  echo "configure accepted a record with an unknown knob"; exit 1
fi
grep -q "$bad" "$work/out.log" || { echo "the message does not name the file:"; cat "$work/out.log"; exit 1; }
grep -q "unknown knob 'warp_speed'" "$work/out.log" || { echo "the message does not name the knob:"; cat "$work/out.log"; exit 1; }
echo "refused: $(grep -o "error: .*" "$work/out.log" | head -1)"

configure() {
  "$cmake" -S "$source" -B "$work/build" -G Ninja -DGRADTUNE_RECORDS_DIR="$work/records" \
    -DGRADTUNE_OP_FILTER=DepthwiseConv2dNativeBackpropInput -DGRADTUNE_CUDA=OFF >"$1" 2>&1 ||
    { echo "configure failed:"; cat "$1"; exit 1; }
}

# Mended: a record of other sources ("source_hash": "x"), still valid.
sed -i 's/, "warp_speed": 9//' "$bad"
configure "$work/out2.log"
grep -q "1 own record(s)" "$work/out2.log" || { echo "the mended record of other sources was not used:"; cat "$work/out2.log"; exit 1; }
grep -q "skipping stale" "$work/out2.log" && { echo "a record of other sources was called stale:"; cat "$work/out2.log"; exit 1; }
grep "RERUN_CMAKE" -A 3 "$work/build/build.ninja" | grep -q "$bad" ||
  { echo "the configure step does not depend on $bad: a distilled record would not be rebuilt"; exit 1; }
echo "mended record of other sources: used, and configure depends on it"

# Another knob-space version: skipped as stale, with the reason.
sed -i 's/"source_hash": "x"/"source_hash": "x", "knob_space_version": 999/' "$bad"
configure "$work/out3.log"
grep -q "skipping stale record $bad.*knob-space version 999" "$work/out3.log" ||
  { echo "a record of another knob-space version was not reported stale:"; cat "$work/out3.log"; exit 1; }
echo "record of another knob-space version: skipped as stale"
