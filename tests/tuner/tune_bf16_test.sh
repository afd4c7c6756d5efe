#!/usr/bin/env bash
# Tuning a bfloat16 shape over several batches: every batch after the first
# reads the generic variant's outputs back from the run's cache, where .npy
# holds bfloat16 widened to float32. Read back as float32, every candidate
# of those batches was refused ("output has dtype float, expected bfloat16").
# Usage: tune_bf16_test.sh <gradtune> <python>
set -euo pipefail
gradtune="$1"; python="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "DepthwiseConv2dNativeBackpropInput N=1 H=20 W=20 C=32 f=3 s=1 T=bfloat16 id=B1" >"$work/suite.txt"
log="$work/trials.jsonl"
"$gradtune" tune --suite "$work/suite.txt" --max-trials 4 --batch-size 2 --log "$log" --work-dir "$work/candidates" \
  --samples 2 --min-sample-ms 0 --jobs 1 >"$work/tune.log" 2>&1 || { cat "$work/tune.log"; exit 1; }

"$python" - "$log" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{len(lines)} trial lines: {sorted({l['status'] for l in lines})}")
assert len(lines) >= 4, "fewer than two batches logged"
for l in lines:
    assert l["status"] in ("ok", "slow"), l
PY
echo "every bfloat16 candidate of every batch ran and was compared"
