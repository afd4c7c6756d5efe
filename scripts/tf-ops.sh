#!/usr/bin/env bash
# The TensorFlow drop-in: makes .tf-venv (scripts/tf-venv.sh, the pinned
# TensorFlow of the fixtures), configures build/ to compile libgradtune_tf.so
# against it (GRADTUNE_TF_PYTHON), builds it, and runs its tests
# (`ctest -L tf`: every Gradtune op against TF's, TF's errors, the gradients
# under gradtune_tf.use_for_gradients(), a Keras training loop with and
# without it). Idempotent. Then, from Python:
#   PYTHONPATH=python .tf-venv/bin/python -c "import gradtune_tf"
# Usage: scripts/tf-ops.sh [extra ctest args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/tf-venv.sh
./scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
echo "[tf-ops] building libgradtune_tf.so against .tf-venv's TensorFlow"
cmake -S . -B build -DGRADTUNE_TF_PYTHON="$root/.tf-venv/bin/python" >/dev/null
cmake --build build -j "$(nproc)" --target gradtune_tf
echo "[tf-ops] $(ls build/python/gradtune_tf/libgradtune_tf.so)"
ctest --test-dir build -L tf --output-on-failure "$@"
