#!/usr/bin/env python3
"""Writes tests/golden/<Op>.json: golden cases produced by real TensorFlow.

Run through scripts/tf-fixtures.sh (it makes .tf-venv with the pinned TF).

How it works
------------
The parent process never imports TensorFlow. It builds the case list
(inputs, attrs; deterministic data), then runs every case in worker
subprocesses under BOTH TF CPU paths:

  native  TF_ENABLE_ONEDNN_OPTS=0  the Eigen kernels docs/tf-ops.md describes;
                                   our reference semantics (docs/tf-ops.md section 0)
  onednn  TF_ENABLE_ONEDNN_OPTS=1  pip TF's default: _Mkl* kernels for the convs

(the variable must be set before TF is imported, hence subprocesses). A worker
that dies (CHECK failure, heap corruption) loses one case: the parent records
the crash for that case and restarts the worker after it. Cases marked
`isolate` (old CHECK-abort / out-of-bounds repros) run alone in their own
worker so they cannot poison other cases.

Every conv-family case is also computed by a float64 "reformulation" that uses
only what native TF CPU supports -- the forward Conv2D op (which handles
groups, dilations and strides) on zero-padded / zero-stuffed numpy arrays:
  forward         Conv2D(pad(x), dense filter)
  backprop input  Conv2D(pad(stuff(dy)), rot180(filter) with in/out swapped)
  backprop filter Conv2D(x with batch as channels, dy as filter,
                         strides=dilations, dilations=strides)
Depthwise and grouped filters are expanded to dense block-diagonal filters.
The reformulation is exact for integer data, and it serves three purposes:
  * the expectation under gradtune's policy (docs/tf-ops.md section 15.1)
    where TF's CPU kernels refuse (dilations, groups) or silently ignore
    (depthwise dilations);
  * a check of every TF result (a disagreement is printed as a SURPRISE);
  * 16-bit cases: when TF's 16-bit kernel (which rounds partial sums) is
    further than half the harness tolerance from the float64 result rounded
    once, the case expects the rounded float64 result (docs/tf-ops.md
    sections 14 and 15.5).
NCHW cases that native TF refuses get the NHWC native result, transposed
("policy": "nchw_via_transpose ...").

Output: tests/golden/<Op>.json =
  {"op", "tensorflow": version, "generated_by", "cases": [
    {"name", "tf_path": "both" | "native" | "onednn"  (which TF path's raw-op call gave
                                                        the expectation; "native" also
                                                        for expectations derived on the
                                                        native path or set by policy),
     "policy": why the expectation differs from TF's raw op (docs/tf-ops.md section 15), optional,
     "note": optional remark,
     "inputs": {"<TF input name>": {"dtype", "shape", "values": flat row-major}},
     "attrs": {"<TF attr name>": value},
     "expect": {"outputs": [tensors]} | {"error": {"kind", "message"[, "prefix"]}},
     "tf": what each path did where it differs from "expect" (optional)}]}
  "prefix": the harness matches only this prefix (TF appends data-dependent text).
  float16/bfloat16 values are written as their exact values; integral values
  as integers.
"""
import argparse
import collections
import json
import math
import os
import pickle
import re
import subprocess
import sys
import tempfile
import zlib

import numpy as np

try:
    import ml_dtypes  # ships with TensorFlow; numpy's bfloat16
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

GENERATOR = "scripts/make_tf_fixtures.py"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

F16, F32, F64, I32, I64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), np.dtype(
    np.int32), np.dtype(np.int64)
DTYPE_NAMES = {F16: "float16", F32: "float32", F64: "float64", I32: "int32", I64: "int64"}
if BF16 is not None:
    DTYPE_NAMES[BF16] = "bfloat16"
# Normwise tolerances of the C++ harness (max|err| / max|ref|).
TOLERANCE = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-12, "int32": 0, "int64": 0}

DW_OPS = ("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")
CONV_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
ALL_OPS = DW_OPS + CONV_OPS + ("FractionalAvgPool", "FractionalAvgPoolGrad")

# Inputs / outputs in data_format order (transposed for NCHW<->NHWC).
ACTIVATION_INPUTS = {"input", "out_backprop"}
SIZE_INPUTS = {"input_sizes"}  # 4 values in data_format order
ACTIVATION_OUTPUT_OPS = {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "Conv2D",
                         "Conv2DBackpropInput"}

# TF texts that carry data-dependent suffixes: the harness matches the prefix.
PREFIX_MESSAGES = ("Row sequence tensor values must not be negative, got",
                   "Column sequence tensor values must not be negative, got")

# TF CPU refusals that gradtune's policy turns into supported features.
NCHW_REFUSALS = ("Depthwise convolution on CPU is only supported for NHWC format",
                 "The Conv2D op currently only supports the NHWC tensor format on the CPU. The op was given the format: NCHW",
                 "Conv2DCustomBackpropInputOp only supports NHWC.", "Conv2DCustomBackpropFilterOp only supports NHWC.")


# --------------------------------------------------------------------------
# Geometry (docs/tf-ops.md section 1.2): truncating division, exactly as TF.

def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def window(size, filt, dil, stride, padding, pb=0, pa=0):
    """(output size, pad before) or None where TF rejects the geometry."""
    if stride <= 0 or dil < 1:
        return None
    eff = (filt - 1) * dil + 1
    if padding == "VALID":
        out, pb = tdiv(size - eff + stride, stride), 0
    elif padding == "EXPLICIT":
        out = tdiv(size + pb + pa - eff + stride, stride)
    else:
        out = tdiv(size + stride - 1, stride)
        need = max(0, (out - 1) * stride + eff - size)
        pb = need // 2
    return None if out < 0 else (out, pb)


# --------------------------------------------------------------------------
# Deterministic data.

def rng_for(name):
    return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)


def data(rng, shape, dtype, kind="int", lo=-4, hi=4):
    """Small integers for f32/f64/int (exact under any summation order),
    uniform floats in [-1, 1) rounded to the type for 16-bit types (and for
    kind == "float")."""
    shape = tuple(int(s) for s in shape)
    if dtype in (I32, I64):
        return rng.randint(lo, hi + 1, size=shape).astype(dtype)
    if dtype in (F16, BF16) or kind == "float":
        return rng.uniform(-1, 1, size=shape).astype(dtype)
    return rng.randint(lo, hi + 1, size=shape).astype(dtype)


def iota(shape, dtype, start=1, scale=1.0):
    n = int(np.prod(shape))
    return (np.arange(start, start + n, dtype=np.float64) * scale).reshape(shape).astype(dtype)


def i32(values):
    return np.array(values, dtype=np.int32)


def i64(values):
    return np.array(values, dtype=np.int64)


# --------------------------------------------------------------------------
# Case construction.

CASES = []


def add(op, name, inputs, attrs, **flags):
    """flags: isolate (own subprocess), policy_zeros (docs/tf-ops.md section 15.2),
    policy_error (kind, message, note) for docs/tf-ops.md sections 15.3 and 15.1
    (invalid values), note (text)."""
    CASES.append({"op": op, "name": name, "inputs": collections.OrderedDict(inputs), "attrs": attrs,
                  "flags": flags})


def to_nchw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))


def perm_list(v):  # NHWC-ordered 4-list -> NCHW order
    return [v[0], v[3], v[1], v[2]]


def perm_pads(p):  # 8 explicit paddings NHWC -> NCHW
    pairs = [p[0:2], p[2:4], p[4:6], p[6:8]]
    return [x for pair in perm_list(pairs) for x in pair]


def conv_attrs(strides, padding, pads, dilations, fmt, with_dilations=True):
    """Attrs from NHWC-ordered strides/dilations/pads, converted to `fmt`."""
    if fmt == "NCHW":
        strides, dilations = perm_list(strides), perm_list(dilations)
        pads = perm_pads(pads) if pads else pads
    attrs = {"strides": list(strides), "padding": padding, "data_format": fmt}
    if padding == "EXPLICIT":
        attrs["explicit_paddings"] = list(pads)
    if with_dilations and list(dilations) != [1, 1, 1, 1]:
        attrs["dilations"] = list(dilations)
    return attrs


def conv_geometry(H, W, FH, FW, sh, sw, dh, dw, padding, pads):
    """NHWC explicit pads list (8) and output rows/cols, or None."""
    t, b, l, r = pads if padding == "EXPLICIT" else (0, 0, 0, 0)
    rows = window(H, FH, dh, sh, padding, t, b)
    cols = window(W, FW, dw, sw, padding, l, r)
    if rows is None or cols is None:
        return None
    return [0, 0, t, b, l, r, 0, 0], rows[0], cols[0]


