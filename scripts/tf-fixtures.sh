#!/usr/bin/env bash
# Regenerates the TensorFlow golden fixtures in tests/golden/ (one JSON file
# per op) with real TensorFlow. Not needed to build or test gradtune: the
# fixtures are committed, and the C++ test tests/test_tf_fixtures.cpp reads
# them.
#
# TensorFlow lives in its own virtual environment .tf-venv (gitignored), apart
# from the build's .venv: it is large (~1 GB), and the pinned version below is
# part of what the fixtures record ("tensorflow" in every file). Changing the
# pin means regenerating and reviewing every fixture.
#
# Usage: scripts/tf-fixtures.sh [extra args for make_tf_fixtures.py]
#   e.g. scripts/tf-fixtures.sh --only FractionalAvgPool,FractionalAvgPoolGrad
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '[tf-fixtures] %s\n' "$*"; }
die() { printf '[tf-fixtures] error: %s\n' "$*" >&2; exit 1; }

# Pinned: tensorflow-cpu 2.21.0 is the newest release with a CPython 3.11
# wheel here; numpy 2.4.6 is what it resolved to. oneDNN is enabled by default
# in this build, which the generator uses for the "onednn" path.
tf_requirements=(tensorflow-cpu==2.21.0 numpy==2.4.6)

python="${PYTHON:-python3}"
command -v "$python" >/dev/null || die "python3 not found"
stamp=".tf-venv/.gradtune-tf-requirements"
want_stamp="${tf_requirements[*]}"
if [ ! -x .tf-venv/bin/python ]; then
  say "creating .tf-venv"
  "$python" -m venv .tf-venv || die "could not create .tf-venv -- run: apt-get install -y python3-venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want_stamp" ]; then
  say "installing ${tf_requirements[*]} into .tf-venv (one time, ~300 MB download)"
  .tf-venv/bin/python -m pip install -q --disable-pip-version-check "${tf_requirements[@]}" \
    || die "pip install ${tf_requirements[*]} failed (is PyPI reachable?)"
  echo "$want_stamp" > "$stamp"
fi

# Keep TensorFlow's logging quiet; the generator runs its own workers with
# TF_ENABLE_ONEDNN_OPTS=0 and =1 (the variable must be set before TF loads).
export TF_CPP_MIN_LOG_LEVEL=2
exec .tf-venv/bin/python scripts/make_tf_fixtures.py "$@"
