// Schedules of FractionalAvgPool: the knob GeneratorParams and apply(), the
// only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// fractional_avg_pool_space.cpp.
#pragma once

#include "Halide.h"
#include "knob_space.h"

namespace gradtune {

// One GeneratorParam per knob of the CPU and CUDA spaces; a variant reads the
// knobs of its device's space.
struct FractionalAvgPoolKnobs {
    // CPU
    Halide::GeneratorParam<int> vector_width{"vector_width", 16};
    Halide::GeneratorParam<int> vectors_per_tile{"vectors_per_tile", 1};
    Halide::GeneratorParam<int> tile_width{"tile_width", 2};
    Halide::GeneratorParam<int> rows_per_task{"rows_per_task", 4};
    // CUDA
    Halide::GeneratorParam<int> threads_channels{"threads_channels", 32};
    Halide::GeneratorParam<int> threads_width{"threads_width", 4};
    Halide::GeneratorParam<int> threads_height{"threads_height", 2};

    std::map<std::string, int> values() const {
        return {
            {"vector_width", vector_width},    {"vectors_per_tile", vectors_per_tile}, {"tile_width", tile_width},
            {"rows_per_task", rows_per_task},  {"threads_channels", threads_channels}, {"threads_width", threads_width},
            {"threads_height", threads_height}};
    }
};

// The algorithm's Funcs and loop variables, as the generator built them.
struct FractionalAvgPoolPipeline {
    Halide::Func output;                   // out(d, c, r, n), type T
    Halide::Func sum{"sum"};               // T: 0, update += input over the cell's pixels
    Halide::RDom window;                   // (column within the cell, row within the cell)
    Halide::Var d, c, r, n;                // channel, cell column, cell row, batch
    Halide::Expr channels, width, height;  // extents of the output
};

void apply(const Knobs &knobs, const Structure &structure, FractionalAvgPoolPipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