def add_conv_family(op, name, dtype, fmt, N, H, W, C, FH, FW, K, groups=1, s=(1, 1), d=(1, 1), padding="VALID",
                    pads=(0, 0, 0, 0), kind="int", sizes_form=4):
    """One case of a conv-family op. K is the depth multiplier for depthwise
    ops, the output depth for Conv2D ops; groups applies to Conv2D ops."""
    geo = conv_geometry(H, W, FH, FW, s[0], s[1], d[0], d[1], padding, pads)
    if geo is None:
        return
    pads8, OH, OW = geo
    rng = rng_for(op + name)
    depthwise = op in DW_OPS
    filter_shape = (FH, FW, C, K) if depthwise else (FH, FW, C // groups, K)
    out_depth = C * K if depthwise else K
    x_shape, y_shape = (N, H, W, C), (N, OH, OW, out_depth)
    strides, dilations = [1, s[0], s[1], 1], [1, d[0], d[1], 1]
    attrs = conv_attrs(strides, padding, pads8, dilations, fmt)
    lay = (lambda a: to_nchw(a)) if fmt == "NCHW" else (lambda a: a)
    size_list = (lambda v: perm_list(v)) if fmt == "NCHW" else (lambda v: v)
    filt = data(rng, filter_shape, dtype, kind)
    if op in ("DepthwiseConv2dNative", "Conv2D"):
        inputs = [("input", lay(data(rng, x_shape, dtype, kind))), ("filter", filt)]
    elif op.endswith("BackpropInput"):
        sizes = i32(size_list(list(x_shape)) if sizes_form == 4 else [H, W])
        inputs = [("input_sizes", sizes), ("filter", filt), ("out_backprop", lay(data(rng, y_shape, dtype, kind)))]
    else:
        inputs = [("input", lay(data(rng, x_shape, dtype, kind))), ("filter_sizes", i32(filter_shape)),
                  ("out_backprop", lay(data(rng, y_shape, dtype, kind)))]
    add(op, name, inputs, attrs)


# Random geometries (NHWC numbers), small enough for tiny fixtures but with
# odd sizes, strides, dilations, asymmetric EXPLICIT pads, 1x1 and
# filter == input.
DW_GEOMETRIES = [
    # name, N, H, W, C, FH, FW, M, stride, dilation, padding, pads (t, b, l, r)
    ("valid_3x3", 2, 5, 6, 3, 3, 3, 2, 1, (1, 1), "VALID", (0, 0, 0, 0)),
    ("same_s2", 1, 7, 7, 2, 3, 2, 1, 2, (1, 1), "SAME", (0, 0, 0, 0)),
    ("explicit_s2", 2, 6, 5, 2, 2, 3, 3, 2, (1, 1), "EXPLICIT", (1, 2, 0, 3)),
    ("same_dil2", 1, 8, 7, 3, 3, 3, 2, 1, (2, 2), "SAME", (0, 0, 0, 0)),
    ("explicit_s2_dil21", 1, 9, 8, 2, 2, 3, 1, 2, (2, 1), "EXPLICIT", (2, 1, 1, 0)),
    ("valid_1x1_m2", 3, 4, 4, 1, 1, 1, 2, 1, (1, 1), "VALID", (0, 0, 0, 0)),
    ("same_s3", 1, 3, 5, 2, 3, 3, 2, 3, (1, 1), "SAME", (0, 0, 0, 0)),
    ("explicit_4x4", 1, 5, 4, 4, 4, 4, 1, 1, (1, 1), "EXPLICIT", (0, 1, 2, 3)),
    ("valid_dil3_s1", 1, 9, 10, 1, 2, 3, 3, 1, (3, 2), "VALID", (0, 0, 0, 0)),
]
CONV_GEOMETRIES = [
    # name, N, H, W, Cin, FH, FW, Cout, groups, strides, dilations, padding, pads
    ("valid_3x3", 2, 5, 4, 3, 3, 3, 2, 1, (1, 1), (1, 1), "VALID", (0, 0, 0, 0)),
    ("same_s21", 1, 6, 7, 2, 2, 3, 3, 1, (2, 1), (1, 1), "SAME", (0, 0, 0, 0)),
    ("explicit_s32", 2, 7, 6, 2, 3, 2, 2, 1, (3, 2), (1, 1), "EXPLICIT", (1, 2, 2, 0)),
    ("same_dil2", 1, 8, 8, 2, 3, 3, 2, 1, (1, 1), (2, 2), "SAME", (0, 0, 0, 0)),
    ("explicit_s2_dil21", 1, 9, 7, 3, 2, 3, 2, 1, (2, 2), (2, 1), "EXPLICIT", (0, 1, 1, 1)),
    ("valid_groups2", 2, 5, 5, 4, 3, 3, 6, 2, (1, 1), (1, 1), "VALID", (0, 0, 0, 0)),
    ("same_groups3_s2_dil12", 1, 6, 6, 6, 2, 2, 3, 3, (2, 2), (1, 2), "SAME", (0, 0, 0, 0)),
    ("valid_1x1", 1, 4, 5, 1, 1, 1, 3, 1, (1, 1), (1, 1), "VALID", (0, 0, 0, 0)),
    ("filter_eq_input", 1, 3, 3, 2, 3, 3, 1, 1, (1, 1), (1, 1), "VALID", (0, 0, 0, 0)),
    ("explicit_groups2_s12", 1, 5, 6, 4, 3, 2, 4, 2, (1, 2), (1, 1), "EXPLICIT", (2, 0, 1, 3)),
]


def build_conv_random():
    float_types = [F16, BF16, F32, F64]
    for op in DW_OPS:
        for dtype in float_types:
            for fmt in ("NHWC", "NCHW"):
                for (g, N, H, W, C, FH, FW, M, s, d, pad, pads) in DW_GEOMETRIES:
                    add_conv_family(op, f"random_{g}_{DTYPE_NAMES[dtype]}_{fmt}", dtype, fmt, N, H, W, C, FH, FW, M,
                                    s=(s, s), d=d, padding=pad, pads=pads)
        # Random non-integer float32/float64 data (rounding, not just exactness).
        for dtype in (F32, F64):
            for (g, N, H, W, C, FH, FW, M, s, d, pad, pads) in DW_GEOMETRIES[:5]:
                add_conv_family(op, f"randfloat_{g}_{DTYPE_NAMES[dtype]}_NHWC", dtype, "NHWC", N, H, W, C, FH, FW,
                                M, s=(s, s), d=d, padding=pad, pads=pads, kind="float")
    for op in CONV_OPS:
        types = float_types + ([I32] if op != "Conv2DBackpropFilter" else [])
        for dtype in types:
            for fmt in ("NHWC", "NCHW"):
                for (g, N, H, W, C, FH, FW, K, G, s, d, pad, pads) in CONV_GEOMETRIES:
                    add_conv_family(op, f"random_{g}_{DTYPE_NAMES[dtype]}_{fmt}", dtype, fmt, N, H, W, C, FH, FW, K,
                                    groups=G, s=s, d=d, padding=pad, pads=pads)
        for dtype in (F32, F64):
            for (g, N, H, W, C, FH, FW, K, G, s, d, pad, pads) in CONV_GEOMETRIES[:6]:
                add_conv_family(op, f"randfloat_{g}_{DTYPE_NAMES[dtype]}_NHWC", dtype, "NHWC", N, H, W, C, FH, FW, K,
                                groups=G, s=s, d=d, padding=pad, pads=pads, kind="float")
    # The 2-value input_sizes form of Conv2DBackpropInput (batch from
    # out_backprop, depth from the filter).
    for (g, N, H, W, C, FH, FW, K, G, s, d, pad, pads) in CONV_GEOMETRIES[:3]:
        for dtype in (F32, F16):
            add_conv_family("Conv2DBackpropInput", f"sizes2_{g}_{DTYPE_NAMES[dtype]}", dtype, "NHWC", N, H, W, C, FH,
                            FW, K, s=s, d=d, padding=pad, pads=pads, sizes_form=2)


# --- docs/tf-ops.md section 13: TF's own goldens and test shapes ------------

def build_tf_goldens():
    # 13.1 Conv2DBackpropInput goldens: data 1..N, float32 (and the other
    # float types TF's CPU kernel has).
    bpi = [([1, 2, 3, 1], [2, 2, 1, 1], [1, 1, 2, 1], (1, 1), "VALID"),
           ([1, 2, 3, 3], [2, 2, 3, 3], [1, 1, 2, 3], (1, 1), "VALID"),
           ([1, 3, 6, 1], [2, 2, 1, 1], [1, 2, 3, 1], (1, 2), "VALID"),
           ([1, 4, 4, 1], [1, 1, 1, 1], [1, 2, 2, 1], (2, 2), "SAME"),
           ([1, 2, 2, 1], [2, 2, 1, 2], [1, 1, 1, 2], (1, 1), "VALID"),
           ([2, 2], [2, 2, 1, 2], [1, 1, 1, 2], (1, 1), "VALID"),
           ([3, 1, 1, 2], [1, 3, 2, 3], [3, 1, 0, 3], (1, 2), "VALID"),
           ([0, 2, 3, 1], [2, 2, 1, 1], [0, 1, 2, 1], (1, 1), "VALID")]
    for i, (sizes, fshape, yshape, s, pad) in enumerate(bpi):
        for dtype in (F32, F64, F16, BF16):
            add("Conv2DBackpropInput", f"tf13.1_golden{i}_{DTYPE_NAMES[dtype]}",
                [("input_sizes", i32(sizes)), ("filter", iota(fshape, dtype)), ("out_backprop", iota(yshape, dtype))],
                {"strides": [1, s[0], s[1], 1], "padding": pad, "data_format": "NHWC"})
    # Explicit-padding backprop tests of 13.1 (input_sizes, filter, out_backprop, strides, pads t,b,l,r).
    explicit = [([1, 2, 3, 1], [2, 2, 1, 1], (1, 1), (0, 0, 0, 0)),
                ([1, 3, 4, 2], [2, 2, 2, 3], (2, 2), (0, 0, 0, 0)),
                ([1, 2, 3, 1], [2, 2, 1, 2], (1, 1), (1, 1, 1, 1)),
                ([1, 2, 3, 2], [1, 1, 2, 1], (1, 2), (1, 1, 1, 1)),
                ([2, 3, 1, 1], [2, 1, 1, 1], (3, 1), (2, 2, 2, 2)),
                ([1, 2, 3, 1], [2, 2, 1, 1], (1, 1), (1, 8, 4, 2)),
                ([1, 5, 3, 1], [3, 2, 1, 1], (3, 1), (1, 8, 4, 2)),
                ([1, 3, 3, 1], [2, 1, 1, 1], (1, 1), (5, 0, 2, 2))]
    for i, (x, f, s, p) in enumerate(explicit):
        geo = conv_geometry(x[1], x[2], f[0], f[1], s[0], s[1], 1, 1, "EXPLICIT", p)
        pads8, OH, OW = geo
        y = [x[0], OH, OW, f[3]]
        attrs = {"strides": [1, s[0], s[1], 1], "padding": "EXPLICIT", "explicit_paddings": pads8,
                 "data_format": "NHWC"}
        add("Conv2DBackpropInput", f"tf13.1_explicit{i}", [("input_sizes", i32(x)), ("filter", iota(f, F32)),
                                                         ("out_backprop", iota(y, F32))], attrs)
        add("Conv2DBackpropFilter", f"tf13.1_explicit{i}", [("input", iota(x, F32)), ("filter_sizes", i32(f)),
                                                          ("out_backprop", iota(y, F32))], attrs)
        add("Conv2D", f"tf13.1_explicit{i}", [("input", iota(x, F32)), ("filter", iota(f, F32))], attrs)
    # 13.2 Conv2DBackpropFilter goldens, f32/f64/f16/bf16.
    bpf = [([1, 2, 3, 1], [2, 2, 1, 1], [1, 1, 2, 1], (1, 1), "VALID"),
           ([1, 2, 3, 1], [2, 2, 1, 0], [1, 1, 2, 0], (1, 1), "VALID"),
           ([0, 2, 3, 1], [2, 2, 1, 1], [0, 1, 2, 1], (1, 1), "VALID"),
           ([1, 2, 3, 3], [2, 2, 3, 3], [1, 1, 2, 3], (1, 1), "VALID"),
           ([1, 3, 6, 1], [2, 2, 1, 1], [1, 2, 3, 1], (1, 2), "VALID"),
           ([1, 4, 4, 1], [1, 1, 1, 1], [1, 2, 2, 1], (2, 2), "SAME"),
           ([1, 2, 2, 1], [2, 2, 1, 2], [1, 1, 1, 2], (1, 1), "VALID")]
    for i, (xs, fs, ys, s, pad) in enumerate(bpf):
        for dtype in (F32, F64, F16, BF16):
            add("Conv2DBackpropFilter", f"tf13.2_golden{i}_{DTYPE_NAMES[dtype]}",
                [("input", iota(xs, dtype)), ("filter_sizes", i32(fs)), ("out_backprop", iota(ys, dtype))],
                {"strides": [1, s[0], s[1], 1], "padding": pad, "data_format": "NHWC"})
    # 13.3 gradient-checker configs (batch, rows, cols, f_rows, f_cols, in_depth,
    # out_depth, stride_r, stride_c, padding[, pads]) as direct backprop calls
    # with TF's k/N data pattern replaced by small integers (exact).
    grad_configs = [(2, 5, 4, 3, 3, 2, 3, 1, 1, "VALID", None), (2, 4, 5, 3, 3, 2, 3, 2, 2, "VALID", None),
                    (2, 7, 6, 3, 3, 4, 5, 3, 3, "VALID", None), (4, 6, 5, 2, 2, 2, 3, 1, 1, "VALID", None),
                    (4, 6, 5, 2, 2, 2, 3, 2, 2, "VALID", None), (2, 8, 7, 4, 4, 2, 3, 3, 3, "VALID", None),
                    (2, 7, 6, 3, 3, 2, 3, 1, 1, "SAME", None), (2, 5, 4, 3, 3, 3, 3, 2, 2, "SAME", None),
                    (2, 8, 7, 4, 4, 2, 3, 2, 1, "SAME", None), (2, 4, 3, 4, 3, 2, 3, 1, 1, "VALID", None),
                    (2, 5, 4, 3, 3, 2, 3, 1, 1, "EXPLICIT", (1, 1, 1, 1)),
                    (2, 4, 5, 3, 3, 2, 3, 2, 2, "EXPLICIT", (1, 1, 1, 1)),
                    (2, 5, 4, 3, 3, 2, 3, 1, 1, "EXPLICIT", (2, 2, 2, 2)),
                    (2, 8, 5, 4, 2, 3, 2, 3, 2, "EXPLICIT", (1, 2, 3, 4)),
                    (3, 5, 7, 3, 2, 1, 2, 2, 1, "EXPLICIT", (4, 3, 2, 1)),
                    (2, 6, 7, 3, 4, 3, 2, 1, 2, "EXPLICIT", (0, 0, 0, 5))]
    for i, (N, H, W, FH, FW, C, K, sr, sc, pad, pads) in enumerate(grad_configs):
        for op in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
            add_conv_family(op, f"tf13.3_config{i}", F32, "NHWC", N, H, W, C, FH, FW, K, s=(sr, sc), padding=pad,
                            pads=pads or (0, 0, 0, 0))
    # TF's grouped-gradient config (GPU-only in TF's tests): groups 2.
    for op in ("Conv2DBackpropInput", "Conv2DBackpropFilter", "Conv2D"):
        add_conv_family(op, "tf13.3_groups2", F32, "NHWC", 2, 5, 4, 4, 3, 3, 6, groups=2)

    # 1.1 / 13.4 depthwise hand golden: input 1..12, filter 1..16, VALID s1.
    for dtype in (F32, F64, F16, BF16):
        x, f = iota([1, 2, 3, 2], dtype), iota([2, 2, 2, 2], dtype)
        attrs = {"strides": [1, 1, 1, 1], "padding": "VALID", "data_format": "NHWC"}
        n = DTYPE_NAMES[dtype]
        add("DepthwiseConv2dNative", f"tf1.1_golden_{n}", [("input", x), ("filter", f)], attrs)
        dy = iota([1, 1, 2, 4], dtype)
        add("DepthwiseConv2dNativeBackpropInput", f"tf1.1_golden_{n}",
            [("input_sizes", i32([1, 2, 3, 2])), ("filter", f), ("out_backprop", dy)], attrs)
        add("DepthwiseConv2dNativeBackpropFilter", f"tf1.1_golden_{n}",
            [("input", x), ("filter_sizes", i32([2, 2, 2, 2])), ("out_backprop", dy)], attrs)
    # 13.4 forward configs with channels/batch scaled down (input, filter, stride, padding, pads, dilation).
    fwd = [([2, 5, 5, 6], [1, 1, 6, 2], 1, "SAME", None, 1), ([2, 8, 8, 5], [1, 3, 5, 1], 1, "SAME", None, 1),
           ([1, 17, 17, 3], [3, 1, 3, 4], 1, "SAME", None, 1), ([2, 9, 27, 4], [3, 3, 4, 1], 1, "SAME", None, 1),
           ([1, 31, 31, 2], [3, 3, 2, 1], 1, "SAME", None, 1), ([1, 35, 35, 2], [5, 5, 2, 1], 1, "SAME", None, 1),
           ([1, 47, 47, 2], [3, 3, 2, 8], 3, "VALID", None, 1), ([1, 29, 29, 3], [3, 2, 3, 8], 2, "SAME", None, 1),
           ([1, 33, 33, 1], [5, 5, 1, 2], 2, "SAME", None, 1), ([1, 33, 33, 1], [5, 5, 1, 2], 1, "SAME", None, 2),
           ([1, 41, 35, 2], [4, 7, 2, 2], 1, "VALID", None, (3, 2)),
           ([2, 5, 5, 6], [1, 1, 6, 2], 1, "EXPLICIT", (1, 2, 3, 4), 1),
           ([2, 1, 1, 3], [3, 3, 3, 2], 1, "EXPLICIT", (10, 20, 15, 25), 1),
           ([2, 9, 27, 4], [3, 3, 4, 1], 1, "EXPLICIT", (3, 4, 4, 2), 1),
           ([1, 31, 31, 2], [3, 3, 2, 1], 1, "EXPLICIT", (0, 0, 0, 0), 1),
           ([1, 29, 29, 3], [3, 2, 3, 8], 2, "EXPLICIT", (1, 2, 3, 5), 1),
           ([1, 33, 33, 1], [5, 5, 1, 2], 3, "EXPLICIT", (3, 2, 1, 0), 1),
           ([2, 5, 5, 6], [3, 3, 6, 1], 1, "EXPLICIT", (0, 2, 0, 2), 1),
           ([1, 8, 7, 2], [8, 7, 2, 1], 1, "EXPLICIT", (0, 7, 3, 3), 1),
           ([2, 4, 3, 2], [3, 2, 2, 1], 1, "EXPLICIT", (2, 0, 1, 0), 1)]
    for i, (xs, fs, s, pad, pads, dil) in enumerate(fwd):
        d = dil if isinstance(dil, tuple) else (dil, dil)
        add_conv_family("DepthwiseConv2dNative", f"tf13.4_forward{i}", F32, "NHWC", xs[0], xs[1], xs[2], xs[3],
                        fs[0], fs[1], fs[3], s=(s, s), d=d, padding=pad, pads=pads or (0, 0, 0, 0))
    # 13.4 gradient configs (input, filter, stride, padding, pads, dilation).
    grads = [([2, 5, 8, 1], [4, 4, 1, 2], 1, "SAME", None, (1, 1)), ([4, 5, 5, 1], [2, 2, 1, 2], 2, "VALID", None, (1, 1)),
             ([2, 4, 4, 2], [3, 1, 2, 2], 1, "SAME", None, (1, 1)), ([1, 15, 15, 2], [1, 3, 2, 1], 1, "SAME", None, (1, 1)),
             ([2, 15, 16, 1], [3, 3, 1, 2], 3, "VALID", None, (1, 1)), ([2, 5, 8, 1], [4, 3, 1, 2], 1, "SAME", None, (1, 2)),
             ([1, 3, 1, 2], [2, 1, 2, 1], 1, "SAME", None, (1, 1)), ([2, 2, 3, 2], [2, 1, 2, 1], 1, "SAME", None, (1, 1)),
             ([2, 2, 3, 1], [2, 2, 1, 1], 1, "SAME", None, (1, 1)),
             ([2, 5, 8, 1], [4, 4, 1, 2], 1, "EXPLICIT", (0, 1, 2, 3), (1, 1)),
             ([4, 5, 5, 1], [2, 2, 1, 2], 2, "EXPLICIT", (3, 1, 5, 0), (1, 1)),
             ([2, 4, 4, 2], [3, 1, 2, 2], 1, "EXPLICIT", (4, 1, 3, 4), (1, 1)),
             ([1, 15, 15, 2], [1, 3, 2, 1], 1, "EXPLICIT", (3, 0, 2, 8), (1, 1)),
             ([2, 15, 16, 1], [3, 3, 1, 2], 3, "EXPLICIT", (0, 0, 10, 0), (1, 1)),
             ([2, 5, 8, 1], [3, 4, 1, 2], 1, "EXPLICIT", (3, 1, 2, 3), (2, 1)),
             ([2, 4, 3, 2], [3, 2, 2, 1], 1, "EXPLICIT", (2, 0, 1, 0), (1, 1))]
    for i, (xs, fs, s, pad, pads, d) in enumerate(grads):
        for op in ("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"):
            for dtype in (F32, F64):
                add_conv_family(op, f"tf13.4_gradient{i}_{DTYPE_NAMES[dtype]}", dtype, "NHWC", xs[0], xs[1], xs[2],
                                xs[3], fs[0], fs[1], fs[3], s=(s, s), d=d, padding=pad, pads=pads or (0, 0, 0, 0))


# --- docs/tf-ops.md section 11: bad inputs, per op --------------------------

def dw_bad_inputs():
    """Rows 1-24 and 68 for both depthwise backprops, and section 2 for the forward."""
    f32 = F32
    A = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC"}
    ones = lambda shape, dt=f32: np.ones(shape, dt)
    seq = lambda shape, dt=f32: iota(shape, dt)
    for op in ("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"):
        bpi = op.endswith("Input")

        def call(name, attrs=None, sizes=None, filt=None, dy=None, x=None, **flags):
            attrs = dict(A, **(attrs or {}))
            if bpi:
                sizes = i32([1, 4, 4, 2]) if sizes is None else sizes
                filt = seq([3, 3, 2, 1]) if filt is None else filt
                inputs = [("input_sizes", sizes), ("filter", filt), ("out_backprop", seq([1, 4, 4, 2]) if dy is None else dy)]
            else:
                sizes = i32([3, 3, 2, 1]) if sizes is None else sizes
                inputs = [("input", seq([1, 4, 4, 2]) if x is None else x), ("filter_sizes", sizes),
                          ("out_backprop", seq([1, 4, 4, 2]) if dy is None else dy)]
            add(op, name, inputs, attrs, **flags)

        call("row01_strides_length_3", {"strides": [1, 1, 1]})
        call("row02_unequal_strides", {"strides": [1, 1, 2, 1]})
        call("row03_batch_stride", {"strides": [2, 1, 1, 1]})
        call("row03_depth_stride", {"strides": [1, 1, 1, 2]})
        call("row04_stride_0", {"strides": [1, 0, 0, 1]})
        call("row04_stride_negative", {"strides": [1, -2, -2, 1]})
        call("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]})
        call("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]})
        call("row07_batch_explicit", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]})
        call("row08_paddings_with_same", {"explicit_paddings": [0, 0, 0, 0, 0, 0, 0, 0]})
        if bpi:
            call("row09_sizes_2d", sizes=np.array([[1, 4], [4, 2]], np.int32))
            call("row10_negative_size", sizes=i32([1, 4, -4, 2]))
            call("row12_overflow", sizes=i32([13, 1879048192, 1879048192, 2]), isolate=True)
            call("row13_sizes_length_3", sizes=i32([4, 4, 2]))
            call("row13_sizes_length_5", sizes=i32([1, 4, 4, 2, 1]))
            call("row14_filter_rank_3", filt=seq([3, 3, 2]), isolate=True)
        else:
            call("row11_sizes_2d", sizes=np.array([[3, 3], [2, 1]], np.int32))
            call("row11_negative_size", sizes=i32([3, -3, 2, 1]))
            call("row12_overflow", sizes=i32([13, 1879048192, 1879048192, 2]), isolate=True)
            call("row13_sizes_length_3", sizes=i32([3, 3, 2]))
            call("row14_input_rank_3", x=seq([4, 4, 2]), isolate=True)
        call("row14_out_backprop_rank_3", dy=seq([4, 4, 2]), isolate=True)
        call("row15_batch_mismatch", dy=seq([2, 4, 4, 2]))
        if bpi:
            call("row16_input_rows_too_large", sizes=i32([1, 2147483647, 4, 2]))
            call("row16_input_cols_too_large", sizes=i32([1, 4, 2147483647, 2]))
            call("row16_output_rows_too_large", sizes=i32([0, 4, 4, 2]), dy=np.zeros([0, 2147483647, 4, 2], f32))
            call("row16_output_cols_too_large", sizes=i32([0, 4, 4, 2]), dy=np.zeros([0, 4, 2147483647, 2], f32))
            call("row16_output_depth_too_large", sizes=i32([0, 4, 4, 2]), dy=np.zeros([0, 4, 4, 2147483647], f32))
            call("row17_in_depth_mismatch", filt=seq([3, 3, 3, 1]))
        else:
            call("row16_input_rows_too_large", x=np.zeros([0, 2147483647, 4, 2], f32), dy=np.zeros([0, 4, 4, 2], f32))
            call("row16_output_depth_too_large", x=np.zeros([0, 4, 4, 2], f32),
                 dy=np.zeros([0, 4, 4, 2147483647], f32))
            call("row17_in_depth_mismatch", sizes=i32([3, 3, 3, 1]))
        call("row18_out_depth_mismatch", dy=seq([1, 4, 4, 3]))
        if bpi:
            call("row19_output_size_negative", {"strides": [1, 2, 2, 1], "padding": "VALID"},
                 sizes=i32([1, 1, 4, 2]), filt=seq([5, 1, 2, 1]), dy=seq([1, 1, 2, 2]))
            call("row19_truncation_gives_empty_output", {"strides": [1, 2, 2, 1], "padding": "VALID"},
                 sizes=i32([1, 1, 4, 2]), filt=seq([4, 1, 2, 1]), dy=np.zeros([1, 0, 2, 2], f32))
        else:
            call("row19_output_size_negative", {"strides": [1, 2, 2, 1], "padding": "VALID"},
                 x=seq([1, 1, 4, 2]), sizes=i32([5, 1, 2, 1]), dy=seq([1, 1, 2, 2]))
            # The output is empty (0 rows), so this is also row 23.
            call("row19_truncation_gives_empty_output", {"strides": [1, 2, 2, 1], "padding": "VALID"},
                 x=seq([1, 1, 4, 2]), sizes=i32([4, 1, 2, 1]), dy=np.zeros([1, 0, 2, 2], f32),
                 policy_zeros="spec 15.2 / rows 19+23: out_backprop is empty, TF returns uninitialised memory")
        call("row20_rows_mismatch", dy=seq([1, 3, 4, 2]))
        call("row20_cols_mismatch", dy=seq([1, 4, 5, 2]))
        nchw = dict(A, data_format="NCHW")
        if bpi:
            call("row21_nchw", nchw, sizes=i32([1, 2, 4, 4]), dy=seq([1, 2, 4, 4]))
            call("row21_nchw_empty_output_accepted", nchw, sizes=i32([0, 2, 4, 4]), dy=np.zeros([0, 2, 4, 4], f32))
        else:
            call("row21_nchw", nchw, x=seq([1, 2, 4, 4]), dy=seq([1, 2, 4, 4]))
        # Row 22: TF ignores dilations; gradtune honours valid ones and
        # rejects invalid ones (docs/tf-ops.md section 15.1).
        call("row22_dilation2_same", {"dilations": [1, 2, 2, 1]})
        pol = lambda msg: ("InvalidArgument", msg, "spec 15.1 / row 22: TF ignores depthwise-backprop dilations; "
                                                   "gradtune rejects invalid ones")
        call("row22_dilations_length_5", {"dilations": [1, 0, 77, 1, 64]},
             policy_error=pol("Sliding window dilations field must specify 4 dimensions"))
        call("row22_dilations_length_3", {"dilations": [1, 1, 1]},
             policy_error=pol("Sliding window dilations field must specify 4 dimensions"))
        call("row22_batch_dilation", {"dilations": [2, 1, 1, 1]}, policy_error=pol(
            "Current implementation does not yet support dilations in the batch and depth dimensions."))
        call("row22_dilation_0", {"dilations": [1, 0, 1, 1]},
             policy_error=pol("Dilation rate must be >= 1, but got 0"))
        if bpi:
            call("row24_depth_multiplier_0", sizes=i32([1, 4, 4, 2]), filt=np.zeros([3, 3, 2, 0], f32),
                 dy=np.zeros([1, 4, 4, 0], f32), policy_zeros="spec 15.2 / row 24: TF returns uninitialised memory")
            # Effective filter size 0: VALID output rows = input rows + 1.
            call("filter_spatial_0", filt=np.zeros([0, 3, 2, 1], f32), dy=seq([1, 5, 2, 2]),
                 attrs={"padding": "VALID"}, sizes=i32([1, 4, 4, 2]))
        else:
            call("row23_empty_out_backprop", x=np.zeros([0, 4, 4, 2], f32), dy=np.zeros([0, 4, 4, 2], f32),
                 policy_zeros="spec 15.2 / row 23: TF returns uninitialised memory")
        # Row 68 and the op definition.
        if bpi:
            call("row68_int32", filt=ones([3, 3, 2, 1], I32), dy=ones([1, 4, 4, 2], I32))
            call("row68_mixed_types", dy=seq([1, 4, 4, 2], F64))
            call("row68_sizes_int64", sizes=i64([1, 4, 4, 2]))
        else:
            call("row68_int32", x=ones([1, 4, 4, 2], I32), dy=ones([1, 4, 4, 2], I32))
            call("row68_mixed_types", dy=seq([1, 4, 4, 2], F64))
            call("row68_sizes_int64", sizes=i64([3, 3, 2, 1]))
        call("padding_full", {"padding": "FULL"})
        call("data_format_ncwh", {"data_format": "NCWH"})

    # DepthwiseConv2dNative (section 2).
    op = "DepthwiseConv2dNative"

    def fcall(name, attrs=None, x=None, filt=None, **flags):
        add(op, name, [("input", seq([1, 4, 4, 2]) if x is None else x),
                       ("filter", seq([3, 3, 2, 2]) if filt is None else filt)], dict(A, **(attrs or {})), **flags)

    fcall("strides_length_3", {"strides": [1, 1, 1]})
    fcall("unequal_strides", {"strides": [1, 1, 2, 1]})
    fcall("batch_stride", {"strides": [2, 1, 1, 1]})
    fcall("stride_0", {"strides": [1, 0, 0, 1]})
    fcall("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]})
    fcall("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]})
    fcall("row07_depth_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1, 1, 1, 0, 1]})
    fcall("row08_paddings_with_valid", {"padding": "VALID", "explicit_paddings": [0] * 8})
    fcall("input_rank_3", x=seq([4, 4, 2]))
    fcall("filter_rank_3", filt=seq([3, 3, 2]))
    fcall("depth_mismatch", filt=seq([3, 3, 3, 2]))
    fcall("output_size_negative", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
          filt=seq([5, 1, 2, 1]))
    fcall("truncation_gives_empty_output", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
          filt=seq([4, 1, 2, 1]))
    fcall("nchw_empty_output", {"data_format": "NCHW"}, x=np.zeros([0, 2, 4, 4], f32))
    fcall("dilation2_same", {"dilations": [1, 2, 2, 1]})
    fcall("row68_int32", x=ones([1, 4, 4, 2], I32), filt=ones([3, 3, 2, 2], I32))
    fcall("row68_mixed_types", filt=seq([3, 3, 2, 2], F64))
    fcall("depth_multiplier_0", filt=np.zeros([3, 3, 2, 0], f32))
    fcall("filter_spatial_0", filt=np.zeros([0, 3, 2, 1], f32), attrs={"padding": "VALID"}, x=seq([1, 0, 4, 2]))


def conv_bad_inputs():
    f32 = F32
    seq = lambda shape, dt=f32: iota(shape, dt)
    A = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC"}
    # --- Conv2DBackpropInput (section 6, rows 25-47) ---
    op = "Conv2DBackpropInput"

    def icall(name, attrs=None, sizes=None, filt=None, dy=None, **flags):
        add(op, name, [("input_sizes", i32([1, 4, 4, 2]) if sizes is None else sizes),
                       ("filter", seq([3, 3, 2, 3]) if filt is None else filt),
                       ("out_backprop", seq([1, 4, 4, 3]) if dy is None else dy)], dict(A, **(attrs or {})), **flags)

    icall("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]})
    icall("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]})
    icall("row07_batch_explicit", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]})
    icall("row08_paddings_with_same", {"explicit_paddings": [0] * 8})
    icall("row25_nchw", {"data_format": "NCHW"}, sizes=i32([1, 2, 4, 4]), dy=seq([1, 3, 4, 4]))
    icall("row26_batch_stride", {"strides": [2, 1, 1, 1]})
    icall("row26_depth_stride", {"strides": [1, 1, 1, 2]})
    icall("row27_stride_0", {"strides": [1, 0, 1, 1]})
    icall("row27_stride_negative", {"strides": [1, 1, -1, 1]})
    icall("strides_length_3", {"strides": [1, 1, 1]})
    icall("row28_dilations_length_3", {"dilations": [1, 1, 1]})
    icall("row29_batch_dilation", {"dilations": [2, 1, 1, 1]})
    icall("row30_dilation2_same", {"dilations": [1, 2, 2, 1]})
    icall("row30_dilation_0", {"dilations": [1, 0, 1, 1]})
    icall("row31_out_backprop_rank_3", dy=seq([4, 4, 3]))
    icall("row32_sizes_2d", sizes=np.array([[1, 4], [4, 2]], np.int32))
    icall("row33_sizes_length_3", sizes=i32([4, 4, 2]), isolate=True)
    icall("row33_sizes_length_1", sizes=i32([4]), isolate=True)
    icall("row33_sizes_length_5", sizes=i32([1, 4, 4, 2, 1]), isolate=True)
    icall("row34_negative_4_values", sizes=i32([1, -5, 4, 2]))
    icall("row35_negative_2_values", sizes=i32([-4, 4]))
    icall("row36_shape_overflow", sizes=i32([2147483647, 2147483647, 2147483647, 2]), isolate=True)
    icall("row37_filter_rank_3", filt=seq([3, 3, 2]), isolate=True)
    icall("row37_batch_mismatch", dy=seq([2, 4, 4, 3]))
    icall("row37_out_depth_mismatch", dy=seq([1, 4, 4, 2]))
    icall("row38_filter_depth_0", filt=np.zeros([3, 3, 0, 3], f32))
    icall("row39_depth_not_divisible", sizes=i32([1, 4, 4, 3]))
    icall("row40_rows_mismatch", dy=seq([1, 3, 4, 3]))
    icall("row40_cols_mismatch", dy=seq([1, 4, 6, 3]))
    icall("row41_groups2", sizes=i32([1, 4, 4, 4]), filt=seq([3, 3, 2, 4]), dy=seq([1, 4, 4, 4]))
    icall("row41_groups_out_depth_not_divisible", sizes=i32([1, 4, 4, 4]), filt=seq([3, 3, 2, 3]),
          note="grouped gradient whose out depth is not divisible by the group count: TF's CPU text kept")
    add(op, "row45_tfsa_2021_014", [("input_sizes", i32([52, 1, 1, 5])), ("filter", np.zeros([0, 1, 5, 0], f32)),
                                    ("out_backprop", np.zeros([52, 1, 1, 0], f32))], dict(A))
    add(op, "row46_empty_out_backprop", [("input_sizes", i32([3, 1, 1, 2])), ("filter", seq([1, 3, 2, 3])),
                                         ("out_backprop", np.zeros([3, 1, 0, 3], f32))],
        dict(A, strides=[1, 1, 2, 1], padding="VALID"))
    add(op, "row47_scalar_out_backprop", [("input_sizes", i32([65534, 65534])), ("filter", seq([3, 3, 2, 3])),
                                          ("out_backprop", np.array(1.0, f32))], dict(A))
    # Effective filter size 0: VALID output rows = input rows + 1.
    icall("filter_spatial_0", {"padding": "VALID"}, filt=np.zeros([0, 3, 2, 3], f32), sizes=i32([1, 4, 6, 2]),
          dy=seq([1, 5, 4, 3]))
    icall("row68_int64", filt=np.ones([3, 3, 2, 3], I64), dy=np.ones([1, 4, 4, 3], I64))
    icall("row68_mixed_types", dy=seq([1, 4, 4, 3], F64))
    icall("padding_full", {"padding": "FULL"})

    # --- Conv2DBackpropFilter (section 7, rows 27-30, 36-44) ---
    op = "Conv2DBackpropFilter"

    def fcall(name, attrs=None, x=None, sizes=None, dy=None, **flags):
        add(op, name, [("input", seq([1, 4, 4, 2]) if x is None else x),
                       ("filter_sizes", i32([3, 3, 2, 3]) if sizes is None else sizes),
                       ("out_backprop", seq([1, 4, 4, 3]) if dy is None else dy)], dict(A, **(attrs or {})), **flags)

    fcall("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]})
    fcall("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]})
    fcall("row07_depth_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1, 1, 1, 1, 0]})
    fcall("row08_paddings_with_same", {"explicit_paddings": [0] * 8})
    fcall("nchw", {"data_format": "NCHW"}, x=seq([1, 2, 4, 4]), dy=seq([1, 3, 4, 4]))
    fcall("batch_stride", {"strides": [2, 1, 1, 1]})
    fcall("row27_stride_0", {"strides": [1, 0, 1, 1]})
    fcall("strides_length_5", {"strides": [1, 1, 1, 1, 1]})
    fcall("dilations_length_3", {"dilations": [1, 1, 1]})
    fcall("row29_depth_dilation", {"dilations": [1, 1, 1, 2]})
    fcall("row30_dilation2_same", {"dilations": [1, 2, 2, 1]})
    fcall("row30_dilation_0", {"dilations": [1, 1, 0, 1]})
    fcall("sizes_2d", sizes=np.array([[3, 3], [2, 3]], np.int32))
    fcall("negative_size", sizes=i32([3, -3, 2, 3]))
    fcall("row36_shape_overflow", sizes=i32([2147483647, 2147483647, 2147483647, 3]), isolate=True)
    fcall("row37_input_rank_3", x=seq([4, 4, 2]), isolate=True)
    fcall("row37_batch_mismatch", dy=seq([2, 4, 4, 3]))
    fcall("row37_out_depth_mismatch", dy=seq([1, 4, 4, 2]))
    fcall("row38_filter_depth_0", sizes=i32([3, 3, 0, 3]))
    fcall("row39_depth_not_divisible", x=seq([1, 4, 4, 3]))
    fcall("row40_rows_mismatch", dy=seq([1, 5, 4, 3]))
    fcall("row42_groups2", x=seq([1, 4, 4, 4]), sizes=i32([3, 3, 2, 4]), dy=seq([1, 4, 4, 4]))
    add(op, "row42_tfsa_2021_028", [("input", seq([1, 1, 1, 2])), ("filter_sizes", i32([1, 1, 1, 1])),
                                    ("out_backprop", seq([1, 1, 1, 1]))],
        dict(A, strides=[1, 66, 49, 1], padding="VALID"),
        note="group count 2 with out depth 1 (not divisible): invalid under the groups policy too; TF's text kept")
    add(op, "row43_tfsa_2021_027_all_empty", [("input", np.zeros([0, 0, 0, 0], f32)),
                                              ("filter_sizes", i32([0, 0, 0, 0])),
                                              ("out_backprop", np.zeros([0, 0, 0, 0], f32))],
        dict(A, strides=[1, 1, 1, 1], padding="VALID"), isolate=True)
    add(op, "row44_tfsa_2021_013", [("input", np.zeros([0, 0, 1, 0], f32)), ("filter_sizes", i32([1, 1, 1, 1])),
                                    ("out_backprop", np.zeros([0, 0, 1, 1], f32))],
        dict(A, strides=[1, 66, 18, 1], padding="SAME"), isolate=True,
        note="input depth 0 with filter depth 1: TF's text kept")
    fcall("empty_batch_zeros", x=np.zeros([0, 4, 4, 2], f32), dy=np.zeros([0, 4, 4, 3], f32))
    fcall("row68_int32", x=np.ones([1, 4, 4, 2], I32), dy=np.ones([1, 4, 4, 3], I32))
    fcall("row68_mixed_types", dy=seq([1, 4, 4, 3], F64))

    # --- Conv2D (section 5, rows 48-49) ---
    op = "Conv2D"

    def ccall(name, attrs=None, x=None, filt=None, **flags):
        add(op, name, [("input", seq([1, 4, 4, 2]) if x is None else x),
                       ("filter", seq([3, 3, 2, 3]) if filt is None else filt)], dict(A, **(attrs or {})), **flags)

    ccall("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]})
    ccall("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]})
    ccall("row07_batch_explicit", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]})
    ccall("row08_paddings_with_same", {"explicit_paddings": [0] * 8})
    ccall("strides_length_3", {"strides": [1, 1, 1]})
    ccall("dilations_length_3", {"dilations": [1, 1, 1]})
    ccall("batch_stride", {"strides": [2, 1, 1, 1]})
    ccall("stride_0", {"strides": [1, 0, 1, 1]})
    ccall("depth_dilation", {"dilations": [1, 1, 1, 2]})
    ccall("dilation_0", {"dilations": [1, 0, 1, 1]})
    ccall("input_rank_3", x=seq([4, 4, 2]))
    ccall("filter_rank_3", filt=seq([3, 3, 2]))
    ccall("row48_zero_element_filter", filt=np.zeros([3, 3, 2, 0], f32))
    ccall("row48_zero_element_filter_rows", filt=np.zeros([0, 3, 2, 3], f32))
    ccall("row49_filter_depth_0", filt=np.zeros([3, 3, 0, 3], f32))
    ccall("depth_not_divisible", x=seq([1, 4, 4, 3]))
    ccall("groups_out_depth_not_divisible", x=seq([1, 4, 4, 4]), filt=seq([3, 3, 2, 3]))
    ccall("output_size_negative", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
          filt=seq([5, 1, 2, 1]))
    ccall("truncation_gives_empty_output", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
          filt=seq([4, 1, 2, 1]))
    ccall("empty_batch", x=np.zeros([0, 4, 4, 2], f32))
    ccall("row68_int64", x=np.ones([1, 4, 4, 2], I64), filt=np.ones([3, 3, 2, 3], I64))
    ccall("row68_mixed_types", filt=seq([3, 3, 2, 3], F64))
    ccall("padding_full", {"padding": "FULL"})


# --- FractionalAvgPool and its gradient ---------------------------------------

FAP_PHASE2 = []  # FAP cases whose results seed FractionalAvgPoolGrad cases


def fap_attrs(ratio, pseudo, overlap, seed=0, seed2=0, det=True):
    return {"pooling_ratio": [float(r) for r in ratio], "pseudo_random": pseudo, "overlapping": overlap,
            "deterministic": det, "seed": seed, "seed2": seed2}


def build_fap():
    op = "FractionalAvgPool"
    r2, r3 = math.sqrt(2), math.sqrt(3)
    shapes = [  # name, shape, ratio
        ("tf_5x20x30x3", (2, 20, 30, 2), (1, r3, r2, 1)),
        ("small_7x13", (1, 7, 13, 1), (1, r2, r3, 1)),
        ("b2_13x11x3", (2, 13, 11, 3), (1, r3, r2, 1)),
        ("ratio2", (1, 10, 12, 2), (1, 2, 2, 1)),
        ("ratio_1_5", (1, 9, 10, 1), (1, 1.5, 1.5, 1)),
        ("tf_30x50", (1, 30, 50, 1), (1, math.sqrt(11), math.sqrt(37), 1)),
        ("tf_30x50_b", (1, 30, 50, 1), (1, math.sqrt(11), math.sqrt(27), 1)),
        ("ratio_1", (1, 5, 6, 2), (1, 1, 1, 1)),
        ("rows_only", (1, 17, 23, 1), (1, math.sqrt(13), 1, 1)),
        ("tf_17x23", (1, 17, 23, 1), (1, math.sqrt(13), math.sqrt(7), 1)),
    ]
    i = 0
    for name, shape, ratio in shapes:
        for pseudo in (False, True):
            for overlap in (False, True):
                for dtype in (F32, F64, I32, I64):
                    i += 1
                    if name.startswith("tf_") and dtype not in (F32, I32):
                        continue  # keep the larger shapes to two dtypes
                    rng = rng_for(f"{op}{name}{pseudo}{overlap}{dtype}")
                    x = data(rng, shape, dtype, lo=-500, hi=499) if dtype in (I32, I64) else \
                        data(rng, shape, dtype, lo=-50, hi=49)
                    seed, seed2 = 341261000 + i, (i * 7919) % 100003
                    cname = f"{name}_{'pseudo' if pseudo else 'random'}_{'overlap' if overlap else 'disjoint'}_{DTYPE_NAMES[dtype]}"
                    add(op, cname, [("value", x)], fap_attrs(ratio, pseudo, overlap, seed, seed2), fapg_seed=True)
    # 64-bit seeds, seed2 only, and the (seed, 0) pair.
    x = iota((1, 12, 12, 1), F32)
    add(op, "seed_64bit", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), True, False, 2 ** 62 + 12345, 2 ** 63 - 1),
        fapg_seed=True)
    add(op, "seed_negative", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), False, True, -5, -7), fapg_seed=True)
    add(op, "seed2_only", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), False, False, 0, 99), fapg_seed=True)
    add(op, "seed_only", [("value", x)], fap_attrs((1, 1.7, 1.3, 1), True, True, 99, 0), fapg_seed=True)
    # float32 output-size division: 10 / 1.1 ...
    add(op, "float32_division", [("value", iota((1, 11, 10, 1), F64))],
        fap_attrs((1, 1.1, 10.0 / 3.0, 1), False, False, 3, 4), fapg_seed=True)
    add(op, "int_worked_6x6", [("value", iota((1, 6, 6, 1), I32))], fap_attrs((1, 2, 2, 1), False, True, 1, 2),
        fapg_seed=True)
    # Bad inputs (rows 50-56, 68).
    bad = iota((1, 6, 6, 1), F32)
    add(op, "row50_ratio_length_3", [("value", bad)], fap_attrs((1, 1.5, 1.5), False, False, det=False))
    add(op, "row51_ratio_length_5", [("value", bad)], fap_attrs((1, 1.5, 1.5, 1, 1), False, False, det=False))
    add(op, "row52_ratio_negative", [("value", bad)], fap_attrs((1, -1, 3, 1), False, False, det=False))
    add(op, "row52_ratio_below_1", [("value", bad)], fap_attrs((1, 0.5, 1.5, 1), False, False, det=False))
    add(op, "row53_batch_ratio", [("value", bad)], fap_attrs((2, 3, 1.5, 1), False, False, det=False))
    add(op, "row53_channel_ratio", [("value", bad)], fap_attrs((1, 1.5, 1.5, 2), False, False, det=False))
    add(op, "row54_seed_not_deterministic", [("value", bad)], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 0, False))
    add(op, "row54_seed2_not_deterministic", [("value", bad)], fap_attrs((1, 1.5, 1.5, 1), False, False, 0, 1, False))
    add(op, "row55_rank_3", [("value", iota((6, 6, 1), F32))], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 1))
    add(op, "row56_ratio_above_size", [("value", np.ones((1, 1, 1, 1), F32))],
        fap_attrs((1, 1.0000014, 1, 1), False, False, 1, 1))
    add(op, "row56_tf_repro", [("value", np.array([[[[1, 4, 2, 3]]]], F32))],
        fap_attrs((1, 1.44, 1.73, 1), False, False, 1, 1))
    add(op, "row56_empty_batch", [("value", np.zeros((0, 6, 6, 1), F32))], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 1))
    add(op, "row68_half", [("value", iota((1, 6, 6, 1), F16))], fap_attrs((1, 1.5, 1.5, 1), False, False, 1, 1))


