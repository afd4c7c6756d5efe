#!/usr/bin/env bash
# Every CUDA variant compiled here must carry PTX for the configured
# capability (it runs only where a GPU exists; see gradtune_cuda_tests).
# Usage: check_ptx.sh <capability> <object>...
set -euo pipefail
capability="$1"; shift
[ "$#" -gt 0 ] || { echo "no CUDA variant objects"; exit 1; }
for object in "$@"; do
  text="$(strings "$object")"
  grep -Eq "^\.target[[:space:]]+sm_$capability" <<<"$text" || { echo "$object: no PTX for sm_$capability"; exit 1; }
  grep -q "\.entry" <<<"$text" || { echo "$object: no PTX kernel entry"; exit 1; }
done
echo "$# CUDA variant objects carry PTX for sm_$capability"
