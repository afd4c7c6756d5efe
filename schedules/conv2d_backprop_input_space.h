// Schedule space of Conv2DBackpropInput (Halide-free; apply() is in
// conv2d_backprop_input.h).
//
// The op is compute bound (24-490 FLOP/byte on the ResNet-50 layers of
// spec/benchmark-shapes.md), so the CPU space is about keeping the FMA units
// busy (notes/halide-lessons.md: a direct formulation reached 93% of peak):
//   - a register tile of (vector_width * vectors_per_tile) channels (the
//     vectorised, unit-stride dimension in NHWC) x tile_other columns x
//     tile_y rows of dIn accumulates over the group's output channels and the
//     valid filter taps: per output channel it loads vectors_per_tile filter
//     vectors and tile_other * tile_y broadcasts of out_backprop;
//   - channel_block blocks the reduction over output channels (taps inside a
//     block: its filter and out_backprop slices stay in L1);
//     unroll_reduction / unroll_taps trade loop overhead against code size;
//   - tasks of rows_per_task tile rows (and, with channel_tasks, one channel
//     tile each) run in parallel; the task count should be a multiple of the
//     thread count;
//   - pack_filter transposes the HWIO filter once so that the vectors along
//     c are dense (=2: inside each task, only its channel tile: contiguous,
//     cache-resident, and no 9 MB round trip through memory at N=1);
//     stage_out_backprop copies each task's zero-padded out_backprop slice
//     (no boundary selects in the reduction; +30% in the prototype);
//   - in NCHW, vectorize_channels chooses lanes along c (strided stores,
//     dense reduction) or along the unit-stride columns.
// Strided variants (a compile-time stride) compute each tile in one tap phase
// (see conv2d_backprop_input.h), so strides cost no predicates.
// algorithm=1 ("dot", ungrouped NHWC variants) runs the lanes along the output
// channels instead, the reduction's unit-stride axis: a register tile of
// tile_channels x tile_other x tile_y outputs each holds vector_width partial
// sums, finished by one horizontal add. It reads the filter where it lies
// (no packing: at N=1 the 9 MB copy of a 3x3x512x512 filter cost more than
// the reduction), so it wins on the many-channel, small-image layers. On a
// Zen 5, 7x7x512 at N=1 took 0.71 ms, against 2.6 ms with the filter copy
// and 3.9 ms for the then committed direct record; at N=32 24.8 ms against
// 39 ms, though the tuner then found a direct setting faster still there.
// It also wins where the input has too few channels to fill a vector (the
// 3-channel 7x7 stride-2 stem: 22x faster than the direct algorithm on an
// Intel Xeon). It reads tile_channels, tile_other, tile_y, rows_per_task,
// channels_per_task (kDotOnly, with tile_channels), vector_width and
// unroll_taps, and leaves the direct-only knobs (kDirectOnly) at their
// defaults.
// CUDA: one thread per (unit-stride position, other_per_thread positions of
// the other dimension, row), blocks of threads_inner x threads_other x threads_y.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
// Knobs that only some algorithms read name them (.algorithms; 0 direct,
// 1 dot, 2 Winograd).
#define GRADTUNE_CONV2D_BACKPROP_INPUT_CPU_KNOBS(KNOB, SHARED)                                                      \
    KNOB(algorithm, (0, 1, 2), 0,                                                                                   \
         "0: direct, lanes along input channels; 1: dot, lanes along the group's output channels (few input "       \
         "channels, e.g. a 3-channel stem); 2: Winograd F(2x2, 3x3), 3x3 stride 1 float32/float64 "                 \
         "(16 products per 2x2 outputs instead of 36)",                                                             \
         .since_version = 2, .values_since = 5)                                                                     \
    KNOB(tile_channels, (1, 2, 3, 4), 1, "dot: input channels per register tile (direct: 1)", .since_version = 2,   \
         .algorithms = {1})                                                                                         \
    KNOB(vector_width, (4, 8, 16, 32), native, "accumulator lanes per vector along the vectorised dimension")       \
    KNOB(vectors_per_tile, (1, 2, 3, 4), 2, "vectors per register tile along the vectorised dimension",             \
         .algorithms = {0, 2})                                                                                      \
    KNOB(tile_other, (1, 2, 3, 4, 5, 6, 7, 8), 4,                                                                   \
         "positions along the other tiled dimension (columns when channels are vectorised, channels otherwise)")    \
    KNOB(tile_y, (1, 2, 3, 4), 1, "rows per register tile", .algorithms = {0, 1})                                   \
    KNOB(rows_per_task, (1, 2, 4, 8, 16, 32), 2, "tile rows per parallel task", .algorithms = {0, 1})               \
    KNOB(channel_outer, (0, 1), 0, "1: loop over channel tiles outside the spatial tiles of a task",                \
         .algorithms = {0})                                                                                         \
    KNOB(channel_tasks, (0, 1), 0, "1: every channel tile is its own parallel task (more tasks for small images)",  \
         .algorithms = {0})                                                                                         \
    KNOB(channel_block, (0, 16, 32, 64, 128), 0,                                                                    \
         "output channels per reduction block, taps inside a block (0: all channels innermost)", .algorithms = {0}) \
    KNOB(channels_per_task, (0, 32, 64, 128, 256), 0,                                                               \
         "dot: about this many input channels per parallel task (0: all; a 7x7 image has only 7 tile rows)",        \
         .since_version = 4, .algorithms = {1})                                                                     \
    KNOB(images_per_task, (1, 2, 4, 8, 16, 32), 1,                                                                  \
         "Winograd: images per parallel task (more: each task's slice of the transformed filter is reused "         \
         "over more tiles)",                                                                                        \
         .since_version = 5, .algorithms = {2})                                                                     \
    KNOB(tile_rows_per_task, (0, 1, 2, 4, 8), 0,                                                                    \
         "Winograd: rows of 2x2 tiles per parallel task, within one image (0: whole images, images_per_task "       \
         "of them; a large image at N=1 is otherwise one task per channel tile)",                                   \
         .since_version = 6, .algorithms = {2})                                                                     \
    KNOB(input_per_task, (0, 1), 0,                                                                                 \
         "Winograd: 1 transforms each task's out_backprop tiles inside the task (cache-resident; recomputed "       \
         "for each channel tile), 0 once per call (one pass, through memory)",                                      \
         .since_version = 5, .algorithms = {2})                                                                     \
    KNOB(unroll_reduction, (1, 2, 4), 1, "unroll factor of the loop over output channels", .algorithms = {0})       \
    KNOB(unroll_taps, (0, 1), 0, "fully unroll the filter taps (fixed filter size only)", .algorithms = {0, 1})     \
    KNOB(pack_filter, (0, 1, 2), 1,                                                                                 \
         "1: transpose the filter to channel-major once per call (dense vector loads); 2: per parallel task, "      \
         "only the task's channel tile",                                                                            \
         .since_version = 1, .values_since = 3, .algorithms = {0})                                                  \
    KNOB(stage_out_backprop, (0, 1), 1, "1: copy each task's zero-padded out_backprop slice, channels innermost",   \
         .algorithms = {0})                                                                                         \
    KNOB(vectorize_channels, (0, 1), 1, "NCHW: 1 vectorises along channels, 0 along columns (NHWC: always 1)",      \
         .algorithms = {0})