def build_fapg_direct():
    op = "FractionalAvgPoolGrad"
    # TF's direct tests (docs/tf-ops.md section 13.5): uniform sequences vs
    # AvgPoolGrad.
    i = 0
    for wr in (2, 5):
        for wc in (2, 4):
            for batch in (1, 3):
                for ch in (1, 2):
                    i += 1
                    dtype = (F32, F64, I32, I64)[i % 4]
                    rng = rng_for(f"{op}direct{i}")
                    rows, cols = wr * 5, wc * 7
                    dy = data(rng, (batch, 5, 7, ch), dtype, lo=-50, hi=50)
                    add(op, f"tf_disjoint_w{wr}x{wc}_b{batch}_c{ch}_{DTYPE_NAMES[dtype]}",
                        [("orig_input_tensor_shape", i64([batch, rows, cols, ch])), ("out_backprop", dy),
                         ("row_pooling_sequence", i64(range(0, rows + 1, wr))),
                         ("col_pooling_sequence", i64(range(0, cols + 1, wc)))], {"overlapping": False})
                    # Overlapping: rows = (wr-1)*5+1, ksize w, stride w-1; last entry + 1.
                    orows, ocols = (wr - 1) * 5 + 1, (wc - 1) * 7 + 1
                    rseq = [k * (wr - 1) for k in range(6)]
                    cseq = [k * (wc - 1) for k in range(8)]
                    rseq[-1] += 1
                    cseq[-1] += 1
                    add(op, f"tf_overlap_w{wr}x{wc}_b{batch}_c{ch}_{DTYPE_NAMES[dtype]}",
                        [("orig_input_tensor_shape", i64([batch, orows, ocols, ch])), ("out_backprop", dy),
                         ("row_pooling_sequence", i64(rseq)), ("col_pooling_sequence", i64(cseq))],
                        {"overlapping": True})
    # Worked example of the op doc (docs/tf-ops.md section 8): sequence
    # [0, 2, 5] over 5 values.
    for overlap in (False, True):
        add(op, f"doc_example_{'overlap' if overlap else 'disjoint'}",
            [("orig_input_tensor_shape", i64([1, 5, 1, 1])), ("out_backprop", np.ones((1, 2, 1, 1), F64)),
             ("row_pooling_sequence", i64([0, 2, 5])), ("col_pooling_sequence", i64([0, 1]))],
            {"overlapping": overlap})
    # Bad inputs (rows 57-67, 68).
    good_dy = iota((1, 2, 3, 2), I32)

    def g(name, orig=(2, 2, 2, 2), dy=None, rows=(0, 1, 2, 3), cols=(0, 1, 2, 3), overlap=True, **flags):
        add(op, name, [("orig_input_tensor_shape", orig if isinstance(orig, np.ndarray) else i64(orig)),
                       ("out_backprop", good_dy if dy is None else dy), ("row_pooling_sequence", i64(rows)),
                       ("col_pooling_sequence", i64(cols))], {"overlapping": overlap}, **flags)

    g("row57_orig_shape_3_values", orig=(2, 2, 2))
    g("row57_orig_shape_2d", orig=np.array([[2, 2], [2, 2]], np.int64))
    g("row58_out_backprop_scalar", dy=np.array(1, np.int32))
    g("row59_out_backprop_zero_dims", dy=np.zeros((0, 0, 0, 0), np.int32))
    g("row59_out_backprop_zero_depth", dy=np.zeros((1, 2, 3, 0), np.int32))
    g("row60_tfsa_2021_067", orig=(1, 3, 2, 3), dy=np.ones((1, 1, 1, 1), F32), rows=(0,), cols=(0,))
    g("row60_cols_too_short", cols=(0, 1, 2))
    g("row61_batch_0", orig=(0, 1, 2, 3), dy=np.ones((1, 2, 2, 1), F32), rows=(0, 0, 0, 0, 0), cols=(-2, 0, 0, 2, 0))
    g("row61_rows_0", orig=(2, 0, 2, 2))
    g("row61_cols_0", orig=(2, 2, 0, 2))
    g("row61_depth_0", orig=(2, 2, 2, 0))
    g("row62_negative_orig", orig=(-1879048192,) * 4, dy=np.ones((1, 1, 1, 1), F32), rows=(0, 1), cols=(0, 1),
      isolate=True)
    g("row62_overflow", orig=(2 ** 40, 2 ** 40, 1, 1), dy=np.ones((1, 1, 1, 1), F32), rows=(0, 1), cols=(0, 1),
      isolate=True)
    g("row63_negative_row_start", rows=(-10, 1, 2, 3), cols=(1, 2, 3, 4))
    g("row64_negative_col", rows=(0, 1, 2, 3), cols=(1, 2, -3, 4))
    g("row65_disjoint_row_end_0", rows=(0, 0, 1, 2), overlap=False)
    g("row66_batch_larger", orig=(1, 2, 3, 2), dy=iota((2, 2, 3, 2), F32), isolate=True,
      policy_error=("InvalidArgument", "out_backprop batch/depth must match orig_input_tensor_shape",
                    "spec 15.3 / row 66: TF writes out of bounds"))
    g("row66_depth_larger", orig=(1, 2, 3, 1), dy=iota((1, 2, 3, 2), F32), isolate=True,
      policy_error=("InvalidArgument", "out_backprop batch/depth must match orig_input_tensor_shape",
                    "spec 15.3 / row 66: TF writes out of bounds"))
    g("row66_smaller_batch_depth", orig=(2, 2, 3, 3), dy=iota((1, 2, 3, 2), F32))
    g("row67_sequence_beyond_input", rows=(0, 1, 5, 9), cols=(0, 3, 7, 8), dy=iota((1, 3, 3, 2), F64))
    g("row67_decreasing_sequence", rows=(0, 2, 1, 2), cols=(3, 1, 2, 2), dy=iota((1, 3, 3, 2), F64), overlap=False)
    g("row67_extra_sequence_elements", rows=(0, 1, 2, 3, 4, 5), cols=(0, 1, 2, 3, 7), dy=iota((1, 2, 3, 2), F64))
    g("row68_half", dy=iota((1, 2, 3, 2), F16))
    g("orig_shape_int32", orig=np.array([2, 2, 2, 2], np.int32))


