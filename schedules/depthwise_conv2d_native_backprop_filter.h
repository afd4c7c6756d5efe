// Schedules of DepthwiseConv2dNativeBackpropFilter: the knob GeneratorParams
// and apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in depthwise_conv2d_native_backprop_filter_space.h.
#pragma once

#include "Halide.h"
#include "depthwise_conv2d_native_backprop_filter_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_backprop_filter_space.h).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeBackpropFilterKnobs,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
// The filter gradient is tiny (FH*FW*C*M) and its reduction huge (N*OH*OW
// per element): apply() splits the reduction rows into a fixed number of
// partitions (rfactor), never into a thread-count dependent number, so that
// every call gives the same bits whatever the thread count.
struct DepthwiseConv2dNativeBackpropFilterPipeline {
    Halide::Func output;                          // dF(m, c, x, y), type T; x = fw, y = fh
    Halide::Func accumulator{"accumulator"};      // pure 0, update: += over `rows`
    Halide::Func input{"input_padded"};           // (c, w, h, n), zero outside the rows/columns of input
    Halide::RDom rows;  // (ow, oh, n): every out_backprop position, ow innermost
    Halide::Var m{"m"}, c{"c"}, x{"x"}, y{"y"};
    Halide::Expr channels, filter_width, filter_height;  // extents of the output
    Halide::Expr depth_multiplier;                       // M (constant in variants that fix it)
    Halide::Expr out_cols, out_rows, batch;              // extents of `rows`
};

void apply(const Knobs &knobs, const Structure &structure,
           DepthwiseConv2dNativeBackpropFilterPipeline &pipeline, const Halide::Target &target);

}  // namespace gradtune
