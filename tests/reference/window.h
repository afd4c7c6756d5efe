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

    // The input row / column that tap fh / fw of output row oh / column ow
    // reads (in the padding when outside [0, H) / [0, W)).
    int64_t row(int64_t oh, int64_t fh) const { return oh * stride_rows - pad_top + fh * dilation_rows; }
    int64_t col(int64_t ow, int64_t fw) const { return ow * stride_cols - pad_left + fw * dilation_cols; }
};

inline bool inside(int64_t h, int64_t w, int64_t H, int64_t W) { return h >= 0 && h < H && w >= 0 && w < W; }

// The shapes of a dense convolution's operands: input [N,H,W,C], HWIO filter
// [FH,FW,Cg,O] (G = C / Cg groups of Og = O / G output channels) and output
// [N,OH,OW,O].
struct ConvShapes {
    int64_t N, H, W, C, FH, FW, Cg, O, OH, OW, G, Og;
};
inline ConvShapes conv_shapes(const std::vector<int64_t> &s, const std::vector<int64_t> &fs,
                              const std::vector<int64_t> &os) {
    const int64_t G = s[3] / fs[2];
    return {s[0], s[1], s[2], s[3], fs[0], fs[1], fs[2], fs[3], os[1], os[2], G, fs[3] / G};
}

// Calls tap(b, oh, ow, fh, fw, h, w) for every output position (b, oh, ow)
// and filter tap (fh, fw) whose input position (h, w) lies inside the
// H x W input: the reads of a forward convolution, which a gradient
// scatters back.
template <class Tap>
void for_each_tap(int64_t N, int64_t OH, int64_t OW, int64_t FH, int64_t FW, int64_t H, int64_t W,
                  const Geometry2D &g, Tap tap) {
    for (int64_t b = 0; b < N; b++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t fh = 0; fh < FH; fh++)
                    for (int64_t fw = 0; fw < FW; fw++) {
                        const int64_t h = g.row(oh, fh), w = g.col(ow, fw);
                        if (inside(h, w, H, W)) tap(b, oh, ow, fh, fw, h, w);
                    }
}

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
