// Schedule of DepthwiseConv2dNativeBackpropInput: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// CPU: the output dIn is computed in register tiles of
//   (vector_width * vectors_per_tile) along the unit-stride dimension
//   (channels for NHWC, columns for NCHW) x tile_other along the other
//   dimension (columns for NHWC, channels for NCHW) x tile_y rows,
// accumulating over the valid filter taps; tasks of rows_per_task tile rows
// run in parallel. The op is memory bound (~2.25 FLOP/byte at stride 1), so
// the knobs mostly trade register reuse of filter taps against spills.
// CUDA: one thread per (unit-stride position, other_per_thread positions of
// the other dimension, row), blocks of threads_inner x threads_other x threads_y.
#pragma once

#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CPU_KNOBS(KNOB, SHARED)                           \
    KNOB(vector_width, (2, 4, 8, 16, 32, 64), native, "lanes per vector along the unit-stride dimension") \
    KNOB(vectors_per_tile, (1, 2, 3, 4), 2, "vectors per register tile along the unit-stride dimension",  \
         .values_since = 2)                                                                               \
    KNOB(tile_other, (1, 2, 3, 4, 6, 8), 4,                                                               \
         "positions along the other tiled dimension (columns in NHWC, channels in NCHW)")                 \
    KNOB(tile_y, (1, 2, 3, 4), 1, "rows per register tile")                                               \
    KNOB(rows_per_task, (1, 2, 4, 8, 16, 32), 4, "tile rows per parallel task")                           \
    KNOB(unroll_taps, (0, 1), 0, "fully unroll the filter taps (fixed filter size only)")                 \
    KNOB(channel_outer, (0, 1), 0, "1: loop over channel tiles outside the spatial tiles of a task")      \
    KNOB(stage_out_backprop, (0, 1), 0, "1: copy the zero-padded out_backprop slice of a task first")

#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CUDA_KNOBS(KNOB, SHARED)                                  \
    KNOB(threads_inner, (8, 16, 32, 64, 128), 32, "threads along the unit-stride dimension (coalesced)")          \
    KNOB(threads_other, (1, 2, 4, 8), 4, "threads along the other dimension (columns in NHWC, channels in NCHW)") \
    KNOB(threads_y, (1, 2, 4, 8), 2, "threads along rows")                                                        \
    KNOB(other_per_thread, (1, 2, 4), 1, "positions along the other dimension computed by one thread")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeBackpropInputCpuKnobs,
                     GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeBackpropInputCudaKnobs,
                     GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CUDA_KNOBS);

namespace depthwise_conv2d_native_backprop_input_space {

inline KnobSpace cpu_space(const Structure &s) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const int bytes = dtype_bytes(s.dtype);
    const int native = 64 / bytes;  // one AVX-512 register
    const bool nhwc = s.data_format == "NHWC";
    // The accumulators. With a fixed stride the reduction runs one tap phase
    // of the tile at a time (NHWC columns, and rows), so only ceil(tile /
    // stride) columns and rows of it are live.
    const auto registers = [=](const DepthwiseConv2dNativeBackpropInputCpuKnobs &k) {
        const int stride = std::max(1, fixed.stride);
        const int live_columns = nhwc ? (k.tile_other + stride - 1) / stride : k.tile_other;
        const int live_rows = (k.tile_y + stride - 1) / stride;
        return k.vectors_per_tile * live_columns * live_rows * std::max(1, k.vector_width * bytes / 64);
    };
    return register_tile_space<DepthwiseConv2dNativeBackpropInputCpuKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CPU_KNOBS), bytes, registers,
        fixed.filter_height, fixed.filter_width);
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_tile_block_space<DepthwiseConv2dNativeBackpropInputCudaKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CUDA_KNOBS));
}

}  // namespace depthwise_conv2d_native_backprop_input_space

