// The window-attribute rows of spec/tf-ops.md section 11 (rows 1-8: strides
// and explicit paddings) that the three depthwise ops share word for word
// (TF validates them in the same shared code for all three). Each op's test
// calls this inside its bad-input TEST_CASE with its own call type (a
// bad_call.h BadCall): every row must be refused with the output untouched.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "bad_call.h"
#include "gradtune/gradtune.h"

namespace gradtune::testing {

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
        Call c;
        c.padding = "EXPLICIT";
        c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1});
        expect_error(c, C::kInvalidArgument, "explicit_paddings attribute must contain 8 values, but got: 4");
        c.attrs = c.attrs.ExplicitPaddings({0, 0, -1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument, "All elements of explicit_paddings must be nonnegative");
        c.attrs = c.attrs.ExplicitPaddings({1, 0, 1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument,
                     "Nonzero explicit padding in the batch or depth dimensions is not supported");
        c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1, 1, 1, 0, 1});
        expect_error(c, C::kInvalidArgument,
                     "Nonzero explicit padding in the batch or depth dimensions is not supported");
        c.padding = "SAME";
        c.attrs = c.attrs.ExplicitPaddings({0, 0, 1, 1, 1, 1, 0, 0});
        expect_error(c, C::kInvalidArgument,
                     "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
}

}  // namespace gradtune::testing
