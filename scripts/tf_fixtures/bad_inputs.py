"""Conv-family bad inputs (docs/tf-ops.md section 11): the error rows of the
depthwise ops and of the Conv2D ops, one case each."""
import numpy as np

from .common import F32, F64, I32, I64, add, i32, i64, iota


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
