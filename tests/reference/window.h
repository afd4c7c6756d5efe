// Shared pieces of the plain-loop references (tests/reference/<op>.h): TF's
// window geometry and layout conversions, written again from docs/tf-ops.md
// section 1.2 and independent of the runtime's and the generators' code.
// The references themselves are scatter/gather loops in double precision
// over NHWC tensors; tests compare every compiled variant against them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gradtune::reference {

// One spatial dimension's TF geometry (docs/tf-ops.md section 1.2), computed
// here again from the formulas, not with the runtime's code.
struct Window {
    int64_t output = 0, pad_before = 0, pad_after = 0;
};
// padding: "SAME", "VALID" or "EXPLICIT" (then pad_before/pad_after are used).
inline Window window(int64_t input, int64_t filter, int64_t dilation, int64_t stride, const std::string &padding,
                     int64_t pad_before = 0, int64_t pad_after = 0) {
    const int64_t effective = (filter - 1) * dilation + 1;
    Window w;
    if (padding == "VALID") {
        w.output = (input - effective + stride) / stride;
    } else if (padding == "EXPLICIT") {
        w.pad_before = pad_before;
        w.pad_after = pad_after;
        w.output = (input + pad_before + pad_after - effective + stride) / stride;
    } else {  // SAME: output = ceil(input / stride), odd padding at the end
        w.output = (input + stride - 1) / stride;
        const int64_t needed = std::max<int64_t>(0, (w.output - 1) * stride + effective - input);
        w.pad_before = needed / 2;
        w.pad_after = needed - w.pad_before;
    }
    return w;
}

// Geometry of a 2-D window op, rows and columns.
struct Geometry2D {
    int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
    int64_t pad_top = 0, pad_left = 0;
};

// NHWC <-> NCHW for 4-D tensors stored row-major.
inline std::vector<double> nhwc_to_nchw(const std::vector<double> &x, const std::vector<int64_t> &s) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3];
    std::vector<double> y(x.size());
    for (int64_t b = 0; b < N; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t c = 0; c < C; c++) y[((b * C + c) * H + h) * W + w] = x[((b * H + h) * W + w) * C + c];
    return y;
}

inline std::vector<double> nchw_to_nhwc(const std::vector<double> &x, const std::vector<int64_t> &s) {
    const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
    std::vector<double> y(x.size());
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) y[((b * H + h) * W + w) * C + c] = x[((b * C + c) * H + h) * W + w];
    return y;
}

}  // namespace gradtune::reference
