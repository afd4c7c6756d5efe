// Schedules of DepthwiseConv2dNative (the forward depthwise convolution): the
// knob GeneratorParams and apply(), the only place where this op's loops are
// split, vectorised, parallelised or mapped to GPU threads. The space itself
// (domains, defaults, legality) is in depthwise_conv2d_native_space.h.
#pragma once

#include "Halide.h"
#include "depthwise_conv2d_native_space.h"
#include "direct_tiles.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (depthwise_conv2d_native_space.h).
GRADTUNE_GENERATOR_KNOBS(DepthwiseConv2dNativeKnobs, GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CPU_KNOBS,
                         GRADTUNE_DEPTHWISE_CONV2D_NATIVE_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct DepthwiseConv2dNativePipeline {
    Halide::Func output;                      // out(k, x, y, n), k = c*M + m, type T
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over the filter taps
    Halide::Func input{"input_padded"};       // zero outside the rows/columns of the input
    Halide::RDom taps;                        // (tap along x, tap along y)
    Halide::Var k, x, y, n;
    Halide::Expr channels, width, height;  // extents of the output (channels = C*M)
    Halide::Expr depth_multiplier;         // M (constant in variants that fix it)

    DirectOutput direct() const { return {output, accumulator, k, x, y, n, channels, width, height}; }
};

// apply() for DepthwiseConv2dNative. Knob meanings and legal values:
// depthwise_conv2d_native_space.h.
namespace depthwise_conv2d_native_schedule {

using namespace Halide;

inline void apply_cpu(const DepthwiseConv2dNativeCpuKnobs &k, const Structure &s, DepthwiseConv2dNativePipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    // A run-time depth multiplier gets an M == 1 path: there the input
    // channel k / M is k itself and NHWC loads are dense (gathers otherwise).
    const CpuLoops l = tile_direct_cpu(o, nhwc, k, is_const(p.depth_multiplier) ? Expr() : p.depth_multiplier == 1);
    const Var inner = o.inner(nhwc), other = o.other(nhwc);
    RVar col_tap = p.taps.x, row_tap = p.taps.y;
    Stage update = p.accumulator.update();
    update.reorder(inner, other, p.y, col_tap, row_tap)
        .vectorize(inner, k.vector_width, TailStrategy::GuardWithIf)
        .unroll(inner)
        .unroll(other)
        .unroll(p.y);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);
    if (k.stage_input) stage_per_task(p.input, o, l, nhwc, k.vector_width);
}

inline void apply_cuda(const DepthwiseConv2dNativeCudaKnobs &k, const Structure &s, DepthwiseConv2dNativePipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    tile_direct_cuda(o, nhwc, k);
    p.accumulator.update().unroll(o.other(nhwc));
}

}  // namespace depthwise_conv2d_native_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativePipeline &pipeline,
                  const Halide::Target &target) {
    using namespace depthwise_conv2d_native_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(DepthwiseConv2dNativeCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(DepthwiseConv2dNativeCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
