// Schedule of Conv2DBackpropInput: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// The op is compute bound: the CPU space keeps the FMA units busy. Three
// algorithms (the `algorithm` knob; each knob's line in the table says what
// it trades):
//   0 direct: a register tile of channels (the vector lanes, packed filter)
//     x columns x rows of dIn accumulates over output channels and valid
//     taps; a fixed stride computes each tile one tap phase at a time (no
//     predicates);
//   1 dot (ungrouped NHWC): lanes along the output channels, the reduction's
//     unit-stride axis, reading the filter where it lies (no packing), one
//     horizontal add per output; for many channels on small images and for
//     inputs too narrow to fill a vector; in bfloat16 (bf16_pairs) two
//     output channels per lane, multiplied with vdpbf16ps where the target
//     has it;
//   2 Winograd F(2x2, 3x3) (3x3 stride-1 float variants);
//   3 pairs (bfloat16 1x1 stride 1, NHWC, ungrouped; strided and larger
//     filters reach it as their pointwise call, taps_pointwise.h): the
//     direct algorithm's register tile with two output channels per lane,
//     a pair-packed filter and vdpbf16ps where the target has it.
// What each choice was measured to gain: docs/halide-lessons.md section 5.
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
    KNOB(algorithm, (0, 1, 2, 3), 0,                                                                                \
         "0: direct, lanes along input channels; 1: dot, lanes along the group's output channels (few input "       \
         "channels, e.g. a 3-channel stem); 2: Winograd F(2x2, 3x3), 3x3 stride 1 float32/float64 "                 \
         "(16 products per 2x2 outputs instead of 36); 3: pairs, bfloat16 1x1 stride 1: lanes along input "         \
         "channels, two output channels per lane (vdpbf16ps) from a pair-packed filter",                            \
         .since_version = 2, .values_since = 7)                                                                     \
    KNOB(tile_channels, (1, 2, 3, 4), 1, "dot: input channels per register tile (direct: 1)", .since_version = 2,   \
         .algorithms = {1})                                                                                         \
    KNOB(vector_width, (4, 8, 16, 32), native, "accumulator lanes per vector along the vectorised dimension")       \
    KNOB(vectors_per_tile, (1, 2, 3, 4), 2, "vectors per register tile along the vectorised dimension",             \
         .algorithms = {0, 2, 3})                                                                                   \
    KNOB(tile_other, (1, 2, 3, 4, 5, 6, 7, 8), 4,                                                                   \
         "positions along the other tiled dimension (columns when channels are vectorised, channels otherwise)")    \
    KNOB(tile_y, (1, 2, 3, 4), 1, "rows per register tile", .algorithms = {0, 1})                                   \
    KNOB(rows_per_task, (1, 2, 4, 8, 16, 32), 2, "tile rows per parallel task", .algorithms = {0, 1, 3})            \
    KNOB(channel_outer, (0, 1), 0, "1: loop over channel tiles outside the spatial tiles of a task",                \
         .algorithms = {0})                                                                                         \
    KNOB(channel_tasks, (0, 1), 0, "1: every channel tile is its own parallel task (more tasks for small images)",  \
         .algorithms = {0, 3})                                                                                      \
    KNOB(channel_block, (0, 16, 32, 64, 128), 0,                                                                    \
         "output channels per reduction block, taps inside a block (0: all channels innermost)", .algorithms = {0}) \
    KNOB(channels_per_task, (0, 32, 64, 128, 256), 0,                                                               \
         "dot: about this many input channels per parallel task (0: all; a 7x7 image has only 7 tile rows)",        \
         .since_version = 4, .algorithms = {1})                                                                     \
    KNOB(images_per_task, (1, 2, 4, 8, 16, 32), 1,                                                                  \
         "images per parallel task (more: each task's slice of the (Winograd: transformed) filter is reused "       \
         "over more tiles; dot: a task then runs all their rows, its filter slice read from memory once)",          \
         .since_version = 5, .algorithms = {1, 2})                                                                  \
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
         .algorithms = {0})                                                                                         \
    KNOB(bf16_pairs, (0, 1), 0,                                                                                     \
         "dot, bfloat16: 1 multiplies pairs of output channels with the CPU's bfloat16 dot instruction "            \
         "(AVX512_BF16 vdpbf16ps: 32 products into 16 float32 sums per instruction, operands left in bfloat16; "    \
         "a target without it compiles the plain dot)",                                                             \
         .since_version = 7, .algorithms = {1})

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

