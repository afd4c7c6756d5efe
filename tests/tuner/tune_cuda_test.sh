#!/usr/bin/env bash
# `gradtune tune --device cuda`.
# Without a GPU: one clear error (exit 2) before anything is compiled or
# logged, not a crashed measuring child per batch.
# With one: two batches of candidates for a small N=1 layer are measured,
# and those of the second batch are not cut as slow for their first call,
# which also loads the module and compiles its PTX for the GPU (hundreds of
# times the kernel's own time).
# Usage: tune_cuda_test.sh <gradtune> <python>
set -uo pipefail
gradtune="$1"; python="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "DepthwiseConv2dNativeBackpropInput N=1 H=7 W=7 C=960 f=3 s=1 id=D5" >"$work/suite.txt"
"$gradtune" tune --device cuda --suite "$work/suite.txt" --budget 120 --max-trials 8 --batch-size 4 --jobs 2 \
  --log "$work/trials.jsonl" --work-dir "$work/candidates" >"$work/out" 2>&1
rc=$?
if grep -q -E "no CUDA driver|no usable GPU" "$work/out"; then
  [ $rc -eq 2 ] || { echo "exit $rc, not 2"; cat "$work/out"; exit 1; }
  [ "$(wc -l <"$work/out")" -eq 1 ] || { echo "more than the one error line:"; cat "$work/out"; exit 1; }
  grep -q "^gradtune tune --device cuda: device=cuda: " "$work/out" || { cat "$work/out"; exit 1; }
  [ ! -e "$work/trials.jsonl" ] && [ ! -e "$work/candidates" ] || { echo "left a log or candidates behind"; ls -R "$work"; exit 1; }
  cat "$work/out"
  exit 0
fi
[ $rc -eq 0 ] && ! grep -q "crashed" "$work/out" || { echo "tune on the GPU failed (exit $rc):"; cat "$work/out"; exit 1; }
"$python" - "$work/trials.jsonl" <<'PY' || { cat "$work/out"; exit 1; }
import json, sys
trials = [json.loads(l) for l in open(sys.argv[1])]
second = trials[4:8]
ok = [t for t in second if t["status"] == "ok"]
print(f"{len(trials)} trials; second batch: {len(ok)} of {len(second)} ok, "
      + ", ".join(f"{t['generic_median_ms'] / t['median_ms']:.2f}x" for t in ok) + " over generic")
assert len(trials) == 8, "8 candidates should have been measured"
assert len(ok) >= 3, "the second batch was cut as slow: " + "; ".join(t.get("error", "") for t in second)
PY
