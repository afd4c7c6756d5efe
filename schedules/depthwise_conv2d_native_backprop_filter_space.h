// Schedule space of DepthwiseConv2dNativeBackpropFilter (Halide-free; apply()
// is in depthwise_conv2d_native_backprop_filter.h).
//
// The filter gradient dF[fh,fw,c,m] is tiny and each element reduces over
// every out_backprop position (N*OH*OW). Every schedule:
//   1. splits the reduction rows (n, oh) into `partitions` contiguous parts
//      that run in parallel (rfactor) and are summed in a fixed order
//      afterwards. The count is a knob, never the thread count, so a call
//      gives the same bits whatever the number of threads;
//   2. computes each part in register tiles of
//      (channels or ow-lanes along the unit-stride dimension) x tap_tile_x x tap_tile_y
//      filter taps, streaming the part's rows of input and out_backprop once
//      per tile (unroll_columns output columns per step; stage_input copies
//      each output row's zero-padded input rows first).
// CPU NHWC: tiles of vector_width * vectors_per_tile channels.
// CPU NCHW: the unit-stride dimension is w, so the reduction over ow is
//   itself split into vector_width * vectors_per_tile lanes (partial sums per
//   lane, summed in a fixed order at the end), and tiles hold
//   channels_per_tile channels.
// The op is memory bound (~2 FLOP per byte at stride 1): the knobs trade
// register reuse of each loaded input vector across taps against spills and
// against the number of parallel tasks.
// CUDA: one thread per (channel or ow-lane, tap tile, partition); NHWC
//   blocks hold threads_unit channels x threads_other partitions, NCHW blocks
//   threads_unit ow-lanes x threads_other channels.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
// A domain may be an expression of the space function's locals too.
#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS(KNOB, SHARED)                                     \
    KNOB(vector_width, (2, 4, 8, 16, 32, 64), lanes,                                                                 \
         nhwc ? "lanes per vector along channels" : "lanes per vector along output columns (partial sums per lane)") \
    KNOB(vectors_per_tile, (1, 2, 3, 4), vectors, "vectors per register tile along the unit-stride dimension",       \
         .values_since = 2)                                                                                          \
    KNOB(channels_per_tile, (nhwc ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8}), 1,                          \
         "NCHW: channels per register tile (NHWC tiles channels with the vectors)")                                  \
    KNOB(channels_inside_reduction, (0, 1), 0,                                                                       \
         "1: the loop over channel tiles runs inside the reduction (accumulators in L1, each row of a partition "    \
         "read once); 0: each channel tile streams its partition alone (accumulators in registers)")                 \
    KNOB(partitions, (1, 2, 4, 8, 16, 32, 64), 8,                                                                    \
         "parts of the reduction rows (n, oh), computed in parallel and summed in order")                            \
    KNOB(unroll_columns, (nhwc ? std::vector<int>{1, 2, 4} : std::vector<int>{1}), 1,                                \
         "NHWC: output columns per unrolled step of the reduction (input loads shared across taps; NCHW "            \
         "vectorises the columns instead)")                                                                          \
    KNOB(stage_input, (0, 1), 0,                                                                                     \
         "1: copy the zero-padded input rows of each output row first (no boundary selects in the tap loop)")        \
    KNOB(tap_tile_x, (kTapTiles), tap_x, "filter columns per register tile")                                         \
    KNOB(tap_tile_y, (kTapTiles), tap_y, "filter rows per register tile")

#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS(KNOB, SHARED)                      \
    KNOB(threads_unit, (8, 16, 32, 64, 128, 256), 32,                                                  \
         nhwc ? "threads along channels (coalesced)"                                                   \
              : "threads along output columns, one partial sum each (coalesced)")                      \
    KNOB(threads_other, (1, 2, 4, 8, 16), 4, nhwc ? "partitions per block" : "channels per block")     \
    SHARED(partitions, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), nhwc ? 256 : 64,                 \
           "parts of the reduction rows (n, oh), computed by separate threads and summed in order")    \
    SHARED(tap_tile_x, (kTapTiles), default_tap_tile(fixed.filter_width), "filter columns per thread") \
    SHARED(tap_tile_y, (kTapTiles), default_tap_tile(fixed.filter_height), "filter rows per thread")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeBackpropFilterCpuKnobs,
                     GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeBackpropFilterCudaKnobs,
                     GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS);

