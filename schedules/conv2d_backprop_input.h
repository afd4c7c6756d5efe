// Schedules of Conv2DBackpropInput: the knob GeneratorParams and apply(), the
// only place where this op's loops are split, vectorised, parallelised or
// mapped to GPU threads. The space itself (domains, defaults, legality) is in
// conv2d_backprop_input_space.h.
#pragma once

#include "Halide.h"
#include "conv2d_backprop_input_space.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (conv2d_backprop_input_space.h).
GRADTUNE_GENERATOR_KNOBS(Conv2DBackpropInputKnobs, GRADTUNE_CONV2D_BACKPROP_INPUT_CPU_KNOBS,
                         GRADTUNE_CONV2D_BACKPROP_INPUT_CUDA_KNOBS);

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
