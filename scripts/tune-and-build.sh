#!/usr/bin/env bash
# The main job: build tuned kernels for this machine.
#   1. bootstrap and build (committed records for this machine class give
#      tuned kernels from the start),
#   2. tune the default suite within a time budget (GRADTUNE_TUNE_BUDGET
#      seconds, default 300), resuming from the trials log of earlier runs,
#   3. distill the best trials into schedules/records/<target class>/,
#   4. rebuild libgradtune.a from the records,
#   5. report, per shape, the generic default time, the tuned time, the
#      speedup, the variant that serves it and oneDNN's time, plus the tuning
#      run's candidate rate and curve: build/report.md, which opens with a
#      five-line summary and the plots of build/report/ (scripts/report_plots.py),
#      and, where scripts/tf-ops.sh built the TensorFlow drop-in, the training
#      step time of Keras models with TF's and gradtune's gradients
#      (bench/keras_models.py, a few minutes) and where one step goes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
budget="${GRADTUNE_TUNE_BUDGET:-300}"
./scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
echo "[main] tuning the default suite for ${budget}s (GRADTUNE_TUNE_BUDGET to change)"
build/tuner/gradtune tune --budget "$budget" 2>&1 | tee build/tune.log
build/tuner/gradtune distill
echo "[main] rebuilding with the distilled records"
cmake --build build -j "$(nproc)"
echo "[main] measuring: generic default vs tuned, side by side"
build/bench/gradtune-bench --markdown build/report-tables.md --json build/report.json
echo "[main] plotting"
klass="$(build/tuner/gradtune variants | awk 'NR == 1 {print $3}')"
.venv/bin/python scripts/report_plots.py --rows build/report.json --out-dir build/report \
  --curve ".gradtune/trials-$klass.jsonl.curve.json" --markdown build/report-summary.md
# With the TensorFlow drop-in built (scripts/tf-ops.sh): Keras models'
# training steps with TF's gradients and with gradtune's, side by side, and
# where one MobileNetV2 step goes, op by op.
rm -f build/report-keras.md
if [ -f build/python/gradtune_tf/libgradtune_tf.so ] && [ -x .tf-venv/bin/python ]; then
  echo "[main] timing Keras models' training steps with TensorFlow's and gradtune's gradients"
  GRADTUNE_TF_LIBRARY=build/python/gradtune_tf/libgradtune_tf.so PYTHONPATH=python \
    .tf-venv/bin/python bench/keras_models.py --breakdown mobilenet_v2 --markdown build/report-keras.md \
    --json build/report-keras.json
fi
# The summary and plots first, then the benchmark's tables, the Keras steps,
# then the tuning run's rate and curve.
{
  printf '# gradtune report\n\n'
  cat build/report-summary.md
  tail -n +2 build/report-tables.md
  [ -f build/report-keras.md ] && { printf '\n'; cat build/report-keras.md; }
  printf '\n## Tuning run\n\n```\n'; sed -n '/candidates measured (/,$p' build/tune.log; printf '```\n'
} >build/report.md
echo "[main] report written to build/report.md (plots in build/report/); the library is build/runtime/libgradtune.a"
