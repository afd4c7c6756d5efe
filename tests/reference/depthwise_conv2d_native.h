// Reference: DepthwiseConv2dNative, a gather loop.
#pragma once

#include "reference/window.h"

namespace gradtune::reference {

// DepthwiseConv2dNative (docs/tf-ops.md section 2): in [N,H,W,C], filter
// [FH,FW,C,M] -> [N,OH,OW,C*M].
inline std::vector<double> depthwise_conv2d_native(const std::vector<double> &in, const std::vector<int64_t> &s,
                                                   const std::vector<double> &filter, const std::vector<int64_t> &fs,
                                                   int64_t out_rows, int64_t out_cols, const Geometry2D &g) {
    const int64_t N = s[0], H = s[1], W = s[2], C = s[3], FH = fs[0], FW = fs[1], M = fs[3];
    std::vector<double> out(N * out_rows * out_cols * C * M, 0.0);
    for (int64_t b = 0; b < N; b++)
        for (int64_t oh = 0; oh < out_rows; oh++)
            for (int64_t ow = 0; ow < out_cols; ow++)
                for (int64_t c = 0; c < C; c++)
                    for (int64_t m = 0; m < M; m++) {
                        double sum = 0;
                        for (int64_t fh = 0; fh < FH; fh++)
                            for (int64_t fw = 0; fw < FW; fw++) {
                                const int64_t h = g.row(oh, fh), w = g.col(ow, fw);
                                if (!inside(h, w, H, W)) continue;
                                sum += in[((b * H + h) * W + w) * C + c] * filter[((fh * FW + fw) * C + c) * M + m];
                            }
                        out[((b * out_rows + oh) * out_cols + ow) * C * M + c * M + m] = sum;
                    }
    return out;
}

}  // namespace gradtune::reference
