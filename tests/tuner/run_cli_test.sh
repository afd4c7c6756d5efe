#!/usr/bin/env bash
# `gradtune run` on .npy tensors: a correct call writes the output (TF's
# golden through the adjoint, as in the C++ test), bfloat16 via float32 files,
# and a bad call prints "InvalidArgument: <TF text>", exits 2 and writes nothing.
# Usage: run_cli_test.sh <gradtune> <python with numpy>
set -euo pipefail
gradtune="$1"; python="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Runs gradtune, which must refuse: exit status 2 (stderr in $work/refused.err).
refuse() {
  set +e
  "$gradtune" "$@" >"$work/refused.out" 2>"$work/refused.err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "gradtune $*: exit status $rc, expected 2"; cat "$work/refused.err"; exit 1; }
}
"$python" - "$work" <<'PY'
import numpy as np, sys
w = sys.argv[1]
np.save(f"{w}/filter.npy", np.arange(1, 17, dtype=np.float32).reshape(2, 2, 2, 2))
np.save(f"{w}/filter64.npy", np.arange(1, 17, dtype=np.float64).reshape(2, 2, 2, 2))
np.save(f"{w}/conv_filter.npy", np.arange(1, 33, dtype=np.float32).reshape(2, 2, 2, 4))
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
refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter.npy" \
  out_backprop="$work/dy0.npy" strides=1,2,1,1 padding=VALID -o "$work/bad.npy"
[ ! -e "$work/bad.npy" ] || { echo "an output file was written for a failed call"; exit 1; }
grep -qx "InvalidArgument: Current implementation only supports equal length strides in the row and column dimensions." "$work/refused.err" \
  || { echo "unexpected error text:"; cat "$work/refused.err"; exit 1; }
# GRADTUNE_VERBOSE works from the command line too.
GRADTUNE_VERBOSE=1 "$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter.npy" \
  out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$work/v.npy" 2>"$work/verbose.txt"
grep -q "^gradtune_verbose,cpu,DepthwiseConv2dNativeBackpropInput,float32,NHWC," "$work/verbose.txt"

# .npy files NumPy writes and reads: Fortran order and big-endian give the
# same result as the C-order little-endian file.
"$python" - "$work" <<'PY'
import numpy as np, struct, sys
w = sys.argv[1]
f = np.arange(1, 17, dtype=np.float32).reshape(2, 2, 2, 2)
np.save(f"{w}/filter_fortran.npy", np.asfortranarray(f))
np.save(f"{w}/filter_big.npy", f.astype(">f4"))
# A valid header padded with 30000 spaces (NumPy reads it; a regex parser
# overflowed its stack on it).
header = ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2, 2), }" + " " * 30000 + "\n").encode()
open(f"{w}/filter_long.npy", "wb").write(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + f.tobytes())
assert (np.load(f"{w}/filter_long.npy", max_header_size=40000) == f).all()
assert np.load(f"{w}/filter_fortran.npy").flags.f_contiguous
PY
for variant in fortran big long; do
  "$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter_$variant.npy" \
    out_backprop="$work/dy3.npy" strides=1,1,1,1 padding=VALID -o "$work/dx_$variant.npy"
  cmp -s "$work/dx_$variant.npy" "$work/dx_float32_3.npy" ||
    { echo "a $variant .npy file gave another result"; exit 1; }
done

# Crafted .npy files: each is refused with InvalidArgument, exit 2, at once
# and without a large allocation (ulimit -v), and nothing is written.
"$python" - "$work" <<'PY'
import struct, sys
w = sys.argv[1]
def npy(name, header, data=b"", version=1, length=None):
    h = header.encode()
    if version == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h) if length is None else length)
    else:
        pre = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h) if length is None else length)
    open(f"{w}/{name}.npy", "wb").write(pre + h + data)