def build_fapg_from_fap(fap_results):
    """FractionalAvgPoolGrad over the sequences TF's forward op returned."""
    op = "FractionalAvgPoolGrad"
    for case, res in fap_results:
        if "outputs" not in res:
            continue
        out, rows, cols = res["outputs"]
        x = case["inputs"]["value"]
        rng = rng_for(op + case["name"])
        dtype = x.dtype
        dy = data(rng, out.shape, dtype, lo=-50, hi=50) if dtype in (I32, I64) else data(rng, out.shape, dtype)
        add(op, "from_fap_" + case["name"],
            [("orig_input_tensor_shape", i64(x.shape)), ("out_backprop", dy), ("row_pooling_sequence", rows),
             ("col_pooling_sequence", cols)], {"overlapping": case["attrs"]["overlapping"]})


# --------------------------------------------------------------------------
# Worker side (imports TensorFlow).

def clean_message(msg):
    """TF's core text: without the eager decorations."""
    msg = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", msg)
    for cut in ("\n\t; NodeDef", "; NodeDef:"):
        if cut in msg:
            msg = msg[:msg.index(cut)]
    msg = re.sub(r"\s*\[Op:[A-Za-z0-9_]+\]( name: .*)?$", "", msg, flags=re.S)
    return msg.strip()


