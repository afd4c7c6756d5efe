// Schedule space of FractionalAvgPoolGrad (Halide-free; apply() is in
// fractional_avg_pool_grad.h).
//
// Structural parameter: overlapping (TF's bool attr) as 0 = from the call at
// run time, 1 = false, 2 = true. T is float32, float64, int32 or int64 (TF's
// list); NHWC only (the op has no data_format attr).
//
// The op is pure streaming (~0.17 FLOP/byte): read out_backprop, write dIn,
// a few float64 adds and one float64 division per term. A float64 vector
// division takes 16 cycles per 8 lanes on this project's CPUs, enough to
// bound the op below the DRAM roofline: divide_by_reciprocal = 1 (float32,
// whose values have 24 significant bits) computes each term as
// value x (1 / cell size) plus one exact correction step, the same bits as
// the division (generators/fractional_avg_pool_grad_generator.cpp says why). A pixel sums the
// quotients of the 1-3 cells that cover it (generated sequences), in
// float64 whatever T is.
// CPU: register tiles of (vector_width * vectors_per_tile) channels x
//   tile_width pixels of one row, accumulated in float64 vectors; tasks of
//   rows_per_task rows run in parallel (with the batch, unless the quotients
//   are staged per image). stage_quotients = 1 divides each out_backprop
//   element once per image (float64 scratch of N=1 x OH x OW x C) instead of
//   once per covering pixel: fewer divisions, one more pass over memory
//   (the scratch outgrows L2 on large images, and each pixel reads 1-4 of its
//   values back from L3). stage_quotients = 2 divides, at the start of each
//   task, the cell rows its input rows read (the band clamp of the generator
//   lets bounds inference see them): the scratch stays in L2, at the price of
//   dividing twice the cell rows two tasks share. Search ranges of at most
//   2 x 2 cells (generated sequences) run unrolled, without a branch per cell.
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
         "1: each term as value x (1 / cell size) plus an exact correction (same bits, no vector division; "           \
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
    // The correction is exact for values of at most 31 significant bits
    // (float32 and int32); offered for float32, the dtype the suite tunes.
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
        space.algorithm_seeds.push_back(reciprocal.map());
    }
    return space;
}

inline KnobSpace cuda_space(const Structure &) {
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_FRACTIONAL_AVG_POOL_GRAD_CUDA_KNOBS);
    space.constraint =
        KnobSpace::typed<FractionalAvgPoolGradCudaKnobs>([](const FractionalAvgPoolGradCudaKnobs &k) -> std::string {
            const int threads = k.threads_channels * k.threads_width * k.threads_height;
            if (std::string why = check_threads_per_block(threads); !why.empty()) return why;
            return "";
        });
    return space;
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
