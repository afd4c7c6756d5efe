// Schedules of Conv2D (the forward convolution): the knob GeneratorParams and
// apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in conv2d_space.h.
#pragma once

#include "Halide.h"
#include "conv2d_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (conv2d_space.h).
GRADTUNE_GENERATOR_KNOBS(Conv2DKnobs, GRADTUNE_CONV2D_CPU_KNOBS, GRADTUNE_CONV2D_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DPipeline {
    Halide::Func output;                       // out(o, x, y, n), type T
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over (ci, fw, fh)
    Halide::Func input{"input_padded"};       // zero outside the rows/columns of the input
    Halide::RDom reduction;                    // (input channel of the group, tap along x, tap along y)
    Halide::Var o, x, y, n;
    Halide::Expr out_channels, width, height;  // extents of the output
    Halide::Expr single_group;  // bool: filter depth == input depth (the common, ungrouped case)
};

void apply(const Knobs &knobs, const Structure &structure, Conv2DPipeline &pipeline, const Halide::Target &target);

}  // namespace gradtune
