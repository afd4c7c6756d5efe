// Schedule of Conv2D: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// The forward convolution does FH*FW*C_in/groups multiply-adds per output
// element and is compute bound for all but the smallest channel counts, so
// the CPU space is a direct convolution with register blocking:
//   a register tile of (vector_width * vectors_per_tile) positions along the
//   unit-stride dimension (output channels for NHWC: filter rows are loaded
//   as vectors and each input value is broadcast; output columns for NCHW:
//   input rows are loaded as vectors and each filter value is broadcast)
//   x tile_other positions along the other dimension (columns for NHWC,
//   output channels for NCHW) x tile_y rows
// stays in vector registers for the whole reduction over (input channel,
// filter column, filter row); tasks of rows_per_task tile rows run in
// parallel. The tile must leave registers for the loaded vectors and the
// broadcast (see the constraint). taps_inner chooses the reduction order;
// stage_input copies a task's zero-padded input first, which removes the
// boundary selects from the inner loop.
// CUDA: one thread per (unit-stride position, other_per_thread positions of
// the other dimension, row), blocks of threads_inner x threads_other x threads_y.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
#define GRADTUNE_CONV2D_CPU_KNOBS(KNOB, SHARED)                                                            \
    KNOB(vector_width, (4, 8, 16, 32, 64), native, "lanes per vector along the unit-stride dimension")     \
    KNOB(vectors_per_tile, (1, 2, 3, 4), 2, "vectors per register tile along the unit-stride dimension")   \
    KNOB(tile_other, (1, 2, 3, 4, 6, 8, 12), 6,                                                            \
         "positions along the other tiled dimension (columns in NHWC, output channels in NCHW)")           \
    KNOB(tile_y, (1, 2), 1, "output rows per register tile")                                               \
    KNOB(rows_per_task, (1, 2, 4, 8, 16), 2, "tile rows per parallel task")                                \
    KNOB(taps_inner, (0, 1), 0, "1: filter taps innermost in the reduction (0: input channels innermost)") \
    KNOB(unroll_taps, (0, 1), 0, "fully unroll the filter taps (fixed filter size only)")                  \
    KNOB(channel_outer, (0, 1), 0, "1: loop over unit-stride tiles outside the other tiles of a task")     \
    KNOB(stage_input, (0, 1), 0, "1: copy the zero-padded input slice of a task first")

#define GRADTUNE_CONV2D_CUDA_KNOBS(KNOB, SHARED)                                                         \
    KNOB(threads_inner, (8, 16, 32, 64, 128), 32, "threads along the unit-stride dimension (coalesced)") \
    KNOB(threads_other, (1, 2, 4, 8), 4,                                                                 \
         "threads along the other dimension (columns in NHWC, output channels in NCHW)")                 \
    KNOB(threads_y, (1, 2, 4, 8), 2, "threads along rows")                                               \
    KNOB(other_per_thread, (1, 2, 4, 8), 2,                                                              \
         "positions along the other dimension computed by one thread (register reuse of loads)")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(Conv2DCpuKnobs, GRADTUNE_CONV2D_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(Conv2DCudaKnobs, GRADTUNE_CONV2D_CUDA_KNOBS);

namespace conv2d_space {

inline KnobSpace cpu_space(const Structure &s) {
    const Conv2DStructure fixed = Conv2DStructure::from(s);
    const int bytes = dtype_bytes(s.dtype);
    // 16-bit floats accumulate in float32: registers are counted in
    // accumulator lanes, and the default vector is one AVX-512 register of them.
    const int accumulator_bytes = gradtune::accumulator_bytes(s.dtype);
    const int native = 64 / accumulator_bytes;
    // The accumulators, plus one register per loaded vector of the tile and
    // one for the broadcast operand.
    const auto registers = [=](const Conv2DCpuKnobs &k) {
        const int registers_per_vector = std::max(1, k.vector_width * accumulator_bytes / 64);
        return (k.vectors_per_tile * k.tile_other * k.tile_y + k.vectors_per_tile) * registers_per_vector + 1;
    };
    return register_tile_space<Conv2DCpuKnobs>(GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_CPU_KNOBS), bytes, registers,
                                               fixed.filter_height, fixed.filter_width);
}

inline KnobSpace cuda_space(const Structure &) {
    return cuda_tile_block_space<Conv2DCudaKnobs>(GRADTUNE_KNOB_LIST(GRADTUNE_CONV2D_CUDA_KNOBS));
}

}  // namespace conv2d_space

inline OpSchema conv2d_schema() {
    OpSchema op;
    op.name = "Conv2D";
    op.dtypes = {"float16", "bfloat16", "float32", "float64", "int32"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = Conv2DStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    op.knob_space_version = 1;  // bump when a knob's meaning changes
    op.space = per_device(conv2d_space::cpu_space, conv2d_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include "Halide.h"
#include "direct_tiles.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
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

// apply() for Conv2D. Knob meanings and legal values: the tables above.
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
    if (device_of(target) == Device::cuda)
        return conv2d_schedule::apply_cuda(Conv2DCudaKnobs::from(knobs), structure, pipeline);
    conv2d_schedule::apply_cpu(Conv2DCpuKnobs::from(knobs), structure, pipeline);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
