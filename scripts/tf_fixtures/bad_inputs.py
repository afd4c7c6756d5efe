"""Conv-family bad inputs (docs/tf-ops.md section 11): the error rows of the
depthwise ops and of the Conv2D ops, one case each.

The rows are data: row(name, attrs, operands and flags), where attrs
override _BASE, an operand (x, filt, sizes, dy) replaces the op's default
and inputs=[...] replaces all of them; the functions at the end add them."""
import copy

import numpy as np

from .common import F32, F64, I32, I64, add, i32, i64, iota

_BASE = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC"}
_NCHW = {"data_format": "NCHW"}


def seq(shape, dt=F32):
    return iota(shape, dt)


def ones(shape, dt=F32):
    return np.ones(shape, dt)


def row(name, attrs=None, **kwargs):
    """One error row: its case name, its attrs over _BASE, its operands and flags."""
    return name, attrs, kwargs


def direct(name, inputs, attrs, **flags):
    """A row with all its inputs and attrs given."""
    return name, attrs, dict(inputs=inputs, **flags)


# The depthwise backprops share their rows but for the ones of one op.
def both(*args, **kwargs):
    return ("both",) + row(*args, **kwargs)


def input_only(*args, **kwargs):
    return ("input",) + row(*args, **kwargs)


def filter_only(*args, **kwargs):
    return ("filter",) + row(*args, **kwargs)


def _dilation_policy(msg):
    return ("InvalidArgument", msg, "spec 15.1 / row 22: TF ignores depthwise-backprop dilations; "
                                    "gradtune rejects invalid ones")


# --- docs/tf-ops.md section 11: bad inputs, per op --------------------------

