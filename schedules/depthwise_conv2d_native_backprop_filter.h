// Schedule of DepthwiseConv2dNativeBackpropFilter: its knob tables and space (Halide-free: the tuner and
// the records tool read them too), then apply(), the only place where this
// op's loops are split, vectorised, parallelised or mapped to GPU threads
// (Halide: compiled where GRADTUNE_SCHEDULE_IMPLEMENTATION is defined, in the
// generators alone).
//
// The filter gradient dF[fh,fw,c,m] is tiny and each element reduces over
// every out_backprop position (N*OH*OW). Every schedule:
//   1. splits the reduction rows (n, oh) into `partitions` contiguous parts
//      that run in parallel (rfactor) and are summed in a fixed order
//      afterwards. The count is a knob, never the thread count, so a call
//      gives the same bits whatever the number of threads;
//   2. computes each part in register tiles of
//      (channels or ow-lanes along the unit-stride dimension) x tap_tile_x x tap_tile_y
//      filter taps, streaming the part's rows of input and out_backprop once
//      per tile (unroll_columns output columns per step; stage_input copies
//      each output row's zero-padded input rows first).
// CPU NHWC: tiles of vector_width * vectors_per_tile channels.
// CPU NCHW: the unit-stride dimension is w, so the reduction over ow is
//   itself split into vector_width * vectors_per_tile lanes (partial sums per
//   lane, summed in a fixed order at the end), and tiles hold
//   channels_per_tile channels.
// The op is memory bound (~2 FLOP per byte at stride 1): the knobs trade
// register reuse of each loaded input vector across taps against spills and
// against the number of parallel tasks.
// CUDA: one thread per (channel or ow-lane, tap tile, partition); NHWC
//   blocks hold threads_unit channels x threads_other partitions, NCHW blocks
//   threads_unit ow-lanes x threads_other channels.
#pragma once

#include <algorithm>
#include <string>

#include "knob_space.h"
#include "structures.h"

// The knobs, one line each (knob_space.h: how a table is read).
// A domain may be an expression of the space function's locals too.
#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS(KNOB, SHARED)                                     \
    KNOB(vector_width, (2, 4, 8, 16, 32, 64), lanes,                                                                 \
         nhwc ? "lanes per vector along channels" : "lanes per vector along output columns (partial sums per lane)") \
    KNOB(vectors_per_tile, (1, 2, 3, 4), vectors, "vectors per register tile along the unit-stride dimension",       \
         .values_since = 2)                                                                                          \
    KNOB(channels_per_tile, (nhwc ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8}), 1,                          \
         "NCHW: channels per register tile (NHWC tiles channels with the vectors)")                                  \
    KNOB(channels_inside_reduction, (0, 1), 0,                                                                       \
         "1: the loop over channel tiles runs inside the reduction (accumulators in L1, each row of a partition "    \
         "read once); 0: each channel tile streams its partition alone (accumulators in registers)")                 \
    KNOB(partitions, (1, 2, 4, 8, 16, 32, 64), 8,                                                                    \
         "parts of the reduction rows (n, oh), computed in parallel and summed in order")                            \
    KNOB(unroll_columns, (nhwc ? std::vector<int>{1, 2, 4} : std::vector<int>{1}), 1,                                \
         "NHWC: output columns per unrolled step of the reduction (input loads shared across taps; NCHW "            \
         "vectorises the columns instead)")                                                                          \
    KNOB(stage_input, (0, 1), 0,                                                                                     \
         "1: copy the zero-padded input rows of each output row first (no boundary selects in the tap loop)")        \
    KNOB(tap_tile_x, (kTapTiles), tap_x, "filter columns per register tile")                                         \
    KNOB(tap_tile_y, (kTapTiles), tap_y, "filter rows per register tile")

#define GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS(KNOB, SHARED)                      \
    KNOB(threads_unit, (8, 16, 32, 64, 128, 256), 32,                                                  \
         nhwc ? "threads along channels (coalesced)"                                                   \
              : "threads along output columns, one partial sum each (coalesced)")                      \
    KNOB(threads_other, (1, 2, 4, 8, 16), 4, nhwc ? "partitions per block" : "channels per block")     \
    SHARED(partitions, (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), nhwc ? 256 : 64,                 \
           "parts of the reduction rows (n, oh), computed by separate threads and summed in order")    \
    SHARED(tap_tile_x, (kTapTiles), default_tap_tile(fixed.filter_width), "filter columns per thread") \
    SHARED(tap_tile_y, (kTapTiles), default_tap_tile(fixed.filter_height), "filter rows per thread")

namespace gradtune {

GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeBackpropFilterCpuKnobs,
                     GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS);
GRADTUNE_TYPED_KNOBS(DepthwiseConv2dNativeBackpropFilterCudaKnobs,
                     GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS);

namespace depthwise_conv2d_native_backprop_filter_space {

inline const std::vector<int> kTapTiles = {1, 2, 3, 4, 5, 7};

// A first-guess tap tile: the whole filter when it is fixed and small, else 3
// (most depthwise filters are 3x3).
inline int default_tap_tile(int fixed) {
    const int want = fixed > 0 ? std::min(fixed, 5) : 3;
    int best = 1;
    for (int v : kTapTiles)
        if (v <= want) best = v;
    return best;
}

// A tap tile larger than a fixed filter would never take the tiled path
// (either device's knobs).
template <class TapTiles>
std::string check_tap_tiles(const Structure &s, const TapTiles &k) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const int fixed_w = fixed.filter_width, fixed_h = fixed.filter_height;
    if (fixed_w > 0 && k.tap_tile_x > fixed_w)
        return "tap_tile_x " + std::to_string(k.tap_tile_x) + " exceeds the fixed filter width " +
               std::to_string(fixed_w);
    if (fixed_h > 0 && k.tap_tile_y > fixed_h)
        return "tap_tile_y " + std::to_string(k.tap_tile_y) + " exceeds the fixed filter height " +
               std::to_string(fixed_h);
    return "";
}

