// Schedule of FractionalAvgPool: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// TF has only a CPU kernel; gradtune compiles CUDA variants too (every op
// runs on every device, docs/design.md section 1).
//
// Structural parameter: overlapping (TF's bool attr) as 0 = from the call at
// run time, 1 = false, 2 = true. T is float32, float64, int32 or int64 (TF's
// list); NHWC only (the op has no data_format attr). pseudo_random, seeds and
// the pooling ratio only shape the sequences, which the runtime draws.
//
// The pooling is streaming: each input pixel is read by 1 cell (1-4 with
// overlapping), summed in T.
// CPU: register tiles of (vector_width * vectors_per_tile) channels x
//   tile_width cells of one row; tasks of rows_per_task cell rows run in
//   parallel with the batch.
// CUDA: one thread per (channel, cell), blocks of threads_channels x
//   threads_width x threads_height.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
#define GRADTUNE_FRACTIONAL_AVG_POOL_CPU_KNOBS(KNOB, SHARED)                             \
    KNOB(vector_width, (2, 4, 8, 16, 32), native, "channels per vector")                 \
    KNOB(vectors_per_tile, (1, 2, 4), 1, "vectors per register tile along the channels") \
    KNOB(tile_width, (1, 2, 4), 2, "cells of a row per register tile")                   \
    KNOB(rows_per_task, (1, 2, 4, 8, 16), 4, "cell rows per parallel task")

#define GRADTUNE_FRACTIONAL_AVG_POOL_CUDA_KNOBS(KNOB, SHARED)                                  \
    KNOB(threads_channels, (8, 16, 32, 64, 128), 32, "threads along the channels (coalesced)") \
    KNOB(threads_width, (1, 2, 4, 8), 4, "threads along a row's cells")                        \
    KNOB(threads_height, (1, 2, 4, 8), 2, "threads along the cell rows")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(FractionalAvgPoolCpuKnobs, GRADTUNE_FRACTIONAL_AVG_POOL_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(FractionalAvgPoolCudaKnobs, GRADTUNE_FRACTIONAL_AVG_POOL_CUDA_KNOBS);

namespace fractional_avg_pool_space {

inline KnobSpace cpu_space(const Structure &s) {
    const int bytes = dtype_bytes(s.dtype);
    const int native = 64 / bytes;  // one AVX-512 register
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_FRACTIONAL_AVG_POOL_CPU_KNOBS);
    space.constraint =
        KnobSpace::typed<FractionalAvgPoolCpuKnobs>([=](const FractionalAvgPoolCpuKnobs &k) -> std::string {
            const int vector_bytes = k.vector_width * bytes;
            if (vector_bytes < 8 || vector_bytes > 256)
                return "a vector of " + std::to_string(vector_bytes) + " bytes (legal: 8..256)";
            const int accumulators = k.vectors_per_tile * k.tile_width * std::max(1, vector_bytes / 64);
            if (accumulators > 24)
                return "the register tile needs " + std::to_string(accumulators) + " vector registers (max 24)";
            return "";
        });
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_block_space<FractionalAvgPoolCudaKnobs>(
        GRADTUNE_KNOB_LIST(GRADTUNE_FRACTIONAL_AVG_POOL_CUDA_KNOBS),
        [](const FractionalAvgPoolCudaKnobs &k) { return k.threads_channels * k.threads_width * k.threads_height; });
}

}  // namespace fractional_avg_pool_space

inline OpSchema fractional_avg_pool_schema() {
    OpSchema op;
    op.name = "FractionalAvgPool";
    op.dtypes = {"float32", "float64", "int32", "int64"};
    op.data_formats = {"NHWC"};
    op.structure_params = PoolingStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    op.knob_space_version = 1;  // bump when a knob's meaning changes
    op.space = per_device(fractional_avg_pool_space::cpu_space, fractional_avg_pool_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include "Halide.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
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

// apply() for FractionalAvgPool. Knob meanings and legal values: the tables above.
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
    if (device_of(target) == Device::cuda)
        return fractional_avg_pool_schedule::apply_cuda(FractionalAvgPoolCudaKnobs::from(knobs), pipeline);
    fractional_avg_pool_schedule::apply_cpu(FractionalAvgPoolCpuKnobs::from(knobs), pipeline);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