// The algorithms' starts (space.algorithm_seeds, tried first by the tuner),
// where the variant allows them.
inline void add_cpu_seeds(const Structure &s, KnobSpace *space) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    const int native = 64 / accumulator_bytes(s.dtype);  // one AVX-512 register
    const bool nhwc = s.data_format == "NHWC";
    const Conv2DBackpropInputCpuKnobs defaults = Conv2DBackpropInputCpuKnobs::from(space->defaults());
    // The dot algorithm's starts (ungrouped NHWC only): a register tile of 4
    // input channels x `columns` columns of one row, and its tasks.
    const bool dot_fits = nhwc && fixed.groups == 1;
    const auto dot_seed = [&](int columns, int rows_per_task, int channels_per_task, int images_per_task) {
        Conv2DBackpropInputCpuKnobs dot = defaults;
        dot.algorithm = 1;
        dot.tile_channels = 4;
        dot.tile_y = 1;
        dot.tile_other = columns;
        dot.rows_per_task = rows_per_task;
        dot.channels_per_task = channels_per_task;
        dot.images_per_task = images_per_task;
        space->add_seed(dot.map());
    };
    // 4 input channels x 7 columns (a whole row of a 7x7 or 14x14 image),
    // one row per task, 64 channels per task. On the ResNet-50 3x3 layers at
    // N=1 (Zen 5): 7x7x512 0.71 ms, 14x14x256 0.69 ms, 28x28x128 0.56 ms
    // (327-414 GFLOP/s), against 1.16 / 0.95 / 0.61 ms with a 4-column tile.
    if (dot_fits) dot_seed(7, 1, 64, defaults.images_per_task);
    // The few-channel start of the direct algorithm: one register of input
    // channels x 8 columns x 3 rows (24 accumulators), for 16-channel layers
    // (CIFAR ResNets, the 16-channel group blocks of ResNeXt), where the dot
    // algorithm's horizontal add per element costs about as much as its 16
    // output channels x 9 taps of products. Tuned from this seed, the 3x3
    // 16-channel layers (32x32 N=64, and the 16x16/28x28/14x14 N=8 group
    // blocks) ran 1.45-1.80x faster than their dot records (Sapphire Rapids).
    Conv2DBackpropInputCpuKnobs few = defaults;
    few.algorithm = 0;
    few.vector_width = native;
    few.vectors_per_tile = 1;
    few.tile_other = 8;
    few.tile_y = 3;
    few.rows_per_task = 2;
    few.tile_channels = 1;
    few.channels_per_task = 0;
    space->add_seed(few.map());
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
    space->add_seed(winograd.map());
    winograd.images_per_task = 1;
    winograd.tile_rows_per_task = 4;
    space->add_seed(winograd.map());
    // The dot algorithm for small images at a training batch: 4 input
    // channels x 4 columns, tasks of 32 input channels x 8 whole images, so
    // that a task's slice of the filter comes from memory once for all its
    // images. On ResNet-50's res5 3x3 layer at 128x128 (4x4x512, N=8, a
    // 9.4 MB filter; Intel Xeon, x86-64-linux-avx512_sapphirerapids) 2.62 ms
    // against 4.68 ms for the committed Winograd record, side by side
    // (gradtune distill --remeasure); a 7-minute tune from the space's seeds
    // had closed in on it setting by setting (2.9 ms after 41 settings,
    // 2.54 ms at the 135th; its best Winograd setting 4.4 ms).
    if (dot_fits) dot_seed(4, 32, 32, 8);
    // bfloat16: the dot algorithm's starts again with bf16_pairs (operands
    // left in bfloat16, two output channels per product lane: vdpbf16ps on
    // the AVX-512 targets, twice the products per instruction of a float32
    // FMA). A Halide prototype of this reduction ran 367 GFLOP/s against the
    // float32 dot's 190 (Zen 4, 2 cores).
    if (dot_fits && s.dtype == "bfloat16") {
        const auto pairs_seed = [&](int channels, int columns, int rows_per_task, int channels_per_task,
                                    int images_per_task) {
            Conv2DBackpropInputCpuKnobs pairs = defaults;
            pairs.algorithm = 1;
            pairs.bf16_pairs = 1;
            pairs.tile_channels = channels;
            pairs.tile_y = 1;
            pairs.tile_other = columns;
            pairs.rows_per_task = rows_per_task;
            pairs.channels_per_task = channels_per_task;
            pairs.images_per_task = images_per_task;
            space->add_seed(pairs.map());
        };
        pairs_seed(4, 4, 2, 64, 1);
        pairs_seed(4, 7, 1, 64, 1);
        pairs_seed(3, 8, 4, 128, 1);
        pairs_seed(4, 4, 32, 32, 8);
    }
    // The pairs algorithm's starts (bfloat16 1x1 stride 1): 4 vectors of
    // input channels x 6 columns (a Halide prototype of this tile ran a 1x1
    // input gradient at 367 GFLOP/s against 190 for float32, Zen 4), and 2
    // vectors x 8 columns with every channel tile its own task.
    if (s.dtype == "bfloat16" && nhwc && fixed.groups == 1 && fixed.filter_height == 1 && fixed.filter_width == 1 &&
        fixed.stride_height == 1 && fixed.stride_width == 1) {
        Conv2DBackpropInputCpuKnobs pairs = defaults;
        pairs.algorithm = 3;
        pairs.vector_width = native;
        pairs.vectors_per_tile = 4;
        pairs.tile_other = 6;
        pairs.rows_per_task = 2;
        space->add_seed(pairs.map());
        pairs.vectors_per_tile = 2;
        pairs.tile_other = 8;
        pairs.channel_tasks = 1;
        space->add_seed(pairs.map());
    }
}

