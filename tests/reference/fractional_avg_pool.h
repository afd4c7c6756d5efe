// Reference: FractionalAvgPool's pooling (spec/tf-ops.md section 8) for given
// pooling sequences (as TF's own tests check the op: against a reference that
// takes the sequences the op returned).
#pragma once

#include <cstdint>
#include <vector>

namespace gradtune::reference {

// How the reference adds and divides, to reproduce TF's arithmetic in T.
enum class PoolArithmetic {
    kFloat64,  // sum and divide in double (float64 T)
    kFloat32,  // sum and divide in float, as TF does for float32
    kInteger,  // int64 sums, division truncating toward zero (int32/int64 T)
};

// out [N, OH, OW, C] from value [N, H, W, C] (in_shape, NHWC): the mean of
// each cell rows row_seq[r] .. min(overlapping ? row_seq[r+1] : row_seq[r+1] - 1, H - 1)
// (columns likewise), summed row by row, each row left to right, from 0.
std::vector<double> fractional_avg_pool(const std::vector<double> &value, const std::vector<int64_t> &in_shape,
                                        const std::vector<int64_t> &row_sequence,
                                        const std::vector<int64_t> &col_sequence, bool overlapping,
                                        PoolArithmetic arithmetic = PoolArithmetic::kFloat64);

}  // namespace gradtune::reference
