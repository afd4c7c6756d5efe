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
    Halide::Func output;                      // dF(m, c, x, y), type T; x = fw, y = fh
    Halide::Func accumulator{"accumulator"};  // pure 0, update: += over `rows`
    Halide::Func input{"input_padded"};       // (c, w, h, n), zero outside the rows/columns of input
    Halide::RDom rows;                        // (ow, oh, n): every out_backprop position, ow innermost
    Halide::Var m{"m"}, c{"c"}, x{"x"}, y{"y"};
    Halide::Expr channels, filter_width, filter_height;  // extents of the output
    Halide::Expr depth_multiplier;                       // M (constant in variants that fix it)
    Halide::Expr out_cols, out_rows, batch;              // extents of `rows`
};

// apply() for DepthwiseConv2dNativeBackpropFilter. Knob meanings and legal
// values: depthwise_conv2d_native_backprop_filter_space.h.
//
// Shape of every schedule (CPU and CUDA):
//   partial(m, c, x, y, part[, lane])  the sum over one partition of the
//       reduction rows (and, where the unit-stride dimension is w, over one
//       lane of the ow loop): rfactor of the accumulator's update;
//   tiles = partial.in(accumulator)    where the parallel tasks / GPU threads
//       live; partial is computed per tile, so its accumulators stay in
//       registers for the whole stream over the partition's rows;
//   accumulator                       sums the partials, serially and in a
//       fixed order: this, and the fixed partition count, make the result
//       independent of the number of threads;
//   output                            rounds once to T.
namespace depthwise_conv2d_native_backprop_filter_schedule {

using namespace Halide;
using Pipeline = DepthwiseConv2dNativeBackpropFilterPipeline;

// The rfactor'ed reduction.
struct Partitioned {
    Func partial;
    Var part{"part"};  // which partition of the rows (n, oh)
    Var lane{"lane"};  // which lane of ow (only with lanes > 1)
    RVar columns;      // what is left of ow in partial's update
    RVar row_in{"row_in"};
};

// Splits the reduction rows (n, oh), fused n-major, into at most `partitions`
// contiguous runs of ceil(rows / partitions) rows, and (lanes > 1) ow into
// lanes: ow = column * lanes + lane. Both become pure dimensions of the
// returned partial; the accumulator then sums over them in a fixed order.
inline Partitioned partition(Pipeline &p, int partitions, int lanes) {
    Partitioned r;
    RVar ow = p.rows.x, oh = p.rows.y, n = p.rows.z;
    RVar row("row"), part("partition");
    const Expr rows = p.out_rows * p.batch;  // < 2^31: the runtime refuses larger out_backprop
    // (rows - 1) / partitions + 1 cannot overflow; max() keeps the split
    // factor positive for an empty reduction.
    const Expr chunk = max(1, (rows - 1) / partitions + 1);
    Stage update = p.accumulator.update();
    update.fuse(oh, n, row).split(row, part, r.row_in, chunk, TailStrategy::GuardWithIf);
    std::vector<std::pair<RVar, Var>> pairs = {{part, r.part}};
    r.columns = ow;
    if (lanes > 1) {
        RVar column("column"), lane("ow_lane");
        update.split(ow, column, lane, lanes, TailStrategy::GuardWithIf);
        pairs.emplace_back(lane, r.lane);
        r.columns = column;
    }
    r.partial = update.rfactor(pairs);
    return r;
}

// Loop names shared by the full-tile and small-extent branches of `tiles`,
// so that partial can be computed at the same loop in both.
struct Loops {
    Var channel_tile{"channel_tile"}, channel{"channel"};
    Var tap_x_tile{"tap_x_tile"}, tap_x{"tap_x"};
    Var tap_y_tile{"tap_y_tile"}, tap_y{"tap_y"};
};

struct CpuTile {
    int channels, tap_x, tap_y;
    TailStrategy tail;
};

// CPU: tiles of `tile.channels` channels x tap_x x tap_y taps for one
// partition. Loops, outermost first: partition (parallel), m, tap tiles,
// channel tiles (parallel, nested), then the tile. partial is computed per
// channel tile (one register tile), or, with channels inside the reduction,
// per tap tile (all channels). The outer loops are not fused: bounds
// inference would lose the constant size of partial through the div/mod of
// a fused index.
inline void tile_cpu(Stage stage, const Loops &l, const Pipeline &p, const Partitioned &r, bool lanes,
                     bool channels_inside, int vector, const CpuTile &tile) {
    stage.split(p.c, l.channel_tile, l.channel, tile.channels, tile.tail)
        .split(p.x, l.tap_x_tile, l.tap_x, tile.tap_x, tile.tail)
        .split(p.y, l.tap_y_tile, l.tap_y, tile.tap_y, tile.tail);
    std::vector<VarOrRVar> order;
    if (lanes) order.push_back(r.lane);
    for (Var v : {l.channel, l.tap_x, l.tap_y, l.channel_tile, l.tap_x_tile, l.tap_y_tile, p.m, r.part})
        order.push_back(v);
    stage.reorder(order).parallel(r.part);
    if (!channels_inside) stage.parallel(l.channel_tile);
    stage.vectorize(lanes ? r.lane : l.channel, vector, TailStrategy::GuardWithIf);
}

inline void apply_cpu(const DepthwiseConv2dNativeBackpropFilterCpuKnobs &k, const Structure &s, Pipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const int vector = k.vector_width;
    const int unit = vector * k.vectors_per_tile;  // register tile along the unit-stride dimension
    const int tap_x = k.tap_tile_x, tap_y = k.tap_tile_y;
    const bool channels_inside = k.channels_inside_reduction;
    // NHWC vectorises channels; NCHW vectorises lanes of ow (partial sums).
    Partitioned r = partition(p, k.partitions, nhwc ? 1 : unit);
    const int channels = nhwc ? unit : k.channels_per_tile;

    Func tiles = r.partial.in(p.accumulator);
    tiles.compute_root();
    Loops l;
    // Full register tiles when the extents allow; one vector and one tap
    // else. In NHWC a run-time depth multiplier gets a dense M == 1 path
    // (out_backprop reads of stride M otherwise; in NCHW they are dense along
    // w anyway).
    const Expr full_tiles = p.channels >= channels && p.filter_width >= tap_x && p.filter_height >= tap_y;
    const CpuTile full{channels, tap_x, tap_y, TailStrategy::ShiftInwards};
    if (nhwc && !is_const(p.depth_multiplier)) {
        tile_cpu(tiles.specialize(full_tiles && p.depth_multiplier == 1), l, p, r, !nhwc, channels_inside, vector,
                 full);
    }
    tile_cpu(tiles.specialize(full_tiles), l, p, r, !nhwc, channels_inside, vector, full);
    tile_cpu(tiles, l, p, r, !nhwc, channels_inside, vector, {nhwc ? vector : 1, 1, 1, TailStrategy::GuardWithIf});

    // The partition's sums, per task: a register tile streamed over the
    // partition's rows (channels_inside: one tile per channel tile, inside
    // the column loop, accumulators in L1).
    Func partial = r.partial;
    partial.compute_at(tiles, channels_inside ? l.tap_x_tile : l.channel_tile);
    // NHWC vectorises channels, NCHW the lanes of ow.
    const Var vectorized = nhwc ? p.c : r.lane;
    Stage update = partial.update();
    std::vector<VarOrRVar> order;
    if (!nhwc) order.push_back(r.lane);
    if (channels_inside) {
        // Every channel of the partition (a run-time extent): the tile loop
        // over channels runs inside the column loop.
        Var channel_out{"channel_out"}, channel_in{"channel_in"};
        partial.vectorize(vectorized, vector, TailStrategy::GuardWithIf);
        update.split(p.c, channel_out, channel_in, channels, TailStrategy::GuardWithIf);
        for (VarOrRVar v : {VarOrRVar(channel_in), VarOrRVar(p.x), VarOrRVar(p.y), VarOrRVar(channel_out),
                            VarOrRVar(r.columns), VarOrRVar(r.row_in), VarOrRVar(p.m), VarOrRVar(r.part)})
            order.push_back(v);
        update.reorder(order);
        if (nhwc) update.vectorize(channel_in, vector, TailStrategy::GuardWithIf);
        update.unroll(channel_in);
    } else {
        // One register tile: every pure extent is a tile size (a constant).
        partial.vectorize(vectorized, vector, TailStrategy::GuardWithIf).unroll(vectorized).unroll(p.x).unroll(p.y);
        if (!nhwc) partial.unroll(p.c);
        for (VarOrRVar v : {VarOrRVar(p.c), VarOrRVar(p.x), VarOrRVar(p.y), VarOrRVar(r.columns), VarOrRVar(r.row_in),
                            VarOrRVar(p.m), VarOrRVar(r.part)})
            order.push_back(v);
        update.reorder(order);
        if (nhwc) update.vectorize(p.c, vector, TailStrategy::GuardWithIf);
        update.unroll(p.c);
        // unroll_columns (NHWC, register tiles only): neighbouring output
        // columns read overlapping input columns, so in one unrolled body the
        // loads can be shared across taps. Unrolling keeps the order of the
        // sum: the bits do not change.
        if (const int columns = k.unroll_columns; columns > 1) {
            RVar column_outer("column_outer"), column_inner("column_inner");
            update.split(r.columns, column_outer, column_inner, columns, TailStrategy::GuardWithIf)
                .unroll(column_inner);
        }
    }
    if (!nhwc) update.vectorize(r.lane, vector, TailStrategy::GuardWithIf).unroll(r.lane);
    update.unroll(p.x).unroll(p.y);
    if (k.stage_input) {
        // The zero-padded input rows one output row reads, copied once per
        // row: the tap loop then reads without boundary selects. One
        // allocation per task, not per row.
        p.input.compute_at(partial, r.row_in)
            .hoist_storage(tiles, channels_inside ? l.tap_x_tile : l.channel_tile)
            .vectorize(nhwc ? p.input.args()[0] : p.input.args()[1], vector, TailStrategy::GuardWithIf);
    }

    // The fixed-order sum of the partials and the rounding to T: tiny.
    p.accumulator.compute_root().vectorize(p.c, vector, TailStrategy::GuardWithIf);
    p.accumulator.update().vectorize(p.c, vector, TailStrategy::GuardWithIf);
    p.output.vectorize(p.c, vector, TailStrategy::GuardWithIf);
}

inline void apply_cuda(const DepthwiseConv2dNativeBackpropFilterCudaKnobs &k, const Structure &s, Pipeline &p) {
    const bool nhwc = s.data_format == "NHWC";
    const int threads_unit = k.threads_unit, threads_other = k.threads_other;
    const int tap_x = k.tap_tile_x, tap_y = k.tap_tile_y;
    // NHWC: threads along channels (coalesced). NCHW: the ow reduction is
    // split into threads_unit lanes, one thread each (coalesced along w).
    Partitioned r = partition(p, k.partitions, nhwc ? 1 : threads_unit);

    Func tiles = r.partial.in(p.accumulator);
    tiles.compute_root();
    Var channel_block{"channel_block"}, channel_thread{"channel_thread"};
    Var part_block{"part_block"}, part_thread{"part_thread"};
    Var tap_x_tile{"tap_x_tile"}, tap_x_in{"tap_x"}, tap_y_tile{"tap_y_tile"}, tap_y_in{"tap_y"};
    Var taps{"taps"}, taps_m{"taps_m"};
    auto tile_cuda = [&](Stage stage, int tx, int ty, TailStrategy tail) {
        stage.split(p.x, tap_x_tile, tap_x_in, tx, tail).split(p.y, tap_y_tile, tap_y_in, ty, tail);
        if (nhwc) {
            stage.split(p.c, channel_block, channel_thread, threads_unit, TailStrategy::GuardWithIf)
                .split(r.part, part_block, part_thread, threads_other, TailStrategy::GuardWithIf)
                .reorder(tap_x_in, tap_y_in, channel_thread, part_thread, channel_block, tap_x_tile, tap_y_tile, p.m,
                         part_block)
                .fuse(tap_x_tile, tap_y_tile, taps)
                .fuse(taps, p.m, taps_m)
                .gpu_blocks(channel_block, taps_m, part_block)
                .gpu_threads(channel_thread, part_thread);
        } else {
            stage.split(p.c, channel_block, channel_thread, threads_other, TailStrategy::GuardWithIf)
                .reorder(tap_x_in, tap_y_in, r.lane, channel_thread, channel_block, tap_x_tile, tap_y_tile, p.m, r.part)
                .fuse(tap_x_tile, tap_y_tile, taps)
                .fuse(taps, p.m, taps_m)
                .gpu_blocks(channel_block, taps_m, r.part)
                .gpu_threads(r.lane, channel_thread);
        }
        stage.unroll(tap_x_in).unroll(tap_y_in);
    };
    const Expr full_tiles = p.filter_width >= tap_x && p.filter_height >= tap_y;
    tile_cuda(tiles.specialize(full_tiles), tap_x, tap_y, TailStrategy::ShiftInwards);
    tile_cuda(tiles, 1, 1, TailStrategy::GuardWithIf);

    // One thread streams its partition's rows with a tap tile of
    // accumulators in registers.
    Func partial = r.partial;
    partial.compute_at(tiles, nhwc ? channel_thread : r.lane).unroll(p.x).unroll(p.y);
    std::vector<VarOrRVar> order = {p.x, p.y, r.columns, r.row_in, p.c, p.m, r.part};
    if (!nhwc) order.push_back(r.lane);
    partial.update().reorder(order).unroll(p.x).unroll(p.y);

    // The fixed-order sum of the partials, one thread per filter element,
    // consecutive threads on consecutive (c, m): coalesced.
    Var k_index{"k_index"}, k_block{"k_block"}, k_thread{"k_thread"};
    p.output.fuse(p.m, p.c, k_index)
        .split(k_index, k_block, k_thread, 64, TailStrategy::GuardWithIf)
        .gpu_blocks(k_block, p.x, p.y)
        .gpu_threads(k_thread);
    p.accumulator.compute_at(p.output, k_thread);
}

}  // namespace depthwise_conv2d_native_backprop_filter_schedule

inline void apply(const Knobs &knobs, const Structure &structure, DepthwiseConv2dNativeBackpropFilterPipeline &pipeline,
                  const Halide::Target &target) {
    using namespace depthwise_conv2d_native_backprop_filter_schedule;
    if (device_of(target) == Device::cuda) {
        apply_cuda(DepthwiseConv2dNativeBackpropFilterCudaKnobs::from(knobs), structure, pipeline);
    } else {
        apply_cpu(DepthwiseConv2dNativeBackpropFilterCpuKnobs::from(knobs), structure, pipeline);
    }
}

}  // namespace gradtune