inline KnobSpace cpu_space(const Structure &s) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    const int bytes = accumulator_bytes(s.dtype);
    const int native = 64 / bytes;  // one AVX-512 register
    const bool nhwc = s.data_format == "NHWC";
    const int filter_h = fixed.filter_height, filter_w = fixed.filter_width;
    // The vector registers of each algorithm's register tile.
    const auto registers = [=](const Conv2DBackpropInputCpuKnobs &k) {
        const int registers_per_vector = std::max(1, k.vector_width * bytes / 64);
        if (k.algorithm == 2) {
            // One accumulator vector per (channel vector, tile) of the block,
            // plus the U vectors and one broadcast of V.
            return (k.vectors_per_tile * k.tile_other + k.vectors_per_tile) * registers_per_vector + 1;
        }
        if (k.algorithm == 1) {
            // One accumulator vector per (input channel, column, row) of the
            // tile, plus one out_backprop vector and one filter vector.
            return (k.tile_channels * k.tile_other * k.tile_y + 2) * registers_per_vector;
        }
        // Accumulators, plus the filter vectors and one broadcast of an inner
        // iteration. With a fixed stride the reduction runs one tap phase of
        // the tile at a time (split_phases), so only that phase's columns and
        // rows are live: ceil(tile / stride) of them.
        const int phases_x = k.vectorize_channels ? std::max(1, fixed.stride_width) : 1;
        const int phases_y = std::max(1, fixed.stride_height);
        const int live_columns = (k.tile_other + phases_x - 1) / phases_x;
        const int live_rows = (k.tile_y + phases_y - 1) / phases_y;
        return (k.vectors_per_tile * live_columns * live_rows + k.vectors_per_tile) * registers_per_vector + 1;
    };
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_INPUT_CPU_KNOBS);
    space.registers = KnobSpace::typed<Conv2DBackpropInputCpuKnobs>(registers);
    space.constraint = KnobSpace::typed<Conv2DBackpropInputCpuKnobs>([=](const Conv2DBackpropInputCpuKnobs &k)
                                                                         -> std::string {
        const int vector_bytes = k.vector_width * bytes;
        if (std::string why = check_vector_bytes(vector_bytes); !why.empty()) return why;
        if (k.algorithm == 2) {
            if (std::string why = check_registers("Winograd block", registers(k)); !why.empty()) return why;
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
        } else if (k.algorithm == 3) {
            if (std::string why = check_registers("register tile", registers(k)); !why.empty()) return why;
            if (s.dtype != "bfloat16") return "the pairs algorithm is bfloat16 only";
            // A 4-lane tile could not be unrolled in the partial-tile branch
            // ("Can only unroll for loops over a constant extent", stop-66
            // tune), and ran 2-8x slower than 16 lanes wherever it compiled.
            if (k.vector_width < 8) return "the pairs algorithm needs vector_width >= 8";
            if (!nhwc) return "the pairs algorithm is NHWC only";
            if (fixed.groups != 1) return "the pairs algorithm needs a variant that fixes groups=1";
            if (filter_h != 1 || filter_w != 1 || fixed.stride_height != 1 || fixed.stride_width != 1)
                return "the pairs algorithm needs a variant that fixes a 1x1 filter and stride 1";
        } else if (k.algorithm == 1) {
            if (std::string why = check_registers("dot tile", registers(k)); !why.empty()) return why;
            if (!nhwc) return "the dot algorithm is NHWC only";
            if (fixed.groups != 1) return "the dot algorithm needs a variant that fixes groups=1";
            // Halide then cannot bound the tap-phase row loop of the guarded
            // (partial tile) branch by a constant, and refuses to unroll it
            // ("Can only unroll for loops over a constant extent"): every such
            // candidate failed to compile in the stop-36 tuning logs.
            if (fixed.stride_height > 1 && k.tile_y == fixed.stride_height && k.rows_per_task == 1)
                return "the dot algorithm with tile_y equal to the fixed row stride needs rows_per_task > 1";
            if (k.bf16_pairs && s.dtype != "bfloat16") return "bf16_pairs is for bfloat16 variants";
        } else {
            if (std::string why = check_registers("register tile", registers(k)); !why.empty()) return why;
        }
        if (std::string why = check_unroll_taps(k.unroll_taps, filter_h, filter_w); !why.empty()) return why;
        if (nhwc && !k.vectorize_channels) return "NHWC always vectorises along channels";
        if (k.channel_tasks && k.channel_outer)
            return "channel_tasks already puts channel tiles outside the spatial tiles";
        return "";
    });
    add_cpu_seeds(s, &space);
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_tile_block_space<Conv2DBackpropInputCudaKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_BACKPROP_INPUT_CUDA_KNOBS));
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
    // 6: tile_rows_per_task (Winograd); 7: bf16_pairs (dot), algorithm=3 (pairs).
    op.knob_space_version = 7;
    op.space = per_device(conv2d_backprop_input_space::cpu_space, conv2d_backprop_input_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include <algorithm>
#include <optional>
#include <vector>

#include "Halide.h"
#include "direct_tiles.h"
#include "halide_knobs.h"
#include "tap_phases.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
GRADTUNE_GENERATOR_KNOBS(Conv2DBackpropInputKnobs, GRADTUNE_CONV2D_BACKPROP_INPUT_CPU_KNOBS,
                         GRADTUNE_CONV2D_BACKPROP_INPUT_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DBackpropInputPipeline {
    Halide::Func output;                               // dIn(c, x, y, n), type T
    Halide::Func accumulator{"accumulator"};           // (c, x, y, n): pure 0, update += over taps
    Halide::Func out_backprop{"out_backprop_padded"};  // (o, ow, oh, n), zero outside rows and columns
    Halide::Func filter_packed{"filter_packed"};  // (c, o, fw, fh): filter[fh, fw, c - g*Cg, g*Og + o], group g of c
    Halide::Func filter;                          // (o, ci, fw, fh): the filter input itself
    // Direct: (o within the group, tap along x, tap along y). Dot: (lane,
    // vector, tap along x, tap along y) over the whole vectors of the output
    // channels, o = vector * vector_width + lane, and `tail` (o, tap along
    // x, tap along y) over the rest (empty where vector_width divides Og).
    // Winograd: (o) over the group's output channels. Dot with bf16_pairs:
    // (pair, lane, vector, tap along x, tap along y), o = (vector *
    // vector_width + lane) * 2 + pair.
    Halide::RDom taps, tail;
    bool bf16_pairs = false;  // the dot's products taken two at a time (vdpbf16ps)
    // Pairs (algorithm 3): the filter as (pair, c, o2) = filter[0, 0, c, 2 o2 + pair],
    // bfloat16; `taps` is then (pair, o2) and `tail` the last output channel of an odd Cout.
    Halide::Func filter_pairs{"filter_pairs"};
    Halide::Var pair{"pair"};
    // Winograd F(2x2, 3x3) (algorithm 2; generators/conv2d_backprop_input_generator.cpp).
    Halide::Func winograd_filter{"winograd_filter"};      // U(c, o, xi, nu): G g G^T
    Halide::Func winograd_input{"winograd_input"};        // V(o, t, xi, nu): B^T d B of tile t
    Halide::Func winograd_products{"winograd_products"};  // M(c, t, xi, nu): pure 0, update += U * V over o
    Halide::Func winograd_output{"winograd_output"};      // (c, i, j, t): A^T M A, position (i, j) of tile t
    Halide::Var t{"t"}, xi{"xi"}, nu{"nu"}, i{"i"}, j{"j"};
    Halide::Var c{"c"}, x{"x"}, y{"y"}, n{"n"};
    Halide::Var o{"o"}, fw{"fw"}, fh{"fh"};
    Halide::Expr channels, width, height;      // extents of the output
    Halide::Expr groups;                       // G (a constant in variants that fix it)
    Halide::Expr stride_height, stride_width;  // the call's strides (constants in variants that fix them)

    DirectOutput direct() const { return {output, accumulator, c, x, y, n, channels, width, height}; }
};

// apply() for Conv2DBackpropInput. Knob meanings and legal values: the tables above.
namespace conv2d_backprop_input_schedule {

using namespace Halide;

// Names shared by every specialisation branch, so that producers can be
// computed at the same loop in all of them.
struct Loops {
    Var inner_tile{"inner_tile"}, inner_lane{"inner_lane"};
    Var other_tile{"other_tile"}, other_pos{"other_pos"};
    Var row_tile{"row_tile"}, row_pos{"row_pos"};
    Var task{"task"}, task_n{"task_n"}, channel_task{"channel_task"};
};

// The loop structure a set of CPU knobs asks for, the same in every branch.
struct CpuPlan {
    bool vectorize_channels = true;  // vector lanes along c (else along x)
    bool channel_outer = false, channel_tasks = false;
    int vector = 16;
};

// Tiles one branch of the output into register tiles of inner x other x rows
// (inner = the vectorised dimension) and parallel tasks of rows_per_task tile
// rows. `tail` handles extents that the tile does not divide: ShiftInwards
// for a full-tile branch (extents >= tile), GuardWithIf otherwise. Returns
// the innermost loop outside the register tile, where the accumulator goes.
inline Var tile_cpu(Stage stage, const Conv2DBackpropInputPipeline &p, const CpuPlan &plan, const Loops &l,
                    int inner_size, int other_size, int rows, int rows_per_task, TailStrategy tail) {
    const Var inner = plan.vectorize_channels ? p.c : p.x;
    const Var other = plan.vectorize_channels ? p.x : p.c;
    stage.split(inner, l.inner_tile, l.inner_lane, inner_size, tail)
        .split(other, l.other_tile, l.other_pos, other_size, tail)
        .split(p.y, l.row_tile, l.row_pos, rows, tail)
        .split(l.row_tile, l.task, l.row_tile, rows_per_task, TailStrategy::GuardWithIf);
    const Var channel_tile = plan.vectorize_channels ? l.inner_tile : l.other_tile;
    const Var spatial_tile = plan.vectorize_channels ? l.other_tile : l.inner_tile;

    std::vector<VarOrRVar> order = {l.inner_lane, l.other_pos, l.row_pos};
    if (plan.channel_tasks) {
        order.insert(order.end(), {spatial_tile, l.row_tile, l.task, channel_tile});
    } else if (plan.channel_outer) {
        order.insert(order.end(), {spatial_tile, l.row_tile, channel_tile, l.task});
    } else {
        order.insert(order.end(), {channel_tile, spatial_tile, l.row_tile, l.task});
    }
    order.push_back(p.n);
    stage.reorder(order);
    if (plan.channel_tasks) {
        stage.fuse(l.task, channel_tile, l.channel_task).fuse(l.channel_task, p.n, l.task_n);
    } else {
        stage.fuse(l.task, p.n, l.task_n);
    }
    stage.parallel(l.task_n).vectorize(l.inner_lane, plan.vector, TailStrategy::GuardWithIf);
    return order[3].var;
}

// The filter transposed to (c, o, fw, fh) once per call, so that the
// reduction loads vectors along c instead of gathering with a stride of Cout.
// An ungrouped variant transposes blocks of `lanes` x `lanes` in registers:
// dense vector loads along o into a block (a constant-size stack array, held
// in registers), strided reads of the block become shuffles (the idiom of
// Halide's test/performance/block_transpose.cpp), dense stores along c; the
// parallel tasks are (tap, o block) pairs, so a 1x1 filter splits too.
// Against a gather per vector (what grouped variants still do): 7-10 % off
// whole N=1 calls of 3x3 14x14x256 and 1x1 stride-2 56x56x256 layers on an
// Intel Xeon; a 3x3x512x512 filter (9 MB) stays DRAM-bound either way.
// A block is vector_width square where the target has AVX-512, and one
// native vector square (8 x 8 float32) on AVX2 targets: there the 32 x 32
// blocks of a vector_width=32 variant took 22 s of a variant's compile
// against 4 s, and ran no faster (7x7x512 layers at N=1 and N=32 on an
// Intel Xeon, within the noise). On AVX-512, 16 x 16 blocks ran 10-18 %
// slower than 32 x 32 ones.
//
// per_task (pack_filter=2) packs inside each parallel task only the slice of
// the task's channel tile instead: every filter element is read once from
// DRAM per task that needs it and the packed slice is written to the task's
// cache, not to memory and back. With channel_tasks a task holds one channel
// tile, so a call packs each filter element once; the whole-call packing of
// a 3x3x512x512 filter (9 MB) costs more than the reduction at N=1.
inline void pack_filter(const Structure &s, Conv2DBackpropInputPipeline &p, int lanes, const Target &target,
                        bool per_task, const Var &task) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    // Blocks as wide as the vectors, except where only 16 registers hold them.
    const int native = target.natural_vector_size(p.filter_packed.type());
    const int block_lanes = target.has_feature(Target::AVX512) ? lanes : std::min(lanes, native);
    Func &packed = p.filter_packed;
    if (per_task) {
        packed.compute_at(p.output, task);
    } else {
        packed.compute_root();
    }
    if (fixed.groups != 1) {
        // With a run-time group the block of one c tile can span two groups'
        // filters: per vector along c, then.
        packed.vectorize(p.c, lanes, TailStrategy::GuardWithIf);
        if (!per_task) packed.parallel(p.fh);
        return;
    }
    Var c_block{"c_block"}, o_block{"o_block"}, c_lane{"c_lane"}, o_lane{"o_lane"}, tap{"tap"}, pack_task{"pack_task"};
    auto blocks = [&](Stage stage, TailStrategy tail) {
        stage.tile(p.c, p.o, c_block, o_block, c_lane, o_lane, block_lanes, block_lanes, tail)
            .reorder(c_lane, o_lane, c_block, o_block, p.fw, p.fh)
            .fuse(p.fw, p.fh, tap)
            .fuse(o_block, tap, pack_task)
            .vectorize(c_lane)
            .unroll(o_lane);
        if (!per_task) stage.parallel(pack_task);
    };
    // Whole blocks (ShiftInwards: constant extents) where both channel counts
    // fill one, guarded blocks otherwise.
    blocks(packed.specialize(p.channels >= block_lanes && p.taps.x.extent() >= block_lanes),
           TailStrategy::ShiftInwards);
    blocks(packed, TailStrategy::GuardWithIf);
    Func block = p.filter.in(packed);
    block.compute_at(packed, c_block)
        .vectorize(block.args()[0], block_lanes, TailStrategy::GuardWithIf)
        .unroll(block.args()[1], block_lanes, TailStrategy::GuardWithIf);
}

inline void apply_cpu(const Conv2DBackpropInputCpuKnobs &k, const Structure &s, Conv2DBackpropInputPipeline &p,
                      const Target &target) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    const bool nhwc = s.data_format == "NHWC";
    CpuPlan plan;
    plan.vectorize_channels = nhwc || k.vectorize_channels;
    plan.channel_outer = k.channel_outer;
    plan.channel_tasks = k.channel_tasks;
    plan.vector = k.vector_width;
    const int inner_size = plan.vector * k.vectors_per_tile;
    const int other_size = k.tile_other, rows = k.tile_y;
    const int rows_per_task = k.rows_per_task;
    Loops l;

    // Full register tiles when the extents allow, else one vector per
    // position. The fast branch also wants an ungrouped call (dense channel
    // loads) and, where the strides are run-time values, stride 1: a tile of
    // consecutive columns of a strided call mixes tap phases, and
    // specialising on stride == 1 folds the tap predicates away.
    Expr inner_extent = plan.vectorize_channels ? p.channels : p.width;
    Expr other_extent = plan.vectorize_channels ? p.width : p.channels;
    auto fits = [&](int inner, int other) {
        Expr fit = inner_extent >= inner && other_extent >= other && p.height >= rows;
        if (!is_const(p.groups)) fit = fit && p.groups == 1;
        if (!is_const(p.stride_width)) fit = fit && p.stride_width == 1;
        if (!is_const(p.stride_height)) fit = fit && p.stride_height == 1;
        return fit;
    };
    Stage full = p.output.specialize(fits(inner_size, other_size));
    const Var tile_loop =
        tile_cpu(full, p, plan, l, inner_size, other_size, rows, rows_per_task, TailStrategy::ShiftInwards);
    // One register of lanes where the tile's vectors do not fit (16 input
    // channels under a 32-lane tile: CIFAR ResNets' first stage, the group
    // blocks of ResNeXt): the tile's accumulators re-spent on more columns,
    // up to 16, not one vector per position.
    const int one_lanes = std::min(plan.vector, target.natural_vector_size(p.accumulator.type()));
    const int one_other = std::min(16, other_size * inner_size / one_lanes);
    const bool one_register_branch = one_other > other_size;
    if (one_register_branch) {
        CpuPlan one_plan = plan;
        one_plan.vector = one_lanes;
        tile_cpu(p.output.specialize(fits(one_lanes, one_other)), p, one_plan, l, one_lanes, one_other, rows,
                 rows_per_task, TailStrategy::ShiftInwards);
    }
    // The small-extent branch keeps channel tiles out of the parallel loop:
    // fused there, Halide cannot bound the guarded vector loop of the
    // accumulator by a constant. The innermost tile loop stays the same.
    CpuPlan small = plan;
    if (small.channel_tasks) {
        small.channel_tasks = false;
        small.channel_outer = true;
    }
    tile_cpu(p.output, p, small, l, plan.vector, 1, 1, rows_per_task * rows, TailStrategy::GuardWithIf);

    // The accumulator tile lives in registers for the whole reduction over
    // the group's output channels and the valid taps.
    // Vectors of one register where the one-register branch exists (a wider
    // tile is then several of them, unrolled).
    const Var acc_inner = plan.vectorize_channels ? p.c : p.x;
    const Var acc_other = plan.vectorize_channels ? p.x : p.c;
    const int acc_lanes = one_register_branch ? one_lanes : plan.vector;
    p.accumulator.compute_at(p.output, tile_loop)
        .vectorize(acc_inner, acc_lanes, TailStrategy::GuardWithIf)
        .unroll(acc_inner)
        .unroll(acc_other)
        .unroll(p.y);

    // The reduction: register tile innermost (one tap phase at a time for
    // a fixed stride, split_phases), then the group's output channels, then
    // the taps.
    Stage update = p.accumulator.update();
    std::vector<VarOrRVar> tile = {acc_inner}, phases;
    if (!(plan.vectorize_channels && split_phases(update, p.x, fixed.stride_width, "x", &tile, &phases)))
        tile.push_back(acc_other);
    if (rows == 1) {
        phases.push_back(p.y);  // a single row: keep it outside the reduction
    } else if (!split_phases(update, p.y, fixed.stride_height, "y", &tile, &phases)) {
        tile.push_back(p.y);
    }
    // Output channels: optionally in blocks of channel_block with the taps
    // inside a block (the block's filter and out_backprop slices stay in L1
    // across the taps), the innermost channel loop unrolled by
    // unroll_reduction.
    RVar r_o = p.taps.x, col_tap = p.taps.y, row_tap = p.taps.z;
    RVar o_block("o_block"), o_in_block("o_in_block"), o_unrolled("o_unrolled"), o_rest("o_rest");
    std::vector<VarOrRVar> order = tile;
    const int block = k.channel_block, unroll = k.unroll_reduction;
    RVar channels = r_o;
    if (block > 0) {
        update.split(r_o, o_block, o_in_block, block, TailStrategy::GuardWithIf);
        channels = o_in_block;
    }
    if (unroll > 1) {
        update.split(channels, o_rest, o_unrolled, unroll, TailStrategy::GuardWithIf);
        order.insert(order.end(), {o_unrolled, o_rest});
    } else {
        order.push_back(channels);
    }
    order.insert(order.end(), {col_tap, row_tap});
    if (block > 0) order.push_back(o_block);
    order.insert(order.end(), phases.begin(), phases.end());
    update.reorder(order);
    update.vectorize(acc_inner, acc_lanes, TailStrategy::GuardWithIf);
    for (const VarOrRVar &v : tile) update.unroll(v.var);
    if (unroll > 1) update.unroll(o_unrolled);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);

    if (k.stage_out_backprop) {
        // A zero-padded copy of the task's out_backprop rows, channels
        // innermost: no boundary selects in the reduction, dense loads along
        // the output channels in both layouts.
        Var o = p.out_backprop.args()[0], ow = p.out_backprop.args()[1];
        p.out_backprop.compute_at(p.output, l.task_n).vectorize(nhwc ? o : ow, plan.vector, TailStrategy::GuardWithIf);
    }
    if (k.pack_filter) pack_filter(s, p, plan.vector, target, k.pack_filter == 2, l.task_n);
}

