// Dilated dense convolution gradients on the undilated kernels. Records and
// structure defaults are tuned for dilation 1; a dilated call (DeepLab's
// atrous layers) fell to the generic variant, 0.3-0.5x oneDNN (a 16x16x256
// 3x3 layer at dilation 2, N=8: 19.5 ms against oneDNN's 6.2 ms, Sapphire
// Rapids). At stride 1 a convolution with dilation d touches only positions
// of one residue mod d in each of its windows: the input's positions of
// residue r meet only out_backprop's positions of one residue q. So the call
// is d x d (rows x columns) independent undilated convolutions on those
// subsampled grids, its phases. The detour gathers each phase's grids into
// scratch memory as images of one undilated call of N x d x d images (every
// phase the same size and padding, short grids filled with zeros), runs
// that call on the kernels dispatch has for its structure, and scatters an
// input gradient back; a filter gradient sums over the images, so the one
// call adds the phases' parts itself.
//
// One dimension, stride 1, pad p before, filter k, dilation d:
//   input gradient  dIn[r + d a] = sum_t dOut_q[a + b - t] f[t],  q = (r + p) mod d, b = (r + p) div d
//   filter gradient dF[t] = sum_q sum_m In_r[m + t + c] dOut_q[m],  r = (q - p) mod d, c = floor((q - p) / d)
// with X_r[a] = X[r + d a]: undilated gradients whose pad is b (-c).
#pragma once

#include <cstdint>
#include <vector>

#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/tensor.h"

namespace gradtune::internal {

// How one phase's grid maps along one dimension: its position m holds the
// call's position first + d (m - offset) for offset <= m < offset + count,
// and zero elsewhere.
struct PhaseRange {
    int64_t first, offset, count;
};

// The phases of a dilated NHWC call at stride 1, per dimension (0: rows,
// 1: columns).
struct DilationPhases {
    bool usable = false;  // a geometry the undilated kernels can run
    int64_t dilation[2] = {1, 1};
    int64_t twin_input[2] = {0, 0};     // the undilated call's input (or input gradient) size
    int64_t twin_out[2] = {0, 0};       // its out_backprop size
    int64_t pad_before[2] = {0, 0}, pad_after[2] = {0, 0};
    std::vector<PhaseRange> out_backprop[2];  // each phase's out_backprop grid, from the call's
    std::vector<PhaseRange> input[2];         // each phase's input (gradient) grid: the call's
    int64_t phases() const { return dilation[0] * dilation[1]; }
};

// The phases of a Conv2DBackpropInput or Conv2DBackpropFilter call (its
// description, as dispatch sees it).
DilationPhases dilation_phases(const CallInfo &info);

// The undilated call of the phases, as dispatch sees it.
CallInfo phase_twin(const CallInfo &info, const DilationPhases &phases);

// Whether a call runs as phases: a dilated dense gradient at stride 1, NHWC,
// that dispatch would serve with the generic variant while the undilated
// call has a tuned record or a structure default. Never for a forced
// variant, an external kernel or a CUDA call.
bool detour_to_phases(const CallInfo &info, const RunOptions &options);

// An NHWC activation [N, H, W, C] as the phases' images, [phase rows][phase
// columns][N][twin rows][twin columns][C], into `to` (`ranges`: the
// phases' grids along rows and columns); and back from such images, writing
// each position of `to` that a grid holds.
void gather_phases(const DilationPhases &phases, const std::vector<PhaseRange> (&ranges)[2],
                   const ConstTensorRef &from, void *to, int64_t rows, int64_t cols, ParallelRunner *parallel);
void scatter_phases(const DilationPhases &phases, const std::vector<PhaseRange> (&ranges)[2], const void *from,
                    int64_t rows, int64_t cols, const TensorRef &to, ParallelRunner *parallel);

}  // namespace gradtune::internal
