// The tiling that the direct convolution schedules share (Conv2D,
// DepthwiseConv2dNative and DepthwiseConv2dNativeBackpropInput on both
// devices, Conv2DBackpropInput on CUDA). Each computes an output pixel by
// pixel as a sum over a reduction held in an accumulator, and tiles the
// output the same way:
//   CPU:  register tiles along a vectorised unit-stride dimension (`inner`:
//         channels in NHWC, columns in NCHW), the other tiled dimension
//         (`other`) and rows, run as parallel tasks of whole tile rows;
//   CUDA: one thread per few positions along `other`, threads along `inner`.
// The order of each op's reduction is its own; the rest is here.
#pragma once

#include "Halide.h"

namespace gradtune {

// A direct convolution's output as its schedule sees it: the Func and its
// accumulator (pure 0, update += over the reduction), the dimensions as the
// generator named them, and their extents.
struct DirectOutput {
    Halide::Func output, accumulator;
    Halide::Var channel, x, y, n;
    Halide::Expr channels, width, height;
    // Unit stride: channels in NHWC, columns in NCHW.
    Halide::Var inner(bool nhwc) const { return nhwc ? channel : x; }
    Halide::Var other(bool nhwc) const { return nhwc ? x : channel; }
};

// Names shared by an op's full-tile and small-extent branches, so that
// producers can be computed at the same loop in all of them.
struct CpuLoops {
    Halide::Var inner_tile{"inner_tile"}, inner_lane{"inner_lane"};
    Halide::Var other_tile{"other_tile"}, other_pos{"other_pos"};
    Halide::Var row_tile{"row_tile"}, row_pos{"row_pos"};
    Halide::Var task{"task"}, task_n{"task_n"};
};

// Tiles `stage` into register tiles of inner x other x rows and parallel tasks
// of rows_per_task tile rows (of image n). `tail` handles extents that the
// tile does not divide: ShiftInwards for the full-tile branches (extents >=
// tile, so a shifted tile stays inside the output), GuardWithIf for small
// extents.
inline void tile_direct_stage_cpu(Halide::Stage stage, const CpuLoops &l, Halide::Var inner, Halide::Var other,
                                  Halide::Var y, Halide::Var n, int inner_size, int other_size, int rows,
                                  int rows_per_task, bool channel_outer, int vector_width, Halide::TailStrategy tail) {
    using Halide::TailStrategy;
    stage.split(inner, l.inner_tile, l.inner_lane, inner_size, tail)
        .split(other, l.other_tile, l.other_pos, other_size, tail)
        .split(y, l.row_tile, l.row_pos, rows, tail)
        .split(l.row_tile, l.task, l.row_tile, rows_per_task, TailStrategy::GuardWithIf);
    if (channel_outer) {
        stage.reorder(l.inner_lane, l.other_pos, l.row_pos, l.other_tile, l.row_tile, l.inner_tile, l.task, n);
    } else {
        stage.reorder(l.inner_lane, l.other_pos, l.row_pos, l.inner_tile, l.other_tile, l.row_tile, l.task, n);
    }
    stage.fuse(l.task, n, l.task_n).parallel(l.task_n);
    stage.vectorize(l.inner_lane, vector_width, TailStrategy::GuardWithIf);
}

// The CPU schedule of a direct convolution's output, from the knobs that each
// of these ops' tables declares (vector_width, vectors_per_tile, tile_other,
// tile_y, rows_per_task, channel_outer). The output gets up to three branches:
//   - where `dense` is defined: full tiles where `dense` holds (the op's case
//     with dense loads, e.g. depth multiplier 1 or a single group);
//   - full register tiles where the extents allow;
//   - one vector per pixel else.
// The accumulator tile lives in registers for the whole reduction: its pure
// definition is computed at the tile here; its update is the op's.
template <typename CpuKnobs>
CpuLoops tile_direct_cpu(DirectOutput o, bool nhwc, const CpuKnobs &k, const Halide::Expr &dense) {
    using Halide::TailStrategy;
    const Halide::Var inner = o.inner(nhwc), other = o.other(nhwc);
    const Halide::Expr inner_extent = nhwc ? o.channels : o.width, other_extent = nhwc ? o.width : o.channels;
    const int vector = k.vector_width, inner_size = vector * k.vectors_per_tile;
    const int other_size = k.tile_other, rows = k.tile_y;
    CpuLoops l;
    auto tile = [&](Halide::Stage stage, int inner_tile, int other_tile, int tile_rows, int rows_per_task,
                    TailStrategy tail) {
        tile_direct_stage_cpu(stage, l, inner, other, o.y, o.n, inner_tile, other_tile, tile_rows, rows_per_task,
                              k.channel_outer, vector, tail);
    };
    const Halide::Expr full_tiles = inner_extent >= inner_size && other_extent >= other_size && o.height >= rows;
    if (dense.defined()) {
        tile(o.output.specialize(full_tiles && dense), inner_size, other_size, rows, k.rows_per_task,
             TailStrategy::ShiftInwards);
    }
    tile(o.output.specialize(full_tiles), inner_size, other_size, rows, k.rows_per_task, TailStrategy::ShiftInwards);
    tile(o.output, vector, 1, 1, k.rows_per_task * rows, TailStrategy::GuardWithIf);

    const Halide::Var tile_loop = k.channel_outer ? l.other_tile : l.inner_tile;
    o.accumulator.compute_at(o.output, tile_loop)
        .vectorize(inner, vector, TailStrategy::GuardWithIf)
        .unroll(inner)
        .unroll(other)
        .unroll(o.y);
    return l;
}

// A zero-padded copy of each task's rows of `staged` (channels or columns
// innermost, as the output): no boundary selects in the reduction, at the
// price of one more pass over memory.
inline void stage_per_task(Halide::Func staged, const DirectOutput &o, const CpuLoops &l, bool nhwc, int vector) {
    const Halide::Var a0 = staged.args()[0], a1 = staged.args()[1];
    staged.compute_at(o.output, l.task_n).vectorize(nhwc ? a0 : a1, vector, Halide::TailStrategy::GuardWithIf);
}

// The CUDA schedule of a direct convolution's output, from the knobs that each
// of these ops' CUDA tables declares (threads_inner, threads_other,
// threads_y, other_per_thread): blocks of threads_inner x threads_other x
// threads_y threads, each thread other_per_thread positions along `other`.
// One thread accumulates its positions in registers: each loaded value of
// the unit-stride operand is reused that often. The accumulator's update is
// the op's to order (unroll `other` in it).
template <typename CudaKnobs>
void tile_direct_cuda(DirectOutput o, bool nhwc, const CudaKnobs &k) {
    using Halide::TailStrategy;
    using Halide::Var;
    const Var inner = o.inner(nhwc), other = o.other(nhwc);
    Var inner_block{"inner_block"}, inner_thread{"inner_thread"};
    Var other_block{"other_block"}, other_thread{"other_thread"}, other_pos{"other_pos"};
    Var row_block{"row_block"}, row_thread{"row_thread"}, row_block_n{"row_block_n"};
    const int per_thread = k.other_per_thread;
    o.output.split(inner, inner_block, inner_thread, k.threads_inner, TailStrategy::GuardWithIf)
        .split(other, other_block, other_thread, k.threads_other * per_thread, TailStrategy::GuardWithIf)
        .split(other_thread, other_thread, other_pos, per_thread, TailStrategy::GuardWithIf)
        .split(o.y, row_block, row_thread, k.threads_y, TailStrategy::GuardWithIf)
        .reorder(other_pos, inner_thread, other_thread, row_thread, inner_block, other_block, row_block, o.n)
        .fuse(row_block, o.n, row_block_n)
        .gpu_blocks(inner_block, other_block, row_block_n)
        .gpu_threads(inner_thread, other_thread, row_thread)
        .unroll(other_pos);
    o.accumulator.compute_at(o.output, inner_thread).unroll(other);
}

}  // namespace gradtune
