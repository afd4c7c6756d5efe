// Reference: FractionalAvgPoolGrad (spec/tf-ops.md section 9), TF's own loop
// nest written again from the spec: a scatter over out_backprop's cells.
#pragma once

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
std::vector<double> fractional_avg_pool_grad(const std::vector<int64_t> &in_shape,
                                             const std::vector<double> &out_backprop,
                                             const std::vector<int64_t> &out_shape,
                                             const std::vector<int64_t> &row_sequence,
                                             const std::vector<int64_t> &col_sequence, bool overlapping);

}  // namespace gradtune::reference