def worker_main(mode, case_file, result_file, start):
    import tensorflow as tf  # noqa: imported after the parent set TF_ENABLE_ONEDNN_OPTS
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    with open(case_file, "rb") as f:
        cases = pickle.load(f)
    tf_types = {F16: tf.float16, F32: tf.float32, F64: tf.float64, I32: tf.int32, I64: tf.int64, BF16: tf.bfloat16}

    def run(op, inputs, attrs):
        try:
            # Typed constants: raw_ops would silently convert numpy arrays to
            # the first input's type, hiding the mixed-type errors of row 68.
            args = {k: tf.constant(v, dtype=tf_types[v.dtype]) for k, v in inputs.items()}
            out = getattr(tf.raw_ops, op)(**args, **attrs)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            return {"outputs": [np.array(o.numpy()) for o in outs]}
        except tf.errors.OpError as e:
            kind = type(e).__name__
            kind = kind[:-5] if kind.endswith("Error") else kind
            return {"error": {"kind": kind, "message": clean_message(e.message)}}
        except Exception as e:  # Python-side rejection (wrapper, conversion)
            return {"error": {"kind": "Python" + type(e).__name__, "message": str(e)}}

    def conv(x, f, s, d):
        return tf.raw_ops.Conv2D(input=tf.constant(x), filter=tf.constant(f), strides=[1, s[0], s[1], 1],
                                 padding="VALID", dilations=[1, d[0], d[1], 1]).numpy()

    with open(result_file, "ab") as out:
        for idx in range(start, len(cases)):
            case = cases[idx]
            res = {"raw": run(case["op"], case["inputs"], case["attrs"])}
            if mode == "native" and case["op"] in DW_OPS + CONV_OPS:
                nhwc = nhwc_case(case)
                if nhwc is not None:
                    if case["attrs"].get("data_format") == "NCHW":
                        r = run(case["op"], nhwc["inputs"], nhwc["attrs"])
                        if "outputs" in r and case["op"] in ACTIVATION_OUTPUT_OPS:
                            r["outputs"] = [to_nchw(r["outputs"][0])]
                        res["nhwc"] = r
                    try:
                        ref = reference(case["op"], nhwc, conv)
                        if ref is not None and case["attrs"].get("data_format") == "NCHW" and \
                                case["op"] in ACTIVATION_OUTPUT_OPS:
                            ref = to_nchw(ref)
                        res["ref"] = ref
                    except Exception as e:  # geometry the reformulation cannot express
                        res["ref_error"] = f"{type(e).__name__}: {e}"
            pickle.dump((idx, res), out)
            out.flush()