// Algorithm 1, "dot": the vector lanes run along the group's output channels
// o, the reduction's unit-stride axis in both out_backprop (NHWC) and the
// HWIO filter, so neither needs packing and no lane is wasted when the input
// has few channels (a 3-channel stem fills 3 of 16 lanes with the direct
// algorithm). rfactor splits the reduction into vector_width partial sums
// per output element; the partials of a tile of tile_channels x tile_other x
// tile_y elements stay in registers across the output-channel vectors and
// the taps, and one horizontal add per element finishes them. Per output
// channel vector the tile loads tile_channels filter vectors and
// tile_other x tile_y out_backprop vectors. The tile's columns and rows are
// visited one tap phase at a time, as in the direct schedule, when the
// variant fixes the stride. The filter is read in place (contiguous along
// o); out_backprop is staged zero-padded per task, so the reduction has no
// boundary selects. Parallel tasks are rows_per_task tile rows of one image
// and, with channels_per_task, about that many input channels: a 7x7x512
// layer at N=1 has 7 tile rows, too few tasks for even two threads. With
// images_per_task > 1 a task runs every row of that many images instead, so
// that its slice of the filter comes from memory once and from cache for
// every other tile: the layers with a filter larger than the caches and few
// positions per image (ResNet-50's 4x4x512 3x3 layers, 9.4 MB of filter;
// its 1x1 stride-2 shortcut at 8x8x1024, 8 MB) otherwise read the whole
// filter again for every image and tile row.
inline void apply_cpu_dot(const Conv2DBackpropInputCpuKnobs &k, const Structure &s, Conv2DBackpropInputPipeline &p) {
    const Conv2DBackpropStructure fixed = Conv2DBackpropStructure::from(s);
    const int tile_c = k.tile_channels, tile_x = k.tile_other, tile_y = k.tile_y;
    const int c_tiles_per_task = k.channels_per_task > 0 ? std::max(1, k.channels_per_task / tile_c) : 0;
    Var c_tile{"c_tile"}, c_pos{"c_pos"}, x_tile{"x_tile"}, x_pos{"x_pos"}, y_tile{"y_tile"}, y_pos{"y_pos"};
    Var c_task{"c_task"}, task{"task"}, row_and_channel_task{"row_and_channel_task"}, task_n{"task_n"};
    const TailStrategy guard = TailStrategy::GuardWithIf;
    // Full tiles (constant extents: the partial sums are promoted to
    // registers) where the output is at least one tile in every dimension,
    // guarded tiles otherwise.
    auto tile = [&](Stage stage, TailStrategy tail) {
        stage.split(p.c, c_tile, c_pos, tile_c, tail)
            .split(p.x, x_tile, x_pos, tile_x, tail)
            .split(p.y, y_tile, y_pos, tile_y, tail)
            .split(y_tile, task, y_tile, k.rows_per_task, guard);
        if (c_tiles_per_task > 0) stage.split(c_tile, c_task, c_tile, c_tiles_per_task, guard);
        if (k.images_per_task > 1) {
            // Tasks of images_per_task images (x channels): the row tasks
            // and images run serially inside (task_n, where out_backprop is
            // staged, as below).
            Var n_task{"n_task"}, n_in{"n_in"}, parallel_task{"parallel_task"};
            stage.split(p.n, n_task, n_in, k.images_per_task, guard);
            if (c_tiles_per_task > 0) {
                stage.reorder(c_pos, x_pos, y_pos, c_tile, x_tile, y_tile, task, n_in, c_task, n_task)
                    .fuse(task, n_in, task_n)
                    .fuse(c_task, n_task, parallel_task);
            } else {
                stage.reorder(c_pos, x_pos, y_pos, c_tile, x_tile, y_tile, task, n_in, n_task)
                    .fuse(task, n_in, task_n)
                    .rename(n_task, parallel_task);
            }
            stage.parallel(parallel_task);
            return;
        }
        if (c_tiles_per_task > 0) {
            stage.reorder(c_pos, x_pos, y_pos, c_tile, x_tile, y_tile, c_task, task, p.n)
                .fuse(c_task, task, row_and_channel_task)
                .fuse(row_and_channel_task, p.n, task_n);
        } else {
            stage.reorder(c_pos, x_pos, y_pos, c_tile, x_tile, y_tile, task, p.n).fuse(task, p.n, task_n);
        }
        stage.parallel(task_n);
    };
    tile(p.output.specialize(p.channels >= tile_c && p.width >= tile_x && p.height >= tile_y),
         TailStrategy::ShiftInwards);
    tile(p.output, guard);

    // With bf16_pairs the two products of a pair are the innermost
    // reduction (taps[0]): vectorised (atomic) with the lanes, the sum of
    // each pair into its lane is one vector reduction, which Halide emits as
    // vdpbf16ps on the targets that have it.
    const int first = p.bf16_pairs ? 1 : 0;
    RVar o_lane = p.taps[first], o_vector = p.taps[first + 1], col_tap = p.taps[first + 2],
         row_tap = p.taps[first + 3];
    Var lane{"lane"};
    Func partial = p.accumulator.update(0).rfactor(o_lane, lane);
    // The horizontal add: one vector reduction per output element; then the
    // tail channels, if any.
    p.accumulator.compute_at(p.output, c_tile).unroll(p.c).unroll(p.x).unroll(p.y);
    p.accumulator.update(0).atomic().vectorize(o_lane).unroll(p.c).unroll(p.x).unroll(p.y);
    // The tail (Og % vector_width channels, none in most layers) as it comes.
    p.accumulator.update(1).unscheduled();

    // Lanes innermost in storage too: each partial-sum vector is one register.
    std::vector<Var> storage = {lane};
    for (const Var &v : partial.args())
        if (v.name() != lane.name()) storage.push_back(v);
    partial.reorder_storage(storage);
    partial.compute_at(p.output, c_tile).vectorize(lane).unroll(p.c).unroll(p.x).unroll(p.y);
    Stage partial_update = partial.update();
    std::vector<VarOrRVar> order = {lane, p.c}, phases;
    if (!split_phases(partial_update, p.x, fixed.stride_width, "x", &order, &phases)) order.push_back(p.x);
    if (!split_phases(partial_update, p.y, fixed.stride_height, "y", &order, &phases)) order.push_back(p.y);
    const size_t unrolled = order.size();
    order.insert(order.end(), {o_vector, col_tap, row_tap});
    order.insert(order.end(), phases.begin(), phases.end());
    if (p.bf16_pairs) order.insert(order.begin(), p.taps[0]);
    partial_update.reorder(order);
    if (p.bf16_pairs) partial_update.atomic().vectorize(p.taps[0]);
    partial_update.vectorize(lane);
    for (size_t i = first + 1; i < unrolled + first; i++) partial_update.unroll(order[i].var);
    if (k.unroll_taps) partial_update.unroll(col_tap).unroll(row_tap);

    // A zero-padded copy of the task's out_backprop rows, output channels
    // innermost (the filter needs none: it is read where it lies).
    Var o = p.out_backprop.args()[0];
    p.out_backprop.compute_at(p.output, task_n).vectorize(o, k.vector_width * (p.bf16_pairs ? 2 : 1), guard);
}

