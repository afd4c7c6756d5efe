// Reference: Conv2DBackpropFilter, the sum over out_backprop positions
// written directly from the formula of docs/tf-ops.md section 7.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// Conv2DBackpropFilter (docs/tf-ops.md section 7): returns dF [FH,FW,C/G,O]
// from input [N,H,W,C] and out_backprop [N,OH,OW,O], G = C / filter_shape[2]
// groups: every out_backprop element times the input element each tap read.
inline std::vector<double> conv2d_backprop_filter(const std::vector<double> &input, const std::vector<int64_t> &s,
                                                  const std::vector<int64_t> &fs,
                                                  const std::vector<double> &out_backprop,
                                                  const std::vector<int64_t> &os, const Geometry2D &g) {
    const auto [N, H, W, C, FH, FW, Cg, O, OH, OW, G, Og] = conv_shapes(s, fs, os);
    std::vector<double> filter_backprop(FH * FW * Cg * O, 0.0);
    for (int64_t fh = 0; fh < FH; fh++)
        for (int64_t fw = 0; fw < FW; fw++)
            for (int64_t ci = 0; ci < Cg; ci++)
                for (int64_t o = 0; o < O; o++) {
                    const int64_t c = (o / Og) * Cg + ci;  // the input channel of group o / Og
                    double sum = 0;
                    for (int64_t b = 0; b < N; b++)
                        for (int64_t oh = 0; oh < OH; oh++)
                            for (int64_t ow = 0; ow < OW; ow++) {
                                const int64_t h = g.row(oh, fh), w = g.col(ow, fw);
                                if (!inside(h, w, H, W)) continue;
                                sum += out_backprop[((b * OH + oh) * OW + ow) * O + o] *
                                       input[((b * H + h) * W + w) * C + c];
                            }
                    filter_backprop[((fh * FW + fw) * Cg + ci) * O + o] = sum;
                }
    return filter_backprop;
}

}  // namespace gradtune::reference
