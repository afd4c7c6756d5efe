"""What every case module shares: dtypes, the harness tolerances, the op
lists and TF messages the expectations key on, TF's window geometry,
deterministic data, the case list (CASES, add) and the NHWC/NCHW layout
helpers. Imports no TensorFlow."""
import collections
import zlib

import numpy as np

try:
    import ml_dtypes  # ships with TensorFlow; numpy's bfloat16
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

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