// Algorithm 2, Winograd F(2x2, 3x3) (the transforms: the generator). The
// filter transform U is computed once per call, the input transform V once
// per call or inside each task (input_per_task), both vectorised along their
// unit-stride channels. The 16 matrix products M run as a register-blocked
// product per parallel task (one tile of vector_width * vectors_per_tile
// input channels, and images_per_task images or tile_rows_per_task rows of
// tiles of one image): an accumulator block of vectors_per_tile channel
// vectors x tile_other Winograd tiles stays in registers across the output channels,
// loading vectors_per_tile vectors of U and broadcasting tile_other values of
// V per output channel. The block is copied into the task's M (one element
// (xi, nu) at a time, so that the task's slice of U for that element stays in
// L2 across its tiles), and the output transform reads M one row of tiles at
// a time.
// Algorithm 3, "pairs" (bfloat16 1x1 stride 1): the direct algorithm's
// register tile of vectors_per_tile vectors of input channels x tile_other
// columns, each lane summing two output channels per step: one load of the
// pair-packed filter (16 channels x 2) and one 32-bit broadcast of
// out_backprop's pair per vdpbf16ps. The filter is packed once per call in
// blocks of 16 x 16 (a transpose in registers); out_backprop is staged per
// task, zero-padded, channels innermost. Tasks are rows_per_task rows of one
// image (with channel_tasks, of one channel tile).
inline void apply_cpu_pairs(const Conv2DBackpropInputCpuKnobs &k, Conv2DBackpropInputPipeline &p) {
    const int lanes = k.vector_width, c_tile = lanes * k.vectors_per_tile, cols = k.tile_other;
    Var c_tile_index{"c_tile_index"}, c_in{"c_in"}, x_tile{"x_tile"}, x_in{"x_in"}, y_task{"y_task"},
        y_in{"y_in"}, task{"task"};
    const TailStrategy guard = TailStrategy::GuardWithIf;
    auto tile = [&](Stage stage, TailStrategy tail) {
        stage.split(p.c, c_tile_index, c_in, c_tile, tail)
            .split(p.x, x_tile, x_in, cols, tail)
            .split(p.y, y_task, y_in, k.rows_per_task, guard);
        if (k.channel_tasks) {
            stage.reorder(c_in, x_in, x_tile, y_in, c_tile_index, y_task, p.n)
                .fuse(c_tile_index, y_task, task)
                .fuse(task, p.n, task);
        } else {
            stage.reorder(c_in, x_in, x_tile, c_tile_index, y_in, y_task, p.n).fuse(y_task, p.n, task);
        }
        stage.parallel(task);
    };
    tile(p.output.specialize(p.channels >= c_tile && p.width >= cols), TailStrategy::ShiftInwards);
    tile(p.output, guard);

    p.accumulator.compute_at(p.output, x_tile).vectorize(p.c, lanes).unroll(p.c).unroll(p.x);
    RVar pair = p.taps[0], o2 = p.taps[1];
    p.accumulator.update(0)
        .reorder(pair, p.c, p.x, p.y, p.n, o2)
        .atomic()
        .vectorize(pair)
        .vectorize(p.c, lanes)
        .unroll(p.c)
        .unroll(p.x);
    p.accumulator.update(1).vectorize(p.c, lanes).unroll(p.c).unroll(p.x);

    Var o = p.out_backprop.args()[0];
    p.out_backprop.compute_at(p.output, task).vectorize(o, 2 * lanes, guard);

    // The packed filter: blocks of 16 output-channel pairs x 16 input
    // channels, read along o (the filter's unit stride) and written along
    // (pair, c).
    Var c_block{"c_block"}, o_block{"o_block"}, c_lane{"c_lane"}, o_lane{"o_lane"};
    p.filter_pairs.compute_root()
        .tile(p.c, p.o, c_block, o_block, c_lane, o_lane, 16, 16, guard)
        .reorder(p.pair, c_lane, o_lane, c_block, o_block)
        .unroll(p.pair)
        .vectorize(c_lane)
        .unroll(o_lane)
        .parallel(o_block);
}

