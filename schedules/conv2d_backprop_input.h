// Schedules of Conv2DBackpropInput: the knob GeneratorParams and apply(), the
// only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// conv2d_backprop_input_space.cpp.
#pragma once

#include "Halide.h"
#include "knob_space.h"

namespace gradtune {

// One GeneratorParam per knob of the CPU and CUDA spaces; a variant reads the
// knobs of its device's space.
struct Conv2DBackpropInputKnobs {
    // CPU
    Halide::GeneratorParam<int> algorithm{"algorithm", 0};
    Halide::GeneratorParam<int> tile_channels{"tile_channels", 1};
    Halide::GeneratorParam<int> vector_width{"vector_width", 16};
    Halide::GeneratorParam<int> vectors_per_tile{"vectors_per_tile", 2};
    Halide::GeneratorParam<int> tile_other{"tile_other", 4};
    Halide::GeneratorParam<int> tile_y{"tile_y", 1};
    Halide::GeneratorParam<int> rows_per_task{"rows_per_task", 2};
    Halide::GeneratorParam<int> channel_outer{"channel_outer", 0};
    Halide::GeneratorParam<int> channel_tasks{"channel_tasks", 0};
    Halide::GeneratorParam<int> channel_block{"channel_block", 0};
    Halide::GeneratorParam<int> channels_per_task{"channels_per_task", 0};
    Halide::GeneratorParam<int> images_per_task{"images_per_task", 1};
    Halide::GeneratorParam<int> input_per_task{"input_per_task", 0};
    Halide::GeneratorParam<int> tile_rows_per_task{"tile_rows_per_task", 0};
    Halide::GeneratorParam<int> unroll_reduction{"unroll_reduction", 1};
    Halide::GeneratorParam<int> unroll_taps{"unroll_taps", 0};
    Halide::GeneratorParam<int> pack_filter{"pack_filter", 1};
    Halide::GeneratorParam<int> stage_out_backprop{"stage_out_backprop", 1};
    Halide::GeneratorParam<int> vectorize_channels{"vectorize_channels", 1};
    // CUDA
    Halide::GeneratorParam<int> threads_inner{"threads_inner", 32};
    Halide::GeneratorParam<int> threads_other{"threads_other", 4};
    Halide::GeneratorParam<int> threads_y{"threads_y", 2};
    Halide::GeneratorParam<int> other_per_thread{"other_per_thread", 1};

    std::map<std::string, int> values() const {
        return {{"algorithm", algorithm},
                {"tile_channels", tile_channels},
                {"vector_width", vector_width},
                {"vectors_per_tile", vectors_per_tile},
                {"tile_other", tile_other},
                {"tile_y", tile_y},
                {"rows_per_task", rows_per_task},
                {"channel_outer", channel_outer},
                {"channel_tasks", channel_tasks},
                {"channel_block", channel_block},
                {"channels_per_task", channels_per_task},
                {"images_per_task", images_per_task},
                {"input_per_task", input_per_task},
                {"tile_rows_per_task", tile_rows_per_task},
                {"unroll_reduction", unroll_reduction},
                {"unroll_taps", unroll_taps},
                {"pack_filter", pack_filter},
                {"stage_out_backprop", stage_out_backprop},
                {"vectorize_channels", vectorize_channels},
                {"threads_inner", threads_inner},
                {"threads_other", threads_other},
                {"threads_y", threads_y},
                {"other_per_thread", other_per_thread}};
    }
};

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DBackpropInputPipeline {
    Halide::Func output;                                // dIn(c, x, y, n), type T
    Halide::Func accumulator{"accumulator"};           // (c, x, y, n): pure 0, update += over taps
    Halide::Func out_backprop{"out_backprop_padded"};  // (o, ow, oh, n), zero outside rows and columns
    Halide::Func filter_packed{"filter_packed"};       // (c, o, fw, fh): filter[fh, fw, c - g*Cg, g*Og + o], group g of c
    Halide::Func filter;                               // (o, ci, fw, fh): the filter input itself
    // Direct: (o within the group, tap along x, tap along y). Dot: (lane,
    // vector, tap along x, tap along y) over the whole vectors of the output
    // channels, o = vector * vector_width + lane, and `tail` (o, tap along
    // x, tap along y) over the rest (empty where vector_width divides Og).
    // Winograd: (o) over the group's output channels.
    Halide::RDom taps, tail;
    // Winograd F(2x2, 3x3) (algorithm 2; generators/conv2d_backprop_input_generator.cpp).
    Halide::Func winograd_filter{"winograd_filter"};      // U(c, o, xi, nu): G g G^T
    Halide::Func winograd_input{"winograd_input"};        // V(o, t, xi, nu): B^T d B of tile t
    Halide::Func winograd_products{"winograd_products"};  // M(c, t, xi, nu): pure 0, update += U * V over o
    Halide::Func winograd_output{"winograd_output"};      // (c, i, j, t): A^T M A, position (i, j) of tile t
    Halide::Var t{"t"}, xi{"xi"}, nu{"nu"}, i{"i"}, j{"j"};
    Halide::Var c{"c"}, x{"x"}, y{"y"}, n{"n"};
    Halide::Var o{"o"}, fw{"fw"}, fh{"fh"};
    Halide::Expr channels, width, height;      // extents of the output
    Halide::Expr groups;                       // G (a constant in variants that fix it)
    Halide::Expr stride_height, stride_width;  // the call's strides (constants in variants that fix them)
};

void apply(const Knobs &knobs, const Structure &structure, Conv2DBackpropInputPipeline &pipeline,
           const Halide::Target &target);

}  // namespace gradtune
