// The input gradient of a 1x1 convolution at stride s > 1 as a pointwise
// call: each out_backprop position (y, x) feeds the input position (s y, s x)
// alone, through the filter, and every other input position gets zero. So
// the call is the stride-1 input gradient of out_backprop's own grid (a
// pointwise call: a matrix product on the pointwise kernels), scattered into
// every s-th row and column of the output, zeros elsewhere. The strided
// kernels instead run the output's whole grid, three positions in four of it
// zeros at stride 2. On ResNet-50's 1x1 stride-2 shortcuts (N=8, Sapphire
// Rapids class, gradtune-bench, one run): 16x16x512 <- 8x8x1024 took 3.17 ms
// on its exact record, 1.96 ms as the pointwise call before the scatter;
// 32x32x256 <- 16x16x512 2.18 ms against 1.89 ms, where the scatter writes
// 8 MB. Which is faster depends on the call, so the first call of each
// signature in a process times both (dispatch.h's probes) and keeps the
// faster.
#pragma once

#include <cstdint>
#include <string>

#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/tensor.h"

namespace gradtune::internal {

// Whether an input gradient can run as its strided pointwise call: NHWC, a
// 1x1 filter, one group, dilation 1, a stride above 1, no padding before the
// first row or column, every out_backprop position inside the input, on the
// CPU and without a forced variant or external kernel; then out_backprop's
// grid, `out_rows` x `out_cols`.
bool strided_pointwise_fits(const CallInfo &info, const RunOptions &options, int64_t *out_rows, int64_t *out_cols);

// The stride-1 call of out_backprop's grid, as dispatch sees it.
CallInfo strided_pointwise_twin(const CallInfo &info, int64_t out_rows, int64_t out_cols);

// Which way a signature runs: measured on its first call (or forced with
// GRADTUNE_STRIDED_POINTWISE=detour|direct), unknown before.
struct StridedPointwiseChoice {
    bool known = false;
    bool detour = false;
    std::string why;        // what decided it
    bool measured = false;  // a probe's (not the static choice or the variable's)
};
StridedPointwiseChoice strided_pointwise_choice(const CallInfo &info, const RunOptions &options);
void remember_strided_pointwise_choice(const CallInfo &info, bool detour, double detour_ms, double direct_ms);

// `to` [N, H, W, C] = zeros, but to[n, s_r y, s_c x, :] = from[n, y, x, :]
// for `from` [N, rows, cols, C] (dense).
void scatter_strided(const void *from, int64_t rows, int64_t cols, int64_t stride_rows, int64_t stride_cols,
                     const TensorRef &to, ParallelRunner *parallel);

}  // namespace gradtune::internal
