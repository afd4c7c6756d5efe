// Schedule of FractionalAvgPoolGrad: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// Structural parameter: overlapping (TF's bool attr) as 0 = from the call at
// run time, 1 = false, 2 = true. T is float32, float64, int32 or int64 (TF's
// list); NHWC only (the op has no data_format attr).
//
// The op streams (~0.17 FLOP/byte); a pixel sums, in float64, the quotients
// of the 1-3 cells that cover it, and float64 division is what bounds it:
// divide_by_reciprocal (float32) multiplies by 1 / cell size split in two,
// the same bits (the generator says why); stage_quotients divides each
// out_backprop element once per image (1) or per task (2, the scratch stays
// in L2) instead of once per covering pixel.
// CPU: register tiles of (vector_width * vectors_per_tile) channels x
//   tile_width pixels of one row in float64 vectors; tasks of rows_per_task
//   rows run in parallel.
// CUDA: one thread per (channel, pixel), blocks of threads_channels x
//   threads_width x threads_height; stage_quotients = 1 computes the
//   quotients in a kernel of their own first.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
#define GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CPU_KNOBS(KNOB, SHARED)                                                      \
    KNOB(vector_width, (2, 4, 8, 16, 32), 8, "channels per vector (the float64 sums: 8 lanes = one AVX-512 register)") \
    KNOB(vectors_per_tile, (1, 2, 4), 2, "vectors per register tile along the channels")                               \
    KNOB(tile_width, (1, 2, 4), 1, "pixels of a row per register tile")                                                \
    KNOB(rows_per_task, (1, 2, 4, 8, 16, 32, 64), 4, "input rows per parallel task", .values_since = 3)                \
    KNOB(stage_quotients, (0, 1, 2), 1,                                                                                \
         "1: divide each out_backprop element once per image, before its pixels; 2: the cell rows a task reads, "      \
         "at the start of the task (stays in L2)",                                                                     \
         .values_since = 3)                                                                                            \
    KNOB(divide_by_reciprocal, (narrow ? std::vector<int>{0, 1} : std::vector<int>{0}), 0,                             \
         "1: each term as value x (1 / cell size) in two parts, exact (same bits, no vector division; "                \
         "float32)",                                                                                                   \
         .since_version = 2)

#define GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CUDA_KNOBS(KNOB, SHARED)                             \
    KNOB(threads_channels, (8, 16, 32, 64, 128), 32, "threads along the channels (coalesced)") \
    KNOB(threads_width, (1, 2, 4, 8), 4, "threads along a row's pixels")                       \
    KNOB(threads_height, (1, 2, 4, 8), 2, "threads along the rows")                            \
    SHARED(stage_quotients, (0, 1), 0, "1: divide each out_backprop element once, in a kernel of its own")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(FractionalAvgPoolGradCpuKnobs, GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(FractionalAvgPoolGradCudaKnobs, GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CUDA_KNOBS);

namespace fractional_avg_pool_grad_space {

inline KnobSpace cpu_space(const Structure &s) {
    // The two-part reciprocal is exact for values of 24 significant bits:
    // float32 alone (int32 values have 31).
    const bool narrow = s.dtype == "float32";
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CPU_KNOBS);
    space.constraint =
        KnobSpace::typed<FractionalAvgPoolGradCpuKnobs>([](const FractionalAvgPoolGradCpuKnobs &k) -> std::string {
            // float64 accumulators: vector_width * 8 bytes each.
            const int registers_per_vector = std::max(1, k.vector_width * 8 / 64);
            const int accumulators = k.vectors_per_tile * k.tile_width * registers_per_vector;
            if (accumulators > 24)
                return "the register tile needs " + std::to_string(accumulators) +
                       " float64 vector registers (max 24, leaving room for the quotients)";
            return "";
        });
    // The tuner tries the reciprocal right after the defaults on every shape.
    if (narrow) {
        FractionalAvgPoolGradCpuKnobs reciprocal = FractionalAvgPoolGradCpuKnobs::from(space.defaults());
        reciprocal.divide_by_reciprocal = 1;
        space.add_seed(reciprocal.map());
    }
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_block_space<FractionalAvgPoolGradCudaKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CUDA_KNOBS), [](const FractionalAvgPoolGradCudaKnobs &k) {
            return k.threads_channels * k.threads_width * k.threads_height;
        });
}

}  // namespace fractional_avg_pool_grad_space

inline OpSchema fractional_avg_pool_grad_schema() {
    OpSchema op;
    op.name = "FractionalAvgPoolGrad";
    op.dtypes = {"float32", "float64", "int32", "int64"};
    op.data_formats = {"NHWC"};
    op.structure_params = PoolingStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    // 2: divide_by_reciprocal (CPU; 0 = the division of version 1).
    // 3: stage_quotients = 2 and rows_per_task 32, 64 (CPU): quotients staged per task.
    op.knob_space_version = 3;  // bump when a knob's meaning changes
    op.space = per_device(fractional_avg_pool_grad_space::cpu_space, fractional_avg_pool_grad_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include "Halide.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
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
    // True when every cell has fewer than 2^22 pixels: where the quotients are
    // computed by reciprocal (divide_by_reciprocal), the schedule specialises
    // on it; larger cells (images of 4M pixels and more) divide.
    Halide::Expr small_cells;
    // True when every cell of every search range covers its pixel (monotonic
    // sequences): the covering test can be dropped.
    Halide::Expr ranges_exact;
    // The longest row and column search ranges (kernel inputs): 1 x 1 for
    // generated sequences without overlap, 2 x 2 with.
    Halide::Expr max_row_cells, max_col_cells;
};

// apply() for FractionalAvgPoolGrad. Knob meanings and legal values: the tables above.
namespace fractional_avg_pool_grad_schedule {

using namespace Halide;

// Names shared by the full-tile and small-extent branches, so that producers
// can be computed at the same loop in both.
struct CpuLoops {
    Var channel_tile{"channel_tile"}, channel_lane{"channel_lane"}, lane_vector{"lane_vector"};
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
    // The tile's vectors unrolled: the float64 sums stay in registers up to
    // the conversion (a loop over them would read them back from the stack).
    stage.split(l.channel_lane, l.lane_vector, l.channel_lane, vector_width, TailStrategy::GuardWithIf)
        .vectorize(l.channel_lane)
        .unroll(l.lane_vector);
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
    if (device_of(target) == Device::cuda)
        return fractional_avg_pool_grad_schedule::apply_cuda(FractionalAvgPoolGradCudaKnobs::from(knobs), pipeline);
    fractional_avg_pool_grad_schedule::apply_cpu(FractionalAvgPoolGradCpuKnobs::from(knobs), pipeline);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
