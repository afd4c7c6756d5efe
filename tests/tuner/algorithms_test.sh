#!/usr/bin/env bash
# Every algorithm of Conv2DBackpropInput's 3x3 stride-1 space, compiled and
# checked by the tuner on this machine, whatever the committed records hold:
# the records of a class tuned before an algorithm existed never compile it,
# so this is where CI meets it (and the bfloat16 1x1 group's, for the pairs
# algorithm). The first six candidates of a new shape are
# the space's defaults (direct) and the seeds of the dot algorithm, of the
# direct one's few-channel tile, of Winograd (with whole images and with
# rows of tiles per task) and of the dot algorithm for small images (several
# images per task);
# the tuner compares each one's output with the generic variant's (normwise,
# twice the tests' tolerance) and logs "wrong" where it differs. Awkward shapes on purpose: 33 input channels (a partial channel
# block), 17 output channels (a partial vector), odd rows and columns (a
# partial Winograd tile), three images, VALID and SAME, float32, float64 and
# bfloat16 (with the 1x1 pairs algorithm).
# Usage: algorithms_test.sh <gradtune> <python>
set -euo pipefail
gradtune="$1"; python="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/float32.txt" <<'SUITE'
Conv2DBackpropInput N=3 H=9 W=7 C=33 K=17 f=3 s=1 SAME id=A1
Conv2DBackpropInput N=2 H=6 W=11 C=40 K=64 f=3 s=1 VALID id=A2
SUITE
cat >"$work/float64.txt" <<'SUITE'
Conv2DBackpropInput N=2 H=5 W=6 C=20 K=24 f=3 s=1 SAME T=float64 id=A3
SUITE
# bfloat16: the dot algorithm with bf16_pairs (vdpbf16ps), 40 output
# channels (one vector of 32 and a tail of 8) and 17 (a tail only).
cat >"$work/bfloat16.txt" <<'SUITE'
Conv2DBackpropInput N=2 H=6 W=11 C=33 K=40 f=3 s=1 SAME T=bfloat16 id=B1
Conv2DBackpropInput N=3 H=5 W=7 C=20 K=17 f=3 s=1 VALID T=bfloat16 id=B2
SUITE
# bfloat16 1x1: the pairs algorithm (algorithm 3), an odd output channel
# count (a tail channel) and 40 input channels (a partial channel tile).
cat >"$work/bfloat16_1x1.txt" <<'SUITE'
Conv2DBackpropInput N=2 H=5 W=9 C=40 K=23 f=1 s=1 T=bfloat16 id=B3
SUITE
# One structure group per run, without the committed records and structure
# defaults as seeds, so that its first six candidates are the ones above.
# (bfloat16: the dot algorithm's four bf16_pairs seeds, and the 1x1 group's
# two pairs seeds, come after the others.)
for dtype in float32 float64 bfloat16 bfloat16_1x1; do
  trials=6; [[ $dtype == bfloat16* ]] && trials=10
  "$gradtune" tune --suite "$work/$dtype.txt" --max-trials $trials --no-record-seeds --log "$work/$dtype.jsonl" \
    --work-dir "$work/candidates" --samples 2 --min-sample-ms 0 --jobs 1 >"$work/tune.log" 2>&1 \
    || { cat "$work/tune.log"; exit 1; }
done

"$python" - "$work/float32.jsonl" "$work/float64.jsonl" "$work/bfloat16.jsonl" "$work/bfloat16_1x1.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for path in sys.argv[1:] for l in open(path) if l.strip()]
seen = {}
for l in lines:
    k = l["knobs"]
    print(l["shape_id"], "algorithm", k["algorithm"], "bf16_pairs", k.get("bf16_pairs", 0), l["status"],
          l["error"][:200])
    assert l["status"] in ("ok", "slow"), l
    schedule = (k["algorithm"], k.get("tile_rows_per_task", 0) > 0, k.get("bf16_pairs", 0))
    seen.setdefault(schedule, set()).add(l["shape_id"])
for schedule in ((0, False, 0), (1, False, 0), (2, False, 0), (2, True, 0)):
    assert {"A1/N3", "A2/N2", "A3/N2"} <= seen.get(schedule, set()), (schedule, seen)
for schedule in ((0, False, 0), (1, False, 0), (1, False, 1)):
    assert {"B1/N2", "B2/N3"} <= seen.get(schedule, set()), (schedule, seen)
for schedule in ((0, False, 0), (3, False, 0)):
    assert "B3/N2" in seen.get(schedule, set()), (schedule, seen)
PY
echo "direct, dot (bfloat16: also with bf16_pairs), Winograd and pairs each match the generic variant on every shape"
