// Shared pieces of the plain-loop references (tests/reference/<op>.h): TF's
// window geometry and layout conversions, written again from spec/tf-ops.md
// section 1.2 and independent of the runtime's and the generators' code.
// The references themselves are scatter/gather loops in double precision
// over NHWC tensors; tests compare every compiled variant against them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gradtune::reference {

// One spatial dimension's TF geometry (spec 1.2), computed here again from
// the formulas, not with the runtime's code.
struct Window {
    int64_t output = 0, pad_before = 0, pad_after = 0;
};
// padding: "SAME", "VALID" or "EXPLICIT" (then pad_before/pad_after are used).
Window window(int64_t input, int64_t filter, int64_t dilation, int64_t stride, const std::string &padding,
              int64_t pad_before = 0, int64_t pad_after = 0);

// Geometry of a 2-D window op, rows and columns.
struct Geometry2D {
    int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
    int64_t pad_top = 0, pad_left = 0;
};

// NHWC <-> NCHW for 4-D tensors stored row-major.
std::vector<double> nhwc_to_nchw(const std::vector<double> &x, const std::vector<int64_t> &nhwc_shape);
std::vector<double> nchw_to_nhwc(const std::vector<double> &x, const std::vector<int64_t> &nchw_shape);

}  // namespace gradtune::reference
