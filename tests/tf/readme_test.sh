#!/usr/bin/env bash
# The README's TensorFlow block ("## From TensorFlow"), run as written: it
# must train, and gradtune's kernels must compute the gradients
# (GRADTUNE_VERBOSE names each op gradtune runs).
# Usage: readme_test.sh PYTHON README
set -euo pipefail
python="$1"; readme="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed -n '/^## From TensorFlow/,$p' "$readme" | sed -n '/^```python$/,/^```$/p' | sed '1d;/^```$/,$d' >"$work/readme.py"
grep -q "use_for_gradients" "$work/readme.py" || { echo "no use_for_gradients block in the README"; exit 1; }
GRADTUNE_VERBOSE=1 "$python" "$work/readme.py" >"$work/out.log" 2>"$work/err.log" \
  || { cat "$work/out.log" "$work/err.log"; echo "the README's block failed"; exit 1; }
for op in Conv2DBackpropInput Conv2DBackpropFilter DepthwiseConv2dNativeBackpropFilter; do
  grep -q "$op" "$work/err.log" || { cat "$work/err.log"; echo "gradtune ran no $op"; exit 1; }
done
echo "the README's block trained, with gradtune's gradients: $(grep -c "Conv2DBackprop\|Depthwise" "$work/err.log") gradtune calls"