def nhwc_case(case):
    """The same call in NHWC (inputs transposed, attrs permuted), or None
    where the attrs are not a well-formed 4-D description."""
    attrs = dict(case["attrs"])
    fmt = attrs.get("data_format", "NHWC")
    if fmt == "NHWC":
        return case
    if fmt != "NCHW":
        return None
    inv = lambda v: [v[0], v[2], v[3], v[1]]  # NCHW-ordered list -> NHWC
    for key in ("strides", "dilations"):
        if key in attrs:
            if len(attrs[key]) != 4:
                return None
            attrs[key] = inv(attrs[key])
    if "explicit_paddings" in attrs:
        p = attrs["explicit_paddings"]
        if len(p) != 8:
            return None
        pairs = inv([p[0:2], p[2:4], p[4:6], p[6:8]])
        attrs["explicit_paddings"] = [v for pair in pairs for v in pair]
    attrs["data_format"] = "NHWC"
    inputs = collections.OrderedDict()
    for k, v in case["inputs"].items():
        if k in ACTIVATION_INPUTS:
            if v.ndim != 4:
                return None
            v = np.ascontiguousarray(np.transpose(v, (0, 2, 3, 1)))
        elif k in SIZE_INPUTS and v.ndim == 1 and v.size == 4:
            v = np.array(inv(list(v)), dtype=v.dtype)
        inputs[k] = v
    return {"op": case["op"], "inputs": inputs, "attrs": attrs}


