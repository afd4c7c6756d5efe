// Schedules of Conv2DBackpropFilter: the knob GeneratorParams and apply(), the
// only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// conv2d_backprop_filter_space.h.
#pragma once

#include "Halide.h"
#include "conv2d_backprop_filter_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (conv2d_backprop_filter_space.h).
GRADTUNE_GENERATOR_KNOBS(Conv2DBackpropFilterKnobs, GRADTUNE_CONV2D_BACKPROP_FILTER_CPU_KNOBS,
                         GRADTUNE_CONV2D_BACKPROP_FILTER_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DBackpropFilterPipeline {
    Halide::Func output;                          // dF(o, ci, fw, fh), type T
    Halide::Func accumulator{"accumulator"};     // (o, ci, fw, fh): pure 0, update += over positions
    Halide::Func input{"input_padded"};           // (c, w, h, n), zero outside the input
    Halide::Func out_backprop{"out_backprop_in"}; // (o, ow, oh, n), out_backprop as is
    Halide::RDom positions;                       // (ow, oh, n): every out_backprop position
    Halide::Var o{"o"}, ci{"ci"}, fw{"fw"}, fh{"fh"};
    Halide::Expr out_depth, group_in_depth, filter_width;  // Cout, Cg, FW (constants where fixed)
    Halide::Expr groups;                                    // G (a constant in variants that fix it)
};

void apply(const Knobs &knobs, const Structure &structure, Conv2DBackpropFilterPipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
