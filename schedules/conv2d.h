// Schedules of Conv2D (the forward convolution): the knob GeneratorParams and
// apply(), the only place where this op's loops are split, vectorised,
// parallelised or mapped to GPU threads. The space itself (domains, defaults,
// legality) is in conv2d_space.h.
#pragma once

#include "Halide.h"
#include "conv2d_space.h"
#include "direct_tiles.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (conv2d_space.h).
GRADTUNE_GENERATOR_KNOBS(Conv2DKnobs, GRADTUNE_CONV2D_CPU_KNOBS, GRADTUNE_CONV2D_CUDA_KNOBS);

// The algorithm's Funcs and loop variables, as the generator built them.
struct Conv2DPipeline {
    Halide::Func output;                      // out(o, x, y, n), type T
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over (ci, fw, fh)
    Halide::Func input{"input_padded"};       // zero outside the rows/columns of the input
    Halide::RDom reduction;                   // (input channel of the group, tap along x, tap along y)
    Halide::Var o, x, y, n;
    Halide::Expr out_channels, width, height;  // extents of the output
    Halide::Expr single_group;                 // bool: filter depth == input depth (the common, ungrouped case)

    DirectOutput direct() const { return {output, accumulator, o, x, y, n, out_channels, width, height}; }
};

// apply() for Conv2D. Knob meanings and legal values: conv2d_space.h.
namespace conv2d_schedule {

using namespace Halide;

inline void apply_cpu(const Conv2DCpuKnobs &k, const Structure &s, Conv2DPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    const Var inner = o.inner(nhwc), other = o.other(nhwc);
    // The ungrouped case gets its own branch: there every lane of an
    // output-channel vector reads the same input channel (a broadcast), while
    // with groups the lanes may straddle two groups (a gather).
    const CpuLoops l = tile_direct_cpu(o, nhwc, k, is_const(p.single_group) ? Expr() : p.single_group);
    RVar channel = p.reduction.x, col_tap = p.reduction.y, row_tap = p.reduction.z;
    Stage update = p.accumulator.update();
    if (k.taps_inner) {
        update.reorder(inner, other, p.y, col_tap, row_tap, channel);
    } else {
        update.reorder(inner, other, p.y, channel, col_tap, row_tap);
    }
    update.vectorize(inner, k.vector_width, TailStrategy::GuardWithIf).unroll(inner).unroll(other).unroll(p.y);
    if (k.unroll_taps) update.unroll(col_tap).unroll(row_tap);

    if (k.stage_input) stage_per_task(p.input, o, l, nhwc, k.vector_width);
}

inline void apply_cuda(const Conv2DCudaKnobs &k, const Structure &s, Conv2DPipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const DirectOutput o = p.direct();
    tile_direct_cuda(o, nhwc, k);
    p.accumulator.update().reorder(o.other(nhwc), p.reduction.x, p.reduction.y, p.reduction.z).unroll(o.other(nhwc));
}

}  // namespace conv2d_schedule

inline void apply(const Knobs &knobs, const Structure &structure, Conv2DPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace conv2d_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(Conv2DCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(Conv2DCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