inline void apply_cpu_winograd(const Conv2DBackpropInputCpuKnobs &k, const Structure &s, Conv2DBackpropInputPipeline &p,
                               const Target &target) {
    const int lanes = k.vector_width, c_tile = lanes * k.vectors_per_tile;
    const int block = k.tile_other;
    Var c_tile_index{"c_tile_index"}, c_in{"c_in"}, y_pair{"y_pair"}, y_in{"y_in"};
    Var n_task{"n_task"}, n_in{"n_in"}, task{"task"}, row_task{"row_task"}, rows_and_channels{"rows_and_channels"};
    const int tile_rows = k.tile_rows_per_task;
    // Whole channel tiles (ShiftInwards: the blocks below have constant
    // extents, so the accumulators are registers) where there is at least one.
    auto tile = [&](Stage stage, TailStrategy tail) {
        stage.split(p.c, c_tile_index, c_in, c_tile, tail)
            .split(p.y, y_pair, y_in, 2, TailStrategy::GuardWithIf)
            .split(p.n, n_task, n_in, k.images_per_task, TailStrategy::GuardWithIf);
        if (tile_rows > 0) {
            // Tasks of tile_rows rows of tiles of one image (images_per_task=1).
            stage.split(y_pair, row_task, y_pair, tile_rows, TailStrategy::GuardWithIf)
                .reorder(c_in, p.x, y_in, y_pair, n_in, c_tile_index, row_task, n_task)
                .fuse(c_tile_index, row_task, rows_and_channels)
                .fuse(rows_and_channels, n_task, task);
        } else {
            stage.reorder(c_in, p.x, y_in, y_pair, n_in, c_tile_index, n_task).fuse(c_tile_index, n_task, task);
        }
        stage.parallel(task).vectorize(c_in, lanes, TailStrategy::GuardWithIf);
    };
    tile(p.output.specialize(p.channels >= c_tile), TailStrategy::ShiftInwards);
    tile(p.output, TailStrategy::GuardWithIf);

    // The output transform, a row of tiles (two output rows) at a time.
    p.winograd_output.compute_at(p.output, y_pair)
        .vectorize(p.c, lanes, TailStrategy::GuardWithIf)
        .unroll(p.i)
        .unroll(p.j);

    // The task's M, and the register block that computes it.
    Func stored = p.winograd_products.in(p.winograd_output);
    // (RoundUp: whole blocks, also where the task has fewer channels or
    // tiles than one block; the transforms read within bounds there.)
    Var t_block{"t_block"}, t_in{"t_in"}, c_block{"c_block"}, c_lane{"c_lane"};
    stored.compute_at(p.output, task)
        .split(p.c, c_block, c_lane, c_tile, TailStrategy::RoundUp)
        .split(p.t, t_block, t_in, block, TailStrategy::RoundUp)
        .reorder(c_lane, t_in, t_block, c_block, p.xi, p.nu)
        .vectorize(c_lane, lanes);
    p.winograd_products.compute_at(stored, t_block).vectorize(p.c, lanes).unroll(p.c).unroll(p.t);
    p.winograd_products.update().reorder(p.c, p.t, p.taps.x, p.xi, p.nu).vectorize(p.c, lanes).unroll(p.c).unroll(p.t);

    // The transforms; the filter transform reads the filter packed
    // channel-major (dense vectors along c; gathering them took 86 %
    // of a 7x7x512 call at N=8).
    pack_filter(s, p, lanes, target, false, task);
    p.winograd_filter.compute_root()
        .reorder(p.c, p.xi, p.nu, p.o)
        .vectorize(p.c, lanes, TailStrategy::GuardWithIf)
        .unroll(p.xi)
        .unroll(p.nu)
        .parallel(p.o, 16);
    p.winograd_input.reorder(p.o, p.xi, p.nu, p.t)
        .vectorize(p.o, lanes, TailStrategy::GuardWithIf)
        .unroll(p.xi)
        .unroll(p.nu);
    if (k.input_per_task) {
        p.winograd_input.compute_at(p.output, task);
    } else {
        p.winograd_input.compute_root().parallel(p.t, 8);
    }
}

