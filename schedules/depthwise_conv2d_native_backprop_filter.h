// Schedules of DepthwiseConv2dNativeBackpropFilter: the knob GeneratorParams
// and apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in depthwise_conv2d_native_backprop_filter_space.cpp.
#pragma once

#include "Halide.h"
#include "knob_space.h"

namespace gradtune {

// One GeneratorParam per knob of the CPU and CUDA spaces; a variant reads the
// knobs of its device's space. `partitions`, `tap_tile_x` and `tap_tile_y`
// exist in both spaces, with per-device domains.
struct DepthwiseConv2dNativeBackpropFilterKnobs {
    // CPU
    Halide::GeneratorParam<int> vector_width{"vector_width", 16};
    Halide::GeneratorParam<int> vectors_per_tile{"vectors_per_tile", 2};
    Halide::GeneratorParam<int> channels_per_tile{"channels_per_tile", 1};
    Halide::GeneratorParam<int> channels_inside_reduction{"channels_inside_reduction", 0};
    Halide::GeneratorParam<int> unroll_columns{"unroll_columns", 1};
    Halide::GeneratorParam<int> stage_input{"stage_input", 0};
    // CPU and CUDA
    Halide::GeneratorParam<int> partitions{"partitions", 8};
    Halide::GeneratorParam<int> tap_tile_x{"tap_tile_x", 3};
    Halide::GeneratorParam<int> tap_tile_y{"tap_tile_y", 3};
    // CUDA
    Halide::GeneratorParam<int> threads_unit{"threads_unit", 32};
    Halide::GeneratorParam<int> threads_other{"threads_other", 4};

    std::map<std::string, int> values() const {
        return {{"vector_width", vector_width},
                {"vectors_per_tile", vectors_per_tile},
                {"channels_per_tile", channels_per_tile},
                {"channels_inside_reduction", channels_inside_reduction},
                {"unroll_columns", unroll_columns},
                {"stage_input", stage_input},
                {"partitions", partitions},
                {"tap_tile_x", tap_tile_x},
                {"tap_tile_y", tap_tile_y},
                {"threads_unit", threads_unit},
                {"threads_other", threads_other}};
    }
};

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
