// Conv2DBackpropFilter's output channels split at the kernel's register
// tile. The kernels' full-tile path needs the output channels to be a
// multiple of the tile (vector_width x vectors_per_tile lanes, 64 for most
// records); any other count takes a small-tile path of one vector, or of
// half a vector where only that divides (728 = 91 x 8). Xception's
// 728-channel 1x1 filter gradient at 6x6, N=8 took 3.0 ms so, and 1.8 ms as
// 704 channels then 24 (Sapphire Rapids, gradtune-bench).
//
// The filter gradient of output channels [0, main) depends only on those
// channels of out_backprop, so the kernel dispatch chose for the call runs
// twice, on channel slices (views, nothing copied): the first `main`
// channels, a multiple of the tile, then the rest. Dispatch, the journal
// and GRADTUNE_VERBOSE see one call; the tuner measures its candidates so.
#pragma once

#include <cstdint>
#include <string>

#include "gradtune/device.h"
#include "gradtune/op_call.h"

namespace gradtune::internal {

// The output channels of a register tile in a knob setting ("name=value
// ...": vector_width x vectors_per_tile), 0 where it names neither.
int64_t output_channel_tile(const std::string &knobs);

// The output channels of the first slice of a Conv2DBackpropFilter call (its
// description, as dispatch sees it) run by a kernel whose register tile
// spans `tile` output channels: a whole number of tiles, where the call is a
// CPU NHWC ungrouped one with more output channels than a tile and not a
// multiple of it; else 0 (the call runs whole).
int64_t split_output_channels(const CallInfo &info, Device device, int64_t tile);

}  // namespace gradtune::internal
