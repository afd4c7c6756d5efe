// Schedules of DepthwiseConv2dNative (the forward depthwise convolution): the
// knob GeneratorParams and apply(), the only place where this op's loops are
// split, vectorised, parallelised or mapped to GPU threads. The space itself
// (domains, defaults, legality) is in depthwise_conv2d_native_space.h.
#pragma once

#include "Halide.h"
#include "depthwise_conv2d_native_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_space.h).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeKnobs, GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct DepthwiseConv2dNativePipeline {
    Halide::Func output;                       // out(k, x, y, n), k = c*M + m, type T
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over the filter taps
    Halide::Func input{"input_padded"};       // zero outside the rows/columns of the input
    Halide::RDom taps;                         // (tap along x, tap along y)
    Halide::Var k, x, y, n;
    Halide::Expr channels, width, height;  // extents of the output (channels = C*M)
    Halide::Expr depth_multiplier;         // M (constant in variants that fix it)
};

void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativePipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