# shape product x element size wraps 64 bits
npy("wrap", "{'descr': '<f8', 'fortran_order': False, 'shape': (27905, 8681, 49477, 384773), }\n", b"\0" * 4)
# a header length far beyond the file
npy("huge_header", "", version=2, length=0xFFFFFFFF)
# a shape needing 8 GB, with 4 bytes of data
npy("big_shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648,), }\n", b"\0" * 4)
# an unparseable dimension and an empty one
npy("bad_dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }\n", b"\0" * 16)
npy("empty_dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 2), }\n", b"\0" * 16)
PY
for name in wrap huge_header big_shape bad_dim empty_dim; do
  # (A sanitized gradtune's shadow memory does not fit under ulimit -v; its
  # allocator refuses single allocations past 8 GB instead.)
  ( [ -n "${GRADTUNE_SANITIZED:-}" ] || ulimit -v 4000000; refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/$name.npy" \
      out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$work/out_$name.npy" )
  grep -q "^InvalidArgument: .*$name.npy: not a supported .npy file" "$work/refused.err" ||
    { echo "$name.npy: unexpected error:"; cat "$work/refused.err"; exit 1; }
  [ ! -e "$work/out_$name.npy" ] || { echo "$name.npy: an output was written"; exit 1; }
done
echo "crafted .npy files refused: wrap huge_header big_shape bad_dim empty_dim"

# Output paths that cannot be files: refused before the call, nothing left behind.
# A name longer than the file system allows (found by fuzz_cli) is refused
# too, not thrown.
mkdir -p "$work/outdir"
long_name="$work/$(printf 'p%.0s' $(seq 300)).npy"
for out in "$work/outdir" "" "$long_name"; do
  refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter.npy" \
    out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$out"
  grep -q "^InvalidArgument: " "$work/refused.err" || { cat "$work/refused.err"; exit 1; }
done
[ -z "$(find "$work" -name '*.gradtune-*.tmp')" ] || { echo "a temporary output was left behind"; exit 1; }
# The temporary an output is written to first is no file of the user's: a file
# named like the output plus ".tmp.npy" (another output's name, say) survives,
# and the directory holds nothing but the outputs afterwards.
mkdir "$work/keep"
echo "the user's file" >"$work/keep/o.npy.tmp.npy"
"$gradtune" run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 filter="$work/filter.npy" \
  out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$work/keep/o.npy"
[ "$(cat "$work/keep/o.npy.tmp.npy")" = "the user's file" ] || { echo "a user's file was overwritten"; exit 1; }
[ "$(ls -A "$work/keep" | tr '\n' ' ')" = "o.npy o.npy.tmp.npy " ] || { ls -A "$work/keep"; exit 1; }

# T=bfloat16 converts the T-typed inputs only: the int32 shape vectors of the
# dense gradients stay int32 (they were converted too, and the call refused).
"$gradtune" run Conv2DBackpropInput T=bfloat16 input_sizes=1,2,3,2 filter="$work/conv_filter.npy" \
  out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$work/cbi_bf16.npy"
"$gradtune" run Conv2DBackpropFilter T=bfloat16 input="$work/dx_float32_3.npy" filter_sizes=2,2,2,4 \
  out_backprop="$work/dy0.npy" strides=1,1,1,1 padding=VALID -o "$work/cbf_bf16.npy"
[ -s "$work/cbi_bf16.npy" ] && [ -s "$work/cbf_bf16.npy" ] || { echo "no bfloat16 output"; exit 1; }

# Sloppy arguments: an empty list element, a trailing comma, a repeated name,
# no op at all: each is refused with exit status 2.
base=(filter="$work/filter.npy" out_backprop="$work/dy0.npy" padding=VALID)
refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,,3,2 "${base[@]}" strides=1,1,1,1
grep -q "^InvalidArgument: an empty element in the list '1,,3,2'" "$work/refused.err" || { cat "$work/refused.err"; exit 1; }
refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 "${base[@]}" strides=1,1,1,1,
refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,2,3,2 "${base[@]}" strides=1,1,1,1 strides=1,2,2,1
grep -q "^InvalidArgument: strides= is given twice" "$work/refused.err" || { cat "$work/refused.err"; exit 1; }
refuse run
# An int32 shape element out of range: refused as such (a cast wrapped it into
# "Dimension 3 of input_sizes must be >= 0").
refuse run DepthwiseConv2dNativeBackpropInput input_sizes=1,4,4,4294967298 "${base[@]}" strides=1,1,1,1
grep -qx "InvalidArgument: 4294967298 does not fit in the int32 elements of '1,4,4,4294967298'" "$work/refused.err" ||
  { cat "$work/refused.err"; exit 1; }
echo "sloppy arguments refused"
echo "gradtune run OK"
