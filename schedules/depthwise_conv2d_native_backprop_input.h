// Schedules of DepthwiseConv2dNativeBackpropInput: the knob GeneratorParams
// and apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in depthwise_conv2d_native_backprop_input_space.h.
#pragma once

#include "Halide.h"
#include "cpu_tiles.h"
#include "depthwise_conv2d_native_backprop_input_space.h"
#include "halide_knobs.h"
#include "tap_phases.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_backprop_input_space.h).
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
};

// apply() for DepthwiseConv2dNativeBackpropInput. Knob meanings and legal
// values: depthwise_conv2d_native_backprop_input_space.h.
namespace depthwise_conv2d_native_backprop_input_schedule {

using namespace Halide;

inline void apply_cpu(const DepthwiseConv2dNativeBackpropInputCpuKnobs &k, const Structure &s,
                      DepthwiseConv2dNativeBackpropInputPipeline &p) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const bool nhwc = s.data_format == "NHWC";
    // The unit-stride dimension is vectorised; the other one is tiled.
    Var inner = nhwc ? p.c : p.x, other = nhwc ? p.x : p.c;
    Expr inner_extent = nhwc ? p.channels : p.width;
    Expr other_extent = nhwc ? p.width : p.channels;
    const int vector = k.vector_width;
    const int inner_size = vector * k.vectors_per_tile;
    const int other_size = k.tile_other, rows = k.tile_y;
    const bool channel_outer = k.channel_outer;
    CpuLoops l;

    // Full register tiles when the extents allow; one vector per pixel else.
    // A run-time depth multiplier gets a dense M == 1 path (strided loads
    // otherwise).
    Expr full_tiles = inner_extent >= inner_size && other_extent >= other_size && p.height >= rows;
    if (!is_const(p.depth_multiplier)) {
        Stage dense = p.output.specialize(full_tiles && p.depth_multiplier == 1);
        tile_cpu(dense, l, inner, other, p.y, p.n, inner_size, other_size, rows, k.rows_per_task, channel_outer, vector,
                 TailStrategy::ShiftInwards);
    }
    Stage full = p.output.specialize(full_tiles);
    tile_cpu(full, l, inner, other, p.y, p.n, inner_size, other_size, rows, k.rows_per_task, channel_outer, vector,
             TailStrategy::ShiftInwards);
    tile_cpu(p.output, l, inner, other, p.y, p.n, vector, 1, 1, k.rows_per_task * rows, channel_outer, vector,
             TailStrategy::GuardWithIf);

    // The accumulator tile lives in registers for the whole tap reduction.
    const Var tile_loop = channel_outer ? l.other_tile : l.inner_tile;
    p.accumulator.compute_at(p.output, tile_loop)
        .vectorize(inner, vector, TailStrategy::GuardWithIf)
        .unroll(inner)
        .unroll(other)
        .unroll(p.y);
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

    if (k.stage_out_backprop) {
        // A zero-padded copy of the task's out_backprop rows: no boundary
        // selects in the tap loop, at the price of one more pass over memory.
        Var k0 = p.out_backprop.args()[0], k1 = p.out_backprop.args()[1];
        p.out_backprop.compute_at(p.output, l.task_n).vectorize(nhwc ? k0 : k1, vector, TailStrategy::GuardWithIf);
    }
}

inline void apply_cuda(const DepthwiseConv2dNativeBackpropInputCudaKnobs &k, const Structure &s,
                       DepthwiseConv2dNativeBackpropInputPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    Var inner = nhwc ? p.c : p.x, other = nhwc ? p.x : p.c;
    Var inner_block{"inner_block"}, inner_thread{"inner_thread"};
    Var other_block{"other_block"}, other_thread{"other_thread"}, other_pos{"other_pos"};
    Var row_block{"row_block"}, row_thread{"row_thread"}, row_block_n{"row_block_n"};
    const int per_thread = k.other_per_thread;
    p.output.split(inner, inner_block, inner_thread, k.threads_inner, TailStrategy::GuardWithIf)
        .split(other, other_block, other_thread, k.threads_other * per_thread, TailStrategy::GuardWithIf)
        .split(other_thread, other_thread, other_pos, per_thread, TailStrategy::GuardWithIf)
        .split(p.y, row_block, row_thread, k.threads_y, TailStrategy::GuardWithIf)
        .reorder(other_pos, inner_thread, other_thread, row_thread, inner_block, other_block, row_block, p.n)
        .fuse(row_block, p.n, row_block_n)
        .gpu_blocks(inner_block, other_block, row_block_n)
        .gpu_threads(inner_thread, other_thread, row_thread)
        .unroll(other_pos);
    // One thread accumulates its positions in registers.
    p.accumulator.compute_at(p.output, inner_thread).unroll(other);
    p.accumulator.update().unroll(other);
}

}  // namespace depthwise_conv2d_native_backprop_input_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativeBackpropInputPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace depthwise_conv2d_native_backprop_input_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(DepthwiseConv2dNativeBackpropInputCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(DepthwiseConv2dNativeBackpropInputCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