def window_slice(a, axis, start, length):
    """a[start:start+length] along `axis`, zeros outside a."""
    shape = list(a.shape)
    shape[axis] = length
    out = np.zeros(shape, a.dtype)
    lo, hi = max(start, 0), min(start + length, a.shape[axis])
    if hi > lo:
        src = [slice(None)] * a.ndim
        dst = [slice(None)] * a.ndim
        src[axis] = slice(lo, hi)
        dst[axis] = slice(lo - start, hi - start)
        out[tuple(dst)] = a[tuple(src)]
    return out


def reference(op, case, conv):
    """float64 result of a valid NHWC conv-family call via native Conv2D
    forward (see module doc); None where TF's validation would reject the
    call (the reformulation is only for well-formed geometry)."""
    a, inp = case["attrs"], case["inputs"]
    strides, dil = a.get("strides", []), a.get("dilations", [1, 1, 1, 1])
    if len(strides) != 4 or len(dil) != 4 or strides[0] != 1 or strides[3] != 1 or dil[0] != 1 or dil[3] != 1:
        return None
    s, d = (strides[1], strides[2]), (dil[1], dil[2])
    padding = a["padding"]
    if padding not in ("SAME", "VALID", "EXPLICIT"):
        return None
    p = a.get("explicit_paddings", [])
    if padding == "EXPLICIT" and (len(p) != 8 or min(p) < 0):
        return None
    pads = (p[2], p[3], p[4], p[5]) if padding == "EXPLICIT" else (0, 0, 0, 0)
    depthwise = op in DW_OPS
    if op in ("DepthwiseConv2dNative", "Conv2D"):
        x, f = inp["input"].astype(np.float64), inp["filter"].astype(np.float64)
        x_shape, f_shape = x.shape, f.shape
    elif op.endswith("BackpropInput"):
        sizes = [int(v) for v in inp["input_sizes"].ravel()]
        f, dy = inp["filter"].astype(np.float64), inp["out_backprop"].astype(np.float64)
        if len(sizes) == 2 and not depthwise and dy.ndim == 4 and f.ndim == 4:
            sizes = [dy.shape[0], sizes[0], sizes[1], f.shape[2]]
        x_shape, f_shape = tuple(sizes), f.shape
    else:
        x, dy = inp["input"].astype(np.float64), inp["out_backprop"].astype(np.float64)
        f_shape = tuple(int(v) for v in inp["filter_sizes"].ravel())
        x_shape = x.shape
    if len(x_shape) != 4 or len(f_shape) != 4 or min(x_shape) < 0 or min(f_shape) < 0:
        return None
    N, H, W, C = x_shape
    FH, FW, FC, K = f_shape
    if depthwise:
        if FC != C or s[0] != s[1]:
            return None
        out_depth, groups = C * K, C
    else:
        if FC <= 0 or C % FC or C // FC == 0 or K % (C // FC):
            return None
        out_depth, groups = K, C // FC
    rows = window(H, FH, d[0], s[0], padding, pads[0], pads[1])
    cols = window(W, FW, d[1], s[1], padding, pads[2], pads[3])
    if rows is None or cols is None:
        return None
    (OH, pt), (OW, pl) = rows, cols
    y_shape = (N, OH, OW, out_depth)
    if op.endswith("BackpropInput") or op.endswith("BackpropFilter"):
        if dy.shape != y_shape:
            return None

    def dense(f):  # [FH, FW, C, out_depth] with zeros outside the groups
        fd = np.zeros((FH, FW, C, out_depth))
        if depthwise:
            for c in range(C):
                fd[:, :, c, c * K:(c + 1) * K] = f[:, :, c, :]
        else:
            cg, og = C // groups, out_depth // groups
            for g in range(groups):
                fd[:, :, g * cg:(g + 1) * cg, g * og:(g + 1) * og] = f[:, :, :, g * og:(g + 1) * og]
        return fd

    empty = lambda shape: np.zeros(shape)
    if op in ("DepthwiseConv2dNative", "Conv2D"):
        if min(y_shape) == 0 or FH == 0 or FW == 0 or C == 0:
            return empty(y_shape)
        xp = window_slice(x, 1, -pt, (OH - 1) * s[0] + (FH - 1) * d[0] + 1)
        xp = window_slice(xp, 2, -pl, (OW - 1) * s[1] + (FW - 1) * d[1] + 1)
        return conv(xp, dense(f), s, d)
    if op.endswith("BackpropInput"):
        if min(x_shape) == 0 or min(y_shape) == 0 or FH == 0 or FW == 0:
            return empty(x_shape)
        z = np.zeros((N, (OH - 1) * s[0] + 1, (OW - 1) * s[1] + 1, out_depth))
        z[:, ::s[0], ::s[1], :] = dy
        zp = window_slice(z, 1, pt - (FH - 1) * d[0], H + (FH - 1) * d[0])
        zp = window_slice(zp, 2, pl - (FW - 1) * d[1], W + (FW - 1) * d[1])
        frot = np.ascontiguousarray(np.transpose(dense(f)[::-1, ::-1, :, :], (0, 1, 3, 2)))
        return conv(zp, frot, (1, 1), d)
    # Backprop filter: batch becomes the channel dimension, dy the filter.
    if min(f_shape) == 0:
        return empty(f_shape)
    if min(x_shape) == 0 or min(y_shape) == 0:
        return empty(f_shape)
    xp = window_slice(x, 1, -pt, (FH - 1) * d[0] + (OH - 1) * s[0] + 1)
    xp = window_slice(xp, 2, -pl, (FW - 1) * d[1] + (OW - 1) * s[1] + 1)
    full = conv(np.ascontiguousarray(np.transpose(xp, (3, 1, 2, 0))),
                np.ascontiguousarray(np.transpose(dy, (1, 2, 0, 3))), d, s)  # [C, FH, FW, out_depth]
    full = np.transpose(full, (1, 2, 0, 3))
    out = np.zeros(f_shape)
    if depthwise:
        for c in range(C):
            out[:, :, c, :] = full[:, :, c, c * K:(c + 1) * K]
    else:
        cg, og = C // groups, out_depth // groups
        for g in range(groups):
            out[:, :, :, g * og:(g + 1) * og] = full[:, :, g * cg:(g + 1) * cg, g * og:(g + 1) * og]
    return out


# --------------------------------------------------------------------------
# Parent side: run workers, decide expectations, write JSON.

def run_cases(cases, mode):
    """Results per case for one TF path: dict idx -> result."""
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0" if mode == "native" else "1", TF_CPP_MIN_LOG_LEVEL="2",
               OMP_NUM_THREADS="1")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        groups = []
        shared = [i for i, c in enumerate(cases) if not c["flags"].get("isolate")]
        if shared:
            groups.append(shared)
        groups += [[i] for i, c in enumerate(cases) if c["flags"].get("isolate")]
        for group in groups:
            sub = [cases[i] for i in group]
            case_file = os.path.join(tmp, "cases.pkl")
            with open(case_file, "wb") as f:
                pickle.dump([{k: c[k] for k in ("op", "name", "inputs", "attrs")} for c in sub], f)
            result_file = os.path.join(tmp, "results.pkl")
            if os.path.exists(result_file):
                os.remove(result_file)
            start = 0
            while start < len(sub):
                proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", mode, case_file,
                                       result_file, str(start)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
                done = {}
                if os.path.exists(result_file):
                    with open(result_file, "rb") as f:
                        while True:
                            try:
                                idx, res = pickle.load(f)
                            except (EOFError, pickle.UnpicklingError):
                                break
                            done[idx] = res
                for idx, res in done.items():
                    results[group[idx]] = res
                # Results of cases that crashed earlier are not in the file.
                nxt = max([start - 1] + list(done)) + 1
                if nxt >= len(sub):
                    break
                if proc.returncode == 0:
                    raise RuntimeError(f"worker stopped early without an error: {proc.stderr[-2000:]}")
                # The case at `nxt` took the worker down.
                crashed = sub[nxt]
                how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
                results[group[nxt]] = {"raw": {"crash": how, "stderr": crash_reason(proc.stderr)}}
                print(f"  [{mode}] {crashed['op']}/{crashed['name']}: process died ({how})", flush=True)
                start = nxt + 1
    return results


def crash_reason(stderr):
    """The stable part of a dead worker's stderr: TF's CHECK message without
    its timestamp, or the kind of glibc abort (its text varies run to run)."""
    for line in stderr.splitlines():
        m = re.match(r"^F\d{4} [\d:.]+\s+\d+ (.*)$", line)
        if m:
            return m.group(1).strip()
    if re.search(r"malloc\(\)|free\(\)|corrupted|double free", stderr):
        return "glibc heap-corruption abort"
    return ""


def norm_err(got, want):
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    if got.size == 0:
        return 0.0
    diff = np.max(np.abs(got - want))
    scale = np.max(np.abs(want))
    return float(diff / scale) if scale > 0 else float(diff)


def same_outputs(a, b):
    """max normwise error over the outputs, or None if shapes/dtypes differ."""
    if len(a) != len(b):
        return None
    worst = 0.0
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return None
        worst = max(worst, norm_err(x, y))
    return worst


def agree(ra, rb, dtype_name):
    """Do two raw results (outputs or error) agree?"""
    if "outputs" in ra and "outputs" in rb:
        e = same_outputs(ra["outputs"], rb["outputs"])
        return e is not None and e <= TOLERANCE.get(dtype_name, 0) / 2
    if "error" in ra and "error" in rb:
        return ra["error"] == rb["error"]
    return False


def summary(res, expect_outputs=None, dtype_name=None):
    """What one TF path did, for the fixture's "tf" record."""
    if "crash" in res:
        return {"crash": res["crash"], "stderr": res["stderr"]}
    if "error" in res:
        return {"error": res["error"]}
    if expect_outputs is not None:
        e = same_outputs(res["outputs"], expect_outputs)
        if e is None:
            return {"outputs": "different shape or dtype: " + ", ".join(
                f"{DTYPE_NAMES.get(o.dtype, str(o.dtype))}{list(o.shape)}" for o in res["outputs"])}
        if e <= TOLERANCE.get(dtype_name, 0) / 2:
            return {"outputs": "match expect" if e == 0 else f"match expect (normwise error {e:.3g})"}
        return {"outputs": f"differ from expect: normwise error {e:.3g}"}
    return {"outputs": "returned"}


