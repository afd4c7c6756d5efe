"""Conv-family cases with data: random geometries for the three depthwise and
the three Conv2D ops in every float type and both layouts, and TF's own
goldens and test shapes (docs/tf-ops.md section 13)."""
from .common import (BF16, CONV_OPS, DTYPE_NAMES, DW_OPS, F16, F32, F64, I32, add, conv_attrs, conv_geometry, data,
                     i32, iota, perm_list, rng_for, to_nchw)


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

# 13.1 Conv2DBackpropInput goldens: data 1..N, float32 (and the other
# float types TF's CPU kernel has).
TF_BPI_GOLDENS = [
    ([1, 2, 3, 1], [2, 2, 1, 1], [1, 1, 2, 1], (1, 1), "VALID"),
    ([1, 2, 3, 3], [2, 2, 3, 3], [1, 1, 2, 3], (1, 1), "VALID"),
    ([1, 3, 6, 1], [2, 2, 1, 1], [1, 2, 3, 1], (1, 2), "VALID"),
    ([1, 4, 4, 1], [1, 1, 1, 1], [1, 2, 2, 1], (2, 2), "SAME"),
    ([1, 2, 2, 1], [2, 2, 1, 2], [1, 1, 1, 2], (1, 1), "VALID"),
    ([2, 2], [2, 2, 1, 2], [1, 1, 1, 2], (1, 1), "VALID"),
    ([3, 1, 1, 2], [1, 3, 2, 3], [3, 1, 0, 3], (1, 2), "VALID"),
    ([0, 2, 3, 1], [2, 2, 1, 1], [0, 1, 2, 1], (1, 1), "VALID"),
]

# Explicit-padding backprop tests of 13.1 (input_sizes, filter, out_backprop, strides, pads t,b,l,r).
TF_EXPLICIT_BACKPROPS = [
    ([1, 2, 3, 1], [2, 2, 1, 1], (1, 1), (0, 0, 0, 0)),
    ([1, 3, 4, 2], [2, 2, 2, 3], (2, 2), (0, 0, 0, 0)),
    ([1, 2, 3, 1], [2, 2, 1, 2], (1, 1), (1, 1, 1, 1)),
    ([1, 2, 3, 2], [1, 1, 2, 1], (1, 2), (1, 1, 1, 1)),
    ([2, 3, 1, 1], [2, 1, 1, 1], (3, 1), (2, 2, 2, 2)),
    ([1, 2, 3, 1], [2, 2, 1, 1], (1, 1), (1, 8, 4, 2)),
    ([1, 5, 3, 1], [3, 2, 1, 1], (3, 1), (1, 8, 4, 2)),
    ([1, 3, 3, 1], [2, 1, 1, 1], (1, 1), (5, 0, 2, 2)),
]

# 13.2 Conv2DBackpropFilter goldens, f32/f64/f16/bf16.
TF_BPF_GOLDENS = [
    ([1, 2, 3, 1], [2, 2, 1, 1], [1, 1, 2, 1], (1, 1), "VALID"),
    ([1, 2, 3, 1], [2, 2, 1, 0], [1, 1, 2, 0], (1, 1), "VALID"),
    ([0, 2, 3, 1], [2, 2, 1, 1], [0, 1, 2, 1], (1, 1), "VALID"),
    ([1, 2, 3, 3], [2, 2, 3, 3], [1, 1, 2, 3], (1, 1), "VALID"),
    ([1, 3, 6, 1], [2, 2, 1, 1], [1, 2, 3, 1], (1, 2), "VALID"),
    ([1, 4, 4, 1], [1, 1, 1, 1], [1, 2, 2, 1], (2, 2), "SAME"),
    ([1, 2, 2, 1], [2, 2, 1, 2], [1, 1, 1, 2], (1, 1), "VALID"),
]