# Rows 1-24 and 68 for both depthwise backprops.
DW_BACKPROP_ROWS = [
    both("row01_strides_length_3", {"strides": [1, 1, 1]}),
    both("row02_unequal_strides", {"strides": [1, 1, 2, 1]}),
    both("row03_batch_stride", {"strides": [2, 1, 1, 1]}),
    both("row03_depth_stride", {"strides": [1, 1, 1, 2]}),
    both("row04_stride_0", {"strides": [1, 0, 0, 1]}),
    both("row04_stride_negative", {"strides": [1, -2, -2, 1]}),
    both("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}),
    both("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]}),
    both("row07_batch_explicit", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]}),
    both("row08_paddings_with_same", {"explicit_paddings": [0, 0, 0, 0, 0, 0, 0, 0]}),
    input_only("row09_sizes_2d", sizes=np.array([[1, 4], [4, 2]], np.int32)),
    input_only("row10_negative_size", sizes=i32([1, 4, -4, 2])),
    input_only("row12_overflow", sizes=i32([13, 1879048192, 1879048192, 2]), isolate=True),
    input_only("row13_sizes_length_3", sizes=i32([4, 4, 2])),
    input_only("row13_sizes_length_5", sizes=i32([1, 4, 4, 2, 1])),
    input_only("row14_filter_rank_3", filt=seq([3, 3, 2]), isolate=True),
    filter_only("row11_sizes_2d", sizes=np.array([[3, 3], [2, 1]], np.int32)),
    filter_only("row11_negative_size", sizes=i32([3, -3, 2, 1])),
    filter_only("row12_overflow", sizes=i32([13, 1879048192, 1879048192, 2]), isolate=True),
    filter_only("row13_sizes_length_3", sizes=i32([3, 3, 2])),
    filter_only("row14_input_rank_3", x=seq([4, 4, 2]), isolate=True),
    both("row14_out_backprop_rank_3", dy=seq([4, 4, 2]), isolate=True),
    both("row15_batch_mismatch", dy=seq([2, 4, 4, 2])),
    input_only("row16_input_rows_too_large", sizes=i32([1, 2147483647, 4, 2])),
    input_only("row16_input_cols_too_large", sizes=i32([1, 4, 2147483647, 2])),
    input_only("row16_output_rows_too_large", sizes=i32([0, 4, 4, 2]), dy=np.zeros([0, 2147483647, 4, 2], F32)),
    input_only("row16_output_cols_too_large", sizes=i32([0, 4, 4, 2]), dy=np.zeros([0, 4, 2147483647, 2], F32)),
    input_only("row16_output_depth_too_large", sizes=i32([0, 4, 4, 2]), dy=np.zeros([0, 4, 4, 2147483647], F32)),
    input_only("row17_in_depth_mismatch", filt=seq([3, 3, 3, 1])),
    filter_only("row16_input_rows_too_large", x=np.zeros([0, 2147483647, 4, 2], F32), dy=np.zeros([0, 4, 4, 2], F32)),
    filter_only("row16_output_depth_too_large", x=np.zeros([0, 4, 4, 2], F32),
                dy=np.zeros([0, 4, 4, 2147483647], F32)),
    filter_only("row17_in_depth_mismatch", sizes=i32([3, 3, 3, 1])),
    both("row18_out_depth_mismatch", dy=seq([1, 4, 4, 3])),
    input_only("row19_output_size_negative", {"strides": [1, 2, 2, 1], "padding": "VALID"},
               sizes=i32([1, 1, 4, 2]), filt=seq([5, 1, 2, 1]), dy=seq([1, 1, 2, 2])),
    input_only("row19_truncation_gives_empty_output", {"strides": [1, 2, 2, 1], "padding": "VALID"},
               sizes=i32([1, 1, 4, 2]), filt=seq([4, 1, 2, 1]), dy=np.zeros([1, 0, 2, 2], F32)),
    filter_only("row19_output_size_negative", {"strides": [1, 2, 2, 1], "padding": "VALID"},
                x=seq([1, 1, 4, 2]), sizes=i32([5, 1, 2, 1]), dy=seq([1, 1, 2, 2])),
    # The output is empty (0 rows), so this is also row 23.
    filter_only("row19_truncation_gives_empty_output", {"strides": [1, 2, 2, 1], "padding": "VALID"},
                x=seq([1, 1, 4, 2]), sizes=i32([4, 1, 2, 1]), dy=np.zeros([1, 0, 2, 2], F32),
                policy_zeros="spec 15.2 / rows 19+23: out_backprop is empty, TF returns uninitialised memory"),
    both("row20_rows_mismatch", dy=seq([1, 3, 4, 2])),
    both("row20_cols_mismatch", dy=seq([1, 4, 5, 2])),
    input_only("row21_nchw", _NCHW, sizes=i32([1, 2, 4, 4]), dy=seq([1, 2, 4, 4])),
    input_only("row21_nchw_empty_output_accepted", _NCHW, sizes=i32([0, 2, 4, 4]), dy=np.zeros([0, 2, 4, 4], F32)),
    filter_only("row21_nchw", _NCHW, x=seq([1, 2, 4, 4]), dy=seq([1, 2, 4, 4])),
    # Row 22: TF ignores dilations; gradtune honours valid ones and
    # rejects invalid ones (docs/tf-ops.md section 15.1).
    both("row22_dilation2_same", {"dilations": [1, 2, 2, 1]}),
    both("row22_dilations_length_5", {"dilations": [1, 0, 77, 1, 64]},
         policy_error=_dilation_policy("Sliding window dilations field must specify 4 dimensions")),
    both("row22_dilations_length_3", {"dilations": [1, 1, 1]},
         policy_error=_dilation_policy("Sliding window dilations field must specify 4 dimensions")),
    both("row22_batch_dilation", {"dilations": [2, 1, 1, 1]}, policy_error=_dilation_policy(
         "Current implementation does not yet support dilations in the batch and depth dimensions.")),
    both("row22_dilation_0", {"dilations": [1, 0, 1, 1]},
         policy_error=_dilation_policy("Dilation rate must be >= 1, but got 0")),
    input_only("row24_depth_multiplier_0", sizes=i32([1, 4, 4, 2]), filt=np.zeros([3, 3, 2, 0], F32),
               dy=np.zeros([1, 4, 4, 0], F32), policy_zeros="spec 15.2 / row 24: TF returns uninitialised memory"),
    # Effective filter size 0: VALID output rows = input rows + 1.
    input_only("filter_spatial_0", filt=np.zeros([0, 3, 2, 1], F32), dy=seq([1, 5, 2, 2]),
               attrs={"padding": "VALID"}, sizes=i32([1, 4, 4, 2])),
    filter_only("row23_empty_out_backprop", x=np.zeros([0, 4, 4, 2], F32), dy=np.zeros([0, 4, 4, 2], F32),
                policy_zeros="spec 15.2 / row 23: TF returns uninitialised memory"),
    # Row 68 and the op definition.
    input_only("row68_int32", filt=ones([3, 3, 2, 1], I32), dy=ones([1, 4, 4, 2], I32)),
    input_only("row68_mixed_types", dy=seq([1, 4, 4, 2], F64)),
    input_only("row68_sizes_int64", sizes=i64([1, 4, 4, 2])),
    filter_only("row68_int32", x=ones([1, 4, 4, 2], I32), dy=ones([1, 4, 4, 2], I32)),
    filter_only("row68_mixed_types", dy=seq([1, 4, 4, 2], F64)),
    filter_only("row68_sizes_int64", sizes=i64([3, 3, 2, 1])),
    both("padding_full", {"padding": "FULL"}),
    both("data_format_ncwh", {"data_format": "NCWH"}),
]

