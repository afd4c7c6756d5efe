// Reference: DepthwiseConv2dNativeBackpropInput, a scatter loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// DepthwiseConv2dNativeBackpropInput (docs/tf-ops.md section 3): returns dIn
// [N,H,W,C] from filter [FH,FW,C,M] and out_backprop [N,OH,OW,C*M], by
// scattering every out_backprop element through every tap.
inline std::vector<double> depthwise_conv2d_native_backprop_input(const std::vector<int64_t> &s,
                                                                  const std::vector<double> &filter,
                                                                  const std::vector<int64_t> &fs,
                                                                  const std::vector<double> &out_backprop,
                                                                  const std::vector<int64_t> &os, const Geometry2D &g) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], M = fs[3];
    const int64_t OH = os[1], OW = os[2];
    std::vector<double> in_backprop(N * H * W * C, 0.0);
    // Scatter: every out_backprop element and tap adds to the input position
    // the forward op read it from.
    for_each_tap(N, OH, OW, FH, FW, H, W, g,
                 [&](int64_t b, int64_t oh, int64_t ow, int64_t fh, int64_t fw, int64_t h, int64_t w) {
                     for (int64_t c = 0; c < C; c++)
                         for (int64_t m = 0; m < M; m++)
                             in_backprop[((b * H + h) * W + w) * C + c] +=
                                 out_backprop[((b * OH + oh) * OW + ow) * C * M + c * M + m] *
                                 filter[((fh * FW + fw) * C + c) * M + m];
                 });
    return in_backprop;
}

}  // namespace gradtune::reference