# 13.3 gradient-checker configs (batch, rows, cols, f_rows, f_cols, in_depth,
# out_depth, stride_r, stride_c, padding[, pads]) as direct backprop calls
# with TF's k/N data pattern replaced by small integers (exact).
TF_GRADIENT_CONFIGS = [
    (2, 5, 4, 3, 3, 2, 3, 1, 1, "VALID", None),
    (2, 4, 5, 3, 3, 2, 3, 2, 2, "VALID", None),
    (2, 7, 6, 3, 3, 4, 5, 3, 3, "VALID", None),
    (4, 6, 5, 2, 2, 2, 3, 1, 1, "VALID", None),
    (4, 6, 5, 2, 2, 2, 3, 2, 2, "VALID", None),
    (2, 8, 7, 4, 4, 2, 3, 3, 3, "VALID", None),
    (2, 7, 6, 3, 3, 2, 3, 1, 1, "SAME", None),
    (2, 5, 4, 3, 3, 3, 3, 2, 2, "SAME", None),
    (2, 8, 7, 4, 4, 2, 3, 2, 1, "SAME", None),
    (2, 4, 3, 4, 3, 2, 3, 1, 1, "VALID", None),
    (2, 5, 4, 3, 3, 2, 3, 1, 1, "EXPLICIT", (1, 1, 1, 1)),
    (2, 4, 5, 3, 3, 2, 3, 2, 2, "EXPLICIT", (1, 1, 1, 1)),
    (2, 5, 4, 3, 3, 2, 3, 1, 1, "EXPLICIT", (2, 2, 2, 2)),
    (2, 8, 5, 4, 2, 3, 2, 3, 2, "EXPLICIT", (1, 2, 3, 4)),
    (3, 5, 7, 3, 2, 1, 2, 2, 1, "EXPLICIT", (4, 3, 2, 1)),
    (2, 6, 7, 3, 4, 3, 2, 1, 2, "EXPLICIT", (0, 0, 0, 5)),
]

# 13.4 forward configs with channels/batch scaled down (input, filter, stride, padding, pads, dilation).
TF_DW_FORWARD_CONFIGS = [
    ([2, 5, 5, 6], [1, 1, 6, 2], 1, "SAME", None, 1),
    ([2, 8, 8, 5], [1, 3, 5, 1], 1, "SAME", None, 1),
    ([1, 17, 17, 3], [3, 1, 3, 4], 1, "SAME", None, 1),
    ([2, 9, 27, 4], [3, 3, 4, 1], 1, "SAME", None, 1),
    ([1, 31, 31, 2], [3, 3, 2, 1], 1, "SAME", None, 1),
    ([1, 35, 35, 2], [5, 5, 2, 1], 1, "SAME", None, 1),
    ([1, 47, 47, 2], [3, 3, 2, 8], 3, "VALID", None, 1),
    ([1, 29, 29, 3], [3, 2, 3, 8], 2, "SAME", None, 1),
    ([1, 33, 33, 1], [5, 5, 1, 2], 2, "SAME", None, 1),
    ([1, 33, 33, 1], [5, 5, 1, 2], 1, "SAME", None, 2),
    ([1, 41, 35, 2], [4, 7, 2, 2], 1, "VALID", None, (3, 2)),
    ([2, 5, 5, 6], [1, 1, 6, 2], 1, "EXPLICIT", (1, 2, 3, 4), 1),
    ([2, 1, 1, 3], [3, 3, 3, 2], 1, "EXPLICIT", (10, 20, 15, 25), 1),
    ([2, 9, 27, 4], [3, 3, 4, 1], 1, "EXPLICIT", (3, 4, 4, 2), 1),
    ([1, 31, 31, 2], [3, 3, 2, 1], 1, "EXPLICIT", (0, 0, 0, 0), 1),
    ([1, 29, 29, 3], [3, 2, 3, 8], 2, "EXPLICIT", (1, 2, 3, 5), 1),
    ([1, 33, 33, 1], [5, 5, 1, 2], 3, "EXPLICIT", (3, 2, 1, 0), 1),
    ([2, 5, 5, 6], [3, 3, 6, 1], 1, "EXPLICIT", (0, 2, 0, 2), 1),
    ([1, 8, 7, 2], [8, 7, 2, 1], 1, "EXPLICIT", (0, 7, 3, 3), 1),
    ([2, 4, 3, 2], [3, 2, 2, 1], 1, "EXPLICIT", (2, 0, 1, 0), 1),
]

