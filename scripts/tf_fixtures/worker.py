"""The worker subprocess (the only code that imports TensorFlow): runs the
cases of one TF path, and the float64 reformulation of conv-family calls
(module doc of scripts/make_tf_fixtures.py). The parent starts it as
`make_tf_fixtures.py --worker MODE CASES RESULTS START` (parent.run_cases)."""
import collections
import pickle
import re

import numpy as np

from .common import (ACTIVATION_INPUTS, ACTIVATION_OUTPUT_OPS, BF16, CONV_OPS, DW_OPS, F16, F32, F64, I32, I64,
                     SIZE_INPUTS, to_nchw, window)


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
