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
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], Cg = fs[2], O = fs[3];
    const int64_t OH = os[1], OW = os[2];
    const int64_t G = C / Cg, Og = O / G;
    std::vector<double> in_backprop(N * H * W * C, 0.0);
    for (int64_t b = 0; b < N; b++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t fh = 0; fh < FH; fh++)
                    for (int64_t fw = 0; fw < FW; fw++) {
                        const int64_t h = oh * g.stride_rows - g.pad_top + fh * g.dilation_rows;
                        const int64_t w = ow * g.stride_cols - g.pad_left + fw * g.dilation_cols;
                        if (h < 0 || h >= H || w < 0 || w >= W) continue;
                        for (int64_t o = 0; o < O; o++) {
                            const int64_t group = o / Og;
                            const double dy = out_backprop[((b * OH + oh) * OW + ow) * O + o];
                            for (int64_t ci = 0; ci < Cg; ci++)
                                in_backprop[((b * H + h) * W + w) * C + group * Cg + ci] +=
                                    dy * filter[((fh * FW + fw) * Cg + ci) * O + o];
                        }
                    }
    return in_backprop;
}

}  // namespace gradtune::reference
