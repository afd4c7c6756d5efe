// A convolution gradient of a strided convolution (stride s > 1), or of a
// small out_backprop grid at stride 1, as a pointwise call.
//
// Input gradient: each out_backprop position (y, x) feeds the input
// positions (s y - pad + ky, s x - pad + kx) through the filter's taps
// (ky, kx), and nothing else does. So the call is the stride-1 input
// gradient of out_backprop's own grid with the filter's taps as channels: a
// 1x1 call whose filter is the [FH, FW, C, O] filter read as
// [1, 1, FH FW C, O] (a matrix product on the pointwise kernels), giving,
// per out_backprop position, what it adds to each of its taps' input
// positions; these are then summed into place (a col2im), zeros where no
// tap lands. For a 1x1 filter that is a scatter into every s-th row and
// column.
//
// Filter gradient: the same taps read the other way. Gathering, per
// out_backprop position, the input positions of its taps as channels (an
// im2col, zeros for taps in the padding) makes the call the stride-1 1x1
// filter gradient of those columns against out_backprop, whose
// [1, 1, FH FW C, O] result is the [FH, FW, C, O] filter gradient as it
// lies in memory.
//
// The kernels of the call itself instead run the whole grid: at stride 2
// three input positions in four are zeros of a 1x1 input gradient, and a
// small grid spends much of its time on taps that land in the padding (at
// stride 1 too: a 3x3 2x2x512 <- 2x2x512 input gradient at N=8 ran at 0.23x
// oneDNN, Zen 4). On ResNet-50's 1x1 stride-2 shortcuts (N=8, Sapphire
// Rapids class, gradtune-bench, one run): 16x16x512 <- 8x8x1024 took
// 3.17 ms on its exact record, 1.96 ms as the pointwise call before the
// scatter; 32x32x256 <- 16x16x512 2.18 ms against 1.89 ms, where the
// scatter writes 8 MB. Which is faster depends on the call, so the first
// call of each signature in a process times both (dispatch.h's probes) and
// keeps the faster.
#pragma once

#include <cstdint>
#include <string>

#include "dispatch.h"
#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/tensor.h"

namespace gradtune::internal {

// The most scratch memory the pointwise call's products may take (they are
// FH FW / (s_r s_c) times the output's size): above it the strided kernels
// serve the call, without a probe.
constexpr int64_t kTapsPointwiseScratchBytes = int64_t{64} << 20;

// At stride 1, the largest out_backprop grid (positions) taken: beyond it
// the kernels' border waste is small.
constexpr int64_t kTapsPointwiseUnstridedPositions = 64;

// Whether a Conv2DBackpropInput or Conv2DBackpropFilter call can run as its
// pointwise call: NHWC, one group, dilation 1, a stride above 1 (or, at
// stride 1, a filter larger than 1x1 and out_backprop's grid within
// kTapsPointwiseUnstridedPositions), on the CPU and without a forced
// variant or external kernel, its products (or gathered taps) within
// kTapsPointwiseScratchBytes, and, for an input gradient where taps overlap
// (a filter larger than the stride), float32 or float64 (the sums into
// place are in the dtype: 16-bit dtypes would round each partial sum); then
// out_backprop's grid, `out_rows` x `out_cols`.
bool taps_pointwise_fits(const CallInfo &info, const RunOptions &options, int64_t *out_rows, int64_t *out_cols);

// The stride-1 1x1 call of out_backprop's grid, the filter's taps as
// channels, as dispatch sees it.
CallInfo taps_pointwise_twin(const CallInfo &info, int64_t out_rows, int64_t out_cols);

// Which way a signature runs (GRADTUNE_TAPS_POINTWISE=detour|direct forces
// it): measured on its first call, unknown before; where probes are off,
// the call's own kernels.
DetourChoice taps_pointwise_choice(const CallInfo &info, const RunOptions &options);
DetourDecisions &taps_pointwise_decisions();

// Where the taps of out_backprop's grid (`rows` x `cols`) lie in the input:
// the filter's taps, the strides and the pads before the first row and
// column.
struct TapsIntoPlace {
    int64_t rows = 0, cols = 0, taps_rows = 1, taps_cols = 1;
    int64_t stride_rows = 1, stride_cols = 1, pad_top = 0, pad_left = 0;
};
// `to` [N, H, W, C] = the sum of the products `from` [N, rows, cols,
// taps_rows, taps_cols, C] (dense) that land on each position, zeros where
// none does; each output row sums its products in one fixed order.
void sum_taps_into_place(const void *from, const TapsIntoPlace &g, const TensorRef &to, ParallelRunner *parallel);

// `to` [N, rows, cols, taps_rows, taps_cols, C] = the input positions of
// each out_backprop position's taps, `from` [N, H, W, C] (dense), zeros for
// taps in the padding.
void gather_taps(const ConstTensorRef &from, const TapsIntoPlace &g, const TensorRef &to, ParallelRunner *parallel);

}  // namespace gradtune::internal
