// Reference: FractionalAvgPool's pooling (docs/tf-ops.md section 8) for given
// pooling sequences (as TF's own tests check the op: against a reference that
// takes the sequences the op returned).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gradtune::reference {

namespace detail {

// One cell's mean in the accumulator type A (double, float or int64).
template <typename A>
inline double cell_mean(const std::vector<double> &value, int64_t b, int64_t H, int64_t W, int64_t C, int64_t d,
                        int64_t row_start, int64_t row_end, int64_t col_start, int64_t col_end) {
    A sum = 0, count = 0;
    for (int64_t h = row_start; h <= row_end; h++)
        for (int64_t w = col_start; w <= col_end; w++) {
            sum += static_cast<A>(value[((b * H + h) * W + w) * C + d]);
            count += 1;
        }
    return static_cast<double>(sum / count);  // int64: C++ truncates toward zero
}

}  // namespace detail

// How the reference adds and divides, to reproduce TF's arithmetic in T.
enum class PoolArithmetic {
    kFloat64,  // sum and divide in double (float64 T)
    kFloat32,  // sum and divide in float, as TF does for float32
    kInteger,  // int64 sums, division truncating toward zero (int32/int64 T)
};

// out [N, OH, OW, C] from value [N, H, W, C] (in_shape, NHWC): the mean of
// each cell rows row_seq[r] .. min(overlapping ? row_seq[r+1] : row_seq[r+1] - 1, H - 1)
// (columns likewise), summed row by row, each row left to right, from 0.
inline std::vector<double> fractional_avg_pool(const std::vector<double> &value, const std::vector<int64_t> &in_shape,
                                               const std::vector<int64_t> &row_sequence,
                                               const std::vector<int64_t> &col_sequence, bool overlapping,
                                               PoolArithmetic arithmetic = PoolArithmetic::kFloat64) {
    const int64_t N = in_shape[0], H = in_shape[1], W = in_shape[2], C = in_shape[3];
    const int64_t OH = static_cast<int64_t>(row_sequence.size()) - 1;
    const int64_t OW = static_cast<int64_t>(col_sequence.size()) - 1;
    std::vector<double> out(N * OH * OW * C);
    for (int64_t b = 0; b < N; b++)
        for (int64_t r = 0; r < OH; r++) {
            const int64_t row_end = std::min(overlapping ? row_sequence[r + 1] : row_sequence[r + 1] - 1, H - 1);
            for (int64_t c = 0; c < OW; c++) {
                const int64_t col_end = std::min(overlapping ? col_sequence[c + 1] : col_sequence[c + 1] - 1, W - 1);
                for (int64_t d = 0; d < C; d++) {
                    double mean = 0;
                    switch (arithmetic) {
                        case PoolArithmetic::kFloat64:
                            mean = detail::cell_mean<double>(value, b, H, W, C, d, row_sequence[r], row_end,
                                                             col_sequence[c], col_end);
                            break;
                        case PoolArithmetic::kFloat32:
                            mean = detail::cell_mean<float>(value, b, H, W, C, d, row_sequence[r], row_end,
                                                            col_sequence[c], col_end);
                            break;
                        case PoolArithmetic::kInteger:
                            mean = detail::cell_mean<int64_t>(value, b, H, W, C, d, row_sequence[r], row_end,
                                                              col_sequence[c], col_end);
                            break;
                    }
                    out[((b * OH + r) * OW + c) * C + d] = mean;
                }
            }
        }
    return out;
}

}  // namespace gradtune::reference
