#!/usr/bin/env bash
# Regenerates the TensorFlow golden fixtures in tests/golden/ (one JSON file
# per op) with real TensorFlow. Not needed to build or test gradtune: the
# fixtures are committed, and the C++ test tests/test_tf_fixtures.cpp reads
# them.
#
# TensorFlow lives in its own virtual environment .tf-venv (gitignored, made by
# scripts/tf-venv.sh), apart from the build's .venv: it is large (~1 GB), and
# its pinned version is part of what the fixtures record ("tensorflow" in
# every file). Changing the pin means regenerating and reviewing every fixture.
#
# Usage: scripts/tf-fixtures.sh [extra args for make_tf_fixtures.py]
#   e.g. scripts/tf-fixtures.sh --only FractionalAvgPool,FractionalAvgPoolGrad
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

./scripts/tf-venv.sh

# Keep TensorFlow's logging quiet; the generator runs its own workers with
# TF_ENABLE_ONEDNN_OPTS=0 and =1 (the variable must be set before TF loads).
export TF_CPP_MIN_LOG_LEVEL=2
exec .tf-venv/bin/python scripts/make_tf_fixtures.py "$@"