# DepthwiseConv2dNative (section 2).
DW_FORWARD_ROWS = [
    row("strides_length_3", {"strides": [1, 1, 1]}),
    row("unequal_strides", {"strides": [1, 1, 2, 1]}),
    row("batch_stride", {"strides": [2, 1, 1, 1]}),
    row("stride_0", {"strides": [1, 0, 0, 1]}),
    row("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}),
    row("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]}),
    row("row07_depth_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1, 1, 1, 0, 1]}),
    row("row08_paddings_with_valid", {"padding": "VALID", "explicit_paddings": [0] * 8}),
    row("input_rank_3", x=seq([4, 4, 2])),
    row("filter_rank_3", filt=seq([3, 3, 2])),
    row("depth_mismatch", filt=seq([3, 3, 3, 2])),
    row("output_size_negative", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
        filt=seq([5, 1, 2, 1])),
    row("truncation_gives_empty_output", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
        filt=seq([4, 1, 2, 1])),
    row("nchw_empty_output", {"data_format": "NCHW"}, x=np.zeros([0, 2, 4, 4], F32)),
    row("dilation2_same", {"dilations": [1, 2, 2, 1]}),
    row("row68_int32", x=ones([1, 4, 4, 2], I32), filt=ones([3, 3, 2, 2], I32)),
    row("row68_mixed_types", filt=seq([3, 3, 2, 2], F64)),
    row("depth_multiplier_0", filt=np.zeros([3, 3, 2, 0], F32)),
    row("filter_spatial_0", filt=np.zeros([0, 3, 2, 1], F32), attrs={"padding": "VALID"}, x=seq([1, 0, 4, 2])),
]

# Conv2DBackpropInput (section 6, rows 25-47).
CONV_BACKPROP_INPUT_ROWS = [
    row("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}),
    row("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]}),
    row("row07_batch_explicit", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]}),
    row("row08_paddings_with_same", {"explicit_paddings": [0] * 8}),
    row("row25_nchw", {"data_format": "NCHW"}, sizes=i32([1, 2, 4, 4]), dy=seq([1, 3, 4, 4])),
    row("row26_batch_stride", {"strides": [2, 1, 1, 1]}),
    row("row26_depth_stride", {"strides": [1, 1, 1, 2]}),
    row("row27_stride_0", {"strides": [1, 0, 1, 1]}),
    row("row27_stride_negative", {"strides": [1, 1, -1, 1]}),
    row("strides_length_3", {"strides": [1, 1, 1]}),
    row("row28_dilations_length_3", {"dilations": [1, 1, 1]}),
    row("row29_batch_dilation", {"dilations": [2, 1, 1, 1]}),
    row("row30_dilation2_same", {"dilations": [1, 2, 2, 1]}),
    row("row30_dilation_0", {"dilations": [1, 0, 1, 1]}),
    row("row31_out_backprop_rank_3", dy=seq([4, 4, 3])),
    row("row32_sizes_2d", sizes=np.array([[1, 4], [4, 2]], np.int32)),
    row("row33_sizes_length_3", sizes=i32([4, 4, 2]), isolate=True),
    row("row33_sizes_length_1", sizes=i32([4]), isolate=True),
    row("row33_sizes_length_5", sizes=i32([1, 4, 4, 2, 1]), isolate=True),
    row("row34_negative_4_values", sizes=i32([1, -5, 4, 2])),
    row("row35_negative_2_values", sizes=i32([-4, 4])),
    row("row36_shape_overflow", sizes=i32([2147483647, 2147483647, 2147483647, 2]), isolate=True),
    row("row37_filter_rank_3", filt=seq([3, 3, 2]), isolate=True),
    row("row37_batch_mismatch", dy=seq([2, 4, 4, 3])),
    row("row37_out_depth_mismatch", dy=seq([1, 4, 4, 2])),
    row("row38_filter_depth_0", filt=np.zeros([3, 3, 0, 3], F32)),
    row("row39_depth_not_divisible", sizes=i32([1, 4, 4, 3])),
    row("row40_rows_mismatch", dy=seq([1, 3, 4, 3])),
    row("row40_cols_mismatch", dy=seq([1, 4, 6, 3])),
    row("row41_groups2", sizes=i32([1, 4, 4, 4]), filt=seq([3, 3, 2, 4]), dy=seq([1, 4, 4, 4])),
    row("row41_groups_out_depth_not_divisible", sizes=i32([1, 4, 4, 4]), filt=seq([3, 3, 2, 3]),
        note="grouped gradient whose out depth is not divisible by the group count: TF's CPU text kept"),
    direct("row45_tfsa_2021_014", [("input_sizes", i32([52, 1, 1, 5])), ("filter", np.zeros([0, 1, 5, 0], F32)),
                                   ("out_backprop", np.zeros([52, 1, 1, 0], F32))], dict(_BASE)),
    direct("row46_empty_out_backprop", [("input_sizes", i32([3, 1, 1, 2])), ("filter", seq([1, 3, 2, 3])),
                                        ("out_backprop", np.zeros([3, 1, 0, 3], F32))],
       dict(_BASE, strides=[1, 1, 2, 1], padding="VALID")),
    direct("row47_scalar_out_backprop", [("input_sizes", i32([65534, 65534])), ("filter", seq([3, 3, 2, 3])),
                                         ("out_backprop", np.array(1.0, F32))], dict(_BASE)),
    # Effective filter size 0: VALID output rows = input rows + 1.
    row("filter_spatial_0", {"padding": "VALID"}, filt=np.zeros([0, 3, 2, 3], F32), sizes=i32([1, 4, 6, 2]),
        dy=seq([1, 5, 4, 3])),
    row("row68_int64", filt=np.ones([3, 3, 2, 3], I64), dy=np.ones([1, 4, 4, 3], I64)),
    row("row68_mixed_types", dy=seq([1, 4, 4, 3], F64)),
    row("padding_full", {"padding": "FULL"}),
]

# Conv2DBackpropFilter (section 7, rows 27-30, 36-44).
CONV_BACKPROP_FILTER_ROWS = [
    row("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}),
    row("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]}),
    row("row07_depth_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1, 1, 1, 1, 0]}),
    row("row08_paddings_with_same", {"explicit_paddings": [0] * 8}),
    row("nchw", {"data_format": "NCHW"}, x=seq([1, 2, 4, 4]), dy=seq([1, 3, 4, 4])),
    row("batch_stride", {"strides": [2, 1, 1, 1]}),
    row("row27_stride_0", {"strides": [1, 0, 1, 1]}),
    row("strides_length_5", {"strides": [1, 1, 1, 1, 1]}),
    row("dilations_length_3", {"dilations": [1, 1, 1]}),
    row("row29_depth_dilation", {"dilations": [1, 1, 1, 2]}),
    row("row30_dilation2_same", {"dilations": [1, 2, 2, 1]}),
    row("row30_dilation_0", {"dilations": [1, 1, 0, 1]}),
    row("sizes_2d", sizes=np.array([[3, 3], [2, 3]], np.int32)),
    row("negative_size", sizes=i32([3, -3, 2, 3])),
    row("row36_shape_overflow", sizes=i32([2147483647, 2147483647, 2147483647, 3]), isolate=True),
    row("row37_input_rank_3", x=seq([4, 4, 2]), isolate=True),
    row("row37_batch_mismatch", dy=seq([2, 4, 4, 3])),
    row("row37_out_depth_mismatch", dy=seq([1, 4, 4, 2])),
    row("row38_filter_depth_0", sizes=i32([3, 3, 0, 3])),
    row("row39_depth_not_divisible", x=seq([1, 4, 4, 3])),
    row("row40_rows_mismatch", dy=seq([1, 5, 4, 3])),
    row("row42_groups2", x=seq([1, 4, 4, 4]), sizes=i32([3, 3, 2, 4]), dy=seq([1, 4, 4, 4])),
    direct("row42_tfsa_2021_028", [("input", seq([1, 1, 1, 2])), ("filter_sizes", i32([1, 1, 1, 1])),
                                   ("out_backprop", seq([1, 1, 1, 1]))],
       dict(_BASE, strides=[1, 66, 49, 1], padding="VALID"),
       note="group count 2 with out depth 1 (not divisible): invalid under the groups policy too; TF's text kept"),
    direct("row43_tfsa_2021_027_all_empty", [("input", np.zeros([0, 0, 0, 0], F32)),
                                             ("filter_sizes", i32([0, 0, 0, 0])),
                                             ("out_backprop", np.zeros([0, 0, 0, 0], F32))],
       dict(_BASE, strides=[1, 1, 1, 1], padding="VALID"), isolate=True),
    direct("row44_tfsa_2021_013", [("input", np.zeros([0, 0, 1, 0], F32)), ("filter_sizes", i32([1, 1, 1, 1])),
                                   ("out_backprop", np.zeros([0, 0, 1, 1], F32))],
       dict(_BASE, strides=[1, 66, 18, 1], padding="SAME"), isolate=True,
       note="input depth 0 with filter depth 1: TF's text kept"),
    row("empty_batch_zeros", x=np.zeros([0, 4, 4, 2], F32), dy=np.zeros([0, 4, 4, 3], F32)),
    row("row68_int32", x=np.ones([1, 4, 4, 2], I32), dy=np.ones([1, 4, 4, 3], I32)),
    row("row68_mixed_types", dy=seq([1, 4, 4, 3], F64)),
]

# Conv2D (section 5, rows 48-49).
CONV2D_ROWS = [
    row("row05_explicit_4_values", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}),
    row("row06_negative_explicit", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]}),
    row("row07_batch_explicit", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]}),
    row("row08_paddings_with_same", {"explicit_paddings": [0] * 8}),
    row("strides_length_3", {"strides": [1, 1, 1]}),
    row("dilations_length_3", {"dilations": [1, 1, 1]}),
    row("batch_stride", {"strides": [2, 1, 1, 1]}),
    row("stride_0", {"strides": [1, 0, 1, 1]}),
    row("depth_dilation", {"dilations": [1, 1, 1, 2]}),
    row("dilation_0", {"dilations": [1, 0, 1, 1]}),
    row("input_rank_3", x=seq([4, 4, 2])),
    row("filter_rank_3", filt=seq([3, 3, 2])),
    row("row48_zero_element_filter", filt=np.zeros([3, 3, 2, 0], F32)),
    row("row48_zero_element_filter_rows", filt=np.zeros([0, 3, 2, 3], F32)),
    row("row49_filter_depth_0", filt=np.zeros([3, 3, 0, 3], F32)),
    row("depth_not_divisible", x=seq([1, 4, 4, 3])),
    row("groups_out_depth_not_divisible", x=seq([1, 4, 4, 4]), filt=seq([3, 3, 2, 3])),
    row("output_size_negative", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
        filt=seq([5, 1, 2, 1])),
    row("truncation_gives_empty_output", {"padding": "VALID", "strides": [1, 2, 2, 1]}, x=seq([1, 1, 4, 2]),
        filt=seq([4, 1, 2, 1])),
    row("empty_batch", x=np.zeros([0, 4, 4, 2], F32)),
    row("row68_int64", x=np.ones([1, 4, 4, 2], I64), filt=np.ones([3, 3, 2, 3], I64)),
    row("row68_mixed_types", filt=seq([3, 3, 2, 3], F64)),
    row("padding_full", {"padding": "FULL"}),
]


def _add_rows(op, rows, inputs_of):
    """Adds each row as a case of op; inputs_of(**operands) makes the inputs."""
    for name, attrs, kwargs in copy.deepcopy(rows):
        inputs = kwargs.pop("inputs", None)
        operands = {k: kwargs.pop(k) for k in ("x", "sizes", "filt", "dy") if k in kwargs}
        add(op, name, inputs if inputs is not None else inputs_of(**operands), dict(_BASE, **(attrs or {})),
            **kwargs)


def _or(value, default):
    return default if value is None else value


def dw_bad_inputs():
    """Rows 1-24 and 68 for both depthwise backprops, and section 2 for the forward."""
    def bpi(sizes=None, filt=None, dy=None):
        return [("input_sizes", _or(sizes, i32([1, 4, 4, 2]))), ("filter", _or(filt, seq([3, 3, 2, 1]))),
                ("out_backprop", _or(dy, seq([1, 4, 4, 2])))]

    def bpf(x=None, sizes=None, dy=None):
        return [("input", _or(x, seq([1, 4, 4, 2]))), ("filter_sizes", _or(sizes, i32([3, 3, 2, 1]))),
                ("out_backprop", _or(dy, seq([1, 4, 4, 2])))]

    def forward(x=None, filt=None):
        return [("input", _or(x, seq([1, 4, 4, 2]))), ("filter", _or(filt, seq([3, 3, 2, 2])))]

    for op, which, inputs_of in (("DepthwiseConv2dNativeBackpropInput", "input", bpi),
                                 ("DepthwiseConv2dNativeBackpropFilter", "filter", bpf)):
        _add_rows(op, [r[1:] for r in DW_BACKPROP_ROWS if r[0] in ("both", which)], inputs_of)
    _add_rows("DepthwiseConv2dNative", DW_FORWARD_ROWS, forward)


def conv_bad_inputs():
    def bpi(sizes=None, filt=None, dy=None):
        return [("input_sizes", _or(sizes, i32([1, 4, 4, 2]))), ("filter", _or(filt, seq([3, 3, 2, 3]))),
                ("out_backprop", _or(dy, seq([1, 4, 4, 3])))]

    def bpf(x=None, sizes=None, dy=None):
        return [("input", _or(x, seq([1, 4, 4, 2]))), ("filter_sizes", _or(sizes, i32([3, 3, 2, 3]))),
                ("out_backprop", _or(dy, seq([1, 4, 4, 3])))]

    def forward(x=None, filt=None):
        return [("input", _or(x, seq([1, 4, 4, 2]))), ("filter", _or(filt, seq([3, 3, 2, 3])))]

    _add_rows("Conv2DBackpropInput", CONV_BACKPROP_INPUT_ROWS, bpi)
    _add_rows("Conv2DBackpropFilter", CONV_BACKPROP_FILTER_ROWS, bpf)
    _add_rows("Conv2D", CONV2D_ROWS, forward)
