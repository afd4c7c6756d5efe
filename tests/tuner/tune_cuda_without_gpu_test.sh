#!/usr/bin/env bash
# `gradtune tune --device cuda` on a machine without a GPU: one clear error
# (exit 2) before anything is compiled or logged, not a crashed measuring
# child per batch. Skipped (77) where a GPU is present.
# Usage: tune_cuda_without_gpu_test.sh <gradtune>
set -uo pipefail
gradtune="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$gradtune" tune --device cuda --op Conv2DBackpropFilter --batch 1 --budget 30 --max-trials 1 \
  --log "$work/trials.jsonl" --work-dir "$work/candidates" >"$work/out" 2>&1
rc=$?
if ! grep -q -E "no CUDA driver|no usable GPU" "$work/out"; then
  [ $rc -eq 0 ] && grep -q "candidates measured" "$work/out" && ! grep -q "crashed" "$work/out" \
    && { echo "a GPU is present: skipped"; exit 77; }
  echo "neither a GPU run nor the no-GPU error (exit $rc):"; cat "$work/out"; exit 1
fi
[ $rc -eq 2 ] || { echo "exit $rc, not 2"; cat "$work/out"; exit 1; }
[ "$(wc -l <"$work/out")" -eq 1 ] || { echo "more than the one error line:"; cat "$work/out"; exit 1; }
grep -q "^gradtune tune --device cuda: device=cuda: " "$work/out" || { cat "$work/out"; exit 1; }
[ ! -e "$work/trials.jsonl" ] && [ ! -e "$work/candidates" ] || { echo "left a log or candidates behind"; ls -R "$work"; exit 1; }
cat "$work/out"
