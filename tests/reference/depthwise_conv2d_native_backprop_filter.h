// Reference: DepthwiseConv2dNativeBackpropFilter, a loop over input pixels.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

namespace detail {

// The output position o with o * stride - pad + tap * dilation == position,
// or -1 when there is none in [0, outputs).
inline int64_t source(int64_t position, int64_t tap, int64_t stride, int64_t dilation, int64_t pad, int64_t outputs) {
    const int64_t t = position + pad - tap * dilation;
    if (t < 0 || t % stride != 0) return -1;
    const int64_t o = t / stride;
    return o < outputs ? o : -1;
}

}  // namespace detail

// DepthwiseConv2dNativeBackpropFilter (docs/tf-ops.md section 4): returns dF
// [FH,FW,C,M] from input [N,H,W,C] and out_backprop [N,OH,OW,C*M]. It walks the
// input pixels and, for each filter tap, finds the output position that read
// the pixel through that tap (the generator walks the output positions
// instead).
inline std::vector<double> depthwise_conv2d_native_backprop_filter(
    const std::vector<double> &input, const std::vector<int64_t> &s, const std::vector<int64_t> &fs,
    const std::vector<double> &out_backprop, const std::vector<int64_t> &os, const Geometry2D &g) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], M = fs[3];
    const int64_t OH = os[1], OW = os[2];
    std::vector<double> filter_backprop(FH * FW * C * M, 0.0);
    // Every input pixel meets at most one output position per tap; positions
    // that only the padding reaches contribute nothing.
    for (int64_t b = 0; b < N; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t fh = 0; fh < FH; fh++) {
                    const int64_t oh = detail::source(h, fh, g.stride_rows, g.dilation_rows, g.pad_top, OH);
                    if (oh < 0) continue;
                    for (int64_t fw = 0; fw < FW; fw++) {
                        const int64_t ow = detail::source(w, fw, g.stride_cols, g.dilation_cols, g.pad_left, OW);
                        if (ow < 0) continue;
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t m = 0; m < M; m++)
                                filter_backprop[((fh * FW + fw) * C + c) * M + m] +=
                                    input[((b * H + h) * W + w) * C + c] *
                                    out_backprop[((b * OH + oh) * OW + ow) * C * M + c * M + m];
                    }
                }
    return filter_backprop;
}

}  // namespace gradtune::reference
