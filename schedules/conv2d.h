// Schedules of Conv2D (the forward convolution): the knob GeneratorParams and
// apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in conv2d_space.h.
#pragma once

#include "Halide.h"
#include "conv2d_space.h"
#include "cpu_tiles.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (conv2d_space.h).
GRADTUNE_GENERATOR_KNOBS(Conv2DKnobs, GRADTUNE_CONV2D_CPU_KNOBS, GRADTUNE_CONV2D_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DPipeline {
    Halide::Func output;                      // out(o, x, y, n), type T
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over (ci, fw, fh)
    Halide::Func input{"input_padded"};       // zero outside the rows/columns of the input
    Halide::RDom reduction;                   // (input channel of the group, tap along x, tap along y)
    Halide::Var o, x, y, n;
    Halide::Expr out_channels, width, height;  // extents of the output
    Halide::Expr single_group;                 // bool: filter depth == input depth (the common, ungrouped case)
};

// apply() for Conv2D. Knob meanings and legal values: conv2d_space.h.
namespace conv2d_schedule {

using namespace Halide;

inline void apply_cpu(const Conv2DCpuKnobs &k, const Structure &s, Conv2DPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    // The unit-stride dimension is vectorised (output channels in NHWC,
    // columns in NCHW); the other one is tiled.
    Var inner = nhwc ? p.o : p.x, other = nhwc ? p.x : p.o;
    Expr inner_extent = nhwc ? p.out_channels : p.width;
    Expr other_extent = nhwc ? p.width : p.out_channels;
    const int vector = k.vector_width;
    const int inner_size = vector * k.vectors_per_tile;
    const int other_size = k.tile_other, rows = k.tile_y;
    const bool channel_outer = k.channel_outer;
    CpuLoops l;

    // Full register tiles when the extents allow; one vector per pixel else.
    // The ungrouped case gets its own branch: there every lane of an
    // output-channel vector reads the same input channel (a broadcast), while
    // with groups the lanes may straddle two groups (a gather).
    Expr full_tiles = inner_extent >= inner_size && other_extent >= other_size && p.height >= rows;
    if (!is_const(p.single_group)) {
        Stage ungrouped = p.output.specialize(full_tiles && p.single_group);
        tile_cpu(ungrouped, l, inner, other, p.y, p.n, inner_size, other_size, rows, k.rows_per_task, channel_outer,
                 vector, TailStrategy::ShiftInwards);
    }
    Stage full = p.output.specialize(full_tiles);
    tile_cpu(full, l, inner, other, p.y, p.n, inner_size, other_size, rows, k.rows_per_task, channel_outer, vector,
             TailStrategy::ShiftInwards);
    tile_cpu(p.output, l, inner, other, p.y, p.n, vector, 1, 1, k.rows_per_task * rows, channel_outer, vector,
             TailStrategy::GuardWithIf);

    // The accumulator tile lives in registers for the whole reduction.
    const Var tile_loop = channel_outer ? l.other_tile : l.inner_tile;
    p.accumulator.compute_at(p.output, tile_loop)
        .vectorize(inner, vector, TailStrategy::GuardWithIf)
        .unroll(inner)
        .unroll(other)
        .unroll(p.y);
    RVar channel = p.reduction.x, col_tap = p.reduction.y, row_tap = p.reduction.z;
    Stage update = p.accumulator.update();
    if (k.taps_inner) {
        update.reorder(inner, other, p.y, col_tap, row_tap, channel);
    } else {
        update.reorder(inner, other, p.y, channel, col_tap, row_tap);
    }
    update.vectorize(inner, vector, TailStrategy::GuardWithIf).unroll(inner).unroll(other).unroll(p.y);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);

    if (k.stage_input) {
        // A zero-padded copy of the task's input rows: no boundary selects in
        // the reduction, at the price of one more pass over the input.
        Var c0 = p.input.args()[0], c1 = p.input.args()[1];
        p.input.compute_at(p.output, l.task_n).vectorize(nhwc ? c0 : c1, vector, TailStrategy::GuardWithIf);
    }
}

inline void apply_cuda(const Conv2DCudaKnobs &k, const Structure &s, Conv2DPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    Var inner = nhwc ? p.o : p.x, other = nhwc ? p.x : p.o;
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
    // One thread accumulates its other_per_thread positions in registers:
    // each loaded value of the unit-stride operand is reused that often.
    p.accumulator.compute_at(p.output, inner_thread).unroll(other);
    p.accumulator.update().reorder(other, p.reduction.x, p.reduction.y, p.reduction.z).unroll(other);
}

}  // namespace conv2d_schedule

inline void apply(const Knobs &knobs, const Structure &structure, Conv2DPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace conv2d_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(Conv2DCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(Conv2DCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
