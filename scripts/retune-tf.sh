#!/usr/bin/env bash
# Re-tune gradtune for a TensorFlow model's training step:
#   ./scripts/retune-tf.sh MODEL                  # a model of bench/keras_models.py
#   ./scripts/retune-tf.sh -- python train.py ... # your own training command
# 1. before: the model's step time with TF's gradients and with gradtune's,
#    side by side (bench/keras_models.py; skipped for your own command),
# 2. a few training steps (or your command) under GRADTUNE_JOURNAL with the
#    autotune floor off, so that every gradient call gradtune would serve is
#    journalled (build/retune-tf/shapes.jsonl),
# 3. scripts/retune.sh on the journal: tune its signatures for
#    GRADTUNE_TUNE_BUDGET seconds (default 600), distill, rebuild both
#    libraries (libgradtune.a and libgradtune_tf.so), report per signature,
# 4. after: the step time again, and build/retune-tf/report.md with both.
# Needs the TensorFlow drop-in (./scripts/tf-ops.sh makes it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { echo "usage: scripts/retune-tf.sh MODEL | -- COMMAND [ARGS...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
model=""
if [ "$1" = "--" ]; then
  shift
  [ $# -ge 1 ] || usage
else
  model="$1"
  shift
  [ $# -eq 0 ] || usage
fi
cd "$root"
export GRADTUNE_TUNE_BUDGET="${GRADTUNE_TUNE_BUDGET:-600}"
[ -f build/python/gradtune_tf/libgradtune_tf.so ] && [ -x .tf-venv/bin/python ] \
  || { echo "retune-tf: the TensorFlow drop-in is not built: run ./scripts/tf-ops.sh first" >&2; exit 2; }
out=build/retune-tf
mkdir -p "$out"
rm -f "$out/shapes.jsonl"
export GRADTUNE_TF_LIBRARY="$root/build/python/gradtune_tf/libgradtune_tf.so" PYTHONPATH="$root/python"
bench() {  # $1: before or after
  .tf-venv/bin/python bench/keras_models.py --models "$model" --steps 12 --json "$out/$1.json" \
    --markdown "$out/$1.md" >/dev/null
  echo "[retune-tf] $1: $(sed -n 's/^| \(.*\) | \*\*\(.*x\)\*\* | .*/\2 TensorFlow'"'"'s step speed/p' "$out/$1.md")"
}
if [ -n "$model" ]; then
  echo "[retune-tf] before: $model's step with TensorFlow's and gradtune's gradients"
  bench before
  echo "[retune-tf] journalling a few steps of $model"
  GRADTUNE_JOURNAL="$root/$out/shapes.jsonl" GRADTUNE_TF_AUTOTUNE=0 \
    .tf-venv/bin/python bench/keras_models.py --models "$model" --steps 3 >/dev/null
else
  echo "[retune-tf] journalling: $*"
  GRADTUNE_JOURNAL="$root/$out/shapes.jsonl" GRADTUNE_TF_AUTOTUNE=0 "$@"
fi
[ -s "$out/shapes.jsonl" ] || { echo "retune-tf: no gradient call was journalled (all served by exact records?)"; exit 0; }
./scripts/retune.sh "$out/shapes.jsonl"
if [ -n "$model" ]; then
  echo "[retune-tf] after: $model's step with the new records"
  bench after
  .tf-venv/bin/python - "$out" <<'PY'
import json, sys
out = sys.argv[1]
b, a = (json.load(open(f"{out}/{k}.json"))["models"][0] for k in ("before", "after"))
lines = ["# Retune of %s's training step" % a["model"], "",
         "Step times in ms (median of interleaved steps, each run against TensorFlow's own step in the same "
         "process); speedup: TensorFlow's step time / gradtune's.", "",
         "| | TensorFlow ms | gradtune ms | speedup |", "|---|---|---|---|",
         "| before | %.1f | %.1f | %.2fx |" % (b["tf_ms"], b["gradtune_ms"], b["speedup"]),
         "| after | %.1f | %.1f | %.2fx |" % (a["tf_ms"], a["gradtune_ms"], a["speedup"]), "",
         "Per signature: build/retune/report.md."]
open(f"{out}/report.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
else
  echo "[retune-tf] run your command again to see the new step time (per signature: build/retune/report.md)"
fi
