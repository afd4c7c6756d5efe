// Reference: Conv2DBackpropInput, a scatter loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// Conv2DBackpropInput (docs/tf-ops.md section 6): returns dIn [N,H,W,C] from
// filter [FH,FW,C/G,O] and out_backprop [N,OH,OW,O], G = C / filter dim 2
// groups, by scattering every out_backprop element through every tap to the
// input position the forward convolution read it from.
inline std::vector<double> conv2d_backprop_input(const std::vector<int64_t> &s, const std::vector<double> &filter,
                                                 const std::vector<int64_t> &fs,
                                                 const std::vector<double> &out_backprop,
                                                 const std::vector<int64_t> &os, const Geometry2D &g) {
    const auto [N, H, W, C, FH, FW, Cg, O, OH, OW, G, Og] = conv_shapes(s, fs, os);
    std::vector<double> in_backprop(N * H * W * C, 0.0);
    for_each_tap(N, OH, OW, FH, FW, H, W, g,
                 [&](int64_t b, int64_t oh, int64_t ow, int64_t fh, int64_t fw, int64_t h, int64_t w) {
                     for (int64_t o = 0; o < O; o++) {
                         const int64_t group = o / Og;
                         const double dy = out_backprop[((b * OH + oh) * OW + ow) * O + o];
                         for (int64_t ci = 0; ci < Cg; ci++)
                             in_backprop[((b * H + h) * W + w) * C + group * Cg + ci] +=
                                 dy * filter[((fh * FW + fw) * Cg + ci) * O + o];
                     }
                 });
    return in_backprop;
}

}  // namespace gradtune::reference
