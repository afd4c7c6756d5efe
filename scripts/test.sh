#!/usr/bin/env bash
# The test command: bootstrap, build, and run every test through ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
