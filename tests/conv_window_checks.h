// Rows of docs/tf-ops.md section 11 that several convolution ops share word
// for word: the attr values outside the op definition and the
// explicit-padding rows (5-8) of every convolution op, the window attributes
// (rows 1-8: strides and explicit paddings) of the three depthwise ops, and
// the dimension rows of the two depthwise gradients (TF validates each group
// in shared code). Each op's test calls these inside its
// bad-input TEST_CASE with its own call type (a bad_call.h BadCall): every row
// must be refused with the output untouched.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "bad_call.h"
#include "gradtune/gradtune.h"
#include "test_util.h"

namespace gradtune::testing {

// The attr values outside the op definition, which TF's op registry refuses
// for every convolution op before its kernel runs: a padding and a
// data_format not in their lists. `Call` has padding and attrs with a
// DataFormat builder.
template <typename Call>
void check_attr_value_rows() {
    for (const char *padding : {"FULL", "CAUSAL", "same"}) {
        Call c;
        c.padding = padding;
        expect_error(c, StatusCode::kInvalidArgument,
                     "Value for attr 'padding' of \"" + std::string(padding) +
                         "\" is not in the list of allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"");
    }
    for (const char *format : {"NCWH", "HWCN", "NCHW_VECT_C", "nhwc"}) {
        Call c;
        c.attrs = c.attrs.DataFormat(format);
        expect_error(c, StatusCode::kInvalidArgument,
                     "Value for attr 'data_format' of \"" + std::string(format) +
                         "\" is not in the list of allowed values: \"NHWC\", \"NCHW\"");
    }
}

// Rows 5-8, explicit_paddings (TF checks them in one function for every
// convolution op): its length, a negative value, nonzero batch or depth
// padding (each of the four), and paddings under SAME or VALID. `Call` has
// padding and attrs with an ExplicitPaddings builder, and defaults to a valid
// NHWC call.
template <typename Call>
void check_explicit_padding_rows() {
    using C = StatusCode;
    Call c;
    c.padding = "EXPLICIT";
    c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1});
    expect_error(c, C::kInvalidArgument, "explicit_paddings attribute must contain 8 values, but got: 4");
    c.attrs = c.attrs.ExplicitPaddings({0, 0, -1, 1, 1, 1, 0, 0});
    expect_error(c, C::kInvalidArgument, "All elements of explicit_paddings must be nonnegative");
    for (const std::vector<int> &pads : {std::vector<int>{1, 0, 1, 1, 1, 1, 0, 0},
                                         {0, 1, 1, 1, 1, 1, 0, 0},
                                         {0, 0, 1, 1, 1, 1, 1, 0},
                                         {0, 0, 1, 1, 1, 1, 0, 1}}) {
        c.attrs = c.attrs.ExplicitPaddings(pads);
        expect_error(c, C::kInvalidArgument,
                     "Nonzero explicit padding in the batch or depth dimensions is not supported");
    }
    for (const char *padding : {"SAME", "VALID"}) {
        c.padding = padding;
        c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument,
                     "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
}

// `Call` has strides, padding and attrs (with DataFormat and ExplicitPaddings
// builders), and defaults to a valid NHWC call with padding SAME.
template <typename Call>
void check_depthwise_window_attrs() {
    using C = StatusCode;
    SECTION("row 1: strides length") {
        Call c;
        c.strides = {1, 1, 1};
        expect_error(c, C::kInvalidArgument, "Sliding window strides field must specify 4 dimensions");
    }
    SECTION("row 2: unequal row and column strides") {
        Call c;
        c.strides = {1, 1, 2, 1};
        expect_error(c, C::kInvalidArgument,
                     "Current implementation only supports equal length strides in the row and column dimensions.");
        c.attrs = c.attrs.DataFormat("NCHW");  // NCHW reads H and W from positions 2 and 3
        c.strides = {1, 1, 1, 2};
        expect_error(c, C::kInvalidArgument,
                     "Current implementation only supports equal length strides in the row and column dimensions.");
    }
    SECTION("row 3: batch or depth stride") {
        Call c;
        c.strides = {2, 1, 1, 1};
        expect_error(c, C::kInvalidArgument,
                     "Current implementation does not yet support strides in the batch and depth dimensions.");
        c.strides = {1, 1, 1, 2};
        expect_error(c, C::kInvalidArgument,
                     "Current implementation does not yet support strides in the batch and depth dimensions.");
    }
    SECTION("row 4: stride 0 or negative") {
        Call c;
        c.strides = {1, 0, 0, 1};
        expect_error(c, C::kInvalidArgument, "Stride must be > 0, but got 0");
        c.strides = {1, -2, -2, 1};
        expect_error(c, C::kInvalidArgument, "Stride must be > 0, but got -2");
    }
    SECTION("rows 5-8: explicit paddings") {
        check_explicit_padding_rows<Call>();
    }
}

// Rows 15, 16 (out_backprop sizes), 20 and 22 of the bad-input table, which
// the two depthwise gradients share (TF checks them in one shared function,
// and so does gradtune: runtime/src/depthwise_backprop.cpp); `L` is the op's
// label in TF's texts. `Call` is the op's BadCall, with out_backprop_override.
template <typename Call>
void check_depthwise_gradient_rows(const std::string &L) {
    using C = StatusCode;
    SECTION("row 15: batch mismatch") {
        Call c;
        Tensor dy = make_tensor(DataType::kFloat, {2, 4, 4, 2}, std::vector<double>(64, 1.0));
        c.out_backprop_override = dy.cref();
        expect_error(c, C::kInvalidArgument, L + ": input and out_backprop must have the same batch size");
    }
    SECTION("row 20: out_backprop rows or cols do not match") {
        Call c;
        Tensor dy = make_tensor(DataType::kFloat, {1, 3, 4, 2}, std::vector<double>(24, 1.0));
        c.out_backprop_override = dy.cref();
        expect_error(c, C::kInvalidArgument,
                     L + ": Number of rows of out_backprop doesn't match computed: actual = 3, computed = 4");
        Tensor dy2 = make_tensor(DataType::kFloat, {1, 4, 5, 2}, std::vector<double>(40, 1.0));
        c.out_backprop_override = dy2.cref();
        expect_error(c, C::kInvalidArgument,
                     L + ": Number of cols of out_backprop doesn't match computed: actual = 5, computed = 4");
    }
    SECTION("row 22 (policy): invalid dilations are rejected; valid ones are honoured") {
        Call c;
        c.attrs = c.attrs.Dilations({1, 1, 1});
        expect_error(c, C::kInvalidArgument, "Sliding window dilations field must specify 4 dimensions");
        c.attrs = c.attrs.Dilations({2, 1, 1, 1});
        expect_error(c, C::kInvalidArgument,
                     "Current implementation does not yet support dilations in the batch and depth dimensions.");
        c.attrs = c.attrs.Dilations({1, 1, 1, 3});
        expect_error(c, C::kInvalidArgument,
                     "Current implementation does not yet support dilations in the batch and depth dimensions.");
        c.attrs = c.attrs.Dilations({1, 0, 1, 1});
        expect_error(c, C::kInvalidArgument, "Dilation rate must be >= 1, but got 0");
        c.attrs = c.attrs.Dilations({1, 1, -2, 1});
        expect_error(c, C::kInvalidArgument, "Dilation rate must be >= 1, but got -2");
        // A dilation that TF's CPU kernel would ignore changes the geometry
        // here: VALID, 3x3 filter, dilation 2 on 4 rows gives
        // (4 - 5 + 1) / 1 = 0 rows, so TF's 2-row out_backprop is refused.
        Call d;
        d.padding = "VALID";
        d.attrs = d.attrs.Dilations({1, 2, 2, 1});
        Tensor dy = make_tensor(DataType::kFloat, {1, 2, 2, 2}, std::vector<double>(8, 1.0));
        d.out_backprop_override = dy.cref();
        expect_error(d, C::kInvalidArgument,
                     L + ": Number of rows of out_backprop doesn't match computed: actual = 2, computed = 0");
    }
    SECTION("row 16: out_backprop sizes of 2**31-1 and more") {
        static float cell = 0;  // shapes are checked before any data is read
        Call d;
        d.out_backprop_override = ConstTensorRef{DataType::kFloat, {1, 2147483647, 4, 2}, &cell};
        expect_error(d, C::kInvalidArgument, "Output rows too large");
        d.out_backprop_override = ConstTensorRef{DataType::kFloat, {1, 4, 2147483647, 2}, &cell};
        expect_error(d, C::kInvalidArgument, "Output cols too large");
        d.out_backprop_override = ConstTensorRef{DataType::kFloat, {1, 4, 4, 2147483647}, &cell};
        expect_error(d, C::kInvalidArgument, "Output depth too large");
    }
}

}  // namespace gradtune::testing
