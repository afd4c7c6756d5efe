#!/usr/bin/env bash
# `gradtune distill --remeasure`: a log whose best-looking trial is a slow
# setting (its times doctored, as a lucky generic timing or a fast hour makes
# them) gives that setting a record by the log alone; timed again side by
# side against the runner-up, the truly faster setting wins, with the new
# times in the record. And a setting over --max-compile-s never becomes one.
# Usage: distill_remeasure_test.sh <gradtune> <python> <cpu target>
set -euo pipefail
gradtune="$1"; python="$2"; target="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" - "$work/trials.jsonl" "$target" <<'PY'
import json, sys
path, target = sys.argv[1], sys.argv[2]
base = {
    "op": "DepthwiseConv2dNativeBackpropInput", "device": "cpu", "status": "ok", "error": "",
    "structure": {"T": "float32", "data_format": "NHWC", "depth_multiplier": 1, "dilation_height": 1,
                  "dilation_width": 1, "filter_height": 3, "filter_width": 3, "stride": 1},
    "shape_id": "D1/N1", "padding": "SAME", "shape": {"N": 1, "H": 112, "W": 112, "C": 32},
    "call": {"op": "DepthwiseConv2dNativeBackpropInput",
             "inputs": {"input_sizes": {"dtype": "int32", "values": [1, 112, 112, 32]},
                        "filter": {"dtype": "float32", "shape": [3, 3, 32, 1]},
                        "out_backprop": {"dtype": "float32", "shape": [1, 112, 112, 32]}},
             "attrs": {"strides": [1, 1, 1, 1], "padding": "SAME"}},
    "target": target, "halide_version": "21.0.0", "knob_space_version": 1, "threads": 2,
    "samples": 5, "timestamp": "2026-01-01T00:00:00Z"}
good = {"channel_outer": 0, "rows_per_task": 4, "stage_out_backprop": 0, "tile_other": 4, "tile_y": 1,
        "unroll_taps": 0, "vector_width": 16, "vectors_per_tile": 2}
# Four lanes per vector (SSE width), one position per tile, tasks of 32 rows: slow.
slow = dict(good, vector_width=4, vectors_per_tile=1, tile_other=1, rows_per_task=32)
with open(path, "w") as out:
    for knobs, ms in ((good, 0.2), (slow, 0.1)):  # the slow setting's times are doctored
        out.write(json.dumps(dict(base, knobs=knobs, median_ms=ms, min_ms=ms, generic_median_ms=0.5)) + "\n")
