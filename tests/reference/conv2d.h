// Reference: Conv2D, a gather loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// Conv2D (docs/tf-ops.md section 5): in [N,H,W,C], HWIO filter [FH,FW,Cg,O]
// with G = C / Cg groups (output channel o reads input channels
// g*Cg .. g*Cg + Cg - 1 of its group g = o / (O / G)) -> [N,OH,OW,O].
inline std::vector<double> conv2d(const std::vector<double> &in, const std::vector<int64_t> &s,
                                  const std::vector<double> &filter, const std::vector<int64_t> &fs, int64_t out_rows,
                                  int64_t out_cols, const Geometry2D &g) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], Cg = fs[2], O = fs[3];
    std::vector<double> out(N * out_rows * out_cols * O, 0.0);
    if (in.empty()) return out;  // only padding reaches the output
    const int64_t groups = C / Cg, outputs_per_group = O / groups;
    for (int64_t b = 0; b < N; b++)
        for (int64_t oh = 0; oh < out_rows; oh++)
            for (int64_t ow = 0; ow < out_cols; ow++)
                for (int64_t o = 0; o < O; o++) {
                    const int64_t first_channel = (o / outputs_per_group) * Cg;
                    double sum = 0;
                    for (int64_t fh = 0; fh < FH; fh++)
                        for (int64_t fw = 0; fw < FW; fw++) {
                            const int64_t h = g.row(oh, fh), w = g.col(ow, fw);
                            if (!inside(h, w, H, W)) continue;
                            for (int64_t ci = 0; ci < Cg; ci++)
                                sum += in[((b * H + h) * W + w) * C + first_channel + ci] *
                                       filter[((fh * FW + fw) * Cg + ci) * O + o];
                        }
                    out[((b * out_rows + oh) * out_cols + ow) * O + o] = sum;
                }
    return out;
}

}  // namespace gradtune::reference
