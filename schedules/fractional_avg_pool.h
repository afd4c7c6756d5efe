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

void apply(const Knobs &knobs, const Structure &structure, FractionalAvgPoolPipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