namespace depthwise_conv2d_native_backprop_filter_space {

inline const std::vector<int> kTapTiles = {1, 2, 3, 4, 5, 7};

// A first-guess tap tile: the whole filter when it is fixed and small, else 3
// (most depthwise filters are 3x3).
inline int default_tap_tile(int fixed) {
    const int want = fixed > 0 ? std::min(fixed, 5) : 3;
    int best = 1;
    for (int v : kTapTiles)
        if (v <= want) best = v;
    return best;
}

// A tap tile larger than a fixed filter would never take the tiled path
// (either device's knobs).
template <class TapTiles>
std::string check_tap_tiles(const Structure &s, const TapTiles &k) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const int fixed_w = fixed.filter_width, fixed_h = fixed.filter_height;
    if (fixed_w > 0 && k.tap_tile_x > fixed_w)
        return "tap_tile_x " + std::to_string(k.tap_tile_x) + " exceeds the fixed filter width " +
               std::to_string(fixed_w);
    if (fixed_h > 0 && k.tap_tile_y > fixed_h)
        return "tap_tile_y " + std::to_string(k.tap_tile_y) + " exceeds the fixed filter height " +
               std::to_string(fixed_h);
    return "";
}

inline KnobSpace cpu_space(const Structure &s) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const int bytes = dtype_bytes(s.dtype);
    // 16-bit types accumulate in float32: the register budget counts those.
    const int accumulator_bytes = gradtune::accumulator_bytes(s.dtype);
    const int lanes = 64 / accumulator_bytes;  // one AVX-512 register of accumulators
    const bool nhwc = s.data_format == "NHWC";
    const int tap_x = default_tap_tile(fixed.filter_width);
    const int tap_y = default_tap_tile(fixed.filter_height);
    const int vectors = tap_x * tap_y * 2 <= 32 && nhwc ? 2 : 1;
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS);
    space.constraint = KnobSpace::typed<DepthwiseConv2dNativeBackpropFilterCpuKnobs>(
        [=](const DepthwiseConv2dNativeBackpropFilterCpuKnobs &k) -> std::string {
            const int vector_bytes = k.vector_width * bytes;
            if (std::string why = check_vector_bytes(vector_bytes); !why.empty()) return why;
            const int registers_per_vector = std::max(1, k.vector_width * accumulator_bytes / 64);
            const int accumulators =
                k.vectors_per_tile * k.channels_per_tile * k.tap_tile_x * k.tap_tile_y * registers_per_vector;
            if (accumulators > 32)
                return "the register tile needs " + std::to_string(accumulators) + " vector registers (max 32)";
            // Unrolled columns multiply the guarded channel loop of the L1
            // accumulators: minutes of compile time for little reuse.
            if (k.unroll_columns > 1 && k.channels_inside_reduction)
                return "unroll_columns needs register tiles (channels_inside_reduction 0)";
            // NCHW keeps a partial sum per partition and ow-lane for every filter
            // element; beyond 1024 of them their memory traffic outweighs any
            // parallelism gained.
            const int partial_sums = k.partitions * (nhwc ? 1 : k.vector_width * k.vectors_per_tile);
            if (partial_sums > 1024)
                return std::to_string(partial_sums) + " partial sums per filter element (partitions x lanes, max 1024)";
            return check_tap_tiles(s, k);
        });
    return space;
}

inline KnobSpace cuda_space(const Structure &s) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const bool nhwc = s.data_format == "NHWC";
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS);
    space.constraint = KnobSpace::typed<DepthwiseConv2dNativeBackpropFilterCudaKnobs>(
        [=](const DepthwiseConv2dNativeBackpropFilterCudaKnobs &k) -> std::string {
            const int threads = k.threads_unit * k.threads_other;
            if (std::string why = check_threads_per_block(threads); !why.empty()) return why;
            // As on the CPU: one partial sum per partition (and NCHW ow-lane)
            // and filter element, written and read back through global memory.
            const int partial_sums = k.partitions * (nhwc ? 1 : k.threads_unit);
            if (partial_sums > 4096)
                return std::to_string(partial_sums) + " partial sums per filter element (partitions x lanes, max 4096)";
            return check_tap_tiles(s, k);
        });
    return space;
}

}  // namespace depthwise_conv2d_native_backprop_filter_space

inline OpSchema depthwise_conv2d_native_backprop_filter_schema() {
    OpSchema op;
    op.name = "DepthwiseConv2dNativeBackpropFilter";
    op.dtypes = {"float16", "bfloat16", "float32", "float64"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = DepthwiseStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    // 2: vectors_per_tile 3 (tiles of 48 channels, which divide the 144, 240,
    // 480, 672, 960 channels of MobileNet and EfficientNet layers).
    op.knob_space_version = 2;  // bump when a knob's meaning changes
    op.space = per_device(depthwise_conv2d_native_backprop_filter_space::cpu_space,
                          depthwise_conv2d_native_backprop_filter_space::cuda_space);
    return op;
}

}  // namespace gradtune
