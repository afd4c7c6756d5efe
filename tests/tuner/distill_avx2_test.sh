#!/usr/bin/env bash
# `gradtune distill` of a log tuned on the AVX2 target (GRADTUNE_MAX_CPU_ISA=avx2)
# sets the structure defaults' AVX2 setting and leaves their own knobs and the
# other structures' defaults as they were; a later distill of an AVX-512 log
# replaces the knobs and keeps the AVX2 setting. Records go to the AVX2 class.
# Usage: distill_avx2_test.sh <gradtune> <python> <cpu target> <source dir>
set -euo pipefail
gradtune="$1"; python="$2"; target="$3"; source="$4"
avx2_target="x86-64-linux-avx-avx2-f16c-fma-sse41-user_context"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/defaults"
op=DepthwiseConv2dNativeBackpropInput
cp "$source/schedules/defaults/$op.json" "$work/defaults/"
cp "$work/defaults/$op.json" "$work/original.json"
"$python" - "$work" "$target" "$avx2_target" <<'PY'
import json, sys
work, target, avx2_target = sys.argv[1:4]
defaults = json.load(open(work + "/defaults/DepthwiseConv2dNativeBackpropInput.json"))["defaults"]
entry = next(d for d in defaults if d["structure"]["filter_height"] == 3 and d["structure"]["stride"] == 1
             and d["structure"]["dilation_height"] == 1 and d["structure"]["depth_multiplier"] == 1)
base = {"op": entry["op"], "device": "cpu", "status": "ok", "error": "", "structure": entry["structure"],
        "padding": "SAME", "call": {}, "halide_version": entry["halide_version"],
        "knob_space_version": entry["knob_space_version"], "threads": 2, "samples": 5, "compile_s": 1.0,
        "generic_median_ms": 1.0, "timestamp": "2026-12-06T00:00:00Z"}
def setting(width, tile):
    return dict(entry["knobs"], vector_width=width, tile_other=tile)
def trial(t, knobs, h, ms):
    return json.dumps(dict(base, target=t, knobs=knobs, shape_id="S%d/N1" % h,
                           shape={"N": 1, "H": h, "W": h, "C": 64}, median_ms=ms, min_ms=ms))
best_avx2, other = setting(8, 2), setting(16, 1)
with open(work + "/avx2.jsonl", "w") as log:  # best_avx2 is best on both shapes
    for h, (a, b) in {20: (0.3, 0.5), 24: (0.4, 0.6)}.items():
        log.write(trial(avx2_target, best_avx2, h, a) + "\n" + trial(avx2_target, other, h, b) + "\n")
best_avx512 = setting(32, 3)
with open(work + "/avx512.jsonl", "w") as log:
    for h in (20, 24):
        log.write(trial(target, best_avx512, h, 0.2) + "\n" + trial(target, other, h, 0.5) + "\n")
json.dump({"entry": entry, "avx2": best_avx2, "avx512": best_avx512}, open(work + "/expect.json", "w"))
PY
check() {
  "$python" - "$work" "$1" <<'PY'
import json, sys
work, stage = sys.argv[1:3]
expect = json.load(open(work + "/expect.json"))
entry = expect["entry"]
now = json.load(open(work + "/defaults/DepthwiseConv2dNativeBackpropInput.json"))["defaults"]
before = json.load(open(work + "/original.json"))["defaults"]
same = [d for d in now if d["structure"] == entry["structure"]]
assert len(same) == 1, same
d = same[0]
assert d["avx2"]["knobs"] == expect["avx2"], d.get("avx2")
assert d["avx2"]["measured_on"] == "x86-64-linux-avx2", d["avx2"]
want = entry["knobs"] if stage == "avx2" else expect["avx512"]
assert d["knobs"] == want, (stage, d["knobs"], want)
others_now = [x for x in now if x["structure"] != entry["structure"]]
others_before = [x for x in before if x["structure"] != entry["structure"]]
assert others_now == others_before, "the other structures' defaults changed"
PY
}
GRADTUNE_MAX_CPU_ISA=avx2 "$gradtune" distill --log "$work/avx2.jsonl" --records-dir "$work/records" \
  --defaults-dir "$work/defaults" 2>"$work/avx2.err" || { cat "$work/avx2.err"; exit 1; }
[ -f "$work/records/x86-64-linux-avx2/$op.json" ] || { echo "no AVX2-class records"; ls -R "$work/records"; exit 1; }
check avx2 || { echo "after the AVX2 distill:"; cat "$work/avx2.err"; exit 1; }
"$gradtune" distill --log "$work/avx512.jsonl" --records-dir "$work/records" --defaults-dir "$work/defaults" \
  2>"$work/avx512.err" || { cat "$work/avx512.err"; exit 1; }
check avx512 || { echo "after the AVX-512 distill:"; cat "$work/avx512.err"; exit 1; }
echo "distill: AVX2 settings set by an AVX2 log and kept by an AVX-512 one"
