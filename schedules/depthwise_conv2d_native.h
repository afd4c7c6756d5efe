// Schedule of DepthwiseConv2dNative: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// CPU: the output is computed in register tiles of
//   (vector_width * vectors_per_tile) along the unit-stride dimension
//   (output channels k = c*M + m for NHWC, output columns for NCHW) x
//   tile_other along the other dimension (columns for NHWC, output channels
//   for NCHW) x tile_y rows,
// accumulating over the FH x FW filter taps; tasks of rows_per_task tile rows
// run in parallel. Each input element is read FH*FW times and used for one
// multiply-add per output channel it feeds, so the op is memory bound
// (~2 FLOP/byte in f32 at 3x3 stride 1): the knobs trade reuse of input rows
// across the tile rows and of filter taps across the columns against spills.
// CUDA: one thread per (unit-stride position, other_per_thread positions of
// the other dimension, row), blocks of threads_inner x threads_other x threads_y.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CPU_KNOBS(KNOB, SHARED)                                          \
    KNOB(vector_width, (2, 4, 8, 16, 32, 64), native, "lanes per vector along the unit-stride dimension") \
    KNOB(vectors_per_tile, (1, 2, 4), 2, "vectors per register tile along the unit-stride dimension")     \
    KNOB(tile_other, (1, 2, 3, 4, 6, 8), 4,                                                               \
         "positions along the other tiled dimension (columns in NHWC, output channels in NCHW)")          \
    KNOB(tile_y, (1, 2, 3, 4), 1, "output rows per register tile (adjacent rows share input rows)")       \
    KNOB(rows_per_task, (1, 2, 4, 8, 16, 32), 4, "tile rows per parallel task")                           \
    KNOB(unroll_taps, (0, 1), 0, "fully unroll the filter taps (fixed filter size only)")                 \
    KNOB(channel_outer, (0, 1), 0, "1: loop over channel tiles outside the spatial tiles of a task")      \
    KNOB(stage_input, (0, 1), 0,                                                                          \
         "1: copy the zero-padded input slice of a task first (no boundary selects in the tap loop)")

#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CUDA_KNOBS(KNOB, SHARED)                                        \
    KNOB(threads_inner, (8, 16, 32, 64, 128), 32, "threads along the unit-stride dimension (coalesced)") \
    KNOB(threads_other, (1, 2, 4, 8), 4,                                                                 \
         "threads along the other dimension (columns in NHWC, output channels in NCHW)")                 \
    KNOB(threads_y, (1, 2, 4, 8), 2, "threads along rows")                                               \
    KNOB(other_per_thread, (1, 2, 4), 1, "positions along the other dimension computed by one thread")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeCpuKnobs, GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeCudaKnobs, GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CUDA_KNOBS);

namespace depthwise_conv2d_native_space {

inline KnobSpace cpu_space(const Structure &s) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const int bytes = dtype_bytes(s.dtype);
    // 16-bit floats accumulate in float32: registers are counted in
    // accumulator lanes, and the default vector is one AVX-512 register of them.
    const int accumulator_bytes = gradtune::accumulator_bytes(s.dtype);
    const int native = 64 / accumulator_bytes;
    // The accumulators.
    const auto registers = [=](const DepthwiseConv2dNativeCpuKnobs &k) {
        const int registers_per_vector = std::max(1, k.vector_width * accumulator_bytes / 64);
        return k.vectors_per_tile * k.tile_other * k.tile_y * registers_per_vector;
    };
    return register_tile_space<DepthwiseConv2dNativeCpuKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CPU_KNOBS), bytes, registers, fixed.filter_height,
        fixed.filter_width);
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_tile_block_space<DepthwiseConv2dNativeCudaKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CUDA_KNOBS));
}

}  // namespace depthwise_conv2d_native_space

inline OpSchema depthwise_conv2d_native_schema() {
    OpSchema op;
    op.name = "DepthwiseConv2dNative";
    op.dtypes = {"float16", "bfloat16", "float32", "float64"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = DepthwiseStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    op.knob_space_version = 1;  // bump when a knob's meaning changes
    op.space = per_device(depthwise_conv2d_native_space::cpu_space, depthwise_conv2d_native_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include "Halide.h"
#include "direct_tiles.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeKnobs, GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct DepthwiseConv2dNativePipeline {
    Halide::Func output;                      // out(k, x, y, n), k = c*M + m, type T
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over the filter taps
    Halide::Func input{"input_padded"};       // zero outside the rows/columns of the input
    Halide::RDom taps;                        // (tap along x, tap along y)
    Halide::Var k, x, y, n;
    Halide::Expr channels, width, height;  // extents of the output (channels = C*M)
    Halide::Expr depth_multiplier;         // M (constant in variants that fix it)

    DirectOutput direct() const { return {output, accumulator, k, x, y, n, channels, width, height}; }
};

// apply() for DepthwiseConv2dNative. Knob meanings and legal values: the tables above.
namespace depthwise_conv2d_native_schedule {

using namespace Halide;

inline void apply_cpu(const DepthwiseConv2dNativeCpuKnobs &k, const Structure &s, DepthwiseConv2dNativePipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    // A run-time depth multiplier gets an M == 1 path: there the input
    // channel k / M is k itself and NHWC loads are dense (gathers otherwise).
    const CpuLoops l = tile_direct_cpu(o, nhwc, k, is_const(p.depth_multiplier) ? Expr() : p.depth_multiplier == 1);
    const Var inner = o.inner(nhwc), other = o.other(nhwc);
    RVar col_tap = p.taps.x, row_tap = p.taps.y;
    Stage update = p.accumulator.update();
    update.reorder(inner, other, p.y, col_tap, row_tap)
        .vectorize(inner, k.vector_width, TailStrategy::GuardWithIf)
        .unroll(inner)
        .unroll(other)
        .unroll(p.y);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);
    if (k.stage_input) stage_per_task(p.input, o, l, nhwc, k.vector_width);
}

inline void apply_cuda(const DepthwiseConv2dNativeCudaKnobs &k, const Structure &s, DepthwiseConv2dNativePipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    tile_direct_cuda(o, nhwc, k);
    p.accumulator.update().unroll(o.other(nhwc));
}

}  // namespace depthwise_conv2d_native_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativePipeline &pipeline,
                  const Halide::Target &target) {
    if (device_of(target) == Device::cuda)
        return depthwise_conv2d_native_schedule::apply_cuda(DepthwiseConv2dNativeCudaKnobs::from(knobs), structure,
                                                            pipeline);
    depthwise_conv2d_native_schedule::apply_cpu(DepthwiseConv2dNativeCpuKnobs::from(knobs), structure, pipeline);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