# 13.4 gradient configs (input, filter, stride, padding, pads, dilation).
TF_DW_GRADIENT_CONFIGS = [
    ([2, 5, 8, 1], [4, 4, 1, 2], 1, "SAME", None, (1, 1)),
    ([4, 5, 5, 1], [2, 2, 1, 2], 2, "VALID", None, (1, 1)),
    ([2, 4, 4, 2], [3, 1, 2, 2], 1, "SAME", None, (1, 1)),
    ([1, 15, 15, 2], [1, 3, 2, 1], 1, "SAME", None, (1, 1)),
    ([2, 15, 16, 1], [3, 3, 1, 2], 3, "VALID", None, (1, 1)),
    ([2, 5, 8, 1], [4, 3, 1, 2], 1, "SAME", None, (1, 2)),
    ([1, 3, 1, 2], [2, 1, 2, 1], 1, "SAME", None, (1, 1)),
    ([2, 2, 3, 2], [2, 1, 2, 1], 1, "SAME", None, (1, 1)),
    ([2, 2, 3, 1], [2, 2, 1, 1], 1, "SAME", None, (1, 1)),
    ([2, 5, 8, 1], [4, 4, 1, 2], 1, "EXPLICIT", (0, 1, 2, 3), (1, 1)),
    ([4, 5, 5, 1], [2, 2, 1, 2], 2, "EXPLICIT", (3, 1, 5, 0), (1, 1)),
    ([2, 4, 4, 2], [3, 1, 2, 2], 1, "EXPLICIT", (4, 1, 3, 4), (1, 1)),
    ([1, 15, 15, 2], [1, 3, 2, 1], 1, "EXPLICIT", (3, 0, 2, 8), (1, 1)),
    ([2, 15, 16, 1], [3, 3, 1, 2], 3, "EXPLICIT", (0, 0, 10, 0), (1, 1)),
    ([2, 5, 8, 1], [3, 4, 1, 2], 1, "EXPLICIT", (3, 1, 2, 3), (2, 1)),
    ([2, 4, 3, 2], [3, 2, 2, 1], 1, "EXPLICIT", (2, 0, 1, 0), (1, 1)),
]


def build_tf_goldens():
    # 13.1 Conv2DBackpropInput goldens.
    for i, (sizes, fshape, yshape, s, pad) in enumerate(TF_BPI_GOLDENS):
        for dtype in (F32, F64, F16, BF16):
            add("Conv2DBackpropInput", f"tf13.1_golden{i}_{DTYPE_NAMES[dtype]}",
                [("input_sizes", i32(sizes)), ("filter", iota(fshape, dtype)), ("out_backprop", iota(yshape, dtype))],
                {"strides": [1, s[0], s[1], 1], "padding": pad, "data_format": "NHWC"})
    # Explicit-padding backprop tests of 13.1.
    for i, (x, f, s, p) in enumerate(TF_EXPLICIT_BACKPROPS):
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
    # 13.2 Conv2DBackpropFilter goldens.
    for i, (xs, fs, ys, s, pad) in enumerate(TF_BPF_GOLDENS):
        for dtype in (F32, F64, F16, BF16):
            add("Conv2DBackpropFilter", f"tf13.2_golden{i}_{DTYPE_NAMES[dtype]}",
                [("input", iota(xs, dtype)), ("filter_sizes", i32(fs)), ("out_backprop", iota(ys, dtype))],
                {"strides": [1, s[0], s[1], 1], "padding": pad, "data_format": "NHWC"})
    # 13.3 gradient-checker configs as direct backprop calls.
    for i, (N, H, W, FH, FW, C, K, sr, sc, pad, pads) in enumerate(TF_GRADIENT_CONFIGS):
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
    # 13.4 forward configs.
    for i, (xs, fs, s, pad, pads, dil) in enumerate(TF_DW_FORWARD_CONFIGS):
        d = dil if isinstance(dil, tuple) else (dil, dil)
        add_conv_family("DepthwiseConv2dNative", f"tf13.4_forward{i}", F32, "NHWC", xs[0], xs[1], xs[2], xs[3],
                        fs[0], fs[1], fs[3], s=(s, s), d=d, padding=pad, pads=pads or (0, 0, 0, 0))
    # 13.4 gradient configs.
    for i, (xs, fs, s, pad, pads, d) in enumerate(TF_DW_GRADIENT_CONFIGS):
        for op in ("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"):
            for dtype in (F32, F64):
                add_conv_family(op, f"tf13.4_gradient{i}_{DTYPE_NAMES[dtype]}", dtype, "NHWC", xs[0], xs[1], xs[2],
                                xs[3], fs[0], fs[1], fs[3], s=(s, s), d=d, padding=pad, pads=pads or (0, 0, 0, 0))
