#!/usr/bin/env bash
# Makes .tf-venv (gitignored): the pinned TensorFlow that the fixtures
# (scripts/tf-fixtures.sh) and the benchmark's TensorFlow columns
# (gradtune-bench, bench/tf_timer.py) use, apart from the build's .venv.
# Idempotent: a second run checks and does nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '[tf-venv] %s\n' "$*"; }
die() { printf '[tf-venv] error: %s\n' "$*" >&2; exit 1; }

# Pinned: tensorflow-cpu 2.21.0 is the newest release with a CPython 3.11
# wheel here; numpy 2.4.6 is what it resolved to. oneDNN is enabled by default
# in this build: the fixtures' "onednn" path and the benchmark's "TF default".
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
say "ready: $(.tf-venv/bin/python -c 'import importlib.metadata as m; print("tensorflow-cpu", m.version("tensorflow-cpu"))')"