def cast_like(a, dtype):
    if dtype in (I32, I64):
        return np.trunc(a).astype(dtype)
    return a.astype(dtype)


def out_dtype(case):
    """The op's T: the dtype of its first data input."""
    for k in ("out_backprop", "input", "value", "filter"):
        if k in case["inputs"]:
            return case["inputs"][k].dtype
    return F32


SURPRISES = []


def decide(case, native, onednn):
    """The fixture entry for one case."""
    op, attrs = case["op"], case["attrs"]
    flags = case["flags"]
    dtype = out_dtype(case)
    dname = DTYPE_NAMES.get(dtype, "float32")
    raw_n, raw_o = native["raw"], onednn["raw"]
    entry = {"name": case["name"]}
    policy, expect, tf_path = None, None, None
    ref = native.get("ref")
    fmt = attrs.get("data_format", "NHWC")
    dil = attrs.get("dilations", [1, 1, 1, 1])
    hw_dilated = len(dil) == 4 and fmt in ("NHWC", "NCHW") and (
        dil[1:3] if fmt == "NHWC" else dil[2:4]) != [1, 1] and min(dil) >= 1
    grouped = False
    if op in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
        if op == "Conv2DBackpropInput":
            f = case["inputs"]["filter"]
            sizes = case["inputs"]["input_sizes"].ravel()
            cin = sizes[3 if fmt == "NHWC" else 1] if sizes.size == 4 else None
            fdepth = f.shape[2] if f.ndim == 4 else None
        else:
            x = case["inputs"]["input"]
            cin = x.shape[3 if fmt == "NHWC" else 1] if x.ndim == 4 else None
            fs = case["inputs"]["filter_sizes"].ravel()
            fdepth = fs[2] if fs.size == 4 else None
        grouped = cin is not None and fdepth is not None and fdepth > 0 and cin != fdepth and ref is not None

    if flags.get("policy_zeros"):
        shape = raw_n["outputs"][0].shape if "outputs" in raw_n else np.shape(ref)
        expect = {"outputs": [np.zeros(shape, dtype)]}
        policy = flags["policy_zeros"] + "; expect zeros"
        tf_path = "native"
        tfrec = {"native": {"outputs": "uninitialised memory (values not recorded)"} if "outputs" in raw_n
                 else summary(raw_n),
                 "onednn": {"outputs": "uninitialised memory (values not recorded)"} if "outputs" in raw_o
                 else summary(raw_o)}
    elif flags.get("policy_error"):
        kind, msg, note = flags["policy_error"]
        expect = {"error": {"kind": kind, "message": msg}}
        policy = note
        tf_path = "native"
        tfrec = {"native": summary(raw_n), "onednn": summary(raw_o)}
    elif op in DW_OPS + CONV_OPS and (
            (hw_dilated and op not in ("Conv2D",)) or grouped) and ref is not None:
        # docs/tf-ops.md section 15.1: dilations (depthwise: TF ignores or
        # refuses them; Conv2D backprops: CPU refuses) and grouped Conv2D
        # gradients are supported.
        what = []
        if hw_dilated and op not in ("Conv2D",):
            what.append("dilations" + (" (row 22)" if op in DW_OPS[1:] else
                                       " (section 10)" if op == DW_OPS[0] else " (row 30)"))
        if grouped:
            what.append("groups (row 41)" if op == "Conv2DBackpropInput" else "groups (row 42)")
        if fmt == "NCHW":
            what.append("NCHW")
        expect = {"outputs": [cast_like(ref, dtype)]}
        policy = ("spec 15.1: " + ", ".join(what) + " supported; expectation = float64 Conv2D-forward "
                  "reformulation on the native path, rounded once")
        onednn_ok = "outputs" in raw_o and agree(raw_o, expect, dname)
        tf_path = "onednn" if onednn_ok else "native"
        tfrec = {"native": summary(raw_n, expect["outputs"], dname), "onednn": summary(raw_o, expect["outputs"], dname)}
    elif fmt == "NCHW" and "error" in raw_n and raw_n["error"]["message"] in NCHW_REFUSALS:
        derived = native.get("nhwc")
        if derived is None or "outputs" not in derived:
            print(f"  dropped {op}/{case['name']}: NCHW refused and the NHWC call fails too "
                  f"({derived and derived.get('error')})")
            return None
        expect = {"outputs": derived["outputs"]}
        policy = ("nchw_via_transpose: spec 15.1 (section 10 / rows 21, 25): TF CPU refuses NCHW; expectation = "
                  "native NHWC result, transposed")
        tf_path = "both" if agree(raw_o, expect, dname) else "native"
        tfrec = {"native": summary(raw_n), "onednn": summary(raw_o, expect["outputs"], dname)}
    else:
        # Plain TF behaviour: native is the reference (docs/tf-ops.md
        # section 0).
        if "crash" in raw_n:
            print(f"  dropped {op}/{case['name']}: native TF crashed ({raw_n['crash']})")
            SURPRISES.append(f"{op}/{case['name']}: native TF process died ({raw_n['crash']}): {raw_n['stderr']}")
            return None
        expect = {k: raw_n[k] for k in ("outputs", "error") if k in raw_n}
        tf_path = "both" if agree(raw_n, raw_o, dname) else "native"
        tfrec = None if tf_path == "both" else {"onednn": summary(raw_o, expect.get("outputs"), dname)}
    from_tf = policy is None or policy.startswith("nchw_via_transpose")
    if "outputs" in expect and ref is not None and op in DW_OPS + CONV_OPS and from_tf:
        e = same_outputs([np.asarray(ref, np.float64)], [expect["outputs"][0].astype(np.float64)])
        tol = TOLERANCE.get(dname, 0)
        # 16-bit: keep TF's values only where they are within a quarter of the
        # harness tolerance of the once-rounded float64 result, so that a kernel
        # that rounds once (docs/tf-ops.md section 15.5) cannot fail on TF's own
        # error.
        limit = tol / 4 if dname in ("float16", "bfloat16") else max(tol, 1e-12)
        if e is None or e > limit:
            if dname in ("float16", "bfloat16") and e is not None:
                # TF's 16-bit CPU kernels round partial sums (docs/tf-ops.md
                # section 14); gradtune accumulates in f32 and rounds once
                # (docs/tf-ops.md section 15.5).
                policy = ((policy + "; ") if policy else "") + (
                    f"spec 14 / 15.5: TF's {dname} CPU result is {e:.3g} (normwise) from the float64 result; "
                    "expectation = float64 Conv2D-forward reformulation rounded once")
                expect = {"outputs": [cast_like(ref, dtype)]}
                tfrec = {"native": summary(raw_n, expect["outputs"], dname),
                         "onednn": summary(raw_o, expect["outputs"], dname)}
                tf_path = "onednn" if agree(raw_o, expect, dname) else "native"
            else:
                SURPRISES.append(f"{op}/{case['name']}: TF result differs from the float64 reformulation "
                                 f"(normwise {e})")
        elif dname in ("float16", "bfloat16"):
            entry["tf_error_vs_float64"] = float(f"{e:.3g}")
    if flags.get("note"):
        entry["note"] = flags["note"]
    if "error" in expect:
        msg = expect["error"]["message"]
        for p in PREFIX_MESSAGES:
            if msg.startswith(p):
                expect["error"]["prefix"] = p
    entry["tf_path"] = tf_path
    if policy:
        entry["policy"] = policy
    entry["inputs"] = {k: tensor_json(v) for k, v in case["inputs"].items()}
    entry["attrs"] = attrs
    entry["expect"] = {"outputs": [tensor_json(o) for o in expect["outputs"]]} if "outputs" in expect else \
        {"error": expect["error"]}
    if tfrec:
        entry["tf"] = tfrec
    return entry


def number(v, dtype):
    if dtype in (I32, I64):
        return int(v)
    f = float(v)
    if f.is_integer() and abs(f) < 2 ** 53:
        return int(f)
    if dtype == F32:
        return float(str(np.float32(v)))  # shortest text that rounds back to this float32
    return f  # float64, and float16/bfloat16 values exactly


def tensor_json(a):
    a = np.asarray(a)
    return {"dtype": DTYPE_NAMES[a.dtype], "shape": [int(s) for s in a.shape],
            "values": [number(v, a.dtype) for v in a.ravel()]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden"))
    ap.add_argument("--only", default="", help="comma-separated op names")
    ap.add_argument("--worker", nargs=4, metavar=("MODE", "CASES", "RESULTS", "START"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        mode, case_file, result_file, start = args.worker
        worker_main(mode, case_file, result_file, int(start))
        return

    import importlib.metadata
    tf_version = importlib.metadata.version("tensorflow-cpu")
    only = set(filter(None, args.only.split(",")))
    build_conv_random()
    build_tf_goldens()
    dw_bad_inputs()
    conv_bad_inputs()
    build_fap()
    build_fapg_direct()
    phase1 = [c for c in CASES if not only or c["op"] in only or
              (c["op"] == "FractionalAvgPool" and "FractionalAvgPoolGrad" in only)]
    names = collections.Counter((c["op"], c["name"]) for c in phase1)
    dup = [k for k, n in names.items() if n > 1]
    assert not dup, f"duplicate case names: {dup[:5]}"

    def run_both(cases):
        print(f"running {len(cases)} cases on the native path", flush=True)
        nat = run_cases(cases, "native")
        print(f"running {len(cases)} cases on the oneDNN path", flush=True)
        one = run_cases(cases, "onednn")
        return nat, one

    nat, one = run_both(phase1)
    # Phase 2: gradients over the sequences TF's forward op returned.
    n_before = len(CASES)
    build_fapg_from_fap([(c, nat[i]["raw"]) for i, c in enumerate(phase1) if c["flags"].get("fapg_seed")])
    phase2 = CASES[n_before:]
    if phase2 and (not only or "FractionalAvgPoolGrad" in only):
        nat2, one2 = run_both(phase2)
    else:
        phase2, nat2, one2 = [], {}, {}
    # FractionalAvgPool: both paths must return the same sequences (no oneDNN kernel).
    per_op = collections.defaultdict(list)
    for cases, n, o in ((phase1, nat, one), (phase2, nat2, one2)):
        for i, c in enumerate(cases):
            if only and c["op"] not in only:
                continue
            entry = decide(c, n[i], o[i])
            if entry is not None:
                per_op[c["op"]].append(entry)
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for op in ALL_OPS:
        if op not in per_op:
            continue
        doc = {"op": op, "tensorflow": tf_version, "generated_by": GENERATOR, "cases": per_op[op]}
        path = os.path.join(args.out, op + ".json")
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        size = os.path.getsize(path)
        total += size
        paths = collections.Counter(e["tf_path"] for e in per_op[op])
        pol = sum(1 for e in per_op[op] if "policy" in e)
        errs = sum(1 for e in per_op[op] if "error" in e["expect"])
        print(f"{op}: {len(per_op[op])} cases ({errs} errors, {pol} policy; tf_path {dict(paths)}), "
              f"{size / 1024:.0f} KiB")
    print(f"total {total / 1e6:.2f} MB in {args.out}")
    if SURPRISES:
        print("SURPRISES:")
        for s in SURPRISES:
            print("  " + s)


if __name__ == "__main__":
    main()
