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
};

void apply(const Knobs &knobs, const Structure &structure, FractionalAvgPoolGradPipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
