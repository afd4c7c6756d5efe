// Schedules of DepthwiseConv2dNative (the forward depthwise convolution): the
// knob GeneratorParams and apply(), the only place where this op's loops are
// split, vectorised, parallelised or mapped to GPU threads. The space itself
// (domains, defaults, legality) is in depthwise_conv2d_native_space.h.
#pragma once

#include "Halide.h"
#include "cpu_tiles.h"
#include "depthwise_conv2d_native_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_space.h).
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
};

// apply() for DepthwiseConv2dNative. Knob meanings and legal values:
// depthwise_conv2d_native_space.h.
namespace depthwise_conv2d_native_schedule {

using namespace Halide;

inline void apply_cpu(const DepthwiseConv2dNativeCpuKnobs &k, const Structure &s, DepthwiseConv2dNativePipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    // The unit-stride dimension is vectorised; the other one is tiled.
    Var inner = nhwc ? p.k : p.x, other = nhwc ? p.x : p.k;
    Expr inner_extent = nhwc ? p.channels : p.width;
    Expr other_extent = nhwc ? p.width : p.channels;
    const int vector = k.vector_width;
    const int inner_size = vector * k.vectors_per_tile;
    const int other_size = k.tile_other, rows = k.tile_y;
    const bool channel_outer = k.channel_outer;
    CpuLoops l;

    // Full register tiles when the extents allow; one vector per pixel else.
    // A run-time depth multiplier gets an M == 1 path: there the input
    // channel k / M is k itself and NHWC loads are dense (gathers otherwise).
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
    RVar col_tap = p.taps.x, row_tap = p.taps.y;
    Stage update = p.accumulator.update();
    update.reorder(inner, other, p.y, col_tap, row_tap)
        .vectorize(inner, vector, TailStrategy::GuardWithIf)
        .unroll(inner)
        .unroll(other)
        .unroll(p.y);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);

    if (k.stage_input) {
        // A zero-padded copy of the task's input rows: no boundary selects in
        // the tap loop, at the price of one more pass over memory.
        Var c0 = p.input.args()[0], c1 = p.input.args()[1];
        p.input.compute_at(p.output, l.task_n).vectorize(nhwc ? c0 : c1, vector, TailStrategy::GuardWithIf);
    }
}

inline void apply_cuda(const DepthwiseConv2dNativeCudaKnobs &k, const Structure &s, DepthwiseConv2dNativePipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    Var inner = nhwc ? p.k : p.x, other = nhwc ? p.x : p.k;
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

}  // namespace depthwise_conv2d_native_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativePipeline &pipeline,
                  const Halide::Target &target) {
    using namespace depthwise_conv2d_native_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(DepthwiseConv2dNativeCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(DepthwiseConv2dNativeCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