PY
records() { "$python" -c 'import json,sys; r=json.load(open(sys.argv[1]))["records"]; assert len(r)==1; print(json.dumps(r[0], separators=(",", ":")))' \
  "$work"/$1/*/DepthwiseConv2dNativeBackpropInput.json; }

"$gradtune" distill --log "$work/trials.jsonl" --records-dir "$work/by_log" --defaults-dir "" >/dev/null 2>&1
records by_log | grep -q '"vector_width":4' || { echo "the log alone should choose the doctored setting"; records by_log; exit 1; }

# Trials a knob space no longer allows are skipped, one line per shape and
# reason however many trials share it (a narrowed domain can leave hundreds).
"$python" - "$work/trials.jsonl" "$work/illegal.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
lines += [dict(lines[0], knobs=dict(lines[0]["knobs"], vectors_per_tile=99)) for _ in range(3)]
open(sys.argv[2], "w").writelines(json.dumps(l) + "\n" for l in lines)
PY
"$gradtune" distill --log "$work/illegal.jsonl" --records-dir "$work/illegal" --defaults-dir "" >"$work/illegal.log" 2>&1
[ "$(grep -c "skipping" "$work/illegal.log")" = 1 ] && grep -q "skipping 3 trial(s) of DepthwiseConv2dNativeBackpropInput D1/N1: illegal value 99" "$work/illegal.log" \
  || { echo "illegal trials should be reported once per shape and reason:"; cat "$work/illegal.log"; exit 1; }

# A setting that took too long to compile never becomes a record: the doctored
# one, logged as a 40 s compile, gives way to the other (--max-compile-s 30).
"$python" - "$work/trials.jsonl" "$work/costly.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for l in lines:
    l["compile_s"] = 40.0 if l["knobs"]["vector_width"] == 4 else 3.0
open(sys.argv[2], "w").writelines(json.dumps(l) + "\n" for l in lines)
PY
"$gradtune" distill --log "$work/costly.jsonl" --records-dir "$work/costly" --defaults-dir "" >"$work/costly.log" 2>&1
records costly | grep -q '"vector_width":16' || { echo "a setting over --max-compile-s became a record"; records costly; exit 1; }
grep -q "1 trial(s) of settings that took over 30 s to compile ignored" "$work/costly.log" || { cat "$work/costly.log"; exit 1; }

"$gradtune" distill --log "$work/trials.jsonl" --records-dir "$work/side_by_side" --defaults-dir "" --remeasure 2 \
  --work-dir "$work/candidates" >"$work/distill.log" 2>&1 || { cat "$work/distill.log"; exit 1; }
record=$(records side_by_side)
echo "$record" | grep -q '"vector_width":16' || { echo "side by side, the faster setting must win:"; echo "$record"; cat "$work/distill.log"; exit 1; }
echo "$record" | grep -q '"median_ms":0.2,' && { echo "the record keeps the log's times, not the new ones"; exit 1; }
grep -q "1 shape(s) timed side by side, 1 record(s) changed" "$work/distill.log" || { cat "$work/distill.log"; exit 1; }
[ -z "$(ls "$work/candidates")" ] || { echo "files left behind:"; ls "$work/candidates"; exit 1; }
# The committed record is the fast setting, the log's best the doctored slow
# one: timed side by side, the record stays (with new times).
rm -rf "$work/records" && cp -r "$work/by_log" "$work/records"
sed -i 's/"vector_width":4/"vector_width":16/; s/"rows_per_task":32/"rows_per_task":4/; s/"tile_other":1,/"tile_other":4,/; s/"vectors_per_tile":1/"vectors_per_tile":2/' \
  "$work"/records/*/DepthwiseConv2dNativeBackpropInput.json
"$gradtune" distill --log "$work/trials.jsonl" --records-dir "$work/records" --defaults-dir "" --remeasure 1 \
  --work-dir "$work/candidates" >"$work/distill2.log" 2>&1 || { cat "$work/distill2.log"; exit 1; }
records records | grep -q '"vector_width":16' || { echo "a slower setting replaced the committed record"; records records; exit 1; }
grep -q "side by side with 1 other(s), the committed record stays" "$work/distill2.log" || { cat "$work/distill2.log"; exit 1; }
# Both medians are printed, the record's marked, so that a note can quote the margin.
grep -Eq "record stays \(medians, ms: ([0-9.]+, record [0-9.]+|record [0-9.]+, [0-9.]+)\)" "$work/distill2.log" \
  || { echo "no medians next to the verdict:"; cat "$work/distill2.log"; exit 1; }
# Once the log's best is the record, nothing is timed again.
"$python" - "$work/trials.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for l in lines:
    if l["knobs"]["vector_width"] == 4:
        l["median_ms"] = 0.4  # its doctored times mended
open(sys.argv[1], "w").writelines(json.dumps(l) + "\n" for l in lines)
PY
"$gradtune" distill --log "$work/trials.jsonl" --records-dir "$work/records" --defaults-dir "" --remeasure 2 \
  --work-dir "$work/candidates" >"$work/distill3.log" 2>&1 || { cat "$work/distill3.log"; exit 1; }
grep -q "side by side" "$work/distill3.log" && { echo "timed again although the log agrees with the record:"; cat "$work/distill3.log"; exit 1; }
# Unless the record leads the log only by a trial timed beside an outlier
# generic (ten times the shape's other generic timings): then it is timed
# again beside the runner-up, and stays on its merit.
"$python" - "$work/trials.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
record = next(l for l in lines if l["knobs"]["vector_width"] == 16)
lines.append(dict(record, generic_median_ms=5.0))
open(sys.argv[1], "w").writelines(json.dumps(l) + "\n" for l in lines)
PY
"$gradtune" distill --log "$work/trials.jsonl" --records-dir "$work/records" --defaults-dir "" --remeasure 2 \
  --work-dir "$work/candidates" >"$work/distill4.log" 2>&1 || { cat "$work/distill4.log"; exit 1; }
grep -q "side by side with 1 other(s), the committed record stays" "$work/distill4.log" \
  || { echo "a record that leads by an outlier generic timing was not timed again:"; cat "$work/distill4.log"; exit 1; }
records records | grep -q '"generic_median_ms":5.0' && { echo "the record kept the outlier's times"; records records; exit 1; }
echo "log alone: the doctored slow setting; side by side: $(echo "$record" | grep -o '"median_ms":[0-9.]*') with vector_width=16"