#define GRADTUNE_CONV2D_BACKPROP_INPUT_CUDA_KNOBS(KNOB, SHARED)                                                   \
    KNOB(threads_inner, (8, 16, 32, 64, 128), 32, "threads along the unit-stride dimension (coalesced)")          \
    KNOB(threads_other, (1, 2, 4, 8), 4, "threads along the other dimension (columns in NHWC, channels in NCHW)") \
    KNOB(threads_y, (1, 2, 4, 8), 2, "threads along rows")                                                        \
    KNOB(other_per_thread, (1, 2, 4), 1, "positions along the other dimension computed by one thread")            \
    SHARED(pack_filter, (0, 1), 1, "1: transpose the filter to channel-major first (coalesced filter reads)")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(Conv2DBackpropInputCpuKnobs, GRADTUNE_CONV2D_BACKPROP_INPUT_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(Conv2DBackpropInputCudaKnobs, GRADTUNE_CONV2D_BACKPROP_INPUT_CUDA_KNOBS);

namespace conv2d_backprop_input_space {

inline KnobSpace cpu_space(const Structure &s) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    const int bytes = accumulator_bytes(s.dtype);
    const int native = 64 / bytes;  // one AVX-512 register
    const bool nhwc = s.data_format == "NHWC";
    const int filter_h = fixed.filter_height, filter_w = fixed.filter_width;
    const bool fixed_filter = filter_h > 0 && filter_w > 0;
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_INPUT_CPU_KNOBS);
    const Conv2DBackpropInputCpuKnobs defaults = Conv2DBackpropInputCpuKnobs::from(space.defaults());
    space.constraint = KnobSpace::typed<Conv2DBackpropInputCpuKnobs>([=](const Conv2DBackpropInputCpuKnobs &k)
                                                                         -> std::string {
        const int vector_bytes = k.vector_width * bytes;
        if (std::string why = check_vector_bytes(vector_bytes); !why.empty()) return why;
        const int registers_per_vector = std::max(1, vector_bytes / 64);
        if (k.algorithm == 2) {
            // One accumulator vector per (channel vector, tile) of the block,
            // plus the U vectors and one broadcast of V.
            const int accumulators = k.vectors_per_tile * k.tile_other;
            const int registers = (accumulators + k.vectors_per_tile) * registers_per_vector + 1;
            if (registers > 32)
                return "the Winograd block needs " + std::to_string(registers) + " vector registers (max 32)";
            if (k.tile_rows_per_task > 0 && k.images_per_task > 1)
                return "tile_rows_per_task splits single images (images_per_task=1)";
            if (!nhwc) return "the Winograd algorithm is NHWC only";
            if (filter_h != 3 || filter_w != 3) return "the Winograd algorithm needs a variant that fixes a 3x3 filter";
            if (fixed.stride_height != 1 || fixed.stride_width != 1)
                return "the Winograd algorithm needs a variant that fixes stride 1";
            if (fixed.dilation_height != 1 || fixed.dilation_width != 1)
                return "the Winograd algorithm needs a variant that fixes dilation 1";
            if (fixed.groups != 1) return "the Winograd algorithm needs a variant that fixes groups=1";
            if (s.dtype != "float32" && s.dtype != "float64")
                return "the Winograd algorithm is float32/float64 only (its transforms round in the accumulator type)";
        } else if (k.algorithm == 1) {
            // One accumulator vector per (input channel, column, row) of the
            // tile, plus one out_backprop vector and one filter vector.
            const int accumulators = k.tile_channels * k.tile_other * k.tile_y;
            const int registers = (accumulators + 2) * registers_per_vector;
            if (registers > 32) return "the dot tile needs " + std::to_string(registers) + " vector registers (max 32)";
            if (!nhwc) return "the dot algorithm is NHWC only";
            if (fixed.groups != 1) return "the dot algorithm needs a variant that fixes groups=1";
            // Halide then cannot bound the tap-phase row loop of the guarded
            // (partial tile) branch by a constant, and refuses to unroll it
            // ("Can only unroll for loops over a constant extent"): every such
            // candidate failed to compile in the stop-36 tuning logs.
            if (fixed.stride_height > 1 && k.tile_y == fixed.stride_height && k.rows_per_task == 1)
                return "the dot algorithm with tile_y equal to the fixed row stride needs rows_per_task > 1";
        } else {
            // Accumulators, plus the filter vectors and one broadcast of an
            // inner iteration. With a fixed stride the reduction runs one tap
            // phase of the tile at a time (split_phases), so only that
            // phase's columns and rows are live: ceil(tile / stride) of them.
            const int phases_x = k.vectorize_channels ? std::max(1, fixed.stride_width) : 1;
            const int phases_y = std::max(1, fixed.stride_height);
            const int live_columns = (k.tile_other + phases_x - 1) / phases_x;
            const int live_rows = (k.tile_y + phases_y - 1) / phases_y;
            const int accumulators = k.vectors_per_tile * live_columns * live_rows;
            const int registers = (accumulators + k.vectors_per_tile) * registers_per_vector + 1;
            if (registers > 32)
                return "the register tile needs " + std::to_string(registers) + " vector registers (max 32)";
        }
        if (k.unroll_taps && (!fixed_filter || filter_h * filter_w > 49))
            return "unroll_taps needs a fixed filter of at most 49 taps";
        if (nhwc && !k.vectorize_channels) return "NHWC always vectorises along channels";
        if (k.channel_tasks && k.channel_outer)
            return "channel_tasks already puts channel tiles outside the spatial tiles";
        return "";
    });
    if (nhwc && fixed.groups == 1) {
        // The dot algorithm's start: 4 input channels x 7 columns (a whole
        // row of a 7x7 or 14x14 image), one row per task, 64 channels per
        // task. On the ResNet-50 3x3 layers at N=1 (Zen 5): 7x7x512 0.71 ms,
        // 14x14x256 0.69 ms, 28x28x128 0.56 ms (327-414 GFLOP/s), against
        // 1.16 / 0.95 / 0.61 ms with a 4-column tile.
        Conv2DBackpropInputCpuKnobs dot = defaults;
        dot.algorithm = 1;
        dot.tile_channels = 4;
        dot.tile_other = 7;
        dot.tile_y = 1;
        dot.rows_per_task = 1;
        dot.channels_per_task = 64;
        space.algorithm_seeds.push_back(dot.map());
    }
    // Winograd's starts, where the variant allows it: blocks of 4 channel
    // vectors x 6 tiles, each task transforming its own out_backprop tiles;
    // 4 images per task for large batches, 4 rows of tiles per task for
    // small ones. On the ResNet-50 3x3 layers (Zen 5, one kernel timed
    // alone): at N=32 28x28x128 11.6 ms, 14x14x256 13.1 ms, 7x7x512 15.3 ms,
    // against 15.9 / 18.1 / 23.1 ms for the direct and dot records; at N=1
    // 28x28x128 0.41 ms against 2.2 ms with whole images per task (two tasks).
    Conv2DBackpropInputCpuKnobs winograd = defaults;
    winograd.algorithm = 2;
    winograd.vector_width = native;
    winograd.vectors_per_tile = 4;
    winograd.tile_other = 6;
    winograd.input_per_task = 1;
    winograd.images_per_task = 4;
    if (space.check(winograd.map()).empty()) space.algorithm_seeds.push_back(winograd.map());
    winograd.images_per_task = 1;
    winograd.tile_rows_per_task = 4;
    if (space.check(winograd.map()).empty()) space.algorithm_seeds.push_back(winograd.map());
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_INPUT_CUDA_KNOBS);
    space.constraint =
        KnobSpace::typed<Conv2DBackpropInputCudaKnobs>([](const Conv2DBackpropInputCudaKnobs &k) -> std::string {
            const int threads = k.threads_inner * k.threads_other * k.threads_y;
            if (std::string why = check_threads_per_block(threads); !why.empty()) return why;
            return "";
        });
    return space;
}

}  // namespace conv2d_backprop_input_space

inline OpSchema conv2d_backprop_input_schema() {
    OpSchema op;
    op.name = "Conv2DBackpropInput";
    op.dtypes = {"float16", "bfloat16", "float32", "float64", "int32"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = Conv2DBackpropStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    // 2: algorithm and tile_channels (defaults: version 1's direct schedule);
    // 3: pack_filter=2 (per-task packing); 4: channels_per_task (dot);
    // 5: algorithm=2 (Winograd), images_per_task and input_per_task;
    // 6: tile_rows_per_task (Winograd).
    op.knob_space_version = 6;
    op.space = per_device(conv2d_backprop_input_space::cpu_space, conv2d_backprop_input_space::cuda_space);
    return op;
}

}  // namespace gradtune