inline KnobSpace cpu_space(const Structure &s) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const int bytes = dtype_bytes(s.dtype);
    // 16-bit types accumulate in float32: the register budget counts those.
    const int accumulator_bytes = gradtune::accumulator_bytes(s.dtype);
    const int lanes = 64 / accumulator_bytes;  // one AVX-512 register of accumulators
    const bool nhwc = s.data_format == "NHWC";
    const int tap_x = default_tap_tile(fixed.filter_width);
    const int tap_y = default_tap_tile(fixed.filter_height);
    const int vectors = tap_x * tap_y * 2 <= 32 && nhwc ? 2 : 1;
    // The accumulators.
    const auto registers = [=](const DepthwiseConv2dNativeBackpropFilterCpuKnobs &k) {
        const int registers_per_vector = std::max(1, k.vector_width * accumulator_bytes / 64);
        return k.vectors_per_tile * k.channels_per_tile * k.tap_tile_x * k.tap_tile_y * registers_per_vector;
    };
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CPU_KNOBS);
    space.registers = KnobSpace::typed<DepthwiseConv2dNativeBackpropFilterCpuKnobs>(registers);
    space.constraint = KnobSpace::typed<DepthwiseConv2dNativeBackpropFilterCpuKnobs>(
        [=](const DepthwiseConv2dNativeBackpropFilterCpuKnobs &k) -> std::string {
            if (std::string why = check_register_tile(k.vector_width * bytes, registers(k)); !why.empty()) return why;
            // Unrolled columns multiply the guarded channel loop of the L1
            // accumulators: minutes of compile time for little reuse.
            if (k.unroll_columns > 1 && k.channels_inside_reduction)
                return "unroll_columns needs register tiles (channels_inside_reduction 0)";
            // NCHW keeps a partial sum per partition and ow-lane for every filter
            // element; beyond 1024 of them their memory traffic outweighs any
            // parallelism gained.
            const int partial_sums = k.partitions * (nhwc ? 1 : k.vector_width * k.vectors_per_tile);
            if (partial_sums > 1024)
                return std::to_string(partial_sums) + " partial sums per filter element (partitions x lanes, max 1024)";
            return check_tap_tiles(s, k);
        });
    return space;
}

inline KnobSpace cuda_space(const Structure &s) {
    const DepthwiseStructure fixed = DepthwiseStructure::from(s);
    const bool nhwc = s.data_format == "NHWC";
    KnobSpace space;
    space.knobs = GRADTUNE_KNOB_LIST(GRADTUNE_DEPTHWISE_CONV2D_NATIVE_BACKPROP_FILTER_CUDA_KNOBS);
    space.constraint = KnobSpace::typed<DepthwiseConv2dNativeBackpropFilterCudaKnobs>(
        [=](const DepthwiseConv2dNativeBackpropFilterCudaKnobs &k) -> std::string {
            const int threads = k.threads_unit * k.threads_other;
            if (std::string why = check_threads_per_block(threads); !why.empty()) return why;
            // As on the CPU: one partial sum per partition (and NCHW ow-lane)
            // and filter element, written and read back through global memory.
            const int partial_sums = k.partitions * (nhwc ? 1 : k.threads_unit);
            if (partial_sums > 4096)
                return std::to_string(partial_sums) + " partial sums per filter element (partitions x lanes, max 4096)";
            return check_tap_tiles(s, k);
        });
    return space;
}

}  // namespace depthwise_conv2d_native_backprop_filter_space

inline OpSchema depthwise_conv2d_native_backprop_filter_schema() {
    OpSchema op;
    op.name = "DepthwiseConv2dNativeBackpropFilter";
    op.dtypes = {"float16", "bfloat16", "float32", "float64"};
    op.data_formats = {"NHWC", "NCHW"};
    op.structure_params = DepthwiseStructure::names();
    op.devices = {Device::cpu, Device::cuda};
    // 2: vectors_per_tile 3 (tiles of 48 channels, which divide the 144, 240,
    // 480, 672, 960 channels of MobileNet and EfficientNet layers).
    op.knob_space_version = 2;  // bump when a knob's meaning changes
    op.space = per_device(depthwise_conv2d_native_backprop_filter_space::cpu_space,
                          depthwise_conv2d_native_backprop_filter_space::cuda_space);
    return op;
}

}  // namespace gradtune

// --- The schedule (Halide; compiled by the generators alone) -----------------
#ifdef GRADTUNE_SCHEDULE_IMPLEMENTATION

#include "Halide.h"
#include "halide_knobs.h"

namespace gradtune {

// The knob GeneratorParams of both devices' tables (above).
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

// apply() for DepthwiseConv2dNativeBackpropFilter. Knob meanings and legal values: the tables above.
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
    if (device_of(target) == Device::cuda)
        return depthwise_conv2d_native_backprop_filter_schedule::apply_cuda(
            DepthwiseConv2dNativeBackpropFilterCudaKnobs::from(knobs), structure, pipeline);
    depthwise_conv2d_native_backprop_filter_schedule::apply_cpu(
        DepthwiseConv2dNativeBackpropFilterCpuKnobs::from(knobs), structure, pipeline);
}

}  // namespace gradtune

#endif  // GRADTUNE_SCHEDULE_IMPLEMENTATION
