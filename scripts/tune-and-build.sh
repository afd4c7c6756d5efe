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
#      run's candidate rate and curve (also in build/report.md).
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
build/bench/gradtune-bench --markdown build/report.md --json build/report.json
# The tuning run's rate and curve belong to the report too.
{ printf '\n## Tuning run\n\n```\n'; sed -n '/candidates measured (/,$p' build/tune.log; printf '```\n'; } >>build/report.md
echo "[main] report written to build/report.md; the library is build/runtime/libgradtune.a"