inline OpSchema depthwise_conv2d_native_backprop_input_schema() {
    OpSchema op;
    op.name = "DepthwiseConv2dNativeBackpropInput";
    op.dtypes = {"float16", "bfloat16", "float32", "float64"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = DepthwiseStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    // 2: vectors_per_tile 3 (CPU: tiles of 48 channels, which divide the
    // 144, 240, 480, 672, 960 channels of MobileNet and EfficientNet layers).
    op.knob_space_version = 2;  // bump when a knob's meaning changes
    op.space = per_device(depthwise_conv2d_native_backprop_input_space::cpu_space,
                          depthwise_conv2d_native_backprop_input_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include "Halide.h"
#include "direct_tiles.h"
#include "halide_knobs.h"
#include "tap_phases.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeBackpropInputKnobs,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct DepthwiseConv2dNativeBackpropInputPipeline {
    Halide::Func output;                               // dIn(c, x, y, n), type T
    Halide::Func accumulator{"accumulator"};           // pure 0, update: += over taps
    Halide::Func out_backprop{"out_backprop_padded"};  // zero outside the rows/columns of out_backprop
    Halide::RDom taps;                                 // (m, tap along x, tap along y)
    Halide::Var c, x, y, n;
    Halide::Expr channels, width, height;  // extents of the output
    Halide::Expr depth_multiplier;         // M (constant in variants that fix it)

    DirectOutput direct() const { return {output, accumulator, c, x, y, n, channels, width, height}; }
};

// apply() for DepthwiseConv2dNativeBackpropInput. Knob meanings and legal values: the tables above.
namespace depthwise_conv2d_native_backprop_input_schedule {

using namespace Halide;

inline void apply_cpu(const DepthwiseConv2dNativeBackpropInputCpuKnobs &k, const Structure &s,
                      DepthwiseConv2dNativeBackpropInputPipeline &p) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    const Var inner = o.inner(nhwc), other = o.other(nhwc);
    const int vector = k.vector_width, rows = k.tile_y;
    // A run-time depth multiplier gets a dense M == 1 path (strided loads
    // otherwise).
    const CpuLoops l = tile_direct_cpu(o, nhwc, k, is_const(p.depth_multiplier) ? Expr() : p.depth_multiplier == 1);
    // The reduction: register tile innermost, one tap phase of its columns
    // and rows at a time for a fixed stride (uniform tap predicates), then
    // the depth multiplier and the taps.
    RVar m = p.taps.x, col_tap = p.taps.y, row_tap = p.taps.z;
    Stage update = p.accumulator.update();
    const int stride = fixed.stride;
    std::vector<VarOrRVar> tile = {inner}, phases;
    if (!(nhwc && split_phases(update, p.x, stride, "x", &tile, &phases))) tile.push_back(other);
    if (rows == 1) {
        phases.push_back(p.y);  // a single row: keep it outside the reduction
    } else if (!split_phases(update, p.y, stride, "y", &tile, &phases)) {
        tile.push_back(p.y);
    }
    std::vector<VarOrRVar> order = tile;
    order.insert(order.end(), {m, col_tap, row_tap});
    order.insert(order.end(), phases.begin(), phases.end());
    update.reorder(order).vectorize(inner, vector, TailStrategy::GuardWithIf);
    for (const VarOrRVar &v : tile) update.unroll(v.var);
    // Unrolled phases keep the tile's accumulator indices constant (in
    // registers) across the phase loop.
    for (const VarOrRVar &v : phases) update.unroll(v.var);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);

    if (k.stage_out_backprop) stage_per_task(p.out_backprop, o, l, nhwc, vector);
}

inline void apply_cuda(const DepthwiseConv2dNativeBackpropInputCudaKnobs &k, const Structure &s,
                       DepthwiseConv2dNativeBackpropInputPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    tile_direct_cuda(o, nhwc, k);
    p.accumulator.update().unroll(o.other(nhwc));
}

}  // namespace depthwise_conv2d_native_backprop_input_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativeBackpropInputPipeline &pipeline,
                  const Halide::Target &target) {
    if (device_of(target) == Device::cuda)
        return depthwise_conv2d_native_backprop_input_schedule::apply_cuda(
            DepthwiseConv2dNativeBackpropInputCudaKnobs::from(knobs), structure, pipeline);
    depthwise_conv2d_native_backprop_input_schedule::apply_cpu(DepthwiseConv2dNativeBackpropInputCpuKnobs::from(knobs),
                                                               structure, pipeline);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
