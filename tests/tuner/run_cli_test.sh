#!/usr/bin/env bash
# `gradtune run` on .npy tensors: a correct call writes the output (TF's
# golden through the adjoint, as in the C++ test), bfloat16 via float32 files,
# and a bad call prints "InvalidArgument: <TF text>", exits 2 and writes nothing.
# Usage: run_cli_test.sh <gradtune> <python with numpy>
set -euo pipefail
gradtune="$1"; python="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" - "$work" <<'PY'
import numpy as np, sys
w = sys.argv[1]
np.save(f"{w}/filter.npy", np.arange(1, 17, dtype=np.float32).reshape(2, 2, 2, 2))
np.save(f"{w}/filter64.npy", np.arange(1, 17, dtype=np.float64).reshape(2, 2, 2, 2))
for k in range(8):
    dy = np.zeros((1, 1, 2, 4), np.float32); dy.flat[k] = 1
    np.save(f"{w}/dy{k}.npy", dy)
    np.save(f"{w}/dy64_{k}.npy", dy.astype(np.float64))
PY
for T in float32 float64 bfloat16; do
  for k in 0 1 2 3 4 5 6 7; do
    case $T in
      float32) args=(filter="$work/filter.npy" out_backprop="$work/dy$k.npy") ;;
      float64) args=(filter="$work/filter64.npy" out_backprop="$work/dy64_$k.npy") ;;
      bfloat16) args=(filter="$work/filter.npy" out_backprop="$work/dy$k.npy" T=bfloat16) ;;
    esac
    "$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 "${args[@]}" \
      strides=1,1,1,1 padding=VALID -o "$work/dx_${T}_$k.npy"
  done
done
"$python" - "$work" <<'PY'
import numpy as np, sys
w = sys.argv[1]
x = np.arange(1, 13, dtype=np.float64)
golden = [196, 216, 272, 296, 252, 280, 344, 376]
for T, dtype in (("float32", np.float32), ("float64", np.float64), ("bfloat16", np.float32)):
    got = [float((np.load(f"{w}/dx_{T}_{k}.npy").astype(np.float64).ravel() * x).sum()) for k in range(8)]
    assert np.load(f"{w}/dx_{T}_0.npy").dtype == dtype, T
    assert got == golden, (T, got)
print("golden reproduced through gradtune run for float32, float64, bfloat16")
PY
# A bad call: TF's error on stderr, exit status 2, no output file.
set +e
"$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter.npy" \
  out_backprop="$work/dy0.npy" strides=1,2,1,1 padding=VALID -o "$work/bad.npy" 2>"$work/err.txt"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "exit status $rc, expected 2"; exit 1; }
[ ! -e "$work/bad.npy" ] || { echo "an output file was written for a failed call"; exit 1; }
grep -qx "InvalidArgument: Current implementation only supports equal length strides in the row and column dimensions." "$work/err.txt" \
  || { echo "unexpected error text:"; cat "$work/err.txt"; exit 1; }
# GRADTUNE_VERBOSE works from the command line too.
GRADTUNE_VERBOSE=1 "$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter.npy" \
  out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$work/v.npy" 2>"$work/verbose.txt"
grep -q "^gradtune_verbose,cpu,DepthwiseConv2dNativeBackpropInput,float32,NHWC," "$work/verbose.txt"
echo "gradtune run OK"
