// Schedules of FractionalAvgPoolGrad: the knob GeneratorParams and apply(),
// the only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// fractional_avg_pool_grad_space.cpp.
#pragma once

#include "Halide.h"
#include "knob_space.h"

namespace gradtune {

// One GeneratorParam per knob of the CPU and CUDA spaces; a variant reads the
// knobs of its device's space.
struct FractionalAvgPoolGradKnobs {
    // CPU
    Halide::GeneratorParam<int> vector_width{"vector_width", 8};
    Halide::GeneratorParam<int> vectors_per_tile{"vectors_per_tile", 2};
    Halide::GeneratorParam<int> tile_width{"tile_width", 1};
    Halide::GeneratorParam<int> rows_per_task{"rows_per_task", 4};
    Halide::GeneratorParam<int> divide_by_reciprocal{"divide_by_reciprocal", 0};
    // CPU and CUDA
    Halide::GeneratorParam<int> stage_quotients{"stage_quotients", 1};
    // CUDA
    Halide::GeneratorParam<int> threads_channels{"threads_channels", 32};
    Halide::GeneratorParam<int> threads_width{"threads_width", 4};
    Halide::GeneratorParam<int> threads_height{"threads_height", 2};

    std::map<std::string, int> values() const {
        return {{"vector_width", vector_width},       {"vectors_per_tile", vectors_per_tile},
                {"tile_width", tile_width},           {"rows_per_task", rows_per_task},
                {"divide_by_reciprocal", divide_by_reciprocal},
                {"stage_quotients", stage_quotients}, {"threads_channels", threads_channels},
                {"threads_width", threads_width},     {"threads_height", threads_height}};
    }
};

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
};

void apply(const Knobs &knobs, const Structure &structure, FractionalAvgPoolGradPipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
