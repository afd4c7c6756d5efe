// Schedules of DepthwiseConv2dNativeBackpropInput: the knob GeneratorParams
// and apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in depthwise_conv2d_native_backprop_input_space.h.
#pragma once

#include "Halide.h"
#include "depthwise_conv2d_native_backprop_input_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_backprop_input_space.h).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeBackpropInputKnobs,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct DepthwiseConv2dNativeBackpropInputPipeline {
    Halide::Func output;                                 // dIn(c, x, y, n), type T
    Halide::Func accumulator{"accumulator"};            // pure 0, update: += over taps
    Halide::Func out_backprop{"out_backprop_padded"};   // zero outside the rows/columns of out_backprop
    Halide::RDom taps;          // (m, tap along x, tap along y)
    Halide::Var c, x, y, n;
    Halide::Expr channels, width, height;  // extents of the output
    Halide::Expr depth_multiplier;         // M (constant in variants that fix it)
};

void apply(const Knobs &knobs, const Structure &structure,
           DepthwiseConv2dNativeBackpropInputPipeline &pipeline, const Halide::Target &target);

}  // namespace gradtune
