// Grouped dense convolution gradients on the ungrouped kernels. Records and
// structure defaults are tuned for groups = 1; a grouped call (ResNeXt's 32
// groups of 4 or 8 channels, RegNet's groups of 8 to 56) fell to the generic
// variant, whose lanes gather each group's channels: a 16x16x256 3x3 layer
// of 32 groups at N=8 took 38.9 ms (input gradient) and 27.4 ms (filter
// gradient) against oneDNN's 1.0 and 1.2 ms (Sapphire Rapids, gradtune-bench).
//
// A grouped convolution is block diagonal: group g's input channels meet only
// g's output channels. The detour runs B groups at a time as one ungrouped
// call on the block's channel slices (views into the call's NHWC tensors,
// nothing copied), with the block-diagonal filter of those B groups (zeros
// between them). B is the fewest groups whose channels fill a 16-lane vector
// on both sides: groups of 16 channels or more run one at a time and waste
// nothing; groups of 8 run in pairs, half of each call's products being with
// zeros. B need not divide G: the last block then holds the G mod B groups
// left (RegNetX-200MF's 152-channel stage is 19 groups of 8: 9 pairs and a
// single group; with B dividing G it was one block of all 19 groups, past
// the 8-group limit, so the generic variant: 2.7 ms against 0.55 ms for
// the input gradient at 8x8, N=8, Sapphire Rapids). The input gradient
// still takes a B that divides G where one of at most 8 groups does
// (group_blocks.cpp says why). The filter gradient's call computes the
// block's whole square and keeps its diagonal blocks.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/tensor.h"

namespace gradtune::internal {

struct GroupBlocks {
    bool usable = false;  // a grouped call the ungrouped kernels can run
    int64_t groups = 1;         // G
    int64_t per_block = 1;      // B: the groups of one ungrouped call (the last may hold fewer)
    int64_t in_channels = 0;    // Cg: input channels of one group
    int64_t out_channels = 0;   // Og: output channels of one group
    int64_t blocks() const { return (groups + per_block - 1) / per_block; }
    // The groups of block `block`: B, or what is left for the last one.
    int64_t groups_of(int64_t block) const { return std::min(per_block, groups - block * per_block); }
    int64_t block_in(int64_t block = 0) const { return groups_of(block) * in_channels; }
    int64_t block_out(int64_t block = 0) const { return groups_of(block) * out_channels; }
};

// The blocks of a Conv2DBackpropInput or Conv2DBackpropFilter call (its
// description, as dispatch sees it): NHWC, undilated (the phases of a
// dilated call read dense tensors), G > 1, and B at most 8 (groups of 1 or
// 2 channels would make most products zeros).
GroupBlocks group_blocks(const CallInfo &info);

// The ungrouped call of block `block`, as dispatch sees it.
CallInfo block_twin(const CallInfo &info, const GroupBlocks &blocks, int64_t block = 0);

// Whether a call runs as group blocks: a grouped call that dispatch would
// serve with the generic variant. Never for a forced variant, an external
// kernel or a CUDA call.
bool detour_to_group_blocks(const CallInfo &info, const RunOptions &options);

// Whether the input gradient can run as blocks of this call's out_backprop:
// blocks of one group, or an out_backprop with no Inf or NaN. In a block of
// several groups every input channel takes products with every group's
// out_backprop channels, the other groups' through the zeros between them,
// and 0 x Inf is NaN: one group's non-finite value made NaN of the whole
// block's input gradient, where TensorFlow's stays finite outside its group.
// Such a call stays on the generic variant, which reads each group's own
// channels.
bool input_gradient_blocks_exact(const GroupBlocks &blocks, const ConstTensorRef &out_backprop);

// Block `block`'s block-diagonal filter [FH, FW, b Cg, b Og] (b its groups) into `to`, from
// the call's filter [FH, FW, Cg, O]; and back, the diagonal blocks of a
// block's filter gradient `from` into the call's filter gradient.
void block_filter(const GroupBlocks &blocks, int64_t block, const ConstTensorRef &filter, void *to);
void unblock_filter(const GroupBlocks &blocks, int64_t block, const void *from, const TensorRef &filter);

}  // namespace gradtune::internal