inline void apply_cuda(const Conv2DBackpropInputCudaKnobs &k, const Structure &s, Conv2DBackpropInputPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    // Threads along the unit-stride dimension (coalesced stores); the
    // reduction over the output channels innermost.
    const DirectOutput o = p.direct();
    tile_direct_cuda(o, nhwc, k);
    const Var other = o.other(nhwc);
    p.accumulator.update().reorder(other, p.taps.x, p.taps.y, p.taps.z).unroll(other);
    if (k.pack_filter) {
        // Channel-major filter: neighbouring threads (along c in NHWC) read
        // neighbouring words.
        Var c_block{"c_block"}, c_thread{"c_thread"}, o_block{"o_block"}, o_thread{"o_thread"};
        p.filter_packed.compute_root().gpu_tile(p.c, p.o, c_block, o_block, c_thread, o_thread, 32, 8,
                                                TailStrategy::GuardWithIf);
    }
}

}  // namespace conv2d_backprop_input_schedule

inline void apply(const Knobs &knobs, const Structure &structure, Conv2DBackpropInputPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace conv2d_backprop_input_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(Conv2DBackpropInputCudaKnobs::from(knobs), structure, pipeline);
        return;
    }
    const Conv2DBackpropInputCpuKnobs k = Conv2DBackpropInputCpuKnobs::from(knobs);
    if (k.algorithm == 1) {
        apply_cpu_dot(k, structure, pipeline);
    } else if (k.algorithm == 3) {
        apply_cpu_pairs(k, pipeline);
    } else if (k.algorithm == 2) {
        apply_cpu_winograd(k, structure, pipeline, target);
    } else {
        apply_cpu(k, structure, pipeline, target);
    }
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
