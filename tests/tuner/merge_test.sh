#!/usr/bin/env bash
# `gradtune merge`: the merged log depends only on the set of trials read
# (inputs in any order give the same bytes; merging the result again changes
# nothing); a measurement in several logs is kept once, the earliest; a cut
# line is skipped and counted; logs of two target classes, a missing input or
# an unwritable output are refused with exit 2 and nothing written.
# Usage: merge_test.sh <gradtune> <python> <cpu target>
set -euo pipefail
gradtune="$1"; python="$2"; target="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" - "$work" "$target" <<'PY'
import json, sys
work, target = sys.argv[1], sys.argv[2]
base = {"op": "DepthwiseConv2dNativeBackpropInput", "device": "cpu", "status": "ok", "error": "",
        "structure": {"T": "float32", "data_format": "NHWC", "depth_multiplier": 1, "dilation_height": 1,
                      "dilation_width": 1, "filter_height": 3, "filter_width": 3, "stride": 1},
        "padding": "SAME", "shape": {"N": 1, "H": 20, "W": 20, "C": 32}, "call": {},
        "target": target, "halide_version": "21.0.0", "knob_space_version": 1, "threads": 2, "samples": 5,
        "generic_median_ms": 0.5}
def trial(width, shape_id, ms, stamp):
    knobs = {"channel_outer": 0, "rows_per_task": 4, "stage_out_backprop": 0, "tile_other": 4, "tile_y": 1,
             "unroll_taps": 0, "vector_width": width, "vectors_per_tile": 1}
    return json.dumps(dict(base, knobs=knobs, shape_id=shape_id, median_ms=ms, min_ms=ms, timestamp=stamp))
with open(work + "/a.jsonl", "w") as a:
    a.write(trial(16, "T1/N1", 0.2, "2026-01-02T00:00:00Z") + "\n")
    a.write(trial(8, "T1/N1", 0.3, "2026-01-01T00:00:00Z") + "\n")
    a.write('{"op": "cut short by a kill')  # no newline: a cut last line
with open(work + "/b.jsonl", "w") as b:
    # The same measurement as a's first line, measured later elsewhere: a's is kept.
    b.write(trial(16, "T1/N1", 0.25, "2026-01-03T00:00:00Z") + "\n")
    b.write(trial(16, "T2/N1", 0.1, "2026-01-01T12:00:00Z") + "\n")
PY
"$gradtune" merge "$work/a.jsonl" "$work/b.jsonl" -o "$work/ab.jsonl" 2>"$work/ab.err" || { cat "$work/ab.err"; exit 1; }
grep -q "1 malformed line(s) skipped" "$work/ab.err" || { echo "the cut line is not reported:"; cat "$work/ab.err"; exit 1; }
grep -q "3 trial(s) -> .*(1 duplicate(s) dropped)" "$work/ab.err" || { cat "$work/ab.err"; exit 1; }
"$python" - "$work/ab.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
stamps = [l["timestamp"] for l in lines]
assert stamps == sorted(stamps), stamps
kept = [l["median_ms"] for l in lines if l["shape_id"] == "T1/N1" and l["knobs"]["vector_width"] == 16]
assert kept == [0.2], kept  # the earliest of the duplicate measurement
PY
"$gradtune" merge "$work/b.jsonl" "$work/a.jsonl" -o "$work/ba.jsonl" 2>/dev/null
cmp "$work/ab.jsonl" "$work/ba.jsonl" || { echo "the merge depends on the order of its inputs"; exit 1; }
cp "$work/ab.jsonl" "$work/again.jsonl"
"$gradtune" merge "$work/again.jsonl" "$work/b.jsonl" -o "$work/again.jsonl" 2>/dev/null
cmp "$work/ab.jsonl" "$work/again.jsonl" || { echo "merging a merged log (in place) changed it"; exit 1; }

# Refusals: nothing written, exit 2.
sed 's/"target": "[^"]*"/"target": "x86-64-linux-avx-avx2-f16c-fma-sse41"/' "$work/b.jsonl" >"$work/other.jsonl"
set +e
"$gradtune" merge "$work/a.jsonl" "$work/other.jsonl" -o "$work/mixed.jsonl" 2>"$work/mixed.err"; rc=$?
set -e
[ "$rc" -eq 2 ] && [ ! -e "$work/mixed.jsonl" ] && grep -q "2 target classes" "$work/mixed.err" \
  || { echo "mixed classes: exit $rc"; cat "$work/mixed.err"; exit 1; }
"$gradtune" merge --mixed-classes "$work/a.jsonl" "$work/other.jsonl" -o "$work/mixed.jsonl" 2>/dev/null
[ "$(wc -l <"$work/mixed.jsonl")" -eq 4 ] || { echo "--mixed-classes: expected 4 trials"; exit 1; }
set +e
"$gradtune" merge "$work/a.jsonl" "$work/missing.jsonl" -o "$work/none.jsonl" 2>"$work/missing.err"; rc=$?
set -e
[ "$rc" -eq 2 ] && [ ! -e "$work/none.jsonl" ] || { echo "missing input: exit $rc"; cat "$work/missing.err"; exit 1; }
set +e
"$gradtune" merge "$work/a.jsonl" -o "$work/no/such/dir/out.jsonl" 2>"$work/unwritable.err"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "cannot be" "$work/unwritable.err" || { echo "unwritable output: exit $rc"; cat "$work/unwritable.err"; exit 1; }
echo "PASSED"
