// Schedules of FractionalAvgPool: the knob GeneratorParams and apply(), the
// only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// fractional_avg_pool_space.h.
#pragma once

#include "Halide.h"
#include "fractional_avg_pool_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (fractional_avg_pool_space.h).
GRADTUNE_GENERATOR_KNOBS(FractionalAvgPoolKnobs, GRADTUNE_FRACTIONAL_AVG_POOL_CPU_KNOBS,
                         GRADTUNE_FRACTIONAL_AVG_POOL_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct FractionalAvgPoolPipeline {
    Halide::Func output;                   // out(d, c, r, n), type T
    Halide::Func sum{"sum"};               // T: 0, update += input over the cell's pixels
    Halide::RDom window;                   // (column within the cell, row within the cell)
    Halide::Var d, c, r, n;                // channel, cell column, cell row, batch
    Halide::Expr channels, width, height;  // extents of the output
};

// apply() for FractionalAvgPool. Knob meanings and legal values:
// fractional_avg_pool_space.h.
namespace fractional_avg_pool_schedule {

using namespace Halide;

// Names shared by the full-tile and small-extent branches.
struct CpuLoops {
    Var channel_tile{"channel_tile"}, channel_lane{"channel_lane"};
    Var column_tile{"column_tile"}, column_pos{"column_pos"};
    Var task{"task"}, task_n{"task_n"};
};

// Register tiles of `channels` lanes x `columns` cells of one row; tasks of
// rows_per_task cell rows run in parallel with the batch.
inline void tile_cpu(Stage stage, const FractionalAvgPoolPipeline &p, const CpuLoops &l, int channels, int columns,
                     int rows_per_task, int vector_width, TailStrategy tail) {
    stage.split(p.d, l.channel_tile, l.channel_lane, channels, tail)
        .split(p.c, l.column_tile, l.column_pos, columns, tail)
        .split(p.r, l.task, p.r, rows_per_task, TailStrategy::GuardWithIf)
        .reorder(l.channel_lane, l.column_pos, l.channel_tile, l.column_tile, p.r, l.task, p.n)
        .fuse(l.task, p.n, l.task_n)
        .parallel(l.task_n)
        .vectorize(l.channel_lane, vector_width, TailStrategy::GuardWithIf);
}

inline void apply_cpu(const FractionalAvgPoolCpuKnobs &k, FractionalAvgPoolPipeline &p) {
    const int vector = k.vector_width;
    const int channels = vector * k.vectors_per_tile;
    const int columns = k.tile_width;
    CpuLoops l;
    // Full register tiles when the extents allow; one vector per cell else.
    Expr full_tiles = p.channels >= channels && p.width >= columns;
    tile_cpu(p.output.specialize(full_tiles), p, l, channels, columns, k.rows_per_task, vector,
             TailStrategy::ShiftInwards);
    tile_cpu(p.output, p, l, vector, 1, k.rows_per_task, vector, TailStrategy::GuardWithIf);

    // The tile's sums stay in registers over the cell's pixels.
    p.sum.compute_at(p.output, l.channel_tile)
        .vectorize(p.d, vector, TailStrategy::GuardWithIf)
        .unroll(p.d)
        .unroll(p.c);
    p.sum.update()
        .reorder(p.d, p.c, p.window.x, p.window.y)
        .vectorize(p.d, vector, TailStrategy::GuardWithIf)
        .unroll(p.d)
        .unroll(p.c);
}

inline void apply_cuda(const FractionalAvgPoolCudaKnobs &k, FractionalAvgPoolPipeline &p) {
    Var channel_block{"channel_block"}, channel_thread{"channel_thread"};
    Var column_block{"column_block"}, column_thread{"column_thread"};
    Var row_block{"row_block"}, row_thread{"row_thread"}, row_block_n{"row_block_n"};
    // Channels innermost: consecutive threads read consecutive addresses.
    p.output.split(p.d, channel_block, channel_thread, k.threads_channels, TailStrategy::GuardWithIf)
        .split(p.c, column_block, column_thread, k.threads_width, TailStrategy::GuardWithIf)
        .split(p.r, row_block, row_thread, k.threads_height, TailStrategy::GuardWithIf)
        .reorder(channel_thread, column_thread, row_thread, channel_block, column_block, row_block, p.n)
        .fuse(row_block, p.n, row_block_n)
        .gpu_blocks(channel_block, column_block, row_block_n)
        .gpu_threads(channel_thread, column_thread, row_thread);
    // One thread sums its cell in a register.
    p.sum.compute_at(p.output, channel_thread);
}

}  // namespace fractional_avg_pool_schedule

inline void apply(const Knobs &knobs, const Structure &, FractionalAvgPoolPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace fractional_avg_pool_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(FractionalAvgPoolCudaKnobs::from(knobs), pipeline);
    } else {
        apply_cpu(FractionalAvgPoolCpuKnobs::from(knobs), pipeline);
    }
}

}  // namespace gradtune
