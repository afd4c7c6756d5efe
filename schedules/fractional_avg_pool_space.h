// Schedule space of FractionalAvgPool (Halide-free; apply() is in
// fractional_avg_pool.h). TF has only a CPU kernel; gradtune compiles CUDA
// variants too (every op runs on every device, DESIGN.md).
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
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_FRACTIONAL_AVG_POOL_CUDA_KNOBS);
    space.constraint =
        KnobSpace::typed<FractionalAvgPoolCudaKnobs>([](const FractionalAvgPoolCudaKnobs &k) -> std::string {
            const int threads = k.threads_channels * k.threads_width * k.threads_height;
            if (std::string why = check_threads_per_block(threads); !why.empty()) return why;
            return "";
        });
    return space;
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
