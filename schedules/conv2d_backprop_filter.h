// Schedules of Conv2DBackpropFilter: the knob GeneratorParams and apply(), the
// only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// conv2d_backprop_filter_space.cpp.
#pragma once

#include "Halide.h"
#include "knob_space.h"

namespace gradtune {

// One GeneratorParam per knob of the CPU and CUDA spaces; a variant reads the
// knobs of its device's space.
struct Conv2DBackpropFilterKnobs {
    // CPU
    Halide::GeneratorParam<int> algorithm{"algorithm", 0};
    Halide::GeneratorParam<int> ci_tasks{"ci_tasks", 1};
    Halide::GeneratorParam<int> o_tiles_per_task{"o_tiles_per_task", 1};
    Halide::GeneratorParam<int> row_tasks{"row_tasks", 1};
    Halide::GeneratorParam<int> reduction_tasks{"reduction_tasks", 1};
    Halide::GeneratorParam<int> vector_width{"vector_width", 16};
    Halide::GeneratorParam<int> vectors_per_tile{"vectors_per_tile", 2};
    Halide::GeneratorParam<int> tile_ci{"tile_ci", 4};
    Halide::GeneratorParam<int> tile_fw{"tile_fw", 1};
    Halide::GeneratorParam<int> ci_outer{"ci_outer", 0};
    Halide::GeneratorParam<int> unroll_reduction{"unroll_reduction", 1};
    Halide::GeneratorParam<int> stage_input{"stage_input", 1};
    Halide::GeneratorParam<int> stage_out_backprop{"stage_out_backprop", 1};
    // CPU and CUDA: the reduction blocks
    Halide::GeneratorParam<int> rows_per_block{"rows_per_block", 8};
    Halide::GeneratorParam<int> images_per_block{"images_per_block", 2};
    // CUDA
    Halide::GeneratorParam<int> threads_inner{"threads_inner", 32};
    Halide::GeneratorParam<int> threads_other{"threads_other", 8};

    std::map<std::string, int> values() const {
        return {{"algorithm", algorithm},
                {"ci_tasks", ci_tasks},
                {"o_tiles_per_task", o_tiles_per_task},
                {"row_tasks", row_tasks},
                {"reduction_tasks", reduction_tasks},
                {"vector_width", vector_width},
                {"vectors_per_tile", vectors_per_tile},
                {"tile_ci", tile_ci},
                {"tile_fw", tile_fw},
                {"ci_outer", ci_outer},
                {"unroll_reduction", unroll_reduction},
                {"stage_input", stage_input},
                {"stage_out_backprop", stage_out_backprop},
                {"rows_per_block", rows_per_block},
                {"images_per_block", images_per_block},
                {"threads_inner", threads_inner},
                {"threads_other", threads_other}};
    }
};

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
