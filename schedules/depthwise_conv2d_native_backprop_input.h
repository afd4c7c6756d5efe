// Schedules of DepthwiseConv2dNativeBackpropInput: the knob GeneratorParams
// and apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in depthwise_conv2d_native_backprop_input_space.h.
#pragma once

#include "Halide.h"
#include "depthwise_conv2d_native_backprop_input_space.h"
#include "direct_tiles.h"
#include "halide_knobs.h"
#include "tap_phases.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_backprop_input_space.h).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeBackpropInputKnobs,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_INPUT_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct DepthwiseConv2dNativeBackpropInputPipeline {
    Halide::Func output;                               // dIn(c, x, y, n), type T
    Halide::Func accumulator{"accumulator"};           // pure 0, update: += over taps
    Halide::Func out_backprop{"out_backprop_padded"};  // zero outside the rows/columns of out_backprop
    Halide::RDom taps;                                 // (m, tap along x, tap along y)
    Halide::Var c, x, y, n;
    Halide::Expr channels, width, height;  // extents of the output
    Halide::Expr depth_multiplier;         // M (constant in variants that fix it)

    DirectOutput direct() const { return {output, accumulator, c, x, y, n, channels, width, height}; }
};

// apply() for DepthwiseConv2dNativeBackpropInput. Knob meanings and legal
// values: depthwise_conv2d_native_backprop_input_space.h.
namespace depthwise_conv2d_native_backprop_input_schedule {

using namespace Halide;

inline void apply_cpu(const DepthwiseConv2dNativeBackpropInputCpuKnobs &k, const Structure &s,
                      DepthwiseConv2dNativeBackpropInputPipeline &p) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    const Var inner = o.inner(nhwc), other = o.other(nhwc);
    const int vector = k.vector_width, rows = k.tile_y;
    // A run-time depth multiplier gets a dense M == 1 path (strided loads
    // otherwise).
    const CpuLoops l = tile_direct_cpu(o, nhwc, k, is_const(p.depth_multiplier) ? Expr() : p.depth_multiplier == 1);
    // The reduction: register tile innermost, one tap phase of its columns
    // and rows at a time for a fixed stride (uniform tap predicates), then
    // the depth multiplier and the taps.
    RVar m = p.taps.x, col_tap = p.taps.y, row_tap = p.taps.z;
    Stage update = p.accumulator.update();
    const int stride = fixed.stride;
    std::vector<VarOrRVar> tile = {inner}, phases;
    if (!(nhwc && split_phases(update, p.x, stride, "x", &tile, &phases))) tile.push_back(other);
    if (rows == 1) {
        phases.push_back(p.y);  // a single row: keep it outside the reduction
    } else if (!split_phases(update, p.y, stride, "y", &tile, &phases)) {
        tile.push_back(p.y);
    }
    std::vector<VarOrRVar> order = tile;
    order.insert(order.end(), {m, col_tap, row_tap});
    order.insert(order.end(), phases.begin(), phases.end());
    update.reorder(order).vectorize(inner, vector, TailStrategy::GuardWithIf);
    for (const VarOrRVar &v : tile) update.unroll(v.var);
    // Unrolled phases keep the tile's accumulator indices constant (in
    // registers) across the phase loop.
    for (const VarOrRVar &v : phases) update.unroll(v.var);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);

    if (k.stage_out_backprop) stage_per_task(p.out_backprop, o, l, nhwc, vector);
}

inline void apply_cuda(const DepthwiseConv2dNativeBackpropInputCudaKnobs &k, const Structure &s,
                       DepthwiseConv2dNativeBackpropInputPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    tile_direct_cuda(o, nhwc, k);
    p.accumulator.update().unroll(o.other(nhwc));
}

}  // namespace depthwise_conv2d_native_backprop_input_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativeBackpropInputPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace depthwise_conv2d_native_backprop_input_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(DepthwiseConv2dNativeBackpropInputCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(DepthwiseConv2dNativeBackpropInputCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
