// Schedules of Conv2D (the forward convolution): the knob GeneratorParams and
// apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in conv2d_space.cpp.
#pragma once

#include "Halide.h"
#include "knob_space.h"

namespace gradtune {

// One GeneratorParam per knob of the CPU and CUDA spaces; a variant reads the
// knobs of its device's space.
struct Conv2DKnobs {
    // CPU
    Halide::GeneratorParam<int> vector_width{"vector_width", 16};
    Halide::GeneratorParam<int> vectors_per_tile{"vectors_per_tile", 2};
    Halide::GeneratorParam<int> tile_other{"tile_other", 6};
    Halide::GeneratorParam<int> tile_y{"tile_y", 1};
    Halide::GeneratorParam<int> rows_per_task{"rows_per_task", 2};
    Halide::GeneratorParam<int> taps_inner{"taps_inner", 0};
    Halide::GeneratorParam<int> unroll_taps{"unroll_taps", 0};
    Halide::GeneratorParam<int> channel_outer{"channel_outer", 0};
    Halide::GeneratorParam<int> stage_input{"stage_input", 0};
    // CUDA
    Halide::GeneratorParam<int> threads_inner{"threads_inner", 32};
    Halide::GeneratorParam<int> threads_other{"threads_other", 4};
    Halide::GeneratorParam<int> threads_y{"threads_y", 2};
    Halide::GeneratorParam<int> other_per_thread{"other_per_thread", 2};

    std::map<std::string, int> values() const {
        return {{"vector_width", vector_width}, {"vectors_per_tile", vectors_per_tile},
                {"tile_other", tile_other}, {"tile_y", tile_y}, {"rows_per_task", rows_per_task},
                {"taps_inner", taps_inner}, {"unroll_taps", unroll_taps},
                {"channel_outer", channel_outer}, {"stage_input", stage_input},
                {"threads_inner", threads_inner}, {"threads_other", threads_other},
                {"threads_y", threads_y}, {"other_per_thread", other_per_thread}};
    }
};

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
