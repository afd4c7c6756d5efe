// Schedules of FractionalAvgPoolGrad: the knob GeneratorParams and apply(),
// the only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// fractional_avg_pool_grad_space.h.
#pragma once

#include "Halide.h"
#include "fractional_avg_pool_grad_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (fractional_avg_pool_grad_space.h).
GRADTUNE_GENERATOR_KNOBS(FractionalAvgPoolGradKnobs, GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CPU_KNOBS,
                         GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct FractionalAvgPoolGradPipeline {
    Halide::Func output;                      // dIn(d, w, h, n), type T
    Halide::Func accumulator{"accumulator"};  // float64: 0, update += quotient over the covering cells
    // out_backprop / cell size in float64, over out_backprop's (d, w = cell
    // column, h = cell row, n): TF's per-cell term, one division per cell.
    Halide::Func quotient{"quotient"};
    Halide::RDom cells;  // (column cell, row cell) of a pixel's search range
    Halide::Var d, w, h, n;
    Halide::Expr channels, width, height;  // extents of the output
    // True when every cell has fewer than 2^26 pixels: where the quotients are
    // computed by reciprocal (divide_by_reciprocal), the schedule specialises
    // on it; larger cells (images of 67M pixels and more) divide.
    Halide::Expr small_cells;
    // True when every cell of every search range covers its pixel (monotonic
    // sequences): the covering test can be dropped.
    Halide::Expr ranges_exact;
    // The longest row and column search ranges (kernel inputs): 1 x 1 for
    // generated sequences without overlap, 2 x 2 with.
    Halide::Expr max_row_cells, max_col_cells;
};

// apply() for FractionalAvgPoolGrad. Knob meanings and legal values:
// fractional_avg_pool_grad_space.h.
namespace fractional_avg_pool_grad_schedule {

using namespace Halide;

// Names shared by the full-tile and small-extent branches, so that producers
// can be computed at the same loop in both.
struct CpuLoops {
    Var channel_tile{"channel_tile"}, channel_lane{"channel_lane"};
    Var column_tile{"column_tile"}, column_pos{"column_pos"};
    Var task{"task"}, task_n{"task_n"};
};

// Tiles the output into register tiles of `channels` lanes x `columns`
// pixels; tasks of rows_per_task rows run in parallel, over the batch too
// unless the quotients are staged per image (then the batch loop stays
// serial, outside the parallel rows, so that each image's quotients are
// computed once before its rows).
inline void tile_cpu(Stage stage, const FractionalAvgPoolGradPipeline &p, const CpuLoops &l, int channels, int columns,
                     int rows_per_task, int vector_width, bool fuse_batch, TailStrategy tail) {
    stage.split(p.d, l.channel_tile, l.channel_lane, channels, tail)
        .split(p.w, l.column_tile, l.column_pos, columns, tail)
        .split(p.h, l.task, p.h, rows_per_task, TailStrategy::GuardWithIf)
        .reorder(l.channel_lane, l.column_pos, l.channel_tile, l.column_tile, p.h, l.task, p.n);
    if (fuse_batch) {
        stage.fuse(l.task, p.n, l.task_n).parallel(l.task_n);
    } else {
        stage.parallel(l.task);
    }
    stage.vectorize(l.channel_lane, vector_width, TailStrategy::GuardWithIf);
}

inline void apply_cpu(const FractionalAvgPoolGradCpuKnobs &k, FractionalAvgPoolGradPipeline &p) {
    const int vector = k.vector_width;
    const int channels = vector * k.vectors_per_tile;
    const int columns = k.tile_width;
    const int rows_per_task = k.rows_per_task;
    // Staged per image, the batch loop stays serial (see tile_cpu).
    const bool per_image = k.stage_quotients == 1;
    CpuLoops l;

    // Full register tiles when the extents allow (ShiftInwards recomputes a
    // few pixels at the edges, harmless for a pure output), first for exact
    // search ranges (generated sequences: no covering test per cell), then
    // for any sequences; one vector per pixel otherwise (C or W smaller than
    // a tile).
    // With divide_by_reciprocal every branch but the last holds small_cells
    // (the quotients' select then folds away); the last one divides.
    const bool reciprocal = k.divide_by_reciprocal;
    Expr full_tiles = p.channels >= channels && p.width >= columns;
    if (reciprocal) full_tiles = p.small_cells && full_tiles;
    for (Expr condition : {full_tiles && p.ranges_exact, full_tiles}) {
        tile_cpu(p.output.specialize(condition), p, l, channels, columns, rows_per_task, vector, !per_image,
                 TailStrategy::ShiftInwards);
    }
    if (reciprocal)
        tile_cpu(p.output.specialize(p.small_cells), p, l, vector, 1, rows_per_task, vector, !per_image,
                 TailStrategy::GuardWithIf);
    tile_cpu(p.output, p, l, vector, 1, rows_per_task, vector, !per_image, TailStrategy::GuardWithIf);

    // The tile's float64 sums stay in registers across the covering cells.
    p.accumulator.compute_at(p.output, l.channel_tile)
        .vectorize(p.d, vector, TailStrategy::GuardWithIf)
        .unroll(p.d)
        .unroll(p.w);
    Stage update = p.accumulator.update();
    update.reorder(p.d, p.w, p.cells.x, p.cells.y)
        .vectorize(p.d, vector, TailStrategy::GuardWithIf)
        .unroll(p.d)
        .unroll(p.w);
    // Search ranges of at most 2 x 2 cells (generated sequences) run
    // unrolled: every cell, the non-covering ones adding +0.0. (A
    // specialisation starts from the loops scheduled above.)
    for (int cells : {2, 1})
        update.specialize(p.max_row_cells == cells && p.max_col_cells == cells).unroll(p.cells.x).unroll(p.cells.y);

    if (per_image) {
        // One division per out_backprop element instead of one per
        // (pixel, covering cell): the image's quotients in float64, computed
        // in parallel over cell rows before the image's pixels.
        p.quotient.compute_at(p.output, p.n).parallel(p.h).vectorize(p.d, vector, TailStrategy::GuardWithIf);
    } else if (k.stage_quotients == 2) {
        // The quotients of the cell rows that cover a task's input rows,
        // computed at the start of the task: a few rows of out_backprop
        // (bounded by the rows' band, see the generator), still in L2 while
        // the task's pixels read them. Cell rows shared by two tasks are
        // divided twice.
        p.quotient.compute_at(p.output, l.task_n).vectorize(p.d, vector, TailStrategy::GuardWithIf);
    }
}

inline void apply_cuda(const FractionalAvgPoolGradCudaKnobs &k, FractionalAvgPoolGradPipeline &p) {
    Var channel_block{"channel_block"}, channel_thread{"channel_thread"};
    Var column_block{"column_block"}, column_thread{"column_thread"};
    Var row_block{"row_block"}, row_thread{"row_thread"}, row_block_n{"row_block_n"};
    // Channels innermost: consecutive threads touch consecutive addresses.
    p.output.split(p.d, channel_block, channel_thread, k.threads_channels, TailStrategy::GuardWithIf)
        .split(p.w, column_block, column_thread, k.threads_width, TailStrategy::GuardWithIf)
        .split(p.h, row_block, row_thread, k.threads_height, TailStrategy::GuardWithIf)
        .reorder(channel_thread, column_thread, row_thread, channel_block, column_block, row_block, p.n)
        .fuse(row_block, p.n, row_block_n)
        .gpu_blocks(channel_block, column_block, row_block_n)
        .gpu_threads(channel_thread, column_thread, row_thread);
    // Exact search ranges (generated sequences) skip the covering test; the
    // specialisation inherits the loops above.
    p.output.specialize(p.ranges_exact);
    // One thread sums its pixel's cells in a register.
    p.accumulator.compute_at(p.output, channel_thread);

    if (k.stage_quotients) {
        // A kernel of its own: one division per out_backprop element.
        Var qd_block{"qd_block"}, qd_thread{"qd_thread"}, qw_block{"qw_block"}, qw_thread{"qw_thread"};
        Var qh_n{"qh_n"};
        p.quotient.compute_root()
            .split(p.d, qd_block, qd_thread, k.threads_channels, TailStrategy::GuardWithIf)
            .split(p.w, qw_block, qw_thread, k.threads_width, TailStrategy::GuardWithIf)
            .reorder(qd_thread, qw_thread, qd_block, qw_block, p.h, p.n)
            .fuse(p.h, p.n, qh_n)
            .gpu_blocks(qd_block, qw_block, qh_n)
            .gpu_threads(qd_thread, qw_thread);
    }
}

}  // namespace fractional_avg_pool_grad_schedule

inline void apply(const Knobs &knobs, const Structure &, FractionalAvgPoolGradPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace fractional_avg_pool_grad_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(FractionalAvgPoolGradCudaKnobs::from(knobs), pipeline);
    } else {
        apply_cpu(FractionalAvgPoolGradCpuKnobs::from(knobs), pipeline);
    }
}

}  // namespace gradtune
