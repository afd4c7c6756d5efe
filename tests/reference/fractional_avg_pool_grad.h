// Reference: FractionalAvgPoolGrad (docs/tf-ops.md section 9), TF's own loop
// nest written again from its description there: a scatter over
// out_backprop's cells.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gradtune::reference {

// Returns dIn [N, H, W, C] (in_shape, NHWC) in float64, before the cast to T.
// out_backprop is [N', OH, OW, C'] with N' <= N and C' <= C (positions it does
// not reach stay 0); the sequences have at least OH + 1 / OW + 1 values, may
// be decreasing or exceed the input (cells are clamped or empty), but must
// not give a negative start or clamped end (TF rejects those). Every cell
// (b, r, c) adds dOut[b, r, c, d] / cell_size to each pixel it covers, for
// r, then c ascending: TF's order of float64 additions per pixel.
inline std::vector<double> fractional_avg_pool_grad(const std::vector<int64_t> &in_shape,
                                                    const std::vector<double> &out_backprop,
                                                    const std::vector<int64_t> &out_shape,
                                                    const std::vector<int64_t> &row_sequence,
                                                    const std::vector<int64_t> &col_sequence, bool overlapping) {
    const int64_t H = in_shape[1], W = in_shape[2], C = in_shape[3];
    const int64_t N_out = out_shape[0], OH = out_shape[1], OW = out_shape[2], C_out = out_shape[3];
    std::vector<double> in_backprop(in_shape[0] * H * W * C, 0.0);
    for (int64_t b = 0; b < N_out; b++)
        for (int64_t r = 0; r < OH; r++) {
            const int64_t row_start = row_sequence[r];
            const int64_t row_end = std::min(overlapping ? row_sequence[r + 1] : row_sequence[r + 1] - 1, H - 1);
            for (int64_t c = 0; c < OW; c++) {
                const int64_t col_start = col_sequence[c];
                const int64_t col_end = std::min(overlapping ? col_sequence[c + 1] : col_sequence[c + 1] - 1, W - 1);
                // Only used when both ranges are non-empty (then >= 1).
                const int64_t cell_size = (row_end - row_start + 1) * (col_end - col_start + 1);
                for (int64_t h = row_start; h <= row_end; h++)
                    for (int64_t w = col_start; w <= col_end; w++)
                        for (int64_t d = 0; d < C_out; d++)
                            in_backprop[((b * H + h) * W + w) * C + d] +=
                                out_backprop[((b * OH + r) * OW + c) * C_out + d] / static_cast<double>(cell_size);
            }
        }
    return in_backprop;
}

}  // namespace gradtune::reference
